"""``SourceFile``: a file's bytes, its line index, character columns and lexical facts.

Everything is computed once, on first use: the decoded text, the line starts, the
scrubbed code (comments and literal contents blanked), the preprocessor lines and
the token stream.  A source embedded in another file (Metal in a ``.mm`` raw string)
is read with ``base_line``/``base_column``/``base_offset``: its spans are places in
the outer file.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from itertools import accumulate

from migrate.source.span import Span
from migrate.source import tokens as _tokens

# A preprocessor line from its start: "[ \t]*#(?:[^\n\\]|\\.)*", the loop unrolled (no alternation per byte)
_FIRST_DIRECTIVE = re.compile(rb"[ \t]*#[^\n\\]*(?:\\.[^\n\\]*)*", re.S)


@dataclass(frozen=True)
class RawString:
    start: int  # the literal (prefix included)
    end: int
    content_start: int
    content_end: int
    delimiter: str


class SourceFile:
    def __init__(
        self, data: bytes, path: str = "", *, base_line: int = 1, base_column: int = 1, base_offset: int = 0
    ) -> None:
        self.data = data
        self.path = path
        self.base_line, self.base_column, self.base_offset = base_line, base_column, base_offset
        self._line_starts: list[int] | None = None
        self._code: bytes | None = None
        self._text: str | None = None
        self._latin1: str | None = None
        self._tokens: list[_tokens.Tok] | None = None

    # ------------------------------------------------------------ text
    @property
    def text(self) -> str:
        """The file decoded as UTF-8 (bad bytes replaced), once."""
        if self._text is None:
            self._text = self.data.decode("utf-8", "replace")
        return self._text

    @property
    def latin1(self) -> str:
        """One character per byte: offsets in it are byte offsets (what the token stream reads)."""
        if self._latin1 is None:
            self._latin1 = self.data.decode("latin-1")
        return self._latin1

    # ------------------------------------------------------------ lines and columns
    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            lengths = map(len, self.data.split(b"\n"))
            self._line_starts = list(accumulate(map((1).__add__, lengths), initial=0))
        return self._line_starts

    def line_index(self, offset: int) -> int:
        """0-based line of byte ``offset`` within this source."""
        return bisect.bisect_right(self.line_starts, offset) - 1

    def line_of(self, offset: int) -> int:
        return self.base_line + self.line_index(offset)

    def column_of(self, offset: int) -> int:
        """1-based column of byte ``offset``, in characters (UTF-8; a bad byte counts one)."""
        idx = self.line_index(offset)
        col = char_column(self.data, self.line_starts[idx], offset)
        return col + self.base_column - 1 if idx == 0 else col

    def position(self, offset: int) -> tuple[int, int]:
        return self.line_of(offset), self.column_of(offset)

    def span(self, start: int, end: int) -> Span:
        """``position`` of both ends, each line found once (the end's search starts at the start's line)."""
        starts, data = self.line_starts, self.data
        i = bisect.bisect_right(starts, start) - 1
        j = bisect.bisect_right(starts, end, i if 0 <= i and start <= end else 0) - 1
        c1, c2 = char_column(data, starts[i], start), char_column(data, starts[j], end)
        if i == 0:
            c1 += self.base_column - 1
        if j == 0:
            c2 += self.base_column - 1
        base = self.base_line
        return Span(self.path, base + i, c1, base + j, c2, self.base_offset + start, self.base_offset + end)

    # ------------------------------------------------------------ lexical facts
    def _scrub(self) -> None:
        code, comments, raws = _tokens.scrub(self.data)
        self._code = code
        self.comments: list[tuple[int, int]] = comments
        self.raw_strings: list[RawString] = [RawString(*r) for r in raws]
        first = _FIRST_DIRECTIVE.match(code)
        found = [first.span()] if first else []
        found += _directive_lines(code)
        self.directives: list[tuple[int, int]] = found  # preprocessor lines incl. continuations
        self._dstarts = [s for s, _ in found]

    def __getattr__(self, name: str):  # comments, raw_strings, directives: scrubbed on first use
        if name in ("comments", "raw_strings", "directives", "_dstarts"):
            self._scrub()
            return self.__dict__[name]
        raise AttributeError(name)

    @property
    def code(self) -> bytes:
        """The bytes with comments and literal contents blanked (offsets and lines unchanged)."""
        if self._code is None:
            self._scrub()
        return self._code  # type: ignore[return-value]

    def in_directive(self, offset: int) -> bool:
        i = bisect.bisect_right(self._dstarts, offset) - 1
        return i >= 0 and offset < self.directives[i][1]

    def in_comment(self, offset: int) -> bool:
        i = bisect.bisect_right(self.comments, (offset, 1 << 62)) - 1
        return i >= 0 and offset < self.comments[i][1]

    def tokens(self) -> list[_tokens.Tok]:
        """The whole file's token stream (once)."""
        if self._tokens is None:
            self._tokens = _tokens.tokenize(self.latin1)
        return self._tokens


def _directive_lines(code: bytes) -> list[tuple[int, int]]:
    """(start, end) of each preprocessor line after the first line: _FIRST_DIRECTIVE tried only at the
    lines whose first byte other than space and tab is a "#" (found by bytes.find: "#" is rare)."""
    found = []
    end = 0
    h = code.find(b"#")
    while h >= 0:
        nl = code.rfind(b"\n", 0, h)
        if nl >= end and not code[nl + 1 : h].strip(b" \t"):
            m = _FIRST_DIRECTIVE.match(code, nl + 1)
            found.append((nl + 1, m.end()))  # type: ignore[union-attr]
            end = m.end()  # type: ignore[union-attr]
            h = code.find(b"#", end)
        else:
            h = code.find(b"#", h + 1)
    return found


def char_column(data: bytes, line_start: int, offset: int) -> int:
    """1-based column of byte ``offset`` on the line starting at byte ``line_start``."""
    chunk = data[line_start:offset]
    return (len(chunk) if chunk.isascii() else len(chunk.decode("utf-8", "replace"))) + 1


_OPEN: dict[tuple, SourceFile] = {}
_OPEN_MAX = 64


def source_file(
    data: bytes, path: str = "", *, base_line: int = 1, base_column: int = 1, base_offset: int = 0
) -> SourceFile:
    """The shared ``SourceFile`` of a file (or of a source embedded in one, at the ``base_*`` place):
    readers and rules of one process lex it once."""
    key = (path, data, base_line, base_column, base_offset)
    sf = _OPEN.get(key)
    if sf is None:
        if len(_OPEN) >= _OPEN_MAX:
            del _OPEN[next(iter(_OPEN))]
        sf = _OPEN[key] = SourceFile(data, path, base_line=base_line, base_column=base_column, base_offset=base_offset)
    return sf
