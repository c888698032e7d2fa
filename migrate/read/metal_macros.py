"""What a Metal library exports, read from token lists: ``host_name("...")``, functor
structs, kernel functions, and the parts of a macro body that can produce them
(``prune_body``).  Tokens and macros come from ``migrate.source``."""

from __future__ import annotations

from typing import Callable, Iterable

from migrate.source.macros import Macro, matching_paren, string_value
from migrate.source.tokens import Tok


def _balanced_end(toks: list[Tok], i: int) -> int:
    """Index just past the ')' matching the '(' at ``toks[i]`` (len(toks) if unbalanced)."""
    j = matching_paren(toks, i)
    return j + 1 if j >= 0 else len(toks)


def prune_body(mac: Macro, keep_name: Callable[[str], bool]) -> list[Tok]:
    """The parts of a macro body that matter to a reader of registrations:
    ``host_name(...)``, ``struct X {``, ``kernel void f(``, and calls of
    parameters or of macros ``keep_name`` accepts; ``;`` between them.
    Returns the whole body when a ``##`` paste could form a macro call."""
    body = mac.body
    n = len(body)
    for k, t in enumerate(body):
        if t.text == "##":
            j = k + 1
            while j + 1 < n and body[j + 1].text == "##":
                j += 2
            if j + 1 < n and body[j + 1].text == "(":
                return body
    params = frozenset(mac.params or ())
    out: list[Tok] = []
    i = 0
    while i < n:
        t = body[i]
        if t.kind != "id":
            i += 1
            continue
        nxt = body[i + 1].text if i + 1 < n else ""
        if t.text == "host_name" and nxt == "(":
            j = _balanced_end(body, i + 1)
        elif t.text == "struct":
            j = i + 1
            while j < n and body[j].text not in ("{", ":", ";"):
                j += 1
            j = min(j + 1, n)
        elif (t.text, nxt) in (("kernel", "void"), ("void", "kernel")):
            j = i + 2
            while j < n and body[j].text not in ("(", ";", "{", "<", "::"):
                x = body[j]
                if x.kind == "id" and j + 1 < n and body[j + 1].text == "(" and (x.text in params or keep_name(x.text)):
                    j = _balanced_end(body, j + 1)  # the name is built by a macro call
                else:
                    j += 1
            if j < n and body[j].text == "(":
                if out:
                    out.append(Tok("punc", ";"))
                out.extend(body[i : j + 1])
                out.append(Tok("punc", ")"))
            i = j
            continue
        elif t.text in params and nxt == "(":
            j = _balanced_end(body, i + 1)
        elif keep_name(t.text):
            j = _balanced_end(body, i + 1) if nxt == "(" else i + 1
        else:
            i += 1
            continue
        if out:
            out.append(Tok("punc", ";"))
        out.extend(body[i:j])
        i = j
    return out


def find_host_names(toks: list[Tok]) -> Iterable[str]:
    """``host_name("a" "b")`` in a token list -> "ab" (skips non-literal names)."""
    n = len(toks)
    for i, t in enumerate(toks):
        if t.kind == "id" and t.text == "host_name" and i + 1 < n and toks[i + 1].text == "(":
            j = i + 2
            parts: list[str] = []
            ok = True
            while j < n and toks[j].text != ")":
                if toks[j].kind != "str" or not toks[j].text.startswith('"'):
                    ok = False
                    break
                parts.append(string_value(toks[j].text))
                j += 1
            if ok and j < n and parts:
                yield "".join(parts)


def find_functors(toks: list[Tok]) -> Iterable[str]:
    """``struct NAME_functor {`` (or ``: base``) in a token list -> NAME."""
    n = len(toks)
    for i, t in enumerate(toks):
        if t.kind == "id" and t.text == "struct" and i + 2 < n:
            name, nxt = toks[i + 1], toks[i + 2]
            if name.kind == "id" and name.text.endswith("_functor") and nxt.text in ("{", ":"):
                yield name.text[: -len("_functor")]


def find_kernel_functions(toks: list[Tok]) -> Iterable[tuple[str, bool]]:
    """``kernel void NAME(`` / ``void kernel NAME(`` (definitions and declarations, not instantiations)
    -> (NAME, whether a library exports it under NAME: not a template, no ``[[host_name]]``)."""
    n = len(toks)
    for i, t in enumerate(toks):
        if t.kind != "id" or i + 3 >= n or toks[i + 2].kind != "id" or toks[i + 3].text != "(":
            continue
        if (t.text, toks[i + 1].text) in (("kernel", "void"), ("void", "kernel")):
            yield toks[i + 2].text, not (i and toks[i - 1].text in EXPORT_HIDERS)


EXPORT_HIDERS = (">", "]")  # "template <...> kernel", "[[host_name(...)]] kernel": not exported by its own name
