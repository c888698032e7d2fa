"""The YAML scalar grammar of native_functions.yaml's line scanner (the reference path of yaml_reader): quoted
scalars and their escapes, trailing comments, flow-sequence items, booleans."""

from __future__ import annotations

import re

_BOOLS = {
    b: v
    for v, words in ((True, "yes Yes YES true True TRUE on On ON"), (False, "no No NO false False FALSE off Off OFF"))
    for b in words.split()
}
_BOOLS_B = {b.encode(): v for b, v in _BOOLS.items()}
_BAD_PLAIN_START = frozenset(b"&*!|>%@`]},")
_FLOW_PLAIN = re.compile(rb"[^\s,\[\]{}#:'\"?&*!|>%@`-][^,\[\]{}#:]*\Z")  # a strict plain item in [a, b]
_HASH, _DASH, _SPACE, _NL = 35, 45, 32, 10


class _Fail(Exception):
    """A problem on the current line: (byte column in line, message)."""

    def __init__(self, col: int, message: str) -> None:
        self.col, self.message = col, message


def _quoted(line: bytes, pos: int) -> tuple[str, int]:
    """Unquote a single- or double-quoted scalar; return (value, index of closing quote)."""
    q = line[pos]
    i = pos + 1
    n = len(line)
    if q == 39:
        while True:
            j = line.find(b"'", i)
            if j < 0:
                raise _Fail(pos, "unterminated quoted string (multi-line scalars are not supported)")
            if j + 1 < n and line[j + 1] == 39:
                i = j + 2
                continue
            return line[pos + 1 : j].replace(b"''", b"'").decode("utf-8", "replace"), j
    while True:
        j = line.find(b'"', i)
        if j < 0:
            raise _Fail(pos, "unterminated quoted string (multi-line scalars are not supported)")
        k = j - 1
        while k > pos and line[k] == 92:  # count backslashes before the quote
            k -= 1
        if (j - 1 - k) % 2 == 0:
            break
        i = j + 1
    raw = line[pos + 1 : j].decode("utf-8", "replace")
    if "\\" in raw:
        try:
            return _ESCAPE.sub(_unescape, raw), j
        except ValueError as exc:
            raise _Fail(pos, f"bad escape in quoted string: {exc}") from None
    return raw, j


_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.?)")
_SIMPLE_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}


def _unescape(m: re.Match[str]) -> str:
    """One YAML double-quoted escape (the set PyYAML accepts)."""
    code = m.group(1)
    if len(code) > 1:
        return chr(int(code[1:], 16))
    if code in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[code]
    raise ValueError(f"unknown escape '\\{code}'")


def _trailing_comment(line: bytes, pos: int) -> bytes | None:
    rest = line[pos:]
    body = rest.lstrip(b" ")
    if not body:
        return None
    if body[0] == _HASH and len(body) < len(rest):
        return body[1:]
    raise _Fail(pos + len(rest) - len(body), "unexpected text after value")


def _flow_item(line: bytes, at: int, item: bytes) -> str:
    body = item.strip(b" ")
    if body[:1] in (b'"', b"'"):
        lead = len(item) - len(item.lstrip(b" "))
        value, close = _quoted(line, at + lead)
        if close != at + lead + len(body) - 1:
            raise _Fail(at + lead, "unexpected text in flow sequence item")
        return value
    if body and not _FLOW_PLAIN.match(body):
        raise _Fail(at, f"unsupported item {body.decode('utf-8', 'replace')!r} in flow sequence")
    return body.decode("utf-8", "replace")
