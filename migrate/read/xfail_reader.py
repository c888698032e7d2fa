"""Read the xfail/skip tables of torch/testing/_internal/common_mps.py.

The file is never imported (its tables exist only when MPS is available).
Tables: assignments anywhere whose target name has XFAILLIST or SKIPLIST as
a word (annotated ones too), SUPPORTED_COMPLEX_OPS, and ``NAME.update(...)``
calls on such names.  Dict tables give one entry per key; sets, lists and
tuples one per string element.

The standard library's ``ast`` reads the usual shapes (string keys and
elements, plain names as values).  A file with a shape whose byte ranges or
messages ast does not tell as libcst does (grouping parentheses, ``*``/``**``
unpacking, f-strings, bytes, a coding cookie, CR line breaks), or with a
syntax error, is read by ``xfail_cst`` with libcst instead, whose import
alone takes ~0.15 s: the same model either way.
"""

from __future__ import annotations

import ast
import bisect
import functools
import re
import warnings
from typing import Iterator

from migrate.model import CommonMps, ParseError, Span, XfailEntry
from migrate.read.xfail_names import is_table_name
from migrate.source.file import char_column


class _Lines:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.starts = [0] + [m.end() for m in re.finditer(rb"\n", data)]

    def line_col(self, off: int) -> tuple[int, int]:
        idx = bisect.bisect_right(self.starts, off) - 1
        return idx + 1, char_column(self.data, self.starts[idx], off)


def read_common_mps(data: bytes, path: str) -> CommonMps:
    """Every xfail/skip table entry of a common_mps.py-like file."""
    return _read_cached(data, path)


@functools.lru_cache(maxsize=4)
def _read_cached(data: bytes, path: str) -> CommonMps:
    lines = _Lines(data)
    tables = read_tables(data, lines)
    if tables is None:
        from migrate.read import xfail_cst

        tables = xfail_cst.read_tables(data, path)
        if isinstance(tables, ParseError):
            return CommonMps(path, (), (tables,))
    items, skipped = tables

    def span(start: int, end: int) -> Span:
        l1, c1 = lines.line_col(start)
        l2, c2 = lines.line_col(end)
        return Span(path, l1, c1, l2, c2, start, end)

    entries: list[XfailEntry] = []
    for table, function, key, (v0, v1), text in items:
        assert text is not None
        if key is None:
            entries.append(XfailEntry(table, text, path, span(v0, v1), None, function))
        else:
            value_src = data[v0:v1].decode("utf-8", "replace")
            entries.append(XfailEntry(table, text, path, span(key[0], v1), value_src, function))
    notes = [ParseError(path, *lines.line_col(at), message) for at, message in skipped]
    return CommonMps(path, tuple(entries), (), tuple(notes))


# ------------------------------------------------------------ the ast reading
class _Unsure(Exception):
    """A shape whose ranges or messages ast does not tell as libcst does: xfail_cst reads the file."""


_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=]", re.M)
_COMMENT = re.compile(rb"#[^\n]*")
# libcst's class names of the expressions ast tells apart (the notes name them); others are _Unsure
_CST_NAMES = {
    ast.Name: "Name",
    ast.Attribute: "Attribute",
    ast.Call: "Call",
    ast.Subscript: "Subscript",
    ast.BinOp: "BinaryOperation",
    ast.UnaryOp: "UnaryOperation",
    ast.BoolOp: "BooleanOperation",
    ast.Compare: "Comparison",
    ast.IfExp: "IfExp",
    ast.Lambda: "Lambda",
    ast.ListComp: "ListComp",
    ast.SetComp: "SetComp",
    ast.DictComp: "DictComp",
    ast.GeneratorExp: "GeneratorExp",
    ast.Dict: "Dict",
    ast.List: "List",
    ast.Set: "Set",
    ast.Tuple: "Tuple",
}
_CST_CONSTANTS = {int: "Integer", float: "Float", complex: "Imaginary", bool: "Name", type(None): "Name"}


def read_tables(data: bytes, lines: _Lines | None = None):
    """xfail_cst.read_tables's (items, skipped) from ast, or None where only libcst's reading is sure; ``lines``:
    the file's _Lines, when the caller has them."""
    if b"\r" in data or data.startswith(b"\xef\xbb\xbf") or _CODING.search(data, 0, _second_line_end(data)):
        return None
    try:
        data.decode("utf-8")
        with warnings.catch_warnings():  # an invalid escape warns; libcst's reading says nothing of it either
            warnings.simplefilter("ignore")
            module = ast.parse(data)
        return _AstTables(lines or _Lines(data)).read(module)
    except (_Unsure, SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError):
        return None


def _second_line_end(data: bytes) -> int:
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    return len(data) if second < 0 else second


