"""The lines after a report: counts by severity, what --fix would do, what decides the exit code."""

from __future__ import annotations

from collections import Counter

from migrate.model import Finding
from migrate.rulebook import SEVERITIES

RANK = {s: i for i, s in enumerate(reversed(SEVERITIES))}  # advice 0, warning 1, error 2


def failing(findings: list[Finding], fail_on: str) -> list[Finding]:
    """The findings at or above ``fail_on``: those that make the exit code 1."""
    return [f for f in findings if RANK[f.severity] >= RANK[fail_on]]


def _n(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 or word == "advice" else f"{n} {word}s"


def summary(findings: list[Finding], fail_on: str = "warning", hidden: int = 0) -> str:
    hid = f" ({_n(hidden, 'known finding')} not shown)" if hidden else ""
    if not findings:
        return f"All checks passed.{hid}\n"
    sev = Counter(f.severity for f in findings)
    lines = [
        f"Found {_n(len(findings), 'finding')}: " + ", ".join(_n(sev[s], s) for s in SEVERITIES if sev[s]) + f".{hid}"
    ]
    safe = sum(1 for f in findings if f.fix and f.fix.safe)
    unsafe = sum(1 for f in findings if f.fix and not f.fix.safe)
    if safe or unsafe:
        parts = [f"{safe} fixable with --fix"] if safe else []
        if unsafe:
            parts.append(f"{unsafe} {'more ' if safe else ''}with --fix --unsafe-fixes")
        lines.append("[*] " + "; ".join(parts) + ".")
    if not failing(findings, fail_on):
        lines.append(f"None is at or above --fail-on {fail_on}: exit 0.")
    return "\n".join(lines) + "\n"
