"""The Objective-C++ reader's tokens and syntax tree (migrate/source/objc.py parses into it): ``tokenize`` over
the shared token stream, then the expressions (message sends, calls, members, literals, operators, blocks and
lambdas) and statements (declarations, assignments, ``return``, ``if``, and ``Other`` for what is not modelled)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from migrate.source import tokens as _source


class ObjcSyntaxError(Exception):
    def __init__(self, message: str, line: int):
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True)
class Tok:
    kind: str  # id | num | str | op | pp (preprocessor line) | eof
    text: str
    line: int
    pos: int


# The shared C-family token stream (migrate.source.tokens), in this reader's terms: kinds id | num | str |
# op | pp, an Objective-C string literal (@"...") one str token, an @keyword "@" and a name, and the
# operators the grammar reads whole that this reader never needs split into the ones it knows.
_KINDS = {"id": "id", "num": "num", "str": "str", "punc": "op", "dir": "pp"}
_SPLIT = {"...": (".", ".", "."), "##": ("#", "#"), "<<=": ("<<", "="), ">>=": (">>", "=")}
_UNREADABLE = {"/*": "unterminated comment", '"': "unterminated string literal", "'": "unterminated character literal"}


def tokenize(text: str, first_line: int = 1) -> list[Tok]:
    """The tokens of ``text`` (its first line is ``first_line``), then an ``eof`` token.  Port reads one
    function's text many times (family after family): each text is read once; callers never change the list."""
    return _tokenize(text, first_line)


@lru_cache(maxsize=4096)
def _tokenize(text: str, first_line: int) -> list[Tok]:
    src = _source.tokenize(text)
    toks: list[Tok] = []
    line, at, skip = first_line, 0, False
    for k, t in enumerate(src):
        if skip:
            skip = False
            continue
        line += text.count("\n", at, t.start)
        at = t.start
        kind = _KINDS.get(t.kind)
        if kind == "op":
            if t.text == "@" and k + 1 < len(src) and src[k + 1].kind == "str" and src[k + 1].start == t.end:
                toks.append(Tok("str", "@" + src[k + 1].text, line, t.start))  # an NSString literal
                skip = True
                continue
            if t.text in _SPLIT:
                toks += [Tok("op", part, line, t.start + i) for i, part in enumerate(_SPLIT[t.text])]
                continue
        elif kind is None:
            if t.kind != "at":
                raise ObjcSyntaxError(_UNREADABLE.get(t.text) or f"unexpected character {t.text[0]!r}", line)
            toks += [Tok("op", "@", line, t.start), Tok("id", t.text[1:], line, t.start + 1)]
            continue
        toks.append(Tok(kind, t.text.strip() if kind == "pp" else t.text, line, t.start))
    toks.append(Tok("eof", "", line + text.count("\n", at), len(text)))
    return toks


@dataclass(frozen=True)
class Name:
    id: str  # qualified: "mps::castMPSTensor"
    line: int


@dataclass(frozen=True)
class Num:
    value: float | int
    text: str
    line: int


@dataclass(frozen=True)
class Str:
    text: str
    line: int


@dataclass(frozen=True)
class ArrayLit:
    items: tuple
    line: int


@dataclass(frozen=True)
class Send:
    receiver: object
    selector: str  # "additionWithPrimaryTensor:secondaryTensor:name:" or "dataType"
    args: tuple
    line: int


@dataclass(frozen=True)
class Call:
    func: object
    args: tuple
    line: int


@dataclass(frozen=True)
class Member:
    obj: object
    name: str
    arrow: bool
    line: int


@dataclass(frozen=True)
class Unary:
    op: str
    expr: object
    line: int


@dataclass(frozen=True)
class Binary:
    op: str
    left: object
    right: object
    line: int


@dataclass(frozen=True)
class Cond:
    cond: object
    then: object
    other: object
    line: int


@dataclass(frozen=True)
class Param:
    type: str  # "MPSGraphTensor*", "auto", ...
    name: str


@dataclass(frozen=True)
class BlockLit:
    """``^T(params) {body}`` or ``[&](params) {body}``."""

    params: tuple[Param, ...]
    body: tuple
    line: int
    lambda_: bool = False


@dataclass(frozen=True)
class Decl:
    type: str
    name: str
    init: object | None
    line: int


@dataclass(frozen=True)
class Assign:
    target: object
    value: object
    line: int


@dataclass(frozen=True)
class Return:
    value: object | None
    line: int


@dataclass(frozen=True)
class ExprStmt:
    expr: object
    line: int


@dataclass(frozen=True)
class If:
    cond: object
    then: tuple
    other: tuple
    line: int


@dataclass(frozen=True)
class Other:
    """A statement the reader does not model (loops, switch, preprocessor lines, ...)."""

    kind: str
    line: int
    text: str = ""  # preprocessor lines: the directive as written