class _AstTables:
    def __init__(self, lines: _Lines) -> None:
        self.data, self.starts = lines.data, lines.starts
        self.items: list = []
        self.skipped: list[tuple[int, str]] = []

    def range(self, node: ast.AST) -> tuple[int, int]:
        """Byte offsets (ast's columns are UTF-8 byte offsets in their line)."""
        starts = self.starts
        return starts[node.lineno - 1] + node.col_offset, starts[node.end_lineno - 1] + node.end_col_offset

    def plain(self, after: int, node: ast.AST, opens: int = 0) -> tuple[int, int]:
        """``node``'s range, when the code between ``after`` and it holds ``opens`` "(" (its container's):
        more would be grouping parentheses, which libcst's range includes and ast's does not."""
        start, end = self.range(node)
        if _COMMENT.sub(b"", self.data[after:start]).count(b"(") != opens:
            raise _Unsure
        return start, end

    def read(self, module: ast.Module):
        for stmt, function in _statements(module.body, None):
            if isinstance(stmt, ast.Assign):
                after = max(self.range(t)[1] for t in stmt.targets)
                for target in stmt.targets:
                    if isinstance(target, ast.Name) and is_table_name(target.id):
                        self.table(target.id, function, stmt.value, after)
            elif isinstance(stmt, ast.AnnAssign):
                target = stmt.target
                if isinstance(target, ast.Name) and is_table_name(target.id) and stmt.value is not None:
                    self.table(target.id, function, stmt.value, self.range(stmt.annotation)[1])
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                call, func = stmt.value, stmt.value.func
                if (
                    isinstance(func, ast.Attribute)
                    and func.attr == "update"
                    and isinstance(func.value, ast.Name)
                    and is_table_name(func.value.id)
                ):
                    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
                        raise _Unsure  # libcst's order of arguments
                    after, opens = self.range(func)[1], 1
                    for arg in call.args:
                        self.table(func.value.id, function, arg, after, opens)
                        after, opens = self.range(arg)[1], 0
        return self.items, self.skipped

    def table(self, table: str, function: str | None, value: ast.expr, after: int, opens: int = 0) -> None:
        start, end = self.plain(after, value, opens)
        if isinstance(value, ast.Dict):
            after = start + 1
            for key, v in zip(value.keys, value.values):
                if key is None:
                    raise _Unsure  # ** unpacking: libcst's note is at the "**"
                k = self.plain(after, key)
                self.entry(table, function, key, k, v, self.plain(k[1], v))
                after = self.range(v)[1]
        elif isinstance(value, (ast.Set, ast.List, ast.Tuple)):
            opened = self.data[start : start + 1] in (b"{", b"[") or (
                self.data[start : start + 1] == b"(" and self.data[end - 1 : end] == b")"
            )  # a tuple without parentheses starts at its first element (a "(" there is that element's)
            after = start + 1 if opened else start
            for el in value.elts:
                if isinstance(el, ast.Starred):
                    raise _Unsure
                r = self.plain(after, el)
                self.entry(table, function, None, None, el, r)
                after = r[1]
        else:
            self.skipped.append((start, f"{table}: {_cst_name(value)} is not a dict/set/list literal, skipped"))

    def entry(self, table, function, key, key_range, value, value_range) -> None:
        literal = key if key is not None else value
        text = _string(literal)
        if text is None:
            at = key_range[0] if key is not None else value_range[0]
            self.skipped.append((at, f"{table}: non-literal key ({_cst_name(literal)}) skipped"))
        else:
            self.items.append((table, function, key_range, value_range, text))


def _string(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return node.value
        if isinstance(node.value, bytes):
            raise _Unsure  # libcst names one literal SimpleString, several ConcatenatedString
    elif isinstance(node, ast.JoinedStr):
        raise _Unsure
    return None


def _cst_name(node: ast.expr) -> str:
    if isinstance(node, ast.Constant):
        name = _CST_CONSTANTS.get(type(node.value))
    else:
        name = _CST_NAMES.get(type(node))
    if name is None:
        raise _Unsure
    return name


def _statements(body: list, function: str | None) -> Iterator[tuple[ast.stmt, str | None]]:
    """Every simple statement of a block, in source order, recursing into compound statements (libcst's
    walk in xfail_cst): a function's name is the ``function`` of the statements in it."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _statements(stmt.body, stmt.name)
        elif isinstance(stmt, (ast.ClassDef, ast.With, ast.AsyncWith)):
            yield from _statements(stmt.body, function)
        elif isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While)):
            yield from _statements(stmt.body, function)
            yield from _statements(stmt.orelse, function)
        elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            yield from _statements(stmt.body, function)
            for handler in stmt.handlers:
                yield from _statements(handler.body, function)
            yield from _statements(stmt.orelse, function)
            yield from _statements(stmt.finalbody, function)
        elif isinstance(stmt, ast.Match):
            for case in stmt.cases:
                yield from _statements(case.body, function)
        else:
            yield stmt, function
