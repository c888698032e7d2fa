"""MPS017: a SIMD collective or barrier that only part of its group reaches.

A call is divergent when a condition enclosing it (if/else, loop test, switch), or a
``return`` earlier in the function, depends on the thread's position: ``lane`` for
SIMD collectives, ``lane`` or ``simdgroup`` for threadgroup barriers (metal_flow's tags).
Calls to same-source helpers that contain collectives count as those collectives.
"""
from migrate.read.metal_body import text_of
from migrate.read.metal_flow import collective_class, stmt_calls, units

VARYING = {"simdgroup": {"lane"}, "threadgroup": {"lane", "simdgroup"}}
WHO = {"simdgroup": "SIMD group", "threadgroup": "threadgroup"}


def helper_collectives(unit) -> dict[str, tuple[str, str]]:
    """Function name -> (class, collective it reaches), through same-source calls; threadgroup wins."""
    found: dict[str, tuple[str, str]] = {}
    for _ in range(6):
        grew = False
        for flow in unit.flows:
            for st in flow.fn.stmts:
                for c in stmt_calls(unit, st):
                    cls = collective_class(c.name)
                    hit = (cls, c.name) if cls else found.get(c.name) if c.name != flow.fn.name else None
                    old = found.get(flow.fn.name)
                    if hit and (old is None or (old[0] == "simdgroup" and hit[0] == "threadgroup")):
                        found[flow.fn.name] = hit
                        grew = True
        if not grew:
            break
    return found


def check(ix, rule):
    for unit in units(ix):
        helpers = helper_collectives(unit)
        toks, text = unit.toks, unit.text
        for flow in unit.flows:
            exits = []  # (return stmt, its tags)
            for st in flow.fn.stmts:
                if st.role != "cond" and toks[st.lo].text == "return":
                    tags = set().union(*(flow.expr_tags(toks, c.lo, c.hi) for c in st.conds)) if st.conds else set()
                    exits.append((st, tags))
                    continue
                for c in stmt_calls(unit, st):
                    cls = collective_class(c.name)
                    via = ""
                    if cls is None and c.name in helpers and c.name != flow.fn.name:
                        cls, inner = helpers[c.name]
                        via = f" (which reaches {inner})"
                    if cls is None:
                        continue
                    bad = VARYING[cls]
                    where = _divergent_cond(flow, toks, text, st, bad)
                    if where is None:
                        where = _divergent_exit(unit, flow, exits, bad)
                    if where is None:
                        continue
                    yield rule.finding(unit.tok_span(c.at, c.at + 1), kernel=flow.fn.name,
                                       detail=f"{c.name}{via}", where=where, group=WHO[cls])


def _divergent_cond(flow, toks, text, st, bad):
    for cond in st.conds:
        got = flow.expr_tags(toks, cond.lo, cond.hi) & bad
        if got:
            kw = "else of `if" if cond.kind == "else" else f"`{cond.kind}"
            return f"{kw} ({text_of(toks, cond.lo, cond.hi, text)})`, on {flow.why(toks, cond.lo, cond.hi, got)}"
    return None


def _divergent_exit(unit, flow, exits, bad):
    for st, tags in exits:
        if tags & bad:
            cond = next(c for c in st.conds if flow.expr_tags(unit.toks, c.lo, c.hi) & bad)
            line = unit.line_col(unit.toks[st.lo].start)[0]
            return (f"after the `return` at line {line} under `({text_of(unit.toks, cond.lo, cond.hi, unit.text)})`, "
                    f"on {flow.why(unit.toks, cond.lo, cond.hi, tags & bad)}")
    return None
