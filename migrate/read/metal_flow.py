"""Small data-flow facts over Metal function bodies (metal_body), for the kernel review rules.

Every variable gets a set of tags saying where its value comes from, propagated
through assignments (flow-insensitive, to a fixed point) and from call sites into
the parameters of helpers defined in the same source:

- ``lane`` / ``simdgroup`` / ``grid``: a thread-position parameter (rules/metal_review.yaml)
- ``data``: a tensor element (device pointer or reference, constant pointer, a functor's argument)
- ``size``: an integer parameter that is not a position (sizes, strides, counts)
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from migrate.source import SourceFile, source_file
from migrate.read.metal_body import (
    Function,
    Stmt,
    Tok,
    assignments,
    calls,
    find_functions,
    identifier_positions,
    identifiers,
    lex,
    walk,
)
from migrate.tables import load_table, dtype_family

INT_WORDS = frozenset(
    {
        "int",
        "uint",
        "long",
        "ulong",
        "short",
        "ushort",
        "char",
        "uchar",
        "bool",
        "unsigned",
        "size_t",
        "int32_t",
        "uint32_t",
        "int64_t",
        "uint64_t",
        "int16_t",
        "uint16_t",
        "int8_t",
        "uint8_t",
        "uint2",
        "uint3",
        "uint4",
        "int2",
        "int3",
        "int4",
        "long2",
        "long3",
        "long4",
        "ulong2",
        "ulong3",
        "ulong4",
        "packed_uint3",
    }
)


@lru_cache(maxsize=1)
def table() -> dict:
    return load_table("metal_review.yaml")


@lru_cache(maxsize=None)  # asked for every call of every statement, by name
def collective_class(name: str) -> str | None:
    """ "simdgroup" | "threadgroup" | None for a called name."""
    t = table()
    if name in t["not_collective"]:
        return None
    for cls, pats in t["collectives"].items():
        if any(fnmatch.fnmatchcase(name, p) for p in pats):
            return cls
    return None


@dataclass
class FnFlow:
    """Tags of a function's variables.  A variable is a declaration: ``name`` for a parameter,
    ``name@N`` for a local declared by the N-th statement; a use resolves to the latest earlier
    declaration whose scope (enclosing conditions) encloses it, so two loops' ``i`` stay apart."""

    fn: Function
    tags: dict[str, set[str]] = field(default_factory=dict)  # variable -> tags
    origin: dict[str, str] = field(default_factory=dict)  # variable -> "tid [[thread_position_in_threadgroup]]"
    types: dict[str, tuple[str, ...]] = field(default_factory=dict)  # name -> declared type (params and locals)
    assigns: list = field(default_factory=list)  # (Stmt, Assign, variable written)
    ctx: dict[int, tuple[int, tuple]] = field(default_factory=dict)  # token index -> (statement order, scope)
    decls: dict[str, list[tuple[int, tuple, str]]] = field(default_factory=dict)  # name -> (order, scope, variable)

    def var(self, name: str, at: int) -> str:
        decls = self.decls.get(name)
        if not decls:  # a parameter or a name from outside
            return name
        order, scope = self.ctx.get(at, (1 << 30, ()))
        for d_order, d_scope, key in reversed(decls):
            if d_order <= order and scope[: len(d_scope)] == d_scope:
                return key
        return name

    def tags_at(self, toks: list[Tok], lo: int, hi: int) -> Iterator[tuple[str, str, set[str]]]:
        """(name, variable, tags) of each identifier of ``toks[lo:hi]``, as they are asked for."""
        for k, name in identifier_positions(toks, lo, hi):
            key = self.var(name, k)
            yield name, key, self.tags.get(key, set())

    def expr_tags(self, toks: list[Tok], lo: int, hi: int) -> set[str]:
        out: set[str] = set()
        for _, _, tags in self.tags_at(toks, lo, hi):
            out |= tags
        return out

    def origin_of(self, toks: list[Tok], lo: int, hi: int, want: set[str]) -> str:
        """Where the first identifier of the expression with one of ``want`` tags comes from."""
        for name, key, tags in self.tags_at(toks, lo, hi):
            if tags & want:
                return self.origin.get(key, name)
        return ""

    def why(self, toks: list[Tok], lo: int, hi: int, want: set[str]) -> str:
        """``x (from tid [[thread_position_in_threadgroup]])`` for each identifier of the expression with such tags."""
        seen: dict[str, str] = {}
        for name, key, tags in self.tags_at(toks, lo, hi):
            if tags & want and name not in seen:
                o = self.origin.get(key, name)
                seen[name] = o if o == name or o.startswith(name + " [[") else f"{name} (from {o})"
        return ", ".join(seen.values())

    def any_tags(self, name: str) -> set[str]:
        """Tags of every variable called ``name``."""
        keys = [name] + [k for _, _, k in self.decls.get(name, ())]
        return set().union(*(self.tags.get(k, set()) for k in keys))


