"""The C-family lexical grammar (C, C++, Objective-C++, Metal), defined once.

Two passes are built from it, both at C speed where it matters:

- ``scrub(data)``: one ``re`` pass over bytes finding comments and string, character
  and raw-string literals; ``SourceFile.code`` is the copy with those blanked.
- ``tokenize(text)``: the token stream of latin-1 text (one character per byte, so
  offsets are byte offsets): identifiers, numbers, literals (raw strings included),
  punctuators, Objective-C ``@keywords``, whole preprocessor lines; comments are
  skipped, the whitespace before each token is kept (``Tok.space``).
"""

from __future__ import annotations

import itertools
import re
from typing import Iterator

# ---------------------------------------------------------------- the grammar
PREFIX = r"(?:u8|[uUL])?"
RAW = PREFIX + r'R"(?P<d>[^()\\\s"]{0,16})\((?P<body>.*?)\)(?P=d)"'
# Loops unrolled ("normal* (special normal*)*"): the same languages as "(?:[^\n\\]|\\.)*" and "/\*.*?\*/",
# but the regex engine runs over plain characters in one tight loop instead of an alternation per character.
LINE_COMMENT = r"//[^\n\\]*(?:\\.[^\n\\]*)*"
BLOCK_COMMENT = r"/\*[^*]*\*+(?:[^/*][^*]*\*+)*/"
STRING = PREFIX + r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
CHAR = PREFIX + r"'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
OPEN_COMMENT = rf"/\*(?:{BLOCK_COMMENT[3:]}|.*\Z)"  # a block comment, or an unterminated one to the end
IDENT = r"[A-Za-z_]\w*"
NUMBER = r"\.?\d(?:[eEpP][+-]|[\w.])*"
# compound assignments stay two tokens ("+" "="), as the review rules read them
PUNCT = (
    r"\.\.\.|\#\#|::|->|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||\+\+|--"
    r"|[-+*/%&|^!~<>=?:;,.()\[\]{}\#@]"
)
CONTINUATION = r"\\\r?\n"


class Tok:
    """One token. ``start``: byte offset in its text (-1 when made by a macro expansion);
    ``space``: the whitespace written before it ("" if none; truthy means "spaced")."""

    __slots__ = ("kind", "text", "start", "space", "painted", "paste_op")

    def __init__(self, kind: str, text: str, start: int = -1, space: str = "") -> None:
        self.kind = kind  # id | num | str | punc | at | dir | other | pm (a placemarker)
        self.text = text
        self.start = start
        self.space = space
        self.painted = False  # a macro name that must never expand again (C 6.10.3.4p2)
        self.paste_op = False  # a ``##`` of a macro body

    @property
    def end(self) -> int:
        return self.start + len(self.text)

    def copy(self, space: str | None = None) -> "Tok":
        t = Tok(self.kind, self.text, self.start, self.space if space is None else space)
        if self.painted:
            t.painted = True
        return t

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Tok({self.kind}:{self.text!r}@{self.start})"


# One match per token: the whitespace, newlines, continuations and comments before it (``lead``), then
# the token, a named group per kind (``end`` at the end of the text).  The commonest kinds are tried
# first, each guarded so that it never takes what a kind tried later would: a name is no literal's
# prefix (u8"", R"(...)"), "/" opens no comment, "." no number, "@" no @keyword.
_LEAD = rf"[ \t\r\f\v\n]*(?:(?:{CONTINUATION}|{LINE_COMMENT}|{BLOCK_COMMENT})[ \t\r\f\v\n]*)*"
_RAW_AHEAD = RAW.replace("(?P<d>", "(?P<d2>").replace("(?P=d)", "(?P=d2)").replace("(?P<body>", "(?:")
_TOKEN = rf"""
     (?P<lead>{_LEAD})
    (?:(?P<id>(?:(?=[uULR])(?!{_RAW_AHEAD}|{STRING}|{CHAR})|(?![uULR])){IDENT})
    |(?P<punc>(?!/\*|\.\d|@[A-Za-z_])(?:{PUNCT}))
    |(?P<num>{NUMBER})
    |(?P<str>{STRING}|{CHAR})
    |(?P<raw>{RAW})
    |(?P<at>@{IDENT})
    |(?P<badstr>["'])
    |(?P<badcomment>/\*)
    |(?P<end>\Z)
    |(?P<other>.))
    """
