"""MPS017 divergent-collective: a SIMD collective or barrier that only part of its group reaches.

A call is divergent when a condition enclosing it (if/else, loop test, switch), or a
``return`` earlier in the function, depends on the thread's position: ``lane`` for
SIMD collectives, ``lane`` or ``simdgroup`` for threadgroup barriers (metal_flow's tags).
Calls to same-source helpers that contain collectives count as those collectives.

Severity: error. Reads: . Fix safety: none.

## What it does
Finds SIMD-group collectives (`simd_sum`, `simd_max`, `simd_shuffle*`,
`simd_broadcast`, `quad_*`, `simdgroup_*` matrix operations) and
`threadgroup_barrier` calls inside a branch or loop whose condition depends
on the thread's position, or after a `return` that does. Which variables
depend on the position is worked out from the kernel's
`[[thread_position_in_*]]`, `[[thread_index_in_*]]`,
`[[simdgroup_index_in_threadgroup]]` parameters through assignments and
into same-file helpers (rules/metal_review.yaml); names are not guessed.
A branch on the SIMD-group index alone is fine for SIMD collectives (every
lane of a SIMD group takes it together), not for threadgroup barriers.

## Why it matters
A barrier reached by only part of a threadgroup is undefined behaviour and
hangs on some GPUs; a SIMD reduction inside `if (lane == 0)` reduces over
one lane. Both pass a correctness-only CI shard on the sizes it tries.

## Example
uint lane [[thread_index_in_simdgroup]]
if (lane == 0) {
  total = simd_sum(partial);   // MPS017: only lane 0 takes part
}

## Fix
None automatic: call the collective unconditionally and branch on its
result (`auto s = simd_sum(x); if (lane == 0) out[g] = s;`).
"""

from migrate.rulebook import Rule
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


def check(ix):
    for unit in units(ix):
        helpers = helper_collectives(unit)
        toks = unit.toks
        for flow in unit.flows:
            exits = []  # (return stmt, its tags)
            for st in flow.fn.stmts:
                yield from _judged_calls(unit, flow, st, helpers, exits)  # a return's calls run before it returns
                if st.role != "cond" and toks[st.lo].text == "return":
                    tags = set().union(*(flow.expr_tags(toks, c.lo, c.hi) for c in st.conds)) if st.conds else set()
                    exits.append((st, tags))


def _judged_calls(unit, flow, st, helpers, exits):
    """The findings of the collectives ``st`` calls (directly or through a helper), given the ``exits`` before it."""
    toks, text = unit.toks, unit.text
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
        yield RULE.finding(
            unit.tok_span(c.at, c.at + 1),
            message(f"{c.name}{via}", flow.fn.name, WHO[cls], where),
            kernel=flow.fn.name,
        )


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
            return (
                f"after the `return` at line {line} under `({text_of(unit.toks, cond.lo, cond.hi, unit.text)})`, "
                f"on {flow.why(unit.toks, cond.lo, cond.hi, tags & bad)}"
            )
    return None


def message(detail: str, kernel: str, group: str, where: str) -> str:
    return f"{detail} in {kernel} is reached by part of its {group} only: {where}"


RULE = Rule.documented(__name__, message, check)
