"""Known findings: a baseline file (``--baseline``) or the same files at a git revision (``--since``).

A finding is known when one with the same fingerprint exists there: code, path, message and
the text of its line (whitespace stripped), never its line number, so lines added above it do
not make an old finding new. Fingerprints are counted: a second identical finding is new.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

from migrate.errors import RulesFailed, UsageError
from migrate.model import Finding

FORMAT_KEY = "mps-migrate-baseline"
Fingerprint = tuple[str, str, str, str]


def fingerprint(f: Finding, sources: dict[str, bytes]) -> Fingerprint:
    lines = sources.get(f.path, b"").split(b"\n")
    text = lines[f.line - 1].decode("utf-8", "replace").strip() if 0 < f.line <= len(lines) else ""
    return f.code, f.path, f.message, text


def fingerprints(findings: list[Finding], sources: dict[str, bytes]) -> Counter:
    return Counter(fingerprint(f, sources) for f in findings)


def subtract(findings: list[Finding], known: Counter, sources: dict[str, bytes]) -> list[Finding]:
    """The findings not in ``known`` (each known fingerprint absorbs one finding)."""
    left = Counter(known)
    out = []
    for f in findings:
        k = fingerprint(f, sources)
        if left[k] > 0:
            left[k] -= 1
        else:
            out.append(f)
    return out


def baseline_text(findings: list[Finding], sources: dict[str, bytes]) -> str:
    rows = sorted(fingerprint(f, sources) for f in findings)
    entries = [{"code": c, "path": p, "message": m, "source": s} for c, p, m, s in rows]
    return json.dumps({FORMAT_KEY: 1, "findings": entries}, indent=1) + "\n"


def read_baseline(path: Path) -> Counter:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = data["findings"] if isinstance(data, dict) and data.get(FORMAT_KEY) == 1 else None
        if not isinstance(rows, list):
            raise ValueError(f'not an mps-migrate baseline (no "{FORMAT_KEY}": 1)')
        return Counter((r["code"], r["path"], r["message"], r["source"]) for r in rows)
    except OSError as exc:
        raise UsageError(f"cannot read the baseline: {exc.strerror or exc}", str(path)) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"invalid baseline: {exc}", str(path)) from None


# ------------------------------------------------------------------ git
def _git(root: Path, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "-C", str(root), *args], input=input, capture_output=True, timeout=120)
    except OSError as exc:
        raise UsageError(f"--since needs git: {exc.strerror or exc}") from None


def files_at_revision(root: Path, rev: str, only: list[str] | None) -> tuple[dict[str, bytes], set[str]] | None:
    """(tree-relative path -> bytes at ``rev`` for every file under ``only`` that differs from it,
    paths that do not exist at ``rev``); None when ``rev`` is HEAD of a repository without commits."""
    if _git(root, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}").returncode != 0:
        if rev == "HEAD" and _git(root, "rev-parse", "--git-dir").returncode == 0:
            return None  # the first commit: everything it holds is new
        err = _git(root, "rev-parse", "--verify", f"{rev}^{{commit}}").stderr.decode(errors="replace").strip()
        raise UsageError(f"--since {rev}: {err.splitlines()[-1] if err else 'not a git revision'}", str(root))
    specs = ["--", *(only or ["."])]
    changed = _git(root, "diff", "--name-only", "--no-renames", "--relative", "-z", rev, *specs)
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z", *specs)
    for p in (changed, untracked):
        if p.returncode != 0:
            raise UsageError(f"--since {rev}: git: {p.stderr.decode(errors='replace').strip()}", str(root))
    paths = [n for n in changed.stdout.decode().split("\0") if n]
    absent = {n for n in untracked.stdout.decode().split("\0") if n}
    prefix = _git(root, "rev-parse", "--show-prefix").stdout.decode().strip()
    batch = _git(root, "cat-file", "--batch", input="".join(f"{rev}:{prefix}{n}\n" for n in paths).encode())
    out, data = {}, batch.stdout
    for n in paths:  # "<sha> blob <size>\n<bytes>\n" or "<name> missing\n", in input order
        head, _, data = data.partition(b"\n")
        if head.endswith(b" missing") or not head:
            absent.add(n)
            continue
        size = int(head.split()[2])
        out[n], data = data[:size], data[size + 1 :]
    return out, absent


def known_at_revision(root: Path, rev: str, config, only: list[str] | None, lint: bool = True) -> Counter:
    """Fingerprints of the findings the same files had at ``rev`` (the rest of the tree as it is now).
    ``lint=False`` only checks ``rev`` (nothing to subtract from: the second lint is skipped)."""
    from migrate.result_cache import lint_findings

    got = files_at_revision(root, rev, only)
    if got is None or not lint:
        return Counter()
    overlay, absent = got
    try:
        findings, sources = lint_findings(root, config, only, overlay)
    except RulesFailed as exc:  # the rule fails on both versions: what the others found at rev is known
        findings, sources = exc.result.findings, exc.result.tree.sources
    return fingerprints([f for f in findings if f.path not in absent], sources)