TOKEN_RE = re.compile(_TOKEN, re.X | re.S)
# The same tokens with two groups that count, (lead, token), so that ``findall`` reads a whole text at C
# speed; the kind of a token follows from its text (``_FIRST_KIND``, ``_kind``).  A literal with a prefix is
# tried before a name starting with a prefix's letter (the two never match at one place), so one raw-string
# group ``d`` is left (each tuple's third).  Alternatives starting with a character class are skipped by a
# one-character test: the commonest tokens (one-character punctuators no longer one starts with, names
# starting with no prefix's letter) come first that way; \w tries a bitmap of the ASCII word characters
# before the Unicode category.
_IDENT_FAST = IDENT.replace(r"\w", r"[0-9A-Za-z_\w]")
_NO_PREFIX_IDENT = _IDENT_FAST.replace("[A-Za-z_]", "[A-KM-QSTV-Za-tv-z_]", 1)
_NUMBER_FAST = NUMBER.replace(r"[\w.]", r"[0-9A-Za-z_.\w]")
# comments and continuations start with "/" or "\": no loop entered before any other character
_LEAD_FAST = _LEAD.replace("(?:(?:", "(?:(?=[\\\\/])(?:(?:", 1) + "|)"
_PAIR = rf"""
    ({_LEAD_FAST})
    ([()\[\]{{}};,?~*%^]
    |{_NO_PREFIX_IDENT}
    |(?=[uULR])(?:{RAW.replace("(?P<body>", "(?:")}|{STRING}|{CHAR})
    |{_IDENT_FAST}
    |(?!/\*|\.\d|@[A-Za-z_])(?:{PUNCT})
    |{_NUMBER_FAST}
    |{STRING}|{CHAR}
    |@{IDENT}
    |["']
    |/\*
    |\Z
    |.)
    """
PAIR_RE = re.compile(_PAIR, re.X | re.S)
_COMMENT_OR_CONTINUATION = re.compile(rf"{LINE_COMMENT}|{BLOCK_COMMENT}|{CONTINUATION}", re.S)


def _space(lead: str) -> tuple[str, bool]:
    """(``Tok.space`` of the whitespace and comments before a token: comments as one space each,
    whether a newline outside comments and continuations is in it)."""
    bare = _COMMENT_OR_CONTINUATION.sub(lambda m: " " if m.group()[0] == "/" else "", lead)
    space = _COMMENT_OR_CONTINUATION.sub(lambda m: " " if m.group()[0] == "/" else m.group(), lead)
    return space, "\n" in bare


def tokenize(
    text: str, start: int = 0, end: int | None = None, *, directives: bool = True, errors: list[str] | None = None
) -> list[Tok]:
    """Tokens of ``text[start:end]``. With ``directives``, a ``#`` first on its line starts
    one ``dir`` token holding the whole preprocessor line (continuations included)."""
    end = len(text) if end is None else end
    out: list[Tok] = []
    append = out.append
    pos = start
    first_kind = _FIRST_KIND
    pairs: Iterator[tuple[str, str, str, str]] | None = iter(PAIR_RE.findall(text, start, end))
    while pairs is not None:  # every (lead, token) from ``start``, consecutive; new ones after a directive
        rest, pairs = pairs, None
        for lead, tok, _ in rest:
            if not tok:
                break  # the end
            p = pos + len(lead)
            pos = p + len(tok)
            space = lead if not lead or lead.isspace() else _space(lead)[0]
            try:
                kind = first_kind[tok[0]]
            except KeyError:  # beyond latin-1
                kind = "other"
            if kind is None:
                kind = _kind(tok)
                if kind == "#":
                    kind = "punc"
                    if directives and (not out or _space(lead)[1]):
                        nl = directive_end(text, p, end)  # first on its line: the whole line is one token
                        append(Tok("dir", text[p:nl], p, space))
                        pos = _after_directive(text, p, nl, end)
                        pairs = _resume(rest, p + 1, pos, text, end)
                        break
                elif kind == "badcomment":  # kept as an "other" token, the last one
                    if errors is not None:
                        errors.append("unterminated comment")
                    append(Tok("other", "/*", p, space))
                    break
                elif kind == "badstr":
                    if errors is not None:
                        errors.append("unterminated string literal")
                    kind = "other"
            append(Tok(kind, tok, p, space))
    return out


