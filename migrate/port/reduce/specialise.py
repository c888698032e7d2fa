"""The selectors a family's old graph sends once a shared helper is specialised for the caller's enum argument:
``reduction_out_mps(..., MPSReductionType::SUM, ...)`` keeps the helper's branches for SUM (``if (type ==
MPSReductionType::SUM)``, ``case MPSReductionType::SUM:``) and drops those for other values of that enum."""

from __future__ import annotations

import re

from migrate.index import Index
from migrate.model import HostFunction
from migrate.port.selectors import is_graph_selector, sends
from migrate.source import SourceFile

_ENUM_ARG = re.compile(r"\b(\w+)::([A-Z][A-Z0-9_]*)\b")
_CALL = re.compile(r"\b(\w+)\s*\(")


def specialised_selectors(ix: Index, functions: list[HostFunction], depth: int = 3) -> list[str]:
    """Selectors of ``functions`` and the graph helpers they call (``depth`` levels), each helper specialised for
    the enum values its caller passes."""
    from migrate.port.locate import GRAPH_IMPLS, function_text

    out: list[str] = []

    def visit(f: HostFunction, values: dict[str, str], level: int) -> None:
        text, line = function_text(ix, f)
        text = keep_branches(text, values)
        out.extend(sel for sel, _ in sends(text, line) if is_graph_selector(sel))
        if level >= depth:
            return
        for m in _CALL.finditer(text):
            name = m.group(1)
            defs = ix.functions.get(name, ())
            if name == f.name or len(defs) != 1 or ix.impl_of(name) not in GRAPH_IMPLS:
                continue
            args = _call_args(text, m.end())
            passed = {e: v for e, v in _ENUM_ARG.findall(args)}
            visit(defs[0], {**values, **passed}, level + 1)

    for f in functions:
        visit(f, {}, 0)
    return list(dict.fromkeys(out))


def _call_args(text: str, start: int) -> str:
    depth, k = 1, start
    while k < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[k], 0)
        k += 1
    return text[start : k - 1]


def keep_branches(text: str, values: dict[str, str]) -> str:
    """``text`` with the if-branches and switch cases for other values of the enums in ``values`` blanked."""
    if not values:
        return text
    code = SourceFile(text.encode("utf-8", "surrogateescape")).code.decode("utf-8", "surrogateescape")
    drop: list[tuple[int, int]] = []
    for m in re.finditer(r"\bif\s*\(", code):
        cond_end = _matching(code, m.end() - 1)
        chosen = _decides(code[m.end() : cond_end], values)
        if chosen is None:
            continue
        body_start, body_end = _statement(code, cond_end + 1)
        if not chosen:
            drop.append((body_start, body_end))
            continue
        rest = re.match(r"\s*else\b", code[body_end:])  # a taken branch: the else chain after it is dead
        if rest:
            s, e = _statement(code, body_end + rest.end())
            drop.append((body_end, e))
    for m in re.finditer(r"\bcase\s+(\w+)::(\w+)\s*:", code):
        enum, value = m.group(1), m.group(2)
        if enum in values and value != values[enum]:
            end = code.find("break;", m.end())
            nxt = code.find("case ", m.end())
            if end != -1 and (nxt == -1 or end < nxt):
                drop.append((m.end(), end))
    out = list(text)
    for s, e in drop:
        for k in range(s, min(e, len(out))):
            if out[k] != "\n":
                out[k] = " "
    return "".join(out)


def _decides(cond: str, values: dict[str, str]) -> bool | None:
    """Whether a condition of only ``x == Enum::V`` terms (joined by ||) holds for ``values``; None otherwise."""
    terms = [t.strip() for t in cond.split("||")]
    verdicts = []
    for t in terms:
        m = re.fullmatch(r"\(?\s*\w+\s*(==|!=)\s*(\w+)::(\w+)\s*\)?", t)
        if not m or m.group(2) not in values:
            return None
        same = values[m.group(2)] == m.group(3)
        verdicts.append(same if m.group(1) == "==" else not same)
    return any(verdicts)


def _matching(code: str, open_at: int, pair: str = "()") -> int:
    depth = 0
    for k in range(open_at, len(code)):
        depth += {pair[0]: 1, pair[1]: -1}.get(code[k], 0)
        if depth == 0:
            return k
    return len(code)


def _statement(code: str, start: int) -> tuple[int, int]:
    """(start, end) of the statement at ``start``: a braced block or up to its ``;``."""
    k = start
    while k < len(code) and code[k].isspace():
        k += 1
    if code.startswith("{", k):
        return k, _matching(code, k, "{}") + 1
    if re.match(r"if\b", code[k:]):  # else if: the whole chain
        cond_end = _matching(code, code.index("(", k))
        s, e = _statement(code, cond_end + 1)
        rest = re.match(r"\s*else\b", code[e:])
        return (k, _statement(code, e + rest.end())[1]) if rest else (k, e)
    end = code.find(";", k)
    return k, (end + 1 if end != -1 else len(code))