@dataclass
class Unit:
    """One Metal source: a .metal file or a raw string of Metal inside a host file."""

    path: str
    text: str  # the whole file, latin-1 (offsets are byte offsets)
    toks: list[Tok]
    functions: list[Function]
    flows: list[FnFlow] = field(default_factory=list)
    float_instances: bool = False  # some template is instantiated with a floating type at file scope

    @property
    def source(self) -> SourceFile:
        sf = self.__dict__.get("_source")
        if sf is None:
            sf = self.__dict__["_source"] = source_file(self.text.encode("latin-1"), self.path)
        return sf

    def line_col(self, off: int) -> tuple[int, int]:
        return self.source.position(off)  # columns in characters

    def span(self, start: int, end: int):
        return self.source.span(start, end)

    def tok_span(self, lo: int, hi: int):
        last = self.toks[hi - 1]
        return self.span(self.toks[lo].start, last.start + len(last.text))

    def by_name(self, name: str) -> list[FnFlow]:
        return [f for f in self.flows if f.fn.name == name]


def units(ix) -> list[Unit]:
    """Every Metal source of the tree in the index's scope (findings are reported at the unit's
    own path), analysed once per Index; none while ``elsewhere(ix, True)`` holds."""
    got = ix.__dict__.get("_metal_units")
    if got is None:
        got = ix.__dict__["_metal_units"] = list(_units(ix.tree, ix.in_scope))
    return got


def elsewhere(ix, yes: bool) -> None:
    """Whether another process analyses ix's Metal sources: the rules here then see no unit."""
    if yes:
        ix.__dict__["_metal_units"] = []
    else:
        ix.__dict__.pop("_metal_units", None)


def _units(tree, wanted=lambda path: True):
    for path in sorted(tree.metals):
        if "#" in path or not (path.endswith(".metal") or "/kernels/" in path) or not wanted(path):
            continue
        data = tree.sources.get(path)
        if data is not None:
            sf = source_file(data, path)  # the token stream the Metal reader made
            yield _analysed(path, sf.latin1, sf.tokens(), sf)
    for path in sorted(tree.hosts):
        if not wanted(path):
            continue
        for im in tree.hosts[path].inline_metal:
            sf = source_file(tree.sources[path], path)
            yield _analysed(path, sf.latin1, _inline_tokens(sf, im), sf)


def _inline_tokens(sf: SourceFile, im) -> list[Tok]:
    """The tokens of Metal in a host file's raw string, at their offsets in the host file: those the
    Metal reader made of the string (moved by its offset) when its bytes are the file's, else lexed."""
    start, end = im.span.start, im.span.end
    data = im.text.encode()
    if sf.data[start:end] != data:  # bad UTF-8 replaced in im.text: offsets would differ
        return lex(sf.latin1, start, end)
    toks = source_file(data, sf.path, base_line=im.span.line, base_column=im.span.column, base_offset=start).tokens()
    return [Tok(t.kind, t.text, t.start + start, t.space) for t in toks]  # fresh: never painted


def analyse(path: str, text: str, start: int = 0, end: int | None = None) -> Unit:
    return _analysed(path, text, lex(text, start, end))


def _analysed(path: str, text: str, toks: list[Tok], sf: SourceFile | None = None) -> Unit:
    fns = find_functions(toks)
    unit = Unit(path, text, toks, fns)
    if sf is not None:
        unit.__dict__["_source"] = sf
    floats = set(table()["floating"])
    unit.float_instances = any(
        toks[k].text in floats and k > 0 and toks[k - 1].text in ("<", "(", ",")
        for gap in _outside(fns, len(toks))
        for k in gap
    )
    for f in fns:
        walk(toks, f)
        unit.flows.append(_sources(toks, f))
    _propagate(unit)
    return unit


def _outside(fns: list[Function], n: int):
    """The token index ranges of ``[0, n)`` outside every function (name to closing brace)."""
    k = 0
    for a, b in sorted((f.name_tok, f.body[1]) for f in fns):
        if a > k:
            yield range(k, a)
        k = max(k, b + 1)
    if k < n:
        yield range(k, n)


