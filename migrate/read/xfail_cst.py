"""The libcst reading of common_mps.py's tables (xfail_reader's reference path).

xfail_reader reads a file with the standard library's ``ast`` when that gives exactly what this module
gives (the usual shapes); this module reads the rest: syntax errors (with libcst's messages), and the shapes
whose ranges or messages only libcst tells (grouping parentheses, unpacking, f-strings, bytes keys).

Speed: instead of a MetadataWrapper (which records a position for every node
of the module, ~200 ms here), one codegen pass tracks byte offsets and keeps
those of the few nodes we need.
"""

from __future__ import annotations

import ast
import re
from typing import Iterator

import libcst as cst

from migrate.model import ParseError
from migrate.read.xfail_names import is_table_name


# ------------------------------------------------------------ finding tables
class _Found:
    """Nodes to locate, collected in source order before the offset pass."""

    def __init__(self) -> None:
        # (table, function, key node or None, value/element node, container kind)
        self.items: list[tuple[str, str | None, cst.CSTNode | None, cst.CSTNode, str]] = []
        self.skipped: list[tuple[cst.CSTNode, str]] = []

    def nodes(self) -> set[int]:
        ids = {id(v) for *_, v, _ in self.items}
        ids.update(id(k) for _, _, k, _, _ in self.items if k is not None)
        ids.update(id(n) for n, _ in self.skipped)
        return ids


def _statements(body: object, function: str | None) -> Iterator[tuple[cst.BaseSmallStatement, str | None]]:
    """Every small statement in a block, recursing into compound statements."""
    for stmt in getattr(body, "body", ()):
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                yield small, function
        elif isinstance(stmt, cst.BaseCompoundStatement):
            yield from _compound(stmt, function)


def _compound(stmt: cst.CSTNode, function: str | None) -> Iterator[tuple[cst.BaseSmallStatement, str | None]]:
    if isinstance(stmt, cst.FunctionDef):
        function = stmt.name.value
    for child in stmt.children:
        if isinstance(child, cst.SimpleStatementSuite):
            for small in child.body:
                yield small, function
        elif isinstance(child, cst.IndentedBlock):
            yield from _statements(child, function)
        elif isinstance(
            child,
            (cst.BaseCompoundStatement, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.MatchCase),
        ):
            yield from _compound(child, function)


def _collect(module: cst.Module) -> _Found:
    found = _Found()
    for small, function in _statements(module, None):
        if isinstance(small, cst.Assign):
            for target in small.targets:
                if isinstance(target.target, cst.Name) and is_table_name(target.target.value):
                    _table(found, target.target.value, function, small.value)
        elif isinstance(small, cst.AnnAssign):
            if isinstance(small.target, cst.Name) and is_table_name(small.target.value) and small.value is not None:
                _table(found, small.target.value, function, small.value)
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            call = small.value
            func = call.func
            if (
                isinstance(func, cst.Attribute)
                and func.attr.value == "update"
                and isinstance(func.value, cst.Name)
                and is_table_name(func.value.value)
            ):
                for arg in call.args:
                    _table(found, func.value.value, function, arg.value)
    return found


def _table(found: _Found, table: str, function: str | None, value: cst.BaseExpression) -> None:
    if isinstance(value, cst.Dict):
        for el in value.elements:
            if isinstance(el, cst.DictElement):
                _entry(found, table, function, el.key, el.value, "dict")
            else:
                found.skipped.append((el, f"{table}: '**' unpacking skipped"))
    elif isinstance(value, (cst.Set, cst.List, cst.Tuple)):
        for el in value.elements:
            if isinstance(el, cst.Element):
                _entry(found, table, function, None, el.value, "set")
            else:
                found.skipped.append((el, f"{table}: '*' unpacking skipped"))
    else:
        found.skipped.append((value, f"{table}: {type(value).__name__} is not a dict/set/list literal, skipped"))


