"""The pre-pass's row-uniform split of a kernel's callee (`NAME__msl_cond` / `NAME__msl_fast`), which lets
clang vectorise a kernel across the threads of a row."""

from __future__ import annotations

from .lexer import IDENT, NUMBER, PUNCT, Token
from .prepass_common import CTOR_TYPES, _match

# Row-uniform fast path. A kernel `P; if (C) { A } else { B }` whose else branch has a loop
# (torch's ILP kernels: the tail loop) cannot be vectorised across threads: clang vectorises
# only inside one thread. The pre-pass copies it as `NAME__msl_cond` (`P; return C;`) and
# `NAME__msl_fast` (`P; { A }`); the runtime evaluates C for every thread of a row first and,
# when it holds for all, runs `P; A` for each, a body clang vectorises across threads.
# A valid GPU schedule, provided P and C change no memory another thread (or A) reads:
# they may only declare locals, read, compute and call casts/constructors of Metal types.
SPLIT_IMPURE_WORDS = frozenset(
    "return goto asm __asm__ throw new delete static thread_local extern volatile __msl_threadgroup "
    "co_await co_yield co_return if for while do switch break continue case default using typedef".split()
)
SPLIT_IMPURE_OPS = frozenset("= ++ -- += -= *= /= %= &= |= ^= <<= >>= { } ->* .* ; #".split())
SPLIT_PURE_CALLS = (
    CTOR_TYPES
    | {"float", "int", "uint", "short", "ushort", "char", "uchar", "long", "ulong", "bool", "size_t"}
    | {"static_cast", "const_cast", "reinterpret_cast", "as_type", "sizeof", "alignof", "decltype"}
)
SPLIT_SUFFIXES = ("__msl_cond", "__msl_fast")


def split_name(callee: str, suffix: str = "") -> str:
    """`ns :: f < T >` -> `ns :: f<suffix> < T >`."""
    head, sep, tail = callee.partition(" <")
    return head + suffix + sep + tail


def _pure_expr(toks: list[Token]) -> bool:
    """No stores, no increments, no calls except casts and constructors of Metal types."""
    for i, t in enumerate(toks):
        if t.kind not in (IDENT, NUMBER, PUNCT) and t.kind != "char":
            return False
        if (t.kind == IDENT and t.text in SPLIT_IMPURE_WORDS) or (t.kind == PUNCT and t.text in SPLIT_IMPURE_OPS):
            return False
        if t.text == "(" and t.kind == PUNCT and i > 0:
            j = i - 1
            if toks[j].text == ">" and toks[j].kind == PUNCT:  # `name<args>(`
                depth = 0
                while j >= 0:
                    depth += toks[j].text == ">"
                    depth -= toks[j].text == "<"
                    if depth == 0:
                        break
                    j -= 1
                j -= 1
                if j < 0:
                    return False
            if toks[j].kind == IDENT and toks[j].text not in SPLIT_PURE_CALLS:
                return False
            if toks[j].text in (")", "]"):  # a call through an expression
                return False
    return True


def _pure_decl(toks: list[Token]) -> bool:
    """`TYPE NAME;` or `TYPE NAME = EXPR;` with a pure EXPR."""
    eq = next((i for i, t in enumerate(toks) if t.text == "=" and t.kind == PUNCT), len(toks))
    lhs = toks[:eq]
    if len(lhs) < 2 or lhs[0].kind != IDENT or lhs[-1].kind != IDENT:
        return False
    if lhs[-2].kind != IDENT and lhs[-2].text not in (">", "*", "&"):
        return False
    for t in lhs:
        if t.kind == IDENT and t.text in SPLIT_IMPURE_WORDS:
            return False
        if t.kind not in (IDENT, NUMBER) and not (t.kind == PUNCT and t.text in ("::", "<", ">", ",", "*", "&")):
            return False
    return eq == len(toks) or _pure_expr(toks[eq + 1 :])


def _split(toks: list[Token], start: int, name: int, open_: int, close: int) -> list[Token] | None:
    """The `__msl_cond` and `__msl_fast` copies of the kernel defined by toks[start:close + 1]
    (name at `name`, body braces at `open_`/`close`), or None when its body is not
    `P; if (C) { A } else { ..loop.. }` with a pure P and C."""
    body = toks[open_ + 1 : close]
    if any(t.text in ("__msl_threadgroup", "static", "thread_local") for t in toks[start:close]):
        return None
    i = 0
    while i < len(body) and body[i].text != "if":
        j, depth = i, 0
        while j < len(body) and not (depth == 0 and body[j].text == ";"):
            if body[j].text in ("{", "}") or body[j].kind not in (IDENT, NUMBER, PUNCT):
                return None
            depth += body[j].text in ("(", "[")
            depth -= body[j].text in (")", "]")
            j += 1
        stmt = body[i:j]
        alias = len(stmt) > 3 and stmt[0].text == "using" and stmt[1].kind == IDENT and stmt[2].text == "="
        if j == len(body) or not (_pure_expr(stmt[3:]) if alias else _pure_decl(stmt)):
            return None
        i = j + 1
    if i + 1 >= len(body) or body[i + 1].text != "(":
        return None
    c_end = _match(body, i + 1, "(", ")")
    if c_end + 1 >= len(body) or body[c_end + 1].text != "{" or not _pure_expr(body[i + 2 : c_end]):
        return None
    a_end = _match(body, c_end + 1, "{", "}")
    if a_end + 2 >= len(body) or body[a_end + 1].text != "else" or body[a_end + 2].text != "{":
        return None
    if _match(body, a_end + 2, "{", "}") != len(body) - 1:
        return None
    if not any(t.kind == IDENT and t.text in ("for", "while", "do") for t in body[a_end + 3 :]):
        return None
    head = toks[start:open_]
    voids = [h for h in range(name - start) if head[h].text == "void" and head[h].kind == IDENT]
    if len(voids) != 1:
        return None
    prologue = body[:i]
    out: list[Token] = []
    for suffix in SPLIT_SUFFIXES:
        for h, t in enumerate(head):
            if t.text == "__msl_kernel":
                continue
            if h == name - start:
                t = Token(IDENT, t.text + suffix, t.file, t.line, t.col)
            elif h == voids[0] and suffix == "__msl_cond":
                t = Token(IDENT, "bool", t.file, t.line, t.col)
            out.append(t)
        out.append(toks[open_])
        out.extend(prologue)
        if suffix == "__msl_cond":
            at = body[i]
            out.append(Token(IDENT, "return", at.file, at.line, at.col))
            out.extend(body[i + 1 : c_end + 1])
            out.append(Token(PUNCT, ";", at.file, at.line, at.col))
        else:
            out.extend(body[c_end + 1 : a_end + 1])
        out.append(toks[close])
    return out
