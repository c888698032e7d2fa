"""``pattern.finditer(code)`` without the regex scan through every byte.

For a pattern whose every match starts with one of a few literal words: the words are found
with ``bytes.find`` and the pattern is tried only there, leftmost first and never inside the
previous match, which is what ``finditer`` returns.
"""

from __future__ import annotations

import re


def offsets(code: bytes, word: bytes) -> list[int]:
    """Every offset where ``word`` starts in ``code`` (overlapping ones too).  One ``find`` per match: for the
    sparse words searched here (a brace every ~350 bytes), cheaper than splitting (a bytes object per part)."""
    found = []
    i = code.find(word)
    while i >= 0:
        found.append(i)
        i = code.find(word, i + 1)
    return found


def matches_from(pat: re.Pattern[bytes], code: bytes, starts) -> list[re.Match[bytes]]:
    """``pat.finditer(code)`` when every match starts at one of the sorted offsets ``starts``."""
    found = []
    end = 0
    for i in starts:
        m = pat.match(code, i) if i >= end else None
        if m is not None:
            found.append(m)
            end = m.end()
    return found


def matches_at(pat: re.Pattern[bytes], code: bytes, words) -> list[re.Match[bytes]]:
    """``pat.finditer(code)`` for a pattern whose every match starts with one of ``words``."""
    if len(words) == 1:
        return matches_from(pat, code, offsets(code, words[0]))
    return matches_from(pat, code, sorted({i for w in words for i in offsets(code, w)}))


_BRACE = re.compile(rb"[{}]")


def closing_brace(code: bytes, open_at: int) -> int | None:
    """Offset of the ``}`` closing the ``{`` at ``open_at`` in ``code`` (comments and strings blanked, as a
    SourceFile's ``code``), or None; only the braces are visited."""
    depth = 0
    for m in _BRACE.finditer(code, open_at):
        if code[m.start()] == 0x7B:  # {
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    return None
