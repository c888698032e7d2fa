"""Every MPSGraph selector a family's graph code sends, in evaluation order (a token scan).

Unlike ``translate`` this never stops: it reads code the DAG translation refuses
(reductions, loops, ...) to name what blocks a port and to list the old graph in a
``--skeleton`` TODO.  A message send is ``[receiver piece: arg piece: arg]``; MPSGraph
operations are the selectors ending in ``name:`` plus the table's constants and casts.
"""

from __future__ import annotations

from migrate.index import Index
from migrate.model import HostFunction
from migrate.source import objc as o
from migrate.port.rules import table

_NOT_SEND_AFTER = {"id", "num", "str"}
_PAIRS = {"(": ")", "[": "]", "{": "}"}


def sends(text: str, first_line: int = 1) -> list[tuple[str, int]]:
    """(selector, line) of every keyword message send in ``text``, inner sends first."""
    try:
        toks = o.tokenize(text, first_line)
    except o.ObjcSyntaxError:
        return []
    found: list[tuple[int, str, int]] = []  # (end token index, selector, line)
    for i, t in enumerate(toks):
        if t.text != "[" or t.kind != "op":
            continue
        prev = toks[i - 1] if i else None
        if prev is not None and (
            (prev.kind in _NOT_SEND_AFTER and prev.text != "return") or prev.text in (")", "]", "@")
        ):
            continue  # a subscript, an @[...] literal
        depth, pieces, j = 0, [], i + 1
        while j < len(toks) and toks[j].kind != "eof":
            u = toks[j]
            if u.kind == "op" and u.text in _PAIRS:
                depth += 1
            elif u.kind == "op" and u.text in _PAIRS.values():
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and u.kind == "id" and j + 1 < len(toks) and toks[j + 1].text == ":" and j > i + 1:
                pieces.append(u.text + ":")
            j += 1
        if pieces:
            found.append((j, "".join(pieces), t.line))
    return [(sel, line) for _, sel, line in sorted(found)]


def is_graph_selector(sel: str) -> bool:
    t = table()
    return sel.endswith("name:") or sel in t.constants or sel in t.casts or t.why_not_elementwise(sel) is not None


def family_selectors(ix: Index, functions: list[HostFunction], depth: int = 2) -> list[tuple[str, str]]:
    """(selector, "path:line") of the graph code of ``functions`` and the same-tree MPSGraph
    helpers they call (``depth`` levels), each selector once, in order."""
    from migrate.port.locate import GRAPH_IMPLS, function_text

    seen_fn: set[int] = set()
    out: dict[str, str] = {}

    def visit(f: HostFunction, level: int) -> None:
        if id(f) in seen_fn:
            return
        seen_fn.add(id(f))
        text, line = function_text(ix, f)
        for sel, ln in sends(text, line):
            if is_graph_selector(sel):
                out.setdefault(sel, f"{f.path}:{ln}")
        if level >= depth:
            return
        for name in sorted(f.calls):
            defs = ix.functions.get(name, ())
            if name != f.name and len(defs) == 1 and ix.impl_of(name) in GRAPH_IMPLS:
                visit(defs[0], level + 1)

    for f in functions:
        visit(f, 0)
    return list(out.items())


def blocking(selectors: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(selector, why, where) of the selectors that are not elementwise."""
    t = table()
    out = []
    for sel, where in selectors:
        why = t.why_not_elementwise(sel)
        if why is not None and sel not in t.by_selector:
            out.append((sel, why, where))
    return out
