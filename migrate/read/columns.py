"""Columns are characters, not bytes: one place that turns a byte offset into a 1-based column."""
from __future__ import annotations


def char_column(data: bytes, line_start: int, offset: int) -> int:
    """1-based column of byte ``offset`` on the line starting at byte ``line_start`` (UTF-8, bad bytes count one)."""
    chunk = data[line_start:offset]
    return (len(chunk) if chunk.isascii() else len(chunk.decode("utf-8", "replace"))) + 1
