"""Shared edit machinery: fixes as plain text edits (byte offsets into the file as read).

What one rule alone fixes lives in its module under migrate/checks/; these builders are
shared by several rules and by port.
"""

from __future__ import annotations

import re

from migrate.model import DispatchLine, Edit, Fix, HostFunction, NativeEntry, Span, XfailEntry

_COMMENT_LINE = re.compile(rb"^[ \t]*(//.*|/\*.*|\*.*)$")


class FixBuilder:
    def __init__(self, index):
        self.ix = index

    def _src(self, path: str) -> bytes:
        return self.ix.tree.sources[path]

    # -------------------------------------------------------- line helpers
    @staticmethod
    def line_start(data: bytes, pos: int) -> int:
        return data.rfind(b"\n", 0, pos) + 1

    @staticmethod
    def line_end(data: bytes, pos: int) -> int:
        """Offset just past the newline of the line holding ``pos`` (or EOF)."""
        nl = data.find(b"\n", pos)
        return len(data) if nl < 0 else nl + 1

    def _whole_lines(self, data: bytes, start: int, end: int) -> tuple[int, int] | None:
        """Extend [start, end) to whole lines if only whitespace surrounds it."""
        ls = self.line_start(data, start)
        le = self.line_end(data, max(end - 1, start))
        if data[ls:start].strip() or data[end:le].strip(b" \t\r\n;"):
            return None
        return ls, le

    # ------------------------------------------------------------ fixes
    def remove_line(self, span: Span, description: str) -> Fix:
        data = self._src(span.path)
        s, e = self.line_start(data, span.start), self.line_end(data, span.end)
        return Fix(description, (Edit(span.path, s, e, ""),))

    def remove_include(self, span: Span, description: str) -> Fix:
        """The include's line; with the ``#if``/``#ifdef`` ... ``#endif`` around it when it is the only line
        between them (the last per-operator header of an ``#ifdef AT_PER_OPERATOR_HEADERS`` block)."""
        data = self._src(span.path)
        s, e = self.line_start(data, span.start), self.line_end(data, span.end)
        before = self._line_before(data, s)
        after = (e, self.line_end(data, e)) if e < len(data) else None
        if before is not None and after is not None:
            opener = data[before[0] : before[1]].split()
            closer = data[after[0] : after[1]].split()
            if opener and opener[0] in (b"#ifdef", b"#ifndef", b"#if") and closer[:1] == [b"#endif"]:
                s, e = before[0], after[1]
                if s >= 2 and data[s - 2 : s] == b"\n\n" and data[e : e + 1] == b"\n":
                    e += 1  # the block stood alone between blank lines: keep one of them
        return Fix(description, (Edit(span.path, s, e, ""),))

    def _line_before(self, data: bytes, s: int) -> tuple[int, int] | None:
        return (self.line_start(data, s - 1), s) if s > 0 else None

    def remove_function(self, f: HostFunction) -> Fix | None:
        span = f.invocation or f.span
        data = self._src(span.path)
        rng = self._whole_lines(data, span.start, span.end)
        if rng is None:
            return None
        s, e = rng
        # leading comment lines belong to the definition
        while s > 0:
            prev = self.line_start(data, s - 1)
            if not _COMMENT_LINE.match(data[prev : s - 1]):
                break
            s = prev
        # do not leave two blank lines where there was one
        before_blank = s >= 2 and data[s - 2 : s] == b"\n\n" or s == 0
        after = data[e : self.line_end(data, e)] if e < len(data) else b""
        if before_blank and after.strip() == b"" and e < len(data):
            e = self.line_end(data, e)
        what = f"macro invocation generating {f.name}" if f.invocation else f"definition of {f.name}"
        return Fix(f"delete dead {what}", (Edit(span.path, s, e, ""),))

    def remove_xfail(self, entry: XfailEntry) -> Fix | None:
        s, e = self.element_range(self._src(entry.path), entry.span.start, entry.span.end)
        return Fix(
            f"remove stale expected failure {entry.key!r} from {entry.table}", (Edit(entry.path, s, e, ""),), safe=False
        )

    def element_range(self, data: bytes, s: int, e: int) -> tuple[int, int]:
        """Bytes to delete for one element of a literal: its own line(s) with a trailing comment, or inline with one comma."""
        j = e
        while j < len(data) and data[j : j + 1] in (b" ", b"\t"):
            j += 1
        has_comma = data[j : j + 1] == b","
        after_comma = j + 1 if has_comma else e
        ls, le = self.line_start(data, s), self.line_end(data, after_comma)
        rest = data[after_comma:le].strip()
        if not data[ls:s].strip() and (not rest or rest.startswith(b"#")):
            s, e = ls, le  # the element owns its line, trailing comment included
        elif has_comma:
            e = after_comma
            while e < len(data) and data[e : e + 1] in (b" ", b"\t"):
                e += 1
            if data[e : e + 1] == b"\n":  # the next element moves up to where this one was
                e += 1
                while e < len(data) and data[e : e + 1] in (b" ", b"\t"):
                    e += 1
        else:  # last element inline: take the comma before it instead
            k = s
            while k > 0 and data[k - 1 : k] in (b" ", b"\t"):
                k -= 1
            if data[k - 1 : k] == b",":
                s = k - 1
        return s, e

    def join_shared_line(self, entry: NativeEntry, mps_line: DispatchLine, shared: DispatchLine) -> Fix:
        """Add MPS to ``shared`` (after CUDA when present, else last) and delete ``mps_line``."""
        data = self._src(shared.span.path)
        keys = list(shared.keys)
        at = keys.index("CUDA") if "CUDA" in keys else len(keys) - 1
        anchor = shared.key_spans[at]
        sep = b", "
        if len(shared.key_spans) > 1:
            a, b = shared.key_spans[0], shared.key_spans[1]
            sep = data[a.end : b.start] or b", "
        ins = Edit(shared.span.path, anchor.end, anchor.end, (sep + b"MPS").decode())
        s = self.line_start(data, mps_line.span.start)
        e = self.line_end(data, mps_line.span.end)
        return Fix(
            f"route {entry.overload_name} to the shared kernel {shared.kernel}",
            (ins, Edit(mps_line.span.path, s, e, "")),
        )
