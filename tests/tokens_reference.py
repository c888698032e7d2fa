"""The token stream as migrate.source.tokens made it before its one-match-per-token loop: one match
per token, whitespace run, newline and comment.  Kept only as the tests' reference (same grammar,
same Tok), to check the faster loop gives the same tokens, spaces and errors."""

from __future__ import annotations

import re

from migrate.source.tokens import (
    BLOCK_COMMENT,
    CHAR,
    CONTINUATION,
    IDENT,
    LINE_COMMENT,
    NUMBER,
    PUNCT,
    RAW,
    STRING,
    Tok,
    directive_end,
)

REFERENCE_RE = re.compile(
    rf"""
     (?P<nl>\n)
    |(?P<ws>(?:[ \t\r\f\v]|{CONTINUATION})+)
    |(?P<comment>{LINE_COMMENT}|{BLOCK_COMMENT})
    |(?P<badcomment>/\*)
    |(?P<raw>{RAW})
    |(?P<str>{STRING}|{CHAR})
    |(?P<badstr>["'])
    |(?P<at>@{IDENT})
    |(?P<id>{IDENT})
    |(?P<num>{NUMBER})
    |(?P<punc>{PUNCT})
    |(?P<other>.)
    """,
    re.X | re.S,
)


def reference_tokenize(
    text: str, start: int = 0, end: int | None = None, *, directives: bool = True, errors: list[str] | None = None
) -> list[Tok]:
    """Tokens of ``text[start:end]``. With ``directives``, a ``#`` first on its line starts
    one ``dir`` token holding the whole preprocessor line (continuations included)."""
    end = len(text) if end is None else end
    out: list[Tok] = []
    append = out.append
    space = ""
    line_start = True
    skip_to = -1
    for m in REFERENCE_RE.finditer(text, start, end):
        p = m.start()
        if p < skip_to:
            continue
        kind = m.lastgroup
        if kind == "nl" or kind == "ws":
            space += m.group()
            line_start = line_start or kind == "nl"
            continue
        if kind == "comment":
            space += " "
            continue
        if kind == "badcomment":  # kept as an "other" token, the last one
            if errors is not None:
                errors.append("unterminated comment")
            append(Tok("other", "/*", p, space))
            break
        if kind == "badstr":
            if errors is not None:
                errors.append("unterminated string literal")
            kind = "other"
        elif kind == "raw":
            kind = "str"
        elif directives and line_start and kind == "punc" and m.group() == "#":
            nl = directive_end(text, p, end)
            append(Tok("dir", text[p:nl], p, space))
            skip_to, space, line_start = nl, "", False
            continue
        append(Tok(kind, m.group(), p, space))
        space = ""
        line_start = False
    return out
