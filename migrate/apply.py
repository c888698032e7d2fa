"""Apply fixes: non-overlapping edits, bottom-up, atomic writes."""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from migrate.errors import UsageError
from migrate.model import Edit, Finding, Fix


@dataclass
class Plan:
    new_texts: dict[str, bytes] = field(default_factory=dict)  # path -> new bytes
    applied: list[Finding] = field(default_factory=list)
    dropped: list[tuple[Finding, str]] = field(default_factory=list)  # (finding, reason)


def plan_fixes(findings: list[Finding], sources: dict[str, bytes], unsafe: bool = False) -> Plan:
    plan = Plan()
    taken: dict[str, list[tuple[int, int]]] = {}
    accepted: list[Edit] = []
    seen_fixes: set[Fix] = set()
    for f in findings:
        if f.fix is None or f.fix in seen_fixes:
            continue
        if not f.fix.safe and not unsafe:
            continue
        seen_fixes.add(f.fix)
        clash = next(
            (
                e
                for e in f.fix.edits
                for (s, t) in taken.get(e.path, ())
                if e.start < t and s < e.end or (e.start == e.end == s == t)
            ),
            None,
        )
        if clash is not None:
            plan.dropped.append((f, f"its edit of {clash.path} overlaps an earlier fix"))
            continue
        for e in f.fix.edits:
            taken.setdefault(e.path, []).append((e.start, e.end))
            accepted.append(e)
        plan.applied.append(f)
    by_path: dict[str, list[Edit]] = {}
    for e in accepted:
        by_path.setdefault(e.path, []).append(e)
    for path, edits in by_path.items():
        data = sources[path]
        for e in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
            data = data[: e.start] + e.replacement.encode() + data[e.end :]
        plan.new_texts[path] = data
    return plan


def unified_diff(path: str, old: bytes, new: bytes) -> str:
    a = old.decode("utf-8", "replace").splitlines(keepends=True)
    b = new.decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, f"a/{path}", f"b/{path}"))


def atomic_write(file: Path, data: bytes, expected_old: bytes | None = None) -> None:
    """Write ``data`` to ``file`` via a temporary file in the same folder. With ``expected_old``
    (fixes) refuse if the file changed since it was read; without (reports) create or replace it."""
    try:
        if expected_old is not None:
            current = file.read_bytes()
            if current != expected_old:
                raise UsageError("file changed on disk since it was read; not written", str(file))
            mode = file.stat().st_mode & 0o7777
        else:
            mode = file.stat().st_mode & 0o7777 if file.exists() else 0o666 & ~_umask()
    except OSError as exc:
        raise UsageError(f"cannot read before writing: {exc.strerror or exc}", str(file)) from None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{file.name}.", suffix=".tmp", dir=file.parent)
    except OSError as exc:
        raise UsageError(f"cannot write: {exc.strerror or exc}", str(file)) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, file)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise UsageError(f"cannot write: {exc.strerror or exc}", str(file)) from None
        raise
    try:
        dfd = os.open(file.parent, os.O_DIRECTORY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
