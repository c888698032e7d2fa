"""Rewrite Objective-C constructs into C++ tree-sitter can parse.

Every rewrite keeps the byte length and (almost always) the line structure, so
node positions in the parsed copy are positions in the real file:

- ``@autoreleasepool``, ``@interface ... @end``, ``__bridge`` ... -> spaces
- ``@"s"`` / ``@(x)`` -> `` "s"`` / `` (x)``; ``@[a, b]`` / ``@{k : v}`` ->
  `` (a, b)`` / `` (k , v)`` (comma expressions)
- ``typedef NS_ENUM(T, Name)`` -> ``enum Name``; ``for (X* x in xs)`` -> ``for (X* x :  xs)``
- block literals ``^Ret(args) {`` -> ``[]   (args) {`` (a lambda), ``^{`` -> ``[]{``
- block pointer types ``(^name)(...)`` -> ``(*name)(...)``
- message sends ``[recv sel:a with:b]`` -> ``(recv,sel,a,with,b)`` (a comma
  expression: every identifier survives, e.g. ``mpsGraph``)

Preprocessor lines are left alone (macro bodies are expanded and neutralised
separately).  Identifiers are counted on the scrubbed original, not here.
"""

from __future__ import annotations

import re

from migrate.source import SourceFile
from migrate.source.tokens import blank

from migrate.source.literal_search import matches_at, matches_from, offsets

_AT_REGION = re.compile(rb"@(?:interface|implementation|protocol)\b(?!\s*\().*?@end\b", re.S)
_AT_STMT = re.compile(rb"@(?:class|compatibility_alias)\b[^;]*;")
_AT_CALL = re.compile(rb"@(?:selector|available|encode|protocol|synchronized)\s*\(")
_AT_WORD = re.compile(rb"@(?:autoreleasepool|finally|try|catch|throw)\b")
_AT_LIT = re.compile(rb'@(?=["(\[{]|YES\b|NO\b|\d|-\d)')
_NS_ENUM = re.compile(rb"typedef\s+NS_(?:ENUM|OPTIONS|CLOSED_ENUM)\s*\(\s*\w+\s*,\s*(\w+)\s*\)")
_QUALIFIERS = re.compile(  # every match starts with "__" or "_N"; word start checked by caller
    rb"_(?:_(?:bridge_retained|bridge_transfer|bridge|weak|strong|block|unsafe_unretained"
    rb"|autoreleasing|nonnull|nullable)|N(?:onnull|ullable|ull_unspecified))(?!\w)"
)
# ``^`` starting a block literal: optional return type, optional (params), then ``{``
_BLOCK = re.compile(
    rb"\^[ \t]*(?P<ret>[A-Za-z_][\w:<>, \t*&]*?)?[ \t]*"
    rb"(?P<params>\((?:[^(){};]|\([^(){};]*\))*\))?(?P<ws>[ \t]*)\{"
)
_FOR_IN = re.compile(rb"for[ \t]*\([^;():{}]*?[\w*&][ \t]+(in)[ \t]")
_DICT_TOKENS = re.compile(rb"::|[()\[\]{}:]")
_BLOCK_PTR = re.compile(rb"\(\s*\^\s*\w*\s*\)\s*\(")
_BLOCK_PREV = frozenset(b"(,=:?{};!&|")
# keywords that can also be Objective-C selector names
_KW_SELECTORS = frozenset(
    b"new delete class default register operator template typename public private protected friend auto this".split()
)
_RECEIVER = re.compile(rb"\s*(?:[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*(?:\(\))?(?:(?:\.|->)[A-Za-z_]\w*(?:\(\))?)*)(?=\s)")
_FIRST_SEL = re.compile(rb"\s+([A-Za-z_]\w*)[ \t]*(?::(?!:)|\s*$)")
_KEYWORD = re.compile(rb"(?<![\w:])([A-Za-z_]\w*):(?!:)")


def _is_word_byte(b: int) -> bool:
    return b == 95 or 48 <= b <= 57 or 65 <= b <= 90 or 97 <= b <= 122


def _before(code: bytes, i: int) -> tuple[int, bool]:
    """(previous non-blank byte or 0, whether a newline or the file start lies between)."""
    lo = max(0, i - 80)
    chunk = code[lo:i]
    kept = chunk.rstrip(b" \t\r\n")
    if kept:
        return kept[-1], b"\n" in chunk[len(kept) :]
    if lo == 0:
        return 0, True
    prev, _ = _before(code, lo)
    return prev, b"\n" in chunk or prev == 0


