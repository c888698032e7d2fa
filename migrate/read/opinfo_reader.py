"""OpInfo entries of common_methods_invocations.py: a fast scan finds them, ``ast`` reads only MPS decorations.

The file is ~1.4 MB (a full libcst parse takes seconds). A regex finds
``SomethingInfo('name'`` heads; a string- and comment-aware token scan finds
each entry's end and its ``DecorateInfo(...)`` calls; only calls that mention
``mps`` are parsed, one by one, with the standard library's ``ast`` (a
decoration is only read, never rewritten: libcst, whose import alone takes
~0.15 s, is not needed). Positions are byte offsets of the whole file.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache

from migrate.model import MpsDecoration, OpInfoEntry, Span
from migrate.source.file import char_column

_STRING = rb"""[rRbBuUfF]{0,2}(?:'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")"""
# comments, strings, brackets, commas, identifiers; everything else is skipped
_TOKENS = re.compile(rb"#[^\n]*|" + _STRING + rb"|[()\[\]{},]|\w+", re.S)
# the same scan without identifiers and commas, for bracket matching (a string's end does not depend on
# whether the word before its quote was matched as a word or as the string's prefix)
_BRACKET_TOKENS = re.compile(rb"#[^\n]*|" + _STRING + rb"|[()\[\]{}]", re.S)
_OPEN, _CLOSE = (b"(", b"[", b"{"), (b")", b"]", b"}")
_KWARG = re.compile(rb"\b(variant_test_name|aten_name)\s*=\s*(['\"])([^'\"\n]*)\2")
_ALIASES = re.compile(rb"\baliases\s*=\s*[(\[]([^()\[\]]*)[)\]]")
_WORD_BYTES = frozenset(b"_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")  # a bytes regex's \w
_NOT_CALLERS = {b"return", b"in", b"and", b"or", b"not", b"if", b"else", b"lambda", b"yield"}


_ANY_HEAD = re.compile(rb"Info\(\s*(['\"])([\w.]+)\1")  # ``Info('name'``: the literal "Info(" is looked for first
_PLAIN_NAME = re.compile(r"[\w.]+", re.ASCII)  # a name _ANY_HEAD can match


def _heads(data: bytes, names: Iterable[str] | None) -> Iterator[re.Match[bytes]]:
    """The ``Info('name'`` heads of entries named one of ``names`` (every entry when None), in order
    (find_entries adds the word before each)."""
    if names is None:
        yield from _ANY_HEAD.finditer(data)
        return
    wanted = frozenset(names)
    if all(_PLAIN_NAME.fullmatch(n) for n in wanted):  # every head, kept by name: no pattern compiled per call
        encoded = {n.encode() for n in wanted}
        yield from (m for m in _ANY_HEAD.finditer(data) if m.group(2) in encoded)
    else:
        yield from _head_regex(wanted).finditer(data)


@lru_cache(maxsize=8)
def _head_regex(names: frozenset[str]) -> re.Pattern[bytes]:
    """``_ANY_HEAD`` for these names alone (some of which it cannot match)."""
    alt = b"|".join(re.escape(n.encode()) for n in sorted(names, key=len, reverse=True)) or b"(?!)"
    return re.compile(rb"Info\(\s*(['\"])(" + alt + rb")\1")


def _word_start(data: bytes, end: int) -> int:
    """Offset of the word (ASCII letters, digits, ``_``) that ends at ``end``."""
    k = end
    while k > 0 and data[k - 1] in _WORD_BYTES:
        k -= 1
    return k


def _matching_close(data: bytes, open_at: int) -> int | None:
    """Offset just past the bracket closing the one at ``open_at``."""
    depth = 0
    for m in _BRACKET_TOKENS.finditer(data, open_at):
        tok = m.group()
        if tok in _OPEN:
            depth += 1
        elif tok in _CLOSE:
            depth -= 1
            if depth == 0:
                return m.end()
    return None


def find_entries(data: bytes, path: str, names: Iterable[str] | None = None) -> list[OpInfoEntry]:
    """Entries whose first argument is one of ``names`` (every entry when None)."""
    out = []
    lines = _LineIndex(data)
    for m in _heads(data, names):
        start = _word_start(data, m.start())  # the head ``SomethingInfo`` (a regex \b\w*Info scans 10x slower)
        if b"#" in data[data.rfind(b"\n", 0, start) + 1 : start]:
            continue  # commented-out code
        end = _matching_close(data, m.start() + 4)
        if end is not None:
            kind = data[start : m.start() + 4].decode()
            out.append(_read_entry(data, path, start, end, kind, m.group(2).decode(), lines))
    return out


_PAST = float("inf")


class _LineIndex:
    """Line numbers of offsets: newlines counted from the nearest offset already asked (a file's few entries
    are asked about mostly in order, so its bytes are counted about once, and only where an entry is found)."""

    def __init__(self, data: bytes):
        self.data = data
        self.known = [(0, 1)]  # sorted (offset, its line)

    def line_of(self, pos: int) -> tuple[int, int]:
        """(line, offset of the line's start) of ``pos``."""
        k = bisect.bisect_right(self.known, (pos, _PAST)) - 1  # the nearest offset known at or before pos
        at, line = self.known[k]
        line += self.data.count(b"\n", at, pos)
        if at != pos:
            self.known.insert(k + 1, (pos, line))
        return line, self.data.rfind(b"\n", 0, pos) + 1

    def span(self, path: str, start: int, end: int) -> Span:
        l1, s1 = self.line_of(start)
        l2, s2 = self.line_of(end)
        return Span(path, l1, char_column(self.data, s1, start), l2, char_column(self.data, s2, end), start, end)


def _read_entry(data: bytes, path: str, start: int, end: int, kind: str, name: str, lines: _LineIndex) -> OpInfoEntry:
    raw = data[start:end]
    kw = {m.group(1).decode(): m.group(3).decode() for m in _KWARG.finditer(raw)}
    decorations = []
    if b"'mps'" in raw or b'"mps"' in raw:
        for s, e, container in _decorate_calls(data, start, end):
            if b"mps" in data[s:e]:
                deco = _read_decoration(data, path, s, e, container, lines)
                if deco is not None:
                    decorations.append(deco)
    return OpInfoEntry(
        kind,
        name,
        kw.get("variant_test_name", ""),
        kw.get("aten_name"),
        path,
        lines.span(path, start, end),
        tuple(decorations),
        _aliases(raw),
    )


def _aliases(raw: bytes) -> tuple[str, ...]:
    """The string literals of an entry's ``aliases=(...)`` (its first such keyword)."""
    m = _ALIASES.search(raw)
    return tuple(s.decode() for _, s in re.findall(rb"(['\"])([\w.]+)\1", m.group(1))) if m else ()


def _decorate_calls(data: bytes, start: int, end: int) -> Iterator[tuple[int, int, tuple[int, bool] | None]]:
    """(start, end, container) of every ``DecorateInfo(...)`` call in data[start:end].

    ``container`` is (offset of the enclosing open bracket, whether it is a tuple).
    """
    stack: list[tuple[int, bool, int | None]] = []  # (open offset, is a tuple, DecorateInfo start)
    prev: re.Match | None = None
    for m in _TOKENS.finditer(data, start, end):
        tok = m.group()
        if tok.startswith(b"#"):
            continue
        if tok in _OPEN:
            ident = prev.group() if prev is not None and prev.end() == _skip_ws(data, prev.end(), m.start()) else None
            is_call = (
                tok == b"("
                and ident is not None
                and (ident[:1].isalpha() or ident[:1] == b"_")
                and ident not in _NOT_CALLERS
            )
            stack.append(
                (m.start(), tok == b"(" and not is_call, prev.start() if is_call and ident == b"DecorateInfo" else None)
            )
        elif tok in _CLOSE and stack:
            open_at, _, deco_start = stack.pop()
            if deco_start is not None:
                parent = stack[-1] if stack else None
                yield deco_start, m.end(), (parent[0], parent[1]) if parent else None
        prev = m


def _skip_ws(data: bytes, pos: int, limit: int) -> int:
    """``pos`` if only whitespace separates it from ``limit``, else -1."""
    return pos if not data[pos:limit].strip() else -1


def _read_decoration(data: bytes, path: str, s: int, e: int, container, lines: _LineIndex) -> MpsDecoration | None:
    try:
        call = ast.parse(data[s:e].decode("utf-8", "replace"), mode="eval").body
    except (SyntaxError, ValueError):  # ValueError: a NUL byte
        return None
    info = _decoration_fields(call) if isinstance(call, ast.Call) else None
    if info is None:
        return None
    comma_fix = None
    if container is not None and container[1]:  # removing from a 2-tuple must leave a tuple
        close = _matching_close(data, container[0])
        elements = _elements(data, container[0] + 1, close - 1) if close else []
        if len(elements) == 2:
            other = next((el for el in elements if not el[0] <= s < el[1]), None)
            if other is not None and not other[2]:
                comma_fix = other[1]
    return MpsDecoration(info[0], info[1], info[2], path, lines.span(path, s, e), comma_fix)


def _elements(data: bytes, start: int, end: int) -> list[tuple[int, int, bool]]:
    """Top-level elements of a bracket's content: (start, end, followed by a comma)."""
    out: list[tuple[int, int, bool]] = []
    depth, el_start, el_end = 0, None, None
    for m in _TOKENS.finditer(data, start, end):
        tok = m.group()
        if tok.startswith(b"#"):
            continue
        if tok == b"," and depth == 0:
            if el_start is not None:
                out.append((el_start, el_end, True))
            el_start = None
            continue
        if el_start is None:
            el_start = m.start()
        if tok in _OPEN:
            depth += 1
        elif tok in _CLOSE:
            depth -= 1
        el_end = m.end()
    if el_start is not None:
        out.append((el_start, el_end, False))
    return out


def _decoration_fields(call: ast.Call) -> tuple[str, str | None, str | None] | None:
    """(decorator kind, class, test) of an MPS expected-failure/skip DecorateInfo, else None."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "DecorateInfo"):
        return None
    positional = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
    positional += [k.value for k in call.keywords if k.arg is None]  # ``**kw``
    keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
    if _string(keywords.get("device_type")) != "mps":
        return None
    kind = _decorator_kind(positional[0] if positional else keywords.get("decorators"))
    if kind is None:
        return None

    def text(i: int, kw: str) -> str | None:
        return _string(positional[i] if len(positional) > i else keywords.get(kw))

    return kind, text(1, "cls_name"), text(2, "test_name")


def _string(node) -> str | None:
    """The value of a plain string literal (no bytes, no f-string)."""
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _decorator_kind(node) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        name = node.attr
    elif isinstance(node, ast.Name):
        name = node.id
    else:
        return None
    return {"expectedFailure": "expectedFailure", "skip": "skip", "skipIf": "skip"}.get(name)
