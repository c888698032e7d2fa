"""The tree's own expectations of ``test_output_match``: which (OpInfo, dtype) cells test_mps expects to fail
on MPS, or skips, with the tree's reason.

Read, never imported, from ``torch/testing/_internal/common_mps.py`` (or ``test/test_mps.py`` in trees that
predate it) by ``migrate.read.xfail_reader`` (the tables MPS009 lints), as the newest macOS sees them: a
table that applies only before it, an ``if MACOS_VERSION < N:`` block and the older arm of
``[...] if MACOS_VERSION < N else [...]`` are not expectations.  Which tables are xfail, skip or complex
support is rules/verify.yaml ``expectations``.  A cell is keyed as test_mps keys it: ``name`` +
``variant_test_name``.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from pathlib import Path

from migrate.read.xfail_reader import read_common_mps
from migrate.verify.dtypes import table as verify_table


@dataclass(frozen=True)
class Expectation:
    kind: str  # "xfail" | "skip"
    table: str  # UNIMPLEMENTED_XFAILLIST, ...
    path: str  # tree-relative file
    line: int
    reason: str  # the tree's comment on the entry, or what the table means

    def describe(self) -> str:
        return f"{self.table} ({self.path}:{self.line}): {self.reason}"

    def json(self) -> dict:
        return {"kind": self.kind, "table": self.table, "path": self.path, "line": self.line, "reason": self.reason}


class Expectations:
    """(OpInfo key, dtype name) -> Expectation, from one tree."""

    def __init__(self, path: str = "", entries: dict | None = None, complex_ok=None, complex_at: int = 0):
        self.path = path
        self.entries: dict[str, list[tuple[Expectation, frozenset[str] | None]]] = entries or {}
        self.complex_ok: set[str] | None = complex_ok  # None: the file lists no complex support
        self.complex_at = complex_at

    def lookup(self, key: str, dtype: str) -> Expectation | None:
        for exp, dtypes in self.entries.get(key, ()):
            if dtypes is None or dtype in dtypes:
                return exp
        rules = _rules()
        if self.complex_ok is not None and dtype in rules["complex_dtypes"] and key not in self.complex_ok:
            tables = " / ".join(rules["complex_supported"])
            why = f"{key} is in none of {tables}: test_mps expects its {dtype} samples to fail"
            return Expectation("xfail", rules["complex_supported"][0], self.path, self.complex_at, why)
        return None


def _rules() -> dict:
    return verify_table()["expectations"]


def load(root: Path, sources: dict | None = None) -> Expectations:
    """The expectations of the tree at ``root`` (``sources``: tree-relative path -> bytes already read)."""
    for rel in _rules()["files"]:
        data = (sources or {}).get(rel)
        if data is None:
            f = root / rel
            if not f.is_file():
                continue
            data = f.read_bytes()
        return read(data, rel)
    return Expectations()


def read(data: bytes, path: str) -> Expectations:
    rules = _rules()
    kinds = {t: "xfail" for t in rules["xfail"]} | {t: "skip" for t in rules["skip"]}
    cm = read_common_mps(data, path)
    lines = data.decode("utf-8", "replace").splitlines()
    try:
        module = ast.parse(data)
    except SyntaxError:
        module = None
    older = _older_blocks(module) if module is not None else []
    values = _values(module) if module is not None else {}
    out: dict[str, list] = {}
    complex_ok: set[str] | None = None
    complex_at = 0
    for e in cm.entries:
        if e.function != rules["function"] or any(a <= e.span.line <= b for a, b in older):
            continue
        if e.table in rules["complex_supported"]:
            complex_ok = (complex_ok or set()) | {e.key}
            complex_at = complex_at or e.span.line
            continue
        kind = kinds.get(e.table)
        if kind is None:
            continue
        dtypes = values.get(e.span.line, None) if e.value is not None else None
        if dtypes == ():  # `[] if ... else ...` on the newest macOS: nothing expected
            continue
        reason = _comment(lines, e.span.line, e.span.end_line) or _MEANING[kind]
        out.setdefault(e.key, []).append((Expectation(kind, e.table, path, e.span.line, reason), dtypes))
    return Expectations(path, out, complex_ok, complex_at)


_MEANING = {
    "xfail": "expected to fail on MPS (no comment in the tree)",
    "skip": "skipped on MPS (no comment in the tree)",
}


def _trailing(text: str) -> str:
    code, _, comment = text.partition("#")
    return comment.strip() if comment and code.count("'") % 2 == 0 and code.count('"') % 2 == 0 else ""


def _comment(lines: list[str], line: int, end_line: int) -> str:
    """The comment on the entry's lines, else the nearest comment above it in its group (up to a blank line)."""
    for k in range(line, min(end_line, len(lines)) + 1):
        if _trailing(lines[k - 1]):
            return _trailing(lines[k - 1])
    k = line - 2
    while k >= 0 and lines[k].strip():
        text = lines[k].strip()
        if text.startswith("#"):
            block = [text.lstrip("#").strip()]
            while k - 1 >= 0 and lines[k - 1].strip().startswith("#"):
                k -= 1
                block.insert(0, lines[k].strip().lstrip("#").strip())
            return " ".join(b for b in block if b)
        if text.endswith(("{", "(", "[")) and "=" in text:
            break  # the table's head
        k -= 1
    return ""