def _prev_char(code: bytes, i: int) -> int:
    return _before(code, i)[0]


def _prev_word(code: bytes, i: int) -> bytes:
    j = i - 1
    while j >= 0 and code[j] in b" \t\r\n":
        j -= 1
    k = j
    while k >= 0 and (chr(code[k]).isalnum() or code[k] == 95):
        k -= 1
    return code[k + 1 : j + 1]


def _matching(code: bytes, open_at: int, opener: int, closer: int) -> int:
    """Index of the bracket closing the one at ``open_at``, or -1."""
    depth = 0
    pat = re.compile(re.escape(bytes([opener])) + b"|" + re.escape(bytes([closer])))
    for m in pat.finditer(code, open_at):
        depth += 1 if code[m.start()] == opener else -1
        if depth == 0:
            return m.start()
    return -1


def _square_pairs(code: bytes) -> list[tuple[int, int]]:
    pairs: list[tuple[int, int]] = []
    stack: list[int] = []
    for i in sorted(offsets(code, b"[") + offsets(code, b"]")):  # found by bytes.find: no per-byte regex step
        if code[i] == 91:
            stack.append(i)
        elif stack:
            pairs.append((stack.pop(), i))
    return pairs


def _receiver_end(code: bytes, s: int, e: int) -> int:
    """End of the receiver expression of a message send ``[`` at s, ``]`` at e."""
    m = _RECEIVER.match(code, s + 1, e)
    if m and m.end() > m.start():
        return m.end()
    depth = 0
    i = s + 1
    while i < e and code[i] in b" \t\r\n":
        i += 1
    start = i
    while i < e:
        c = code[i]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
        elif depth == 0 and c in b" \t\r\n" and i > start:
            return i
        elif depth == 0 and c in b",;=":
            return -1
        i += 1
    return -1


def _message_send(code: bytes, s: int, e: int) -> list[tuple[int, bytes]] | None:
    """Edits turning the message send [s..e] into a comma expression, or None."""
    prev, newline = _before(code, s)
    if newline:
        pass  # a statement start: never a subscript in formatted code
    elif prev in b")]\"'" and prev:
        return None
    elif prev and (chr(prev).isalnum() or prev == 95):
        if _prev_word(code, s) not in (b"return", b"case", b"throw", b"else", b"do"):
            return None
    nxt = code[e + 1 : e + 2]
    if nxt in (b"(", b"{", b"<"):
        return None  # a lambda
    r = _receiver_end(code, s, e)
    if r < 0:
        return None
    first = _FIRST_SEL.match(code, r, e)
    if not first:
        return None
    edits: list[tuple[int, bytes]] = [(s, b"("), (e, b")")]
    sel_start = first.start(1)
    for m in _KEYWORD.finditer(code, sel_start, e):
        k = m.start(1) - 1
        if m.start(1) != sel_start and (code[k] not in b" \t\r\n" or _prev_char(code, m.start(1)) == 63):
            continue  # not after whitespace, or "x ? a:b"
        edits += _comma_before(code, m.start(1))
        edits.append((m.end(1), b","))
        edits += _kw_fix(code, m.start(1), m.end(1))
    if len(edits) == 2:  # unary selector: [recv sel]
        edits += _comma_before(code, sel_start)
        edits += _kw_fix(code, sel_start, first.end(1))
    return edits


def _dict_literal(code: bytes, s: int, e: int, put) -> None:
    """@[a, b] / @{k : v,} -> (a, b) / (k , v ): a comma expression."""
    inner = code[s + 1 : e].strip()
    if not inner:
        put(s, b"0")
        put(e, b" ")
        return
    put(s, b"(")
    put(e, b")")
    if code[s] == 123:
        for pos in _dict_colons(code, s, e):
            put(pos, b",")
    if inner.endswith(b","):
        put(code.rindex(b",", s, e), b" ")


def _dict_colons(code: bytes, s: int, e: int) -> list[int]:
    """Offsets of the key/value colons at depth 0 of the dictionary literal {s..e}."""
    found: list[int] = []
    depth = 0
    for m in _DICT_TOKENS.finditer(code, s + 1, max(e, s)):
        c = m.group()
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
        elif c == b":" and depth == 0:
            found.append(m.start())
    return found


def _comma_before(code: bytes, i: int) -> list[tuple[int, bytes]]:
    """Turn the last space/tab of the whitespace run ending at i into ","."""
    k = i - 1
    while k >= 0 and code[k] in b" \t\r\n":
        if code[k] in b" \t":
            return [(k, b",")]
        k -= 1
    return []