def _entry(
    found: _Found,
    table: str,
    function: str | None,
    key: cst.BaseExpression | None,
    value: cst.BaseExpression,
    kind: str,
) -> None:
    literal = key if key is not None else value
    if _literal(literal) is None:
        found.skipped.append((literal, f"{table}: non-literal key ({type(literal).__name__}) skipped"))
    else:
        found.items.append((table, function, key, value, kind))


def _literal(node: cst.BaseExpression) -> str | None:
    """The value of a plain string literal or implicit concatenation of them."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            v = node.evaluated_value
        except Exception:  # malformed escapes etc.
            return None
        return v if isinstance(v, str) else None
    return None


# ------------------------------------------------------------ byte offsets
def _offsets(module: cst.Module, wanted: set[int]) -> dict[int, tuple[int, int]]:
    """Byte (start, end) of the wanted nodes, from one codegen pass."""
    try:
        from libcst._nodes.internal import CodegenState
    except ImportError:  # pragma: no cover - libcst internals moved
        return _offsets_via_metadata(module, wanted)

    encoding = module.encoding
    spans: dict[int, tuple[int, int]] = {}

    class _State(CodegenState):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
            self.pos = 0
            self.stack: list[int] = []

        def add_indent_tokens(self) -> None:
            for tok in self.indent_tokens:
                self.pos += len(tok) if tok.isascii() else len(tok.encode(encoding))

        def add_token(self, value: str) -> None:
            self.pos += len(value) if value.isascii() else len(value.encode(encoding))

        def before_codegen(self, node: cst.CSTNode) -> None:
            self.stack.append(self.pos)

        def after_codegen(self, node: cst.CSTNode) -> None:
            start = self.stack.pop()
            if id(node) in wanted:
                spans[id(node)] = (start, self.pos)

    try:
        module._codegen(_State())
    except (AttributeError, TypeError):  # pragma: no cover - libcst internals changed
        return _offsets_via_metadata(module, wanted)
    return spans


def _offsets_via_metadata(module: cst.Module, wanted: set[int]) -> dict[int, tuple[int, int]]:
    from libcst.metadata import ByteSpanPositionProvider, MetadataWrapper

    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    spans = wrapper.resolve(ByteSpanPositionProvider)
    return {id(n): (s.start, s.start + s.length) for n, s in spans.items() if id(n) in wanted}


def _error_position(data: bytes, exc: cst.ParserSyntaxError) -> tuple[int, int]:
    """libcst's native tokenizer errors carry no position; ask the stdlib parser then."""
    at = re.search(r"error at (\d+):(\d+)", exc.message)
    if at:
        return int(at.group(1)), int(at.group(2)) + 1
    try:
        ast.parse(data)
    except SyntaxError as err:
        return err.lineno or 1, max(err.offset or 1, 1)
    except (ValueError, RecursionError, MemoryError):
        pass
    return exc.editor_line, exc.editor_column


def read_tables(data: bytes, path: str):
    """(items, skipped) as xfail_reader's builder takes them: items (table, function, key range or None, value
    range, the key's or element's string), skipped (offset, message); or a ParseError (a syntax error)."""
    try:
        module = cst.parse_module(data)
    except cst.ParserSyntaxError as exc:
        line, col = _error_position(data, exc)
        return ParseError(path, line, col, exc.message)
    except (SyntaxError, UnicodeDecodeError, LookupError, ValueError, RecursionError) as exc:
        return ParseError(path, 1, 1, f"cannot parse: {exc}")
    found = _collect(module)
    spans = _offsets(module, found.nodes())
    items = [
        (
            table,
            function,
            None if key is None else spans[id(key)],
            spans[id(value)],
            _literal(key if key is not None else value),
        )
        for table, function, key, value, kind in found.items
    ]
    skipped = [(spans.get(id(node), (0, 0))[0], message) for node, message in found.skipped]
    return items, skipped
