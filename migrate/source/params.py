"""A C++ function's parameters read from its text: a definition's parameters, parsed (``definition_params``),
and a parameter-type list split at its top-level commas (``split_params``)."""

from __future__ import annotations

from migrate.source import objc as o
from migrate.source.macros import split_args
from migrate.source.tokens import render, tokenize


def definition_params(text: str, line: int) -> list[o.Param]:
    """Parameters of the function definition ``text`` (the last (...) before its body)."""
    toks = o.tokenize(text, line)
    depth, last_open = 0, None
    for k, t in enumerate(toks):
        if t.text == "(":
            if depth == 0:
                last_open = k
            depth += 1
        elif t.text == ")":
            depth -= 1
        elif t.text == "{" and depth == 0:
            break
    if last_open is None:
        return []
    try:
        return list(o.Parser(toks, last_open).params())
    except o.ObjcSyntaxError:
        return []


def split_params(text: bytes) -> list[str]:
    """Parameter types separated by top-level commas, whitespace collapsed (the source layer's tokens)."""
    parts: list[str] = []
    for a in split_args(tokenize(text.decode("utf-8", "replace"))):
        part = " ".join(render(a).split())
        if parts and parts[-1].count("<") > parts[-1].count(">"):  # a comma inside std::tuple<int, int>
            parts[-1] += ", " + part
        else:
            parts.append(part)
    return [p for p in parts if p]
