"""Lexical pre-pass over C/C++/Objective-C++ bytes, done with C-speed regexes.

``scrub`` returns a copy of the file in which comments and the contents of
string, character and raw-string literals are blanked (spaces, newlines kept),
so that later regexes only ever see code.  Byte offsets never change.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from itertools import accumulate

from .columns import char_column

# every byte -> space, except newlines (line structure is kept)
_BLANK = bytes(10 if b == 10 else 32 for b in range(256))


def blank(b: bytes) -> bytes:
    return b.translate(_BLANK)


_LEX = re.compile(
    rb"""
    (?=[/"'RuUL])(?:
    (?P<raw>(?<![\w])(?:u8|[uUL])?R"(?P<d>[^()\\\s"]{0,16})\((?P<body>.*?)\)(?P=d)")
  | (?P<lc>//(?:[^\n\\]|\\.)*)
  | (?P<bc>/\*.*?(?:\*/|\Z))
  | (?P<str>(?<![\w])(?:u8|[uUL])?"(?:[^"\\\n]|\\.)*")
  | (?P<chr>(?<![\w])'(?:[^'\\\n]|\\.){1,8}')
    )""",
    re.S | re.X,
)
_DIRECTIVE = re.compile(rb"\n[ \t]*#(?:[^\n\\]|\\.)*", re.S)  # "\n" prefix: fast search
_FIRST_DIRECTIVE = re.compile(rb"[ \t]*#(?:[^\n\\]|\\.)*", re.S)


@dataclass(frozen=True)
class RawString:
    start: int  # the literal (prefix included)
    end: int
    content_start: int
    content_end: int
    delimiter: str


class Scrubbed:
    """The original bytes plus a code-only copy and where things are."""

    def __init__(self, data: bytes, code: bytes, comments: list[tuple[int, int]],
                 raw_strings: list[RawString]) -> None:
        self.data = data
        self.code = code  # comments and literal contents blanked
        self.comments = comments
        self.raw_strings = raw_strings
        first = _FIRST_DIRECTIVE.match(code)
        found = [first.span()] if first else []
        found += [(m.start() + 1, m.end()) for m in _DIRECTIVE.finditer(code)]
        self.directives = found  # preprocessor lines incl. continuations
        self._dstarts = [s for s, _ in found]
        self._line_starts: list[int] | None = None

    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            lengths = map(len, self.data.split(b"\n"))
            self._line_starts = list(accumulate(map((1).__add__, lengths), initial=0))
        return self._line_starts

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.line_starts, offset)

    def column_of(self, offset: int) -> int:
        return char_column(self.data, self.line_starts[self.line_of(offset) - 1], offset)

    def in_directive(self, offset: int) -> bool:
        i = bisect.bisect_right(self._dstarts, offset) - 1
        return i >= 0 and offset < self.directives[i][1]

    def in_comment(self, offset: int) -> bool:
        i = bisect.bisect_right(self.comments, (offset, 1 << 62)) - 1
        return i >= 0 and offset < self.comments[i][1]


def scrub(data: bytes) -> Scrubbed:
    comments: list[tuple[int, int]] = []
    raws: list[RawString] = []

    def repl(m: re.Match[bytes]) -> bytes:
        kind = m.lastgroup
        text = m.group()
        if kind == "raw":
            d = m.group("d")
            cs, ce = m.span("body")
            raws.append(RawString(m.start(), m.end(), cs, ce, d.decode("latin-1")))
            q = text.index(b'"')  # keep prefix and quotes; the delimiter is no identifier
            return blank(text[:q]) + b'"' + blank(text[q + 1: -1]) + b'"'
        if kind in ("lc", "bc"):
            comments.append(m.span())
            return blank(text)
        # string / char literal: keep prefix and quotes, blank the inside
        q = text.index(b'"' if kind == "str" else b"'")
        return text[: q + 1] + blank(text[q + 1: -1]) + text[-1:]

    code = _LEX.sub(repl, data)
    return Scrubbed(data, code, comments, raws)
