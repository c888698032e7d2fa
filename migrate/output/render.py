"""Render findings in every output format the CLI offers."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from migrate import __version__
from migrate.model import Finding
from migrate.registry import all_rules

FORMATS = ("full", "concise", "json", "json-lines", "sarif", "github", "lintrunner")
SARIF_LEVEL = {"error": "error", "warning": "warning", "advice": "note"}
GITHUB_LEVEL = {"error": "error", "warning": "warning", "advice": "notice"}


def display_path(root: Path, path: str) -> str:
    full = (root / path).resolve()
    try:
        return os.path.relpath(full) if str(full).startswith(os.getcwd() + os.sep) else str(full)
    except ValueError:
        return str(full)


class _Lines:
    """Line ``n`` of a source file, each file split once (a whole lint reports hundreds of findings in a
    few files, native_functions.yaml among them: splitting per finding cost more than the lint itself)."""

    def __init__(self, sources: dict[str, bytes]) -> None:
        self.sources = sources
        self.split: dict[str, list[bytes]] = {}

    def text(self, path: str, line: int) -> str:
        lines = self.split.get(path)
        if lines is None:
            data = self.sources.get(path)
            lines = self.split[path] = [] if data is None else data.split(b"\n")
        return lines[line - 1].decode("utf-8", "replace").rstrip("\r") if 0 < line <= len(lines) else ""


def _edits_json(f: Finding, sources) -> list[dict]:
    if not f.fix:
        return []
    out = []
    for e in f.fix.edits:
        data = sources.get(e.path, b"")
        out.append(
            {
                "path": e.path,
                "start": e.start,
                "end": e.end,
                "replacement": e.replacement,
                "start_line": data.count(b"\n", 0, e.start) + 1,
                "end_line": data.count(b"\n", 0, e.end) + 1,
            }
        )
    return out


def finding_json(f: Finding, root: Path, sources) -> dict:
    d = {
        "code": f.code,
        "name": all_rules()[f.code].name,
        "severity": f.severity,
        "message": f.message,
        "path": f.path,
        "filename": str((root / f.path).resolve()),
        "line": f.line,
        "column": f.column,
        "end_line": f.end_line,
        "end_column": f.end_column,
    }
    if f.overload:
        d["overload"] = f.overload
    if f.kernel:
        d["kernel"] = f.kernel
    if f.fix:
        d["fix"] = {"description": f.fix.description, "safe": f.fix.safe, "edits": _edits_json(f, sources)}
    else:
        d["fix"] = None
    return d


def render(
    findings: list[Finding],
    fmt: str,
    root: Path,
    sources: dict[str, bytes],
    fixed_texts: dict[str, tuple[str, str]] | None = None,
) -> str:
    if fmt == "json":
        return json.dumps([finding_json(f, root, sources) for f in findings], indent=2) + "\n"
    if fmt == "json-lines":
        return "".join(json.dumps(finding_json(f, root, sources)) + "\n" for f in findings)
    if fmt == "sarif":
        return json.dumps(sarif(findings, root, sources), indent=2) + "\n"
    if fmt == "lintrunner":
        return lintrunner(findings, root, fixed_texts or {})
    out = []
    lines, shown = _Lines(sources), {}
    for f in findings:
        p = shown.get(f.path)
        if p is None:
            p = shown[f.path] = display_path(root, f.path)
        if fmt == "github":
            out.append(
                f"::{GITHUB_LEVEL[f.severity]} title=mps-migrate ({f.code}),file={p},line={f.line},"
                f"col={f.column},endLine={f.end_line},endColumn={f.end_column}::{f.code} {_gh_escape(f.message)}"
            )
        elif fmt == "concise":
            out.append(f"{p}:{f.line}:{f.column}: {f.code} {f.message}")
        else:
            text = lines.text(f.path, f.line)
            width = max(1, (f.end_column - f.column) if f.end_line == f.line else len(text) - f.column + 1)
            fix = "" if not f.fix else " [*]" if f.fix.safe else " [unsafe fix]"
            out.append(
                f"{p}:{f.line}:{f.column}: {f.code}{fix} {f.message}\n"
                f"  {f.line:>5} | {text}\n        | {' ' * (f.column - 1)}{'^' * width}\n"
            )
    return "\n".join(out) + ("\n" if out else "")


def _gh_escape(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def statistics(findings: list[Finding]) -> str:
    counts = Counter(f.code for f in findings)
    fixable = Counter(f.code for f in findings if f.fix and f.fix.safe)
    unsafe = Counter(f.code for f in findings if f.fix and not f.fix.safe)
    rules = all_rules()
    rows = [
        f"{n:>6}  {code:<7} {'[*]' if fixable[code] else '[~]' if unsafe[code] else '   '} {rules[code].name}"
        for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    return "\n".join(rows) + ("\n" if rows else "")


def sarif(findings: list[Finding], root: Path, sources) -> dict:
    rules = all_rules()
    used = sorted({f.code for f in findings})
    results = []
    for f in findings:
        r = {
            "ruleId": f.code,
            "ruleIndex": used.index(f.code),
            "level": SARIF_LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.path, "uriBaseId": "SRCROOT"},
                        "region": {
                            "startLine": f.line,
                            "startColumn": f.column,
                            "endLine": f.end_line,
                            "endColumn": f.end_column,
                        },
                    }
                }
            ],
        }
        if f.fix:
            by_path: dict[str, list] = {}
            for e in f.fix.edits:
                by_path.setdefault(e.path, []).append(
                    {
                        "deletedRegion": {"byteOffset": e.start, "byteLength": e.end - e.start},
                        "insertedContent": {"text": e.replacement},
                    }
                )
            r["fixes"] = [
                {
                    "description": {"text": f.fix.description},
                    "artifactChanges": [
                        {"artifactLocation": {"uri": p, "uriBaseId": "SRCROOT"}, "replacements": reps}
                        for p, reps in by_path.items()
                    ],
                }
            ]
        results.append(r)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "mps-migrate",
                        "version": __version__,
                        "informationUri": "https://pypi.org/project/mps-migrate/",
                        "rules": [
                            {
                                "id": c,
                                "name": rules[c].name,
                                "shortDescription": {"text": rules[c].doc.summary.strip().split("\n")[0]},
                                "fullDescription": {"text": " ".join(rules[c].doc.summary.split())},
                                "help": {"text": rules[c].text(), "markdown": rules[c].text()},
                                "defaultConfiguration": {"level": SARIF_LEVEL[rules[c].severity]},
                            }
                            for c in used
                        ],
                    }
                },
                "originalUriBaseIds": {"SRCROOT": {"uri": root.resolve().as_uri() + "/"}},
                "results": results,
            }
        ],
    }


def lintrunner(
    findings: list[Finding], root: Path, fixed_texts: dict[str, tuple[str, str]], applied: list[Finding] | None = None
) -> str:
    """JSON lines in lintrunner's LintMessage schema (path, line, char, code, severity, name,
    original, replacement, description).

    ``path`` is absolute: lintrunner runs the adapter in its config folder but resolves relative
    paths against its own working directory.  ``char`` is the 1-based column, as lintrunner's
    clang-tidy and flake8 adapters pass it.  ``lintrunner -a`` writes a message's ``replacement``
    over its file and refuses a second replacement for the same file, so each file with fixes gets
    ONE message carrying its whole fixed text and naming every finding that text fixes; those
    findings are not repeated alone (``-a`` drops messages with a replacement from its report).
    ``applied``: the findings whose fixes made ``fixed_texts`` (default: every safe fix whose files
    are all in ``fixed_texts``).
    """
    rules = all_rules()
    if applied is None:
        applied = [f for f in findings if f.fix and f.fix.safe and all(e.path in fixed_texts for e in f.fix.edits)]
    applied_fixes = {f.fix for f in applied}
    done = [f for f in findings if f.fix is not None and f.fix in applied_fixes]  # same fix: both done
    fixed_by: dict[str, list[Finding]] = {}
    for f in done:
        for p in dict.fromkeys(e.path for e in f.fix.edits):
            fixed_by.setdefault(p, []).append(f)
    rank = {"advice": 0, "warning": 1, "error": 2}

    def message(path, line, char, severity, name, description, original=None, replacement=None):
        return json.dumps(
            {
                "path": str((root / path).resolve()),
                "line": line,
                "char": char,
                "code": "MPSMIGRATE",
                "severity": severity,
                "name": name,
                "original": original,
                "replacement": replacement,
                "description": description,
            }
        )

    lines = []
    for path, (original, replacement) in sorted(fixed_texts.items()):
        group = sorted(fixed_by.get(path, []), key=lambda f: (f.path != path, f.path, f.line, f.column))
        if not group:
            continue
        here = sorted((f for f in group if f.path == path), key=lambda f: (f.line, f.column)) or group
        codes = sorted({f.code for f in group})
        name = f"{codes[0]} {rules[codes[0]].name}" if len(codes) == 1 else "fixes " + ", ".join(codes)
        desc = "\n".join(f"{f.code} ({f.path}:{f.line}): {f.message} -- fix: {f.fix.description}" for f in group)
        lines.append(
            message(
                path,
                here[0].line if here[0].path == path else None,
                here[0].column if here[0].path == path else None,
                max((f.severity for f in group), key=rank.__getitem__),
                name,
                desc,
                original,
                replacement,
            )
        )
    for f in findings:
        if f.fix is not None and f.fix in applied_fixes:
            continue
        lines.append(
            message(f.path, f.line, f.column, f.severity, f"{f.code} {rules[f.code].name}", f"{f.code}: {f.message}")
        )
    return "".join(line + "\n" for line in lines)