def _resume(pairs: Iterator, at: int, to: int, text: str, end: int) -> Iterator:
    """The pairs to go on with after a preprocessor line: the next of ``pairs`` starts at ``at``, the next
    token is to start at ``to``.  When no pair starts there (a comment or literal that the line ends in
    the middle of), the text is read again from ``to`` up to the first place where the pairs agree again."""
    done = False  # the end pair reached: kept for no one, as no pair after ``to`` can agree then
    if at < to:
        for lead, tok, _ in pairs:
            if not tok:
                done = True
                break
            at += len(lead) + len(tok)
            if at >= to:
                break
    if at == to:
        return pairs
    fresh = []
    b = to
    match = PAIR_RE.match
    while True:
        m = match(text, b, end)
        lead, tok = m.group(1, 2)
        fresh.append((lead, tok, ""))
        if not tok:
            return iter(fresh)
        b = m.end()
        while at < b and not done:
            lead, tok, _ = next(pairs)
            if not tok:
                done = True
                break
            at += len(lead) + len(tok)
        if at == b:
            return itertools.chain(fresh, pairs)


# A token's kind from its first character, for every latin-1 one (PAIR_RE says where a token is, not which
# group took it); None: decided by _kind.  Identifiers and numbers first: a literal with a prefix ends in
# its quote.  "#" goes to _kind too, where the loop looks for a directive.
_FIRST_KIND: dict[str, str | None] = {chr(b): "other" for b in range(256)}
_FIRST_KIND.update({c: "id" for c in "abcdefghijklmnopqrstvwxyzABCDEFGHIJKMNOPQSTVWXYZ_"})
_FIRST_KIND.update({c: "num" for c in "0123456789"})
_FIRST_KIND.update({c: "punc" for c in "-+*%&|^!~<>=?:;,()[]{}"})
_FIRST_KIND.update({c: None for c in "uULR.@\"'/#"})


def _kind(tok: str) -> str:
    c = tok[0]
    if c in "uULR":
        return "str" if tok[-1] in "\"'" else "id"
    if c == ".":
        return "num" if tok[1:2].isdigit() and tok[1] in "0123456789" else "punc"
    if c == "@":
        return "at" if len(tok) > 1 else "punc"
    if c in "\"'":
        return "str" if len(tok) > 1 else "badstr"
    if c == "/":
        return "badcomment" if tok == "/*" else "punc"
    if c == "#":
        return "#" if tok == "#" else "punc"  # "#": punc, unless it starts a directive
    return "other"


def _after_directive(text: str, p: int, nl: int, end: int) -> int:
    """Where the tokens after the preprocessor line ``text[p:nl]`` start: at its newline, unless a raw
    string begun on the line runs past it (tokens then resume after that string, as they always have)."""
    if 'R"' not in text[p:nl]:
        return nl
    q = p + 1
    while q < nl:
        m = TOKEN_RE.match(text, q, end)
        if m.lastgroup == "end":
            return end
        if m.end("lead") >= nl:
            return nl
        q = m.end()
    return q


# A preprocessor line up to its newline, in one match: runs of plain characters, then continuations,
# comments and literals (a literal's prefix changes nothing about where it ends), else one character.
_DIRECTIVE_LINE = re.compile(
    rf"""(?:[^\n\\/"']+|{CONTINUATION}|{OPEN_COMMENT}|{LINE_COMMENT}|{STRING[len(PREFIX) :]}|{CHAR[len(PREFIX) :]}|[\\/"'])*""",
    re.S,
)


def directive_end(text: str, p: int, end: int | None = None) -> int:
    """End of the preprocessor line starting at ``p`` (before its newline): continuations and
    block comments spanning lines belong to it."""
    return _DIRECTIVE_LINE.match(text, p, len(text) if end is None else end).end()


