"""Suppression comments: ``# mps-migrate: ignore[MPS001]`` (yaml, py) and ``// mps-migrate: ignore[MPS011]``.

A comment suppresses findings on its own line and on the line below it; on an
entry's ``func:`` line of native_functions.yaml it covers the whole entry.
A bare ``mps-migrate: ignore`` suppresses every code.
"""

from __future__ import annotations

import re

from migrate.model import Finding

_IGNORE = re.compile(rb"mps-migrate:\s*ignore(?:\[([A-Za-z0-9_, ]*)\])?")


def scan(data: bytes) -> dict[int, frozenset[str]]:
    """Line number -> codes suppressed by a comment on that line ("*" = all)."""
    out: dict[int, frozenset[str]] = {}
    if b"mps-migrate:" not in data:
        return out
    for m in _IGNORE.finditer(data):
        line = data.count(b"\n", 0, m.start()) + 1
        codes = (
            frozenset(c.strip() for c in m.group(1).decode().split(",") if c.strip()) if m.group(1) else frozenset("*")
        )
        out[line] = out.get(line, frozenset()) | codes
    return out


def _matches(codes: frozenset[str] | None, code: str) -> bool:
    return bool(codes) and ("*" in codes or code in codes or any(code.startswith(c) for c in codes))


def filter_suppressed(findings: list[Finding], tree, index) -> list[Finding]:
    cache: dict[str, dict[int, frozenset[str]]] = {}
    kept = []
    for f in findings:
        if f.path not in cache:
            cache[f.path] = scan(tree.sources.get(f.path, b""))
        lines = cache[f.path]
        if lines:
            hit = _matches(lines.get(f.line), f.code) or _matches(lines.get(f.line - 1), f.code)
            if not hit and f.overload and f.path == tree.yaml.path:
                e = index.entries.get(f.overload)
                hit = e is not None and _matches(lines.get(e.func_line), f.code)
            if hit:
                continue
        kept.append(f)
    return kept