def _kw_fix(code: bytes, s: int, e: int) -> list[tuple[int, bytes]]:
    if code[s:e] in _KW_SELECTORS:
        return [(s, b"_")]
    return []


def neutralize(sc: SourceFile, skip: list[tuple[int, int]] = ()) -> bytearray:
    """A parseable copy of ``sc.data``: same length, same newlines; ``skip`` regions come out blank."""
    src = sc.code
    nd = bytearray(src)
    blanked = memoryview(blank(src))  # every region's blank copy is a slice of it: no copy per region
    for ds, de in sc.directives:
        nd[ds:de] = blanked[ds:de]
    out = bytearray(sc.data)
    for s, e in skip:
        nd[s:e] = out[s:e] = blanked[s:e]
    code = bytes(nd)  # code only: no comments, literals or preprocessor lines

    def put(start: int, text: bytes) -> None:
        out[start : start + len(text)] = text

    def wipe(start: int, end: int) -> None:
        out[start:end] = blank(bytes(out[start:end]))

    regions: list[tuple[int, int]] = []  # wiped @interface/@implementation blocks: no edits inside
    ats = offsets(code, b"@")  # every match below starts at one: tried there only
    if ats:
        for m in matches_from(_AT_REGION, code, ats):
            wipe(*m.span())
            regions.append(m.span())
        for m in matches_from(_AT_STMT, code, ats):
            wipe(*m.span())
        for m in matches_from(_AT_CALL, code, ats):
            close = _matching(code, m.end() - 1, 40, 41)
            if close > 0:
                wipe(m.start(), close + 1)
                put(m.start(), b"1")
        for m in matches_from(_AT_WORD, code, ats):
            word = m.group()
            if word in (b"@try", b"@catch", b"@throw"):
                put(m.start(), b" ")
            else:
                wipe(*m.span())
        for m in matches_from(_AT_LIT, code, ats):
            put(m.start(), b" ")
            opener = code[m.end() : m.end() + 1]
            if opener == b"[":
                close = _matching(code, m.end(), 91, 93)
                if close > 0:
                    _dict_literal(code, m.end(), close, put)
            elif opener == b"{":
                close = _matching(code, m.end(), 123, 125)
                if close > 0:
                    _dict_literal(code, m.end(), close, put)
    for m in matches_at(_QUALIFIERS, code, (b"__", b"_N")):
        if m.start() == 0 or not _is_word_byte(code[m.start() - 1]):
            wipe(*m.span())
    if b"NS_" in code:
        for m in _NS_ENUM.finditer(code):  # typedef NS_ENUM(T, Name) -> enum Name
            wipe(*m.span())
            put(m.start(), b"enum " + m.group(1))
    if b"^" in code:
        for m in _BLOCK_PTR.finditer(code):
            put(code.index(b"^", m.start()), b"*")
        for m in _BLOCK.finditer(code):
            _block(code, m, put, wipe)
    for m in matches_at(_FOR_IN, code, (b"for",)):
        if m.start() == 0 or not _is_word_byte(code[m.start() - 1]):
            put(m.start(1), b": ")
    for s, e in _square_pairs(code):
        if any(a <= s < b for a, b in regions):
            continue
        edits = _message_send(code, s, e)
        if edits:
            for pos, text in edits:
                put(pos, text)
    return out


def _block(code: bytes, m: re.Match[bytes], put, wipe) -> None:
    s = m.start()
    if code[s + 1 : s + 2] == b"=" or _prev_char(code, s) not in _BLOCK_PREV and _prev_word(code, s) != b"return":
        return  # xor, not a block
    ret, params, ws = m.group("ret"), m.group("params"), m.group("ws")
    if ret and params is None:
        return
    if params is not None:
        p_s = m.start("params")
        if p_s - s >= 2:  # room for "[]" before the parameter list
            wipe(s, p_s)
            put(s, b"[]")
        elif params.strip(b"() \t") == b"":
            wipe(s, m.end("params"))
            put(s, b"[]")  # ^() -> [] (a lambda without parameter list)
        elif ws:
            put(s, b"[](")
            put(s + 3, code[p_s + 1 : m.end("params")])  # shift the list right by one
        else:
            put(s, b" ")
    elif not ret:
        if s > 0 and code[s - 1] in b" \t":
            put(s - 1, b"[]")
        elif m.end() - s >= 3:
            put(s, b"[]")  # "^ {" -> "[]{"
        else:
            put(s, b" ")
