"""``Span``: one place in one file. Lines and columns are 1-based, columns count characters;
``start``/``end`` are byte offsets (what edits use)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    path: str
    line: int
    column: int  # characters
    end_line: int
    end_column: int
    start: int  # byte offset
    end: int  # byte offset, exclusive

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"
