"""Run the rules of one lint on two processes when the tree is big and a second core is idle.

The rules that share the Metal data-flow analysis (``metal_flow.units``: the largest part of the
rules' time that the others never need) read the tree's Metal view only (tree.metal_view).  When
lint_root read the tree, the parse child computed their findings on it once its share of the parse
was done (``tree.metal_work``): this process runs the other rules meanwhile (the Metal flow rules here
see no unit) and adds the child's findings.  Otherwise a forked child (parse_pool.Child) runs them,
and MPS019, whose host call-graph walk no other rule shares, to even the two out (measured on the
2.6.0 tree); it sends its findings back in migrate.codec form while this process runs the others.
A child that fails leaves its rules to this process.  Findings are the same either way.

A rule that raises here (a bug) is recorded in ``failed`` (code -> exception) and the other rules go on:
lint reports their findings and names the rule that failed (lint.RulesFailed).
"""

from __future__ import annotations

import os

from migrate import parse_pool
from migrate.errors import DEBUG_ENV

METAL_FLOW_RULES = frozenset({"MPS016", "MPS017", "MPS018", "MPS020", "MPS021"})
# What the two processes run after the parse, per source byte, in parse_pool cost units (one host source
# byte's parse): the other rules ~0.11 per yaml or host byte (callgrind, 2.6.0 tree); the Metal flow rules
# 1.6 per .metal byte, where the two processes end together on the 2.6.0 tree.  The child stops at a job's
# end, so the balance moves in steps: over 15 cold two-process lints each (interleaved), the child ended
# 5.0 ms after this process at 1.5 (median), 0.7 ms before at 1.6, 2.0 at 1.7 and 2.9 at 1.8; this process
# still decodes the child's findings after its end.  Callgrind's counts gave 2.0: they miss the cache
# misses of the other rules on the models decoded from the child.
FLOW_COST_PER_METAL_BYTE = 1.6
RULES_COST_PER_BYTE = 0.11
CHILD_RULES = METAL_FLOW_RULES | {"MPS019"}
MIN_PARALLEL_BYTES = 512 * 1024  # bytes of source below which the fork costs more than it saves


def run_rules(index, rules: dict, metal=None, failed: dict | None = None) -> list:
    """The findings of every rule in ``rules`` (code -> Rule) over ``index``; ``metal``: a pending value of
    metal_findings for the METAL_FLOW_RULES among them (a parse_pool.Child's ``result()``).  ``failed``: where
    a rule that raises is recorded (else the exception propagates)."""
    if metal is not None:
        from migrate import codec
        from migrate.read.metal_flow import elsewhere

        elsewhere(index, True)
        found = _run(index, rules, list(rules), failed)
        elsewhere(index, False)
        blob = metal.result()
        if blob is None:  # the child failed: run them here (MPS018's host sites come twice: lint keeps one)
            return found + _run(index, rules, [c for c in rules if c in METAL_FLOW_RULES], failed)
        return found + list(codec.loads(blob))
    theirs = [c for c in rules if c in CHILD_RULES]
    child = None
    if theirs and len(theirs) < len(rules) and _worth_a_child(index.tree):
        child = parse_pool.Child.start(lambda: _encoded(index, rules, theirs))
    mine = [c for c in rules if child is None or c not in CHILD_RULES]
    found = _run(index, rules, mine, failed)
    if child is not None:
        blob = child.result()
        if blob is None:  # the child failed: run its rules here
            found += _run(index, rules, theirs, failed)
        else:
            from migrate import codec

            found += codec.loads(blob)  # a tuple
    return found


def _run(index, rules: dict, codes: list[str], failed: dict | None = None) -> list:
    if failed is None or os.environ.get(DEBUG_ENV):  # in a child: its failure hands its rules to this process
        return [f for c in codes for f in rules[c].run(index)]
    found = []
    for c in codes:
        try:
            found += rules[c].run(index)
        except Exception as exc:  # a bug in one rule: the others still report
            failed[c] = exc
    return found


def _encoded(index, rules: dict, codes: list[str]) -> bytes:
    from migrate import codec

    return codec.dumps(tuple(_run(index, rules, codes)))  # a list would read as an object


def metal_key(rules: dict, scope) -> tuple:
    """What metal_findings computes: the Metal flow rules among ``rules``, over ``scope``."""
    return tuple(sorted(c for c in rules if c in METAL_FLOW_RULES)), None if scope is None else tuple(scope)


def flow_lead(metal: int, other: int, xfail: bool) -> float:
    """How much longer (parse_pool cost units) the Metal flow rules run than the other rules, for a tree of
    ``metal`` .metal bytes and ``other`` yaml and host bytes: what the parse child that runs them leaves
    of the parse to this process (parse_all's ``reserve``).  0 when they run shorter, as in a tree with
    common_mps.py (``xfail``), whose rules (MPS007, MPS015) run longest."""
    if xfail:
        return 0.0
    return max(0.0, FLOW_COST_PER_METAL_BYTE * metal - RULES_COST_PER_BYTE * other)


def metal_findings(metal_tree, key: tuple) -> bytes:
    """The findings of the rules of ``key`` (metal_key) over a tree's Metal view, in migrate.codec form."""
    from migrate.index import Index
    from migrate.registry import all_rules

    codes, scope = key
    return _encoded(Index(metal_tree, scope=None if scope is None else list(scope)), all_rules(), list(codes))


def _worth_a_child(tree) -> bool:
    if sum(map(len, tree.sources.values())) < MIN_PARALLEL_BYTES:
        return False
    return parse_pool.idle_workers() >= 2
