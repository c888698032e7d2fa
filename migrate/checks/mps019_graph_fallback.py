"""MPS019 graph-fallback: a host function that launches a Metal kernel and keeps an MPSGraph path beside it.

Statements of the function's body are classified by the markers of rules/markers.yaml
(directly, or through a same-tree helper whose markers are only Metal or only MPSGraph).
When a Metal statement and a graph statement sit under different conditions (``if``,
``else``, loop, or a preprocessor ``#if``), the first condition that tells them apart is
the gate the finding names.

Severity: warning. Reads: . Fix safety: none.

## What it does
Finds host functions in which some statements launch a native Metal
kernel and others build or run an MPSGraph (the markers of
rules/markers.yaml, directly or through a same-tree helper that is only
Metal or only MPSGraph), under different conditions. It names the gate:
the first `if`/`else`/loop condition or preprocessor `#if` that sends a
call down one path rather than the other.

## Why it matters
A gate such as `canUseMetalSoftmax(...)` or an `if (is_contiguous())` that
falls back to the graph keeps the per-shape graph cache that the migration
exists to remove, and the graph path stops being tested. It is on the
review checklist proposed upstream for MPS kernels.

## Example
if (self.is_contiguous()) {          // MPS019: gate `if (self.is_contiguous())`
  return softmax_metal(self, out);
}
auto cachedGraph = LookUpOrCreateCachedGraph<CachedGraph>(key, ...);

## Fix
None automatic: make the kernel handle every layout and dtype (strided
indexing, a contiguous copy) and delete the graph path.
"""

from migrate.rulebook import Rule
from migrate.read.metal_body import Function, lex, match_close, text_of, walk


def check(ix):
    g, m = ix.markers["mpsgraph"], ix.markers["metal"]
    helpers = _helper_kinds(ix, g, m)
    graph_helpers = frozenset(n for n, k in helpers.items() if k == "graph")
    metal_helpers = frozenset(n for n, k in helpers.items() if k == "metal")
    for path, hf in sorted(ix.tree.hosts.items()):
        if not ix.in_scope(path):
            continue  # findings are reported at the function's own file
        text = None
        for f in hf.functions:
            if not _maybe_both(f, g, m, graph_helpers, metal_helpers):
                continue
            text = text or ix.tree.sources[path].decode("latin-1")
            found = _gate(f, text, g, m, helpers)
            if found:
                gate, graph_line, graph_what = found
                yield RULE.finding(f.span, message(f.name, gate, graph_line, graph_what), kernel=f.name)


def _helper_kinds(ix, g, m) -> dict[str, str]:
    """Same-tree helper -> "graph" or "metal" where its markers, followed through its calls, are only those."""
    kinds = {name: _kind_of_call(ix, name, g, m) for name in ix.functions}
    return {name: k for name, k in kinds.items() if k}


def _maybe_both(f, g, m, graph_helpers: frozenset[str], metal_helpers: frozenset[str]) -> bool:
    """Does ``f`` use both an MPSGraph and a Metal marker, directly or through a helper it calls?"""
    if f.markers.isdisjoint(g) and f.calls.isdisjoint(graph_helpers):
        return False  # most functions: no set of calls to make
    if f.markers.isdisjoint(m) and f.calls.isdisjoint(metal_helpers):
        return False
    calls = f.calls - {f.name}
    graph = f.markers & g or not calls.isdisjoint(graph_helpers)
    return bool(graph and (f.markers & m or not calls.isdisjoint(metal_helpers)))


def _kind_of_call(ix, name, g, m):
    if name in ix.functions and name not in ix._stop_at:
        got = ix.marker_closure(name)
        if got & g and not got & m:
            return "graph"
        if got & m and not got & g:
            return "metal"
    return None


def _gate(f, text, g, m, helpers: dict[str, str]):
    toks = lex(text, f.span.start, f.span.end)
    depth, open_ = 0, None
    for k, t in enumerate(toks):
        depth += t.text == "("
        depth -= t.text == ")"
        if t.text == "{" and depth <= 0:  # below 0: a head closing its parameters in each #if/#else branch
            open_ = k
            break
    if open_ is None:
        return None
    fn = Function(f.name, None, (), False, frozenset(), (), (open_ + 1, match_close(toks, open_)), 0)
    stmts = [s for s in walk(toks, fn) if s.role != "cond"]
    pp = _preprocessor(toks, *fn.body)
    graph, metal = [], []
    for st in stmts:
        names = {t.text for t in toks[st.lo : st.hi] if t.kind == "id"}
        kinds = set()
        if names & g:
            kinds.add("graph")
        if names & m:
            kinds.add("metal")
        called = {n: k for n in names if n != f.name and (k := helpers.get(n))}
        kinds |= set(called.values())
        chain = pp.get(st.lo, ()) + tuple(
            ("else of if" if c.kind == "else" else c.kind, text_of(toks, c.lo, c.hi, text)) for c in st.conds
        )
        if kinds == {"graph"}:
            graph.append((st, chain, (names & g) or set(called)))
        elif kinds == {"metal"}:
            metal.append((st, chain, names))
    for ms, mc, _ in metal:
        for gs, gc, names in graph:
            k = 0
            while k < len(mc) and k < len(gc) and mc[k] == gc[k]:
                k += 1
            if k == len(mc) and k == len(gc):
                continue
            kind, cond = mc[k] if k < len(mc) else gc[k]
            line = text.count("\n", 0, toks[gs.lo].start) + 1
            what = sorted(names)[0]
            return f"{kind} ({cond})" if not kind.startswith("#") else f"{kind} {cond}", line, what
    return None


def _preprocessor(toks, lo, hi) -> dict[int, tuple]:
    """Token index -> enclosing #if/#else conditions, as ("#if", cond) / ("#else of #if", cond)."""
    out, stack = {}, []
    for k in range(lo, hi):
        t = toks[k]
        if t.kind == "dir":
            words = t.text.lstrip("#").split(None, 1)
            d, rest = (words + ["", ""])[:2] if words else ("", "")
            rest = " ".join(rest.split())
            if d in ("if", "ifdef", "ifndef"):
                stack.append((f"#{d}", rest))
            elif d in ("else", "elif") and stack:
                stack[-1] = (f"#{d} of {stack[-1][0]}", stack[-1][1])
            elif d == "endif" and stack:
                stack.pop()
            continue
        out[k] = tuple(stack)
    return out


def message(kernel: str, gate: str, line: int, graph: str) -> str:
    return f"{kernel} keeps an MPSGraph path beside its Metal kernel, gated by {gate} (graph at line {line}: {graph})"


RULE = Rule.documented(__name__, message, check)
