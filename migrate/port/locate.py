"""From a family to its MPSGraph implementations and the DAG their graph code builds."""

from __future__ import annotations

import re

from dataclasses import dataclass
from functools import lru_cache

from migrate.index import Index
from migrate.model import DispatchLine, HostFunction, NativeEntry, StubRegistration
from migrate.source import objc as o
from migrate.port.dag import Dag
from migrate.port.translate import PortBlocked, Translator
from migrate.source import SourceFile
from migrate.source.params import definition_params
from migrate.source.macros import expand, expand_nested, find_invocations, find_macros

GRAPH_IMPLS = ("mpsgraph", "mixed")


@dataclass
class Impl:
    """One overload still routed to an MPSGraph implementation."""

    entry: NativeEntry
    line: DispatchLine  # the MPS dispatch line
    function: HostFunction
    # a dispatch line MPS already shares with CPU: the MPSGraph function registered for the stub it
    # reaches (REGISTER_DISPATCH, or a registration macro such as REGISTER_MPS_UNARY_STUB expanding to one)
    registration: StubRegistration | None = None


def mpsgraph_families(ix: Index) -> list[str]:
    return sorted(f for f, entries in ix.families.items() if any(_graph_route(ix, e) for e in entries))


def _graph_route(ix: Index, e: NativeEntry) -> bool:
    r = ix.routes[e.overload_name]
    return r.via == "explicit" and r.impl in GRAPH_IMPLS and ix.mps_line(e) is not None


def family_impls(ix: Index, family: str) -> list[Impl]:
    out = []
    for e in ix.families.get(family, ()):
        if not _graph_route(ix, e):
            continue
        line = ix.mps_line(e)
        defs = ix.functions.get(line.kernel_name, [])
        reg = stub_registration(ix, line) if not defs else None
        if reg is not None:
            out.append(Impl(e, line, ix.functions[reg.function][0], reg))
            continue
        if len(defs) != 1:
            raise PortBlocked(f"{line.kernel_name} has {len(defs)} definitions", "several definitions", line.span.where)
        out.append(Impl(e, line, defs[0]))
    return out


def stub_registration(ix: Index, line: DispatchLine) -> StubRegistration | None:
    """The MPS registration a shared dispatch line (``CPU, CUDA, MPS: ceil_out``) reaches through its stub,
    when it registers one MPSGraph host function of the tree."""
    from migrate.index import is_shared

    if not is_shared(line):
        return None
    regs = [r for s in ix.stubs_of_shared_kernel(line.kernel_name) for r in ix.registrations.get(s, ())]
    if len(regs) != 1 or len(ix.functions.get(regs[0].function, ())) != 1:
        return None
    return regs[0] if ix.impl_of(regs[0].function) in GRAPH_IMPLS else None


# ------------------------------------------------------------- source text
@lru_cache(maxsize=64)
def _file_macros(data: bytes):
    return find_macros(SourceFile(data))  # a body is one logical line: continuations are spliced


def function_text(ix: Index, f: HostFunction) -> tuple[str, int]:
    """The definition's text (macro-generated ones expanded) and its first line."""
    data = ix.tree.sources[f.path]
    macros = _file_macros(data)
    if f.kind == "macro" and f.via_macro in macros and f.invocation is not None:
        invs = [i for i in find_invocations(SourceFile(data), {f.via_macro}) if i.start == f.invocation.start]
        if invs:
            text = expand(macros[f.via_macro], invs[0].args, macros)
            return text.decode("utf-8", "replace"), f.invocation.line
    text = data[f.span.start : f.span.end]
    used = {n: m for n, m in macros.items() if n.encode() in text}
    if used:
        text = expand_nested(text, used)
    return text.decode("utf-8", "replace"), f.span.line


# ----------------------------------------------------------- graph blocks
def _is_graph_block(b: o.BlockLit) -> bool:
    if any("MPSGraphTensor" in p.type for p in b.params):
        return True
    return b.lambda_ and len(b.params) == 2 and all(p.type == "auto" for p in b.params)


