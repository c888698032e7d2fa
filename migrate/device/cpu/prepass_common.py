"""What the pre-pass's stages share: the MSL type names a functional cast can name, and bracket matching on
the token stream."""

from __future__ import annotations

from ..errors import MetalCompileError
from .lexer import PUNCT, Token

VECTOR_TYPES = frozenset(
    f"{s}{n}"
    for s in ("float", "half", "bfloat", "int", "uint", "short", "ushort", "char", "uchar", "long", "ulong", "bool")
    for n in (2, 3, 4)
)
CTOR_TYPES = VECTOR_TYPES | {"half", "bfloat"}


def _match(tokens: list[Token], i: int, open_: str, close: str) -> int:
    """Index of the token closing tokens[i] (an `open_`)."""
    depth = 0
    for j in range(i, len(tokens)):
        t = tokens[j].text
        if t == open_ and tokens[j].kind == PUNCT:
            depth += 1
        elif t == close and tokens[j].kind == PUNCT:
            depth -= 1
            if depth == 0:
                return j
    raise MetalCompileError(f"{tokens[i].file}:{tokens[i].line}: unbalanced '{open_}'")


def _match_angle(tokens: list[Token], i: int) -> int:
    """Closing `>` of a template argument list opened at tokens[i] (`<`)."""
    depth, paren = 0, 0
    for j in range(i, len(tokens)):
        t = tokens[j]
        if t.kind != PUNCT:
            continue
        if t.text in "([{":
            paren += 1
        elif t.text in ")]}":
            paren -= 1
        elif paren == 0 and t.text == "<":
            depth += 1
        elif paren == 0 and t.text == ">":
            depth -= 1
            if depth == 0:
                return j
        elif paren == 0 and t.text == ";":
            break
    raise MetalCompileError(f"{tokens[i].file}:{tokens[i].line}: unbalanced '<'")