def _sources(toks: list[Tok], fn: Function) -> FnFlow:
    flow = FnFlow(fn)
    positions = table()["positions"]
    functor = bool(fn.struct and fn.struct.endswith("_functor"))
    for p in fn.params:
        flow.types[p.name] = p.type
        tags: set[str] = set()
        for a in p.attrs:
            tags |= set(positions.get(a, ()))
        if any(a in positions for a in p.attrs):
            flow.origin[p.name] = f"{p.name} [[{next(a for a in p.attrs if a in positions)}]]"
        elif (
            functor
            or (p.pointer and p.space in ("device", "constant", "threadgroup"))
            or (p.reference and p.space == "device")
        ):
            tags.add("data")
        elif fn.is_kernel and set(p.type) & INT_WORDS:
            tags.add("size")
        if tags:
            flow.tags[p.name] = tags
    ctx = flow.ctx
    for order, st in enumerate(fn.stmts):
        ctx.update(dict.fromkeys(range(st.lo, st.hi), (order, st.conds)))
        for a in assignments(toks, st):
            if a.decl:
                flow.types.setdefault(a.var, a.decl)
                flow.decls.setdefault(a.var, []).append((order, st.conds, f"{a.var}@{order}"))
            flow.assigns.append((st, a, flow.var(a.var, st.lo)))
    return flow


def _propagate(unit: Unit) -> None:
    """Tags through each function's assignments, and from call sites into helpers' parameters, to a
    fixed point (at most 8 rounds).  Work that cannot change a tag is skipped: an expression reads only
    variables that can hold tags, and a function whose tags did not grow since its last turn has none."""
    toks = unit.toks
    flows_by_name: dict[str, list[FnFlow]] = {}
    for flow in unit.flows:
        flows_by_name.setdefault(flow.fn.name, []).append(flow)

    def reads(flow: FnFlow, lo: int, hi: int) -> list[tuple[str, str]]:  # (name, variable) of an expression
        return [(name, flow.var(name, k)) for k, name in identifier_positions(toks, lo, hi)]

    plans = []  # per flow: its assignments and the helper calls it passes arguments to, with what they read
    for flow in unit.flows:
        assigns = [(var, reads(flow, *a.rhs), a) for _, a, var in flow.assigns]
        passes = []
        for st in flow.fn.stmts:
            for c in stmt_calls(unit, st):
                for callee in flows_by_name.get(c.name, ()):
                    if callee is flow or callee.fn.is_kernel:
                        continue
                    for k, (lo, hi) in enumerate(c.args):
                        if k >= len(callee.fn.params):
                            break
                        passes.append((callee, callee.fn.params[k].name, reads(flow, lo, hi), c, lo, hi))
        plans.append((flow, assigns, passes))
    # the variables that can ever hold tags: tagged parameters, assigned variables, parameters passed to
    taggable = {id(flow): set(flow.tags) | {var for _, a, var in flow.assigns} for flow in unit.flows}
    for _, _, passes in plans:
        for callee, pname, *_ in passes:
            taggable[id(callee)].add(pname)
    turns = []  # per flow: the assignments and passes that read such variables
    for flow, assigns, passes in plans:
        can = taggable[id(flow)]
        for var, _, _ in assigns:
            flow.tags.setdefault(var, set())
        for callee, pname, *_ in passes:
            callee.tags.setdefault(pname, set())
        assigns = [(var, _keys(ins, can), ins, a.subscripted) for var, ins, a in assigns]
        passes = [(callee, pname, _keys(ins, can), ins, c) for callee, pname, ins, c, _, _ in passes]
        turns.append((flow, [x for x in assigns if x[1]], [x for x in passes if x[2]]))
    order = {id(flow): k for k, flow in enumerate(unit.flows)}
    dirty = set(range(len(turns)))  # the flows whose tags grew since their last turn
    for _ in range(8):
        changed = False
        for k, (flow, assigns, passes) in enumerate(turns):
            if k not in dirty:
                continue
            dirty.discard(k)
            tags, origin = flow.tags, flow.origin
            for _r in range(8):
                inner = False
                for var, ks, ins, subscripted in assigns:
                    got = set().union(*[tags[key] for key in ks])
                    if subscripted:
                        got &= _DATA
                    have = tags[var]
                    if not got <= have:
                        if var not in origin:
                            want = got - _PLAIN
                            if want:
                                origin[var] = _origin(flow, ins, want)
                        have |= got
                        inner = changed = True
                if not inner:
                    break
            else:
                dirty.add(k)  # still growing after 8 rounds: its next turn goes on
            for callee, pname, ks, ins, c in passes:
                got = set().union(*[tags[key] for key in ks])
                have = callee.tags[pname]
                if not got <= have:
                    if pname not in callee.origin and got - _PLAIN:
                        line = unit.line_col(toks[c.at].start)[0]
                        callee.origin[pname] = f"{_origin(flow, ins, got)}, passed at line {line}"
                    have |= got
                    changed = True
                    dirty.add(order[id(callee)])
        if not changed:
            break