def find_blocks(text: str, first_line: int) -> list[o.BlockLit]:
    """Every outermost graph-building block or lambda literal in ``text``."""
    toks = o.tokenize(text, first_line)
    p = o.Parser(toks)
    found: list[o.BlockLit] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        start = t.kind == "op" and (t.text == "^" or (t.text == "[" and _lambda_at(toks, i)))
        if not start:
            i += 1
            continue
        p.i = i
        try:
            b = p.block_literal() if t.text == "^" else p.lambda_literal()
        except o.ObjcSyntaxError as exc:
            if t.text == "^" and i + 1 < len(toks) and toks[i + 1].text in ("=", "^"):
                i += 1  # a C++ xor, not a block
                continue
            raise PortBlocked(f"cannot read graph code ({exc})", "unreadable code", None) from None
        if _is_graph_block(b):
            found.append(b)
            i = p.i
        else:
            i += 1  # look inside non-graph lambdas too (e.g. dispatch_sync(^{...}))
    return found


def _lambda_at(toks: list[o.Tok], i: int) -> bool:
    nxt = toks[i + 1] if i + 1 < len(toks) else None
    if nxt is None or nxt.text not in ("&", "=", "]", "this"):
        return False
    j = i
    while j < len(toks) and toks[j].text != "]":
        j += 1
    return j + 1 < len(toks) and toks[j + 1].text in ("(", "{")


def _helper_parser(ix: Index):
    """name -> (params, body) of a same-tree function taking graph tensors (or a cached graph)."""

    def helper(name: str):
        defs = ix.functions.get(name)
        if not defs or len(defs) != 1:
            return None
        f = defs[0]
        text, line = function_text(ix, f)
        head = text.split("{", 1)[0]
        if "MPSGraphTensor" not in head and "CachedGraph" not in head:
            return None
        toks = o.tokenize(text, line)
        for k, t in enumerate(toks):
            if t.kind == "id" and t.text == name and k + 1 < len(toks) and toks[k + 1].text == "(":
                p = o.Parser(toks, k + 1)
                try:
                    params = p.params()
                    while not p.at("{") and p.tok.kind != "eof":
                        p.take()
                    return params, p._body()
                except o.ObjcSyntaxError:
                    return None
        return None

    return helper