# ------------------------------------------------------------------ the newest macOS
_NEWEST = {"MACOS_VERSION": math.inf}


def _truth(test: ast.expr) -> bool | None:
    """A macOS condition as the newest macOS decides it (None: not a condition read here)."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        a, b = _number(test.left), _number(test.comparators[0])
        if a is None or b is None:
            return None
        op = type(test.ops[0])
        return {ast.Lt: a < b, ast.LtE: a <= b, ast.Gt: a > b, ast.GtE: a >= b}.get(op)
    if isinstance(test, ast.Call) and ast.unparse(test.func).endswith("is_macos13_or_newer"):
        return True
    if isinstance(test, ast.BoolOp):
        parts = [_truth(v) for v in test.values]
        if None in parts:
            return None
        return all(parts) if isinstance(test.op, ast.And) else any(parts)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _truth(test.operand)
        return None if inner is None else not inner
    return None


def _number(node: ast.expr) -> float | None:
    if isinstance(node, ast.Name):
        return _NEWEST.get(node.id)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    return None


def _older_blocks(module: ast.Module) -> list[tuple[int, int]]:
    """Line ranges of code only an older macOS runs (the body of ``if MACOS_VERSION < N:``, an else arm)."""
    out = []
    for node in ast.walk(module):
        if isinstance(node, ast.If):
            truth = _truth(node.test)
            body = node.orelse if truth else node.body
            if truth is not None and body:
                out.append((body[0].lineno, body[-1].end_lineno or body[-1].lineno))
    return out


def _values(module: ast.Module) -> dict[int, frozenset[str] | tuple | None]:
    """Line of a dict entry's key -> the dtypes its value names on the newest macOS (None: every dtype,
    (): none)."""
    out: dict = {}
    for node in ast.walk(module):
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if k is not None:
                    out[k.lineno] = _dtypes(v)
    return out


def _dtypes(node: ast.expr):
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, ast.IfExp):
        truth = _truth(node.test)
        if truth is None:
            return None
        return _dtypes(node.body if truth else node.orelse)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        names = [_dtype_name(e) for e in node.elts]
        if any(n is None for n in names):
            return None  # an element not read: the whole op is expected, as the safer reading
        return frozenset(names) if names else ()
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _dtypes(node.left), _dtypes(node.right)
        if a is None or b is None:
            return None
        return frozenset(a) | frozenset(b) or ()
    return None


def _dtype_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch":
        return node.attr
    return None