def render(toks: list[Tok]) -> str:
    """Tokens back to text, each preceded by its own whitespace (continuations as spaces)."""
    parts: list[str] = []
    for t in toks:
        if t.kind == "pm":
            continue
        if t.space:
            parts.append(t.space if "\\" not in t.space else re.sub(CONTINUATION, "  ", t.space))
        parts.append(t.text)
    return "".join(parts)


def match_close(toks: list[Tok], i: int) -> int:
    """Index of the bracket closing the one at ``toks[i]`` (len(toks) if unbalanced)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    want = [pairs[toks[i].text]]
    for j in range(i + 1, len(toks)):
        t = toks[j].text
        if toks[j].kind != "punc":
            continue
        if t in pairs:
            want.append(pairs[t])
        elif t in (")", "]", "}"):
            if t == want[-1]:
                want.pop()
                if not want:
                    return j
    return len(toks)


# ------------------------------------------------------------ the bytes pass
_SCRUB = re.compile(
    (
        r"(?=[/\"'RuUL])(?:"
        rf"(?P<raw>(?<![\w]){RAW})"
        rf"|(?P<lc>{LINE_COMMENT})"
        rf"|(?P<bc>{OPEN_COMMENT})"
        rf"|(?P<str>(?<![\w]){STRING})"
        rf"|(?P<chr>(?<![\w]){PREFIX}'(?:[^'\\\n]|\\.){{1,8}}')"  # {1,8}: not a digit separator
        r")"
    ).encode(),
    re.S,
)
_BLANK = bytes(10 if b == 10 else 32 for b in range(256))  # every byte -> space, newlines kept


def blank(b: bytes) -> bytes:
    return b.translate(_BLANK)


def scrub(data: bytes):
    """(code, comments, raw strings): ``code`` is ``data`` with comments and literal contents
    blanked (quotes, prefixes and line structure kept; byte offsets unchanged).
    Raw strings are (start, end, content_start, content_end, delimiter)."""
    comments: list[tuple[int, int]] = []
    raws: list[tuple[int, int, int, int, str]] = []

    def repl(m: re.Match[bytes]) -> bytes:
        kind = m.lastgroup
        text = m.group()
        if kind == "raw":
            cs, ce = m.span("body")
            raws.append((m.start(), m.end(), cs, ce, m.group("d").decode("latin-1")))
            q = text.index(b'"')  # keep prefix and quotes; the delimiter is no identifier
            return blank(text[:q]) + b'"' + blank(text[q + 1 : -1]) + b'"'
        if kind in ("lc", "bc"):
            comments.append(m.span())
            return blank(text)
        q = text.index(b'"' if kind == "str" else b"'")
        return text[: q + 1] + blank(text[q + 1 : -1]) + text[-1:]

    out = []
    pos = 0
    # each "/" or quote where a comment or literal can start (a prefix is the word before it): the next
    # one of each found by bytes.find (memchr), not by a regex stepping through every byte
    find, none = data.find, len(data)

    def next_at(byte: bytes, at: int) -> int:
        i = find(byte, at)
        return none if i < 0 else i

    sl, dq, sq = next_at(b"/", 0), next_at(b'"', 0), next_at(b"'", 0)
    while True:
        i = c = min(sl, dq, sq)
        if c == none:
            break
        if data[c] != 47:  # a quote: the literal starts where the word before it starts, if that word is a prefix
            while i > pos and data[i - 1] in _WORD:
                i -= 1
        m = _SCRUB.match(data, i) if i == c or data[i:c] in _PREFIXES else None
        if m is None:
            after = c + 1
        else:
            out += (data[pos:i], repl(m))
            pos = after = m.end()
        if sl < after:
            sl = next_at(b"/", after)
        if dq < after:
            dq = next_at(b'"', after)
        if sq < after:
            sq = next_at(b"'", after)
    if not out:
        return data, comments, raws
    out.append(data[pos:])
    return b"".join(out), comments, raws


# ``_SCRUB`` matches where its lookahead's characters are: "/" and quotes (prefixes are found backwards).
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_PREFIXES = frozenset({b"u8", b"u", b"U", b"L", b"R", b"u8R", b"uR", b"UR", b"LR"})