_DATA = frozenset({"data"})
_PLAIN = frozenset({"data", "size"})


def _keys(ins: list[tuple[str, str]], can: set[str]) -> tuple[str, ...]:
    """The variables of ``ins`` that can hold tags, once each."""
    return tuple(dict.fromkeys(key for _, key in ins if key in can))


def _origin(flow: FnFlow, ins: list[tuple[str, str]], want: set[str]) -> str:
    """``FnFlow.origin_of`` for an expression reading ``ins``."""
    for name, key in ins:
        if flow.tags.get(key, _EMPTY) & want:
            return flow.origin.get(key, name)
    return ""


_EMPTY: frozenset[str] = frozenset()


# ------------------------------------------------------------ types
def is_floating(unit: Unit, flow: FnFlow, words: tuple[str, ...] | None, float_t: bool) -> bool:
    if not words:
        return False
    floats = set(table()["floating"])
    return any(w in floats or (float_t and w in flow.fn.template_params) for w in words)


def template_may_be_float(unit: Unit, flow: FnFlow, functor_dtypes: dict | None) -> bool:
    """Is a template parameter of this function possibly a floating type?  A functor: when it is registered
    for a floating dtype; otherwise when the file instantiates some template with one."""
    head = [t.text for t in unit.toks[flow.fn.head : flow.fn.name_tok]]
    if "is_floating_point_v" in head or "is_floating_point" in head:
        return True
    if {"is_integral_v", "is_integral"} & set(head) or _same_as_integer(head):
        return False  # enable_if'd to integers
    s = flow.fn.struct or ""
    if functor_dtypes is not None and s.endswith("_functor") and s[: -len("_functor")] in functor_dtypes:
        return bool(set(functor_dtypes[s[: -len("_functor")]]) & set(dtype_family("float")))
    return unit.float_instances


def _same_as_integer(head: list[str]) -> bool:
    """``is_same_v<T, long>`` in a declaration's head."""
    for k, w in enumerate(head):
        if w in ("is_same_v", "is_same") and k + 5 < len(head) and head[k + 1] == "<" and head[k + 3] == ",":
            if head[k + 4] in INT_WORDS:
                return True
    return False


def floating_vars(unit: Unit, flow: FnFlow, float_t: bool) -> set[str]:
    """Variables holding floating-point values: declared so, or ``auto`` from one."""
    out = {v for v, t in flow.types.items() if is_floating(unit, flow, t, float_t)}
    for _ in range(4):
        grew = False
        for st, a, _ in flow.assigns:
            if a.var not in out and a.decl and "auto" in a.decl and set(identifiers(unit.toks, *a.rhs)) & out:
                out.add(a.var)
                grew = True
        if not grew:
            break
    return out


# ------------------------------------------------------------ c10/metal helpers of the tree
def tree_helpers(root: Path) -> dict[str, frozenset[str]]:
    """Header -> the helper functions (rules/metal_review.yaml) the tree's c10/metal header defines in c10::metal."""
    out = {}
    for rel, wanted in table()["helpers"].items():
        try:
            data = (Path(root) / rel).read_bytes()
        except OSError:
            continue
        key = (rel, data)
        got = _HELPERS.get(key)
        if got is None:  # MPS016 and MPS020 both ask: the header is lexed and read once per content
            fns = find_functions(source_file(data, rel).tokens())
            got = _HELPERS[key] = frozenset(
                f.name for f in fns if f.name in wanted and f.namespace[:2] == ("c10", "metal")
            )
        out[rel] = got
    return out


_HELPERS: dict[tuple[str, bytes], frozenset[str]] = {}


def stmt_calls(unit: Unit, st: Stmt) -> list:
    """The calls of a statement (found once per unit; the rules and the propagation share them)."""
    memo = unit.__dict__.setdefault("_calls", {})
    got = memo.get((st.lo, st.hi))
    if got is None:
        got = memo[(st.lo, st.hi)] = calls(unit.toks, st.lo, st.hi)
    return got
