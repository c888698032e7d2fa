"""The full output format quotes each finding's own source line (each file is split once per render)."""

from __future__ import annotations

from pathlib import Path

from migrate.model import Finding
from migrate.output.render import render
from migrate.source.span import Span

SOURCES = {
    "a.mm": b"zero\r\none\ntwo \xc3\xa9\n",
    "b.metal": b"kernel void k() {}\nint x;",
}


def _finding(path: str, line: int, column: int = 1, end_column: int = 2) -> Finding:
    return Finding("MPS002", f"at {path}:{line}", Span(path, line, column, line, end_column, 0, 1))


def _quoted(out: str) -> list[str]:
    """The source line each finding quotes (``  LINE | TEXT``)."""
    return [line.split(" | ", 1)[1] for line in out.splitlines() if line[:7].strip().isdigit()]


def test_each_finding_quotes_its_own_line_in_each_file():
    findings = [_finding("a.mm", 3), _finding("b.metal", 2), _finding("a.mm", 1), _finding("b.metal", 1)]
    out = render(findings, "full", Path("/nowhere"), SOURCES)
    assert _quoted(out) == ["two é", "int x;", "zero", "kernel void k() {}"]


def test_a_line_the_file_lacks_and_a_file_not_read_quote_nothing():
    findings = [_finding("a.mm", 9), _finding("a.mm", 0), _finding("gone.mm", 1), _finding("a.mm", 2)]
    out = render(findings, "full", Path("/nowhere"), SOURCES)
    assert _quoted(out) == ["", "", "", "one"]


def test_the_caret_runs_to_the_end_of_a_line_for_a_finding_spanning_lines():
    f = Finding("MPS002", "m", Span("b.metal", 1, 8, 2, 1, 7, 20))
    out = render([f], "full", Path("/nowhere"), SOURCES)
    assert out.splitlines()[2] == "        |        " + "^" * len("void k() {}")
