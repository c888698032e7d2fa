"""Token-level pre-pass: preprocessed MSL -> C++ that clang accepts.

Works on the token stream of `clang -E` output (lexer.py), never on raw text:
- records kernels (definitions with their [[buffer]]/position attributes,
  explicit instantiations with [[host_name]]) and strips MSL attributes;
- `T(a, b)` functional casts on vector/half/bfloat/template-parameter types
  -> `__msl_ctor<T>(a, b)`; `static_cast<` -> value-converting `__msl_cast<`;
- unsuffixed floating literals get `f` (Metal has no double), `h` -> `f16`;
- `threadgroup` objects -> `static thread_local` (one per emulated group);
- names unsupported Metal features.

Stages: prepass_kernels (find the kernels, check for unsupported features), prepass_split (a kernel's
row-uniform split), then rewrite here; prepass_common holds what they share.
"""

from __future__ import annotations

from .lexer import IDENT, NUMBER, PUNCT, Token, is_float_literal, render, tokenize
from .prepass_common import CTOR_TYPES, _match_angle
from .prepass_kernels import (
    PrepassResult,
    _is_attr_start,
    _is_msl_attr,
    _parse_attr,
    check_unsupported,
    find_kernels,
)


def rewrite(tokens: list[Token], type_templates: set[str]) -> list[Token]:
    out: list[Token] = []
    scopes: list[list] = []  # [names, start_depth, body_opened]
    depth = paren = 0
    toks = tokens
    n = len(toks)
    i = 0

    def sub(tok: Token, text: str, kind: str = IDENT) -> Token:
        return Token(kind, text, tok.file, tok.line, tok.col)

    def type_names() -> set[str]:
        s: set[str] = set()
        for sc in scopes:
            s |= sc[0]
        return s

    while i < n:
        t = toks[i]
        text = t.text
        if t.kind == PUNCT:
            if _is_attr_start(toks, i):
                end, items = _parse_attr(toks, i)
                if not _is_msl_attr(items):
                    out.extend(toks[i:end])
                i = end
                continue
            if text == "{":
                depth += 1
                if scopes and not scopes[-1][2] and depth - 1 == scopes[-1][1]:
                    scopes[-1][2] = True
            elif text == "}":
                depth -= 1
                while scopes and scopes[-1][2] and depth == scopes[-1][1]:
                    scopes.pop()
            elif text == "(":
                paren += 1
            elif text == ")":
                paren -= 1
            elif text == ";" and paren == 0:
                while scopes and not scopes[-1][2] and depth == scopes[-1][1]:
                    scopes.pop()
            out.append(t)
            i += 1
            continue
        if t.kind == NUMBER:
            if is_float_literal(text):
                low = text.lower()
                if low.endswith("h"):
                    text = text[:-1] + "f16"
                elif low.endswith("l"):
                    text = text[:-1] + "f"
                elif not low.endswith("f"):
                    text = text + "f"
                t = sub(t, text, NUMBER)
            out.append(t)
            i += 1
            continue
        if t.kind != IDENT:
            out.append(t)
            i += 1
            continue
        nxt = toks[i + 1].text if i + 1 < n else ""
        prev = out[-1].text if out else ""
        if text == "template" and nxt == "<":
            close = _match_angle(toks, i + 1)
            names = set()
            for k in range(i + 2, close):
                if (
                    toks[k].text in ("typename", "class")
                    and toks[k + 1].kind == IDENT
                    and toks[k + 2].text in (",", ">", "=", "...")
                ):
                    names.add(toks[k + 1].text)
            scopes.append([names, depth, False])
        elif text == "using" and scopes and depth > scopes[-1][1] and i + 2 < n and toks[i + 2].text == "=":
            scopes[-1][0].add(nxt)
        elif text == "static_cast":
            out.append(sub(t, "__msl_cast"))
            i += 1
            continue
        elif text == "__msl_kernel":
            i += 1
            continue
        elif text == "const" and prev == "const":
            i += 1
            continue
        elif text == "__msl_threadgroup":
            i += 1
            if prev in ("{", "}", ";", ":") and not _is_pointer_decl(toks, i):
                out.append(sub(t, "static"))
                out.append(sub(t, "thread_local"))
            continue
        if (
            nxt == "("
            and prev not in (".", "->", "operator", "~", "::", "struct", "class")
            and (text in CTOR_TYPES or text in type_names())
            and not _is_declarator(toks, i + 1)
        ):
            out.append(sub(t, "__msl_ctor"))
            out.append(sub(t, "<", PUNCT))
            out.append(t)
            out.append(sub(t, ">", PUNCT))
            i += 1
            continue
        if nxt == "<" and text in type_templates and prev not in (".", "->", "template", "using", "struct", "class"):
            close = _match_angle(toks, i + 1)
            if close + 1 < n and toks[close + 1].text == "(" and not _is_declarator(toks, close + 1):
                prefix: list[Token] = []
                while len(out) >= 2 and out[-1].text == "::" and out[-2].kind == IDENT:
                    prefix = [out[-2], out[-1]] + prefix
                    del out[-2:]
                if out and out[-1].text == "::":
                    prefix = [out.pop()] + prefix
                inner = rewrite(toks[i : close + 1], type_templates)
                out.append(sub(t, "__msl_ctor"))
                out.append(sub(t, "<", PUNCT))
                out.extend(prefix)
                out.extend(inner)
                out.append(sub(t, ">", PUNCT))
                i = close + 1
                continue
        out.append(t)
        i += 1
    return out


def _is_declarator(toks: list[Token], i: int) -> bool:
    """`T (*name)(` / `T (&name)` after a type: a declaration, not a cast."""
    return (
        i + 3 < len(toks)
        and toks[i].text == "("
        and toks[i + 1].text in ("*", "&")
        and toks[i + 2].kind == IDENT
        and toks[i + 3].text == ")"
    )


def _is_pointer_decl(toks: list[Token], i: int) -> bool:
    depth = 0
    for k in range(i, min(len(toks), i + 64)):
        s = toks[k].text
        if s == "<":
            depth += 1
        elif s == ">":
            depth -= 1
        elif depth <= 0 and s in (";", "=", "[", ",", ")", "(", "{"):
            return False
        elif depth <= 0 and s in ("*", "&"):
            return True
    return False


def prepass(preprocessed: str, main_file: str) -> PrepassResult:
    tokens = tokenize(preprocessed, main_file)
    check_unsupported(tokens)
    # `[[kernel]] void f(...)` is the attribute spelling of `kernel`
    norm: list[Token] = []
    i = 0
    while i < len(tokens):
        if _is_attr_start(tokens, i):
            end, items = _parse_attr(tokens, i)
            if [name for name, _, _ in items] in (["kernel"], ["__msl_kernel"]):
                norm.append(Token(IDENT, "__msl_kernel", tokens[i].file, tokens[i].line, tokens[i].col))
                i = end
                continue
        norm.append(tokens[i])
        i += 1
    kernels, type_templates, splits = find_kernels(norm)
    if splits:  # the copies go right after their kernel's definition, in its namespace
        after = {end: copies for end, copies in splits.values()}
        norm = [x for i, t in enumerate(norm) for x in ([t] + after.get(i, []))]
    out = rewrite(norm, type_templates)
    files = sorted({t.file for t in norm})
    return PrepassResult(render(out), kernels, files)