def graph_dag(ix: Index, f: HostFunction, _depth: int = 0, known=None) -> Dag:
    """The DAG ``f``'s graph code builds (following one level of same-tree helpers, specialised for
    the literal arguments ``f`` passes it: migrate.conventions.specialise)."""
    text, line = function_text(ix, f)
    where = f"{f.path}:{line}"
    try:
        blocks = find_blocks(text, line)
    except PortBlocked as exc:
        raise PortBlocked(exc.reason, exc.construct, where) from None
    if not blocks:
        callees = [
            c
            for c in sorted(f.calls)
            if c in ix.functions and c != f.name and ix.impl_of(c) in GRAPH_IMPLS and len(ix.functions[c]) == 1
        ]
        if _depth == 0 and len(callees) == 1:
            from migrate.conventions.specialise import call_bindings

            helper = ix.functions[callees[0]][0]
            hparams = definition_params(*function_text(ix, helper))
            literals, names = call_bindings(text, line, callees[0], hparams, definition_params(text, line))
            for hp, arg in names.items():  # the caller's own known arguments (a stub's choice) reach the helper
                if known and arg in known and hp not in literals:
                    literals[hp] = known[arg]
            try:
                dag = graph_dag(ix, helper, _depth + 1, literals)
            except PortBlocked as exc:
                raise PortBlocked(f"{exc.reason} (in helper {callees[0]})", exc.construct, exc.where) from None
            for n in [*dag.inputs, *([dag.alpha] if dag.alpha is not None else []), *dag.params]:
                n.name = names.get(n.name, n.name)  # the helper's parameter -> the caller's argument
            return dag
        if callees:
            raise PortBlocked(f"graph built by helpers {', '.join(callees)}", "graph in shared helper", where)
        raise PortBlocked("no graph-building block found", "no graph block", where)
    from migrate.conventions.specialise import general_paths, host_facts

    known = {**general_paths(text), **(known or {})}
    facts = host_facts(text, known)
    feeds = scalar_feeds(text)
    dags = [Translator(f"{f.path}:{b.line}", _helper_parser(ix), known, feeds, facts).block(b) for b in blocks]
    shapes = {d.structure() for d in dags}
    if len(shapes) > 1:
        raise PortBlocked(f"{len(blocks)} different graph blocks (chosen at run time)", "several graph blocks", where)
    dag = dags[0]
    # placeholders of a cached-graph lambda are named after the host tensors: operands follow the
    # signature's order (TensorIterator's input order), not the order the graph created them in
    typed = definition_params(text, line)
    present = [  # optional Scalars the caller always passes
        p.name
        for p in typed
        if "Scalar" in p.type and "optional" in p.type.lower() and (k := known.get(p.name)) and k.value is not None
    ]
    params = [p.name for p in typed]
    if all(n.name in params for n in dag.inputs):
        dag.inputs.sort(key=lambda n: params.index(n.name))
    scalars = scalar_params(typed) + present  # an optional Scalar the caller always passes is one too
    if dag.alpha is not None:
        _resolve_alpha(dag, scalars, where)
    dag.params.sort(key=lambda n: params.index(n.name) if n.name in params else len(params))  # the signature's order
    derived = None
    for n in dag.params:
        if n.name not in scalars:
            if derived is None:
                from migrate.conventions.host_expr import host_scalars

                derived = host_scalars(text, line, params)
            if n.name not in derived:
                raise PortBlocked(
                    f"constant from {n.name}, which is not a Scalar argument of the function", "run-time scalar", where
                )
            n.expr = derived[n.name].expr  # nan_replacement = static_cast<scalar_t>(nan.value_or(0.))
            dag.floating_only |= derived[n.name].floating
    if derived is not None:
        dag.args = [(p.type, p.name) for p in typed if "Tensor" not in p.type.replace("&", " ").split()]
    return dag


_MPS_SCALAR = re.compile(r"\b(\w+)\s*=\s*getMPSScalar\s*\(\s*(\w+)\s*,")
_SCALAR_FEED = re.compile(r"\bcachedGraph\s*->\s*(\w+)\s*:\s*getMPSGraphTensorFromScalar\s*\(\s*\w+\s*,\s*(\w+)\s*\)")


def scalar_feeds(text: str) -> dict[str, str]:
    """Cached-graph member -> host Scalar, from the feeds ``cachedGraph->beta_ : getMPSGraphTensorFromScalar(s,
    beta_scalar)`` of ``MPSScalar beta_scalar = getMPSScalar(beta, ...)``."""
    made = dict(_MPS_SCALAR.findall(text))
    return {member: made[var] for member, var in _SCALAR_FEED.findall(text) if var in made}


def scalar_params(params) -> list[str]:
    return [p.name for p in params if _is_scalar_type(p.type)]


def _is_scalar_type(t: str) -> bool:
    words = t.replace("&", " ").replace("::", " ").split()
    return "Scalar" in words and "optional" not in t


def _resolve_alpha(dag: Dag, scalars: list[str], where: str) -> None:
    """The alpha node names one Scalar argument of the function (a scalar placeholder: the only one)."""
    a = dag.alpha
    if a.name is None:
        if len(scalars) != 1:
            raise PortBlocked(
                f"a scalar placeholder, and {len(scalars)} Scalar arguments to feed it from", "run-time scalar", where
            )
        a.name = scalars[0]
    elif a.name not in scalars:
        raise PortBlocked(
            f"constant from {a.name}, which is not a Scalar argument of the function", "run-time scalar", where
        )


def params_of(ix: Index, f: HostFunction) -> list[o.Param]:
    """The parameters of host function ``f``."""
    return definition_params(*function_text(ix, f))
