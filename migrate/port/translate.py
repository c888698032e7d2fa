"""Graph-building code (parsed by migrate.source.objc) -> expression DAG.

Executes the statements of one block or cached-graph lambda symbolically: message
sends to the graph become DAG nodes through rules/mpsgraph.yaml, locals and
member stores are tracked, same-file helpers ``f(mpsGraph, tensor)`` are inlined.
Whatever cannot be translated raises ``PortBlocked`` naming the construct.
"""

from __future__ import annotations

import re
from typing import Callable

from migrate.source import objc as o
from migrate.port.dag import DTYPE_WORDS, Dag, Node
from migrate.port.graph_conditions import Conditions
from migrate.port.graph_values import OUTPUT_WORDS, VOID, CachedRef, DtypeRef, DtypeTest, GraphRef, Host, Unset
from migrate.port.os_branches import host_os_call, sdk_condition
from migrate.conventions.specialise import GeneralPath, HostFacts, numeric_limit, simplify, truth
from migrate.port.rules import table


_PROMOTE = re.compile(r"\b(?:(?:c10|at)::)?promoteTypes\s*")
_SCALAR_TYPE = re.compile(r"\b(\w+)\s*\.\s*scalar_type\s*\(\s*\)")


class PortBlocked(Exception):
    """The translation stops here. ``construct`` is what blocks it (for --list statistics)."""

    def __init__(self, reason: str, construct: str, where: str | None = None, after: str | None = None):
        self.reason, self.construct, self.where = reason, construct, where
        self.after = after  # a family whose port would unblock this one (sub after add)
        super().__init__(f"{where}: {reason}" if where else reason)


def general_path_test(e) -> bool:
    """``alpha.toDouble() != 1.0``: a run-time Scalar compared unequal with a number."""
    return isinstance(e, o.Binary) and e.op == "!=" and isinstance(e.right, o.Num) and _scalar_param(e.left) is not None


def _text(e) -> str:
    if isinstance(e, o.Name):
        return e.id
    if isinstance(e, o.Num):
        return e.text
    if isinstance(e, o.Member):
        return f"{_text(e.obj)}{'->' if e.arrow else '.'}{e.name}"
    if isinstance(e, o.Call):
        return f"{_text(e.func)}({', '.join(_text(a) for a in e.args)})"
    if isinstance(e, o.Send):
        return f"[{_text(e.receiver)} {e.selector}]"
    if isinstance(e, o.Unary):
        return e.op + _text(e.expr)
    if isinstance(e, o.Binary):
        return f"{_text(e.left)} {e.op} {_text(e.right)}"
    return type(e).__name__


def _scalar_param(e) -> str | None:
    """``lambd.to<double>()``, ``alpha.toDouble()``, ``negval.to<float>()``: the host Scalar's name."""
    if (
        isinstance(e, o.Call)
        and not e.args
        and isinstance(e.func, o.Member)
        and isinstance(e.func.obj, o.Name)
        and e.func.name in ("to", "toDouble", "toFloat")
    ):
        return e.func.obj.id
    return None


def _one_element(a) -> bool:
    items = a.items
    return len(items) == 1 and isinstance(items[0], o.Num) and items[0].value == 1


def _dtype_word(name: str) -> str | None:
    last = name.rsplit("::", 1)[-1]
    if last.startswith("MPSDataType"):
        last = last[len("MPSDataType") :]
    return DTYPE_WORDS.get(last)


class Translator(Conditions):
    """Graph-building code -> a DAG (the module doc); its host conditions: ``Conditions``."""

    def __init__(
        self,
        where: str,
        helpers: Callable[[str], tuple | None] = lambda name: None,
        known=None,
        feeds: dict[str, str] | None = None,
        facts: HostFacts | None = None,
    ):
        self.where = where  # "path:line" for messages
        self.feeds = feeds or {}  # cached-graph member -> the host Scalar the function feeds it from
        self.known = known or {}  # host name -> specialise.Known: the caller's literal arguments
        self.helpers = helpers  # name -> (params, body) of a same-tree graph helper, or None
        self.facts = facts or HostFacts({}, {}, {})  # the function's host code around the graph
        self.t = table()
        self.inputs: list[Node] = []
        self.outputs: dict[str, object] = {}
        self.depth = 0
        self.alpha_node: Node | None = None
        self.notes: list[str] = []
        self.more_scalars: list[Node] = []  # run-time scalars after the first: a parameter struct (port.params)
        self.possible: dict[int, frozenset[str]] = {}  # input -> its dtypes inside the dtype branches around

    def blocked(self, reason: str, construct: str, line: int | None = None) -> PortBlocked:
        where = self.where if line is None else f"{self.where.rsplit(':', 1)[0]}:{line}"
        return PortBlocked(reason, construct, where)

    # --------------------------------------------------------------- entry
    def block(self, b: o.BlockLit) -> Dag:
        env: dict[str, object] = {}
        cached = b.lambda_ and all(p.type in ("auto", "") for p in b.params) and len(b.params) == 2
        for p in b.params:
            if cached:
                env[p.name] = GraphRef() if p is b.params[0] else CachedRef()
            elif "MPSGraphTensor" in p.type:
                n = Node("input", name=p.name)
                self.inputs.append(n)
                env[p.name] = n
            elif "CachedGraph" in p.type:
                env[p.name] = CachedRef()
            elif "MPSGraph" in p.type:
                env[p.name] = GraphRef()
            else:
                env[p.name] = Host(p.name)
        result = self.run(b.body, env, top=True)
        if result is VOID:
            result = None
        if result is None and cached:
            outs = {k: v for k, v in self.outputs.items() if isinstance(v, Node) and v.op != "input"}
            named = {k: v for k, v in outs.items() if any(w in k.lower() for w in OUTPUT_WORDS)}
            if len(named) > 1:
                raise self.blocked(f"several graph outputs ({', '.join(sorted(named))})", "several outputs", b.line)
            result = next(iter(named.values()), None)
        if not isinstance(result, Node):
            what = (
                _text(result)
                if isinstance(result, o.Call)
                else (result.text if isinstance(result, Host) else "nothing")
            )
            raise self.blocked(f"the graph output is not built from graph ops ({what})", "opaque output", b.line)
        if not self.inputs:
            raise self.blocked("the graph has no input tensor", "no input", b.line)
        used = {id(n) for n in Dag(self.inputs, result).nodes()}
        alpha = self.alpha_node if self.alpha_node is not None and id(self.alpha_node) in used else None
        inputs = [n for n in self.inputs if id(n) in used] or self.inputs
        scalars = [n for n in [alpha, *self.more_scalars] if n is not None and id(n) in used]
        notes = tuple(dict.fromkeys(self.notes))
        if len(scalars) > 1 and any(n.name is None for n in scalars):
            raise self.blocked(
                "several run-time scalars, one of them a scalar placeholder: which Scalar argument "
                "feeds which is not written in the graph",
                "several run-time scalars",
                b.line,
            )
        members = {k: v for k, v in self.outputs.items() if isinstance(v, Node) and v.op != "input"}
        if len(scalars) > 1:
            return Dag(inputs, result, self.where, None, notes=notes, params=scalars, members=members)
        return Dag(inputs, result, self.where, scalars[0] if scalars else None, notes=notes, members=members)

    # ----------------------------------------------------------- statements
    def run(self, body: tuple, env: dict, top: bool = False):
        """Execute statements; the value of a ``return``, or None."""
        taken = skipping = False  # an SDK-version #ifdef was taken / inside its #else
        for k, s in enumerate(body):
            if isinstance(s, o.Other) and s.kind.startswith("preprocessor"):
                if sdk_condition(s.text):
                    self.notes.append(
                        f"{self.where.rsplit(':', 1)[0]}:{s.line}: took the newest SDK's branch of `{s.text}`"
                    )
                    taken = True
                    continue
                if s.kind in ("preprocessor else", "preprocessor elif") and taken:
                    skipping = True
                    continue
                if s.kind == "preprocessor endif" and taken:
                    taken = skipping = False
                    continue
            if skipping:
                continue
            if (
                isinstance(s, o.If)
                and isinstance(s.cond, o.Call)
                and isinstance(s.cond.func, o.Name)
                and host_os_call(s.cond.func.id)
            ):
                self.notes.append(
                    f"{self.where.rsplit(':', 1)[0]}:{s.line}: took the newest macOS's branch of `if ({_text(s.cond)})`"
                )
                r = self.run(s.then, env)
                if r is not None:
                    return r
                continue
            if isinstance(s, o.Decl):
                env[s.name] = self.eval(s.init, env) if s.init is not None else None
                if general_path_test(s.init):
                    env[s.name] = GeneralPath(_text(s.init))
                elif s.init is not None and (test := self._test_of(s.init, env)) is not None:
                    env[s.name] = DtypeTest(*test)  # bool isFloatInput = ([t dataType] & MPSDataTypeFloatBit) != 0
            elif isinstance(s, o.Assign):
                value = self.eval(s.value, env)
                tgt = s.target
                if isinstance(tgt, o.Name):
                    env[tgt.id] = value
                elif isinstance(tgt, o.Member) and isinstance(self.eval(tgt.obj, env), CachedRef):
                    self.outputs[tgt.name] = value
                    if (
                        isinstance(value, Node)
                        and value.op == "alpha"
                        and value.name is None
                        and tgt.name in self.feeds
                    ):  # a scalar placeholder: named by what feeds it
                        value.name = self.feeds[tgt.name]
                elif isinstance(value, Node):
                    raise self.blocked(f"graph tensor stored into {_text(tgt)}", "store to host object", s.line)
            elif isinstance(s, o.Return):
                return self.eval(s.value, env) if s.value is not None else VOID
            elif isinstance(s, o.If):
                if isinstance(s.cond, o.Name) and s.cond.id == "true":
                    r = self.run(s.then, env)
                    if r is not None:
                        return r
                    continue
                general = s.cond.id if isinstance(s.cond, o.Name) else None
                path = env.get(general) if general in env else self.known.get(general)
                if isinstance(path, GeneralPath):  # `if (alpha_has_value)`: the general path
                    self.notes.append(
                        f"{self.where.rsplit(':', 1)[0]}:{s.line}: took the general branch of "
                        f"`if ({general})` ({path.text}: the other is a shortcut for one value)"
                    )
                    r = self.run(s.then, env)
                    if r is not None:
                        return r
                    continue
                decided = self.decide(s.cond, env)
                if decided is None and self.known:
                    decided = truth(s.cond, self.known)
                if decided is not None:  # the caller's literals, or what the host code says, decide it
                    r = self.run(s.then if decided else s.other, env)
                    if r is not None:
                        return r
                    continue
                cond = simplify(s.cond, self.known)
                branch = self.dtype_test(cond, env)
                if branch is not None:
                    return self.dtype_branch(branch, s, body[k + 1 :], env)
                raise self.blocked(f"data-dependent control flow: if ({_text(cond)})", "control flow (if)", s.line)
            elif isinstance(s, o.Other):
                if s.kind.startswith("preprocessor"):
                    raise self.blocked(
                        f"{s.kind} inside graph code (OS-version dependent graph)", "preprocessor conditional", s.line
                    )
                if s.kind in ("for", "while", "do", "switch", "goto", "try"):
                    raise self.blocked(f"control flow ({s.kind}) in graph code", f"control flow ({s.kind})", s.line)
            elif isinstance(s, o.ExprStmt):
                e = s.expr
                if isinstance(e, o.Send) and isinstance(self.eval(e.receiver, env), GraphRef):
                    raise self.blocked(f"graph op result discarded ({e.selector})", "discarded op", s.line)
                if isinstance(e, o.Call) and any(isinstance(self.eval(a, env), CachedRef) for a in e.args):
                    self.call(e, env)  # clamp_mps_graph(newCachedGraph, ...): a helper that fills the cached graph
        return None

    # ---------------------------------------------------------- expressions
    def eval(self, e, env: dict):
        if isinstance(e, o.Name):
            if e.id in env:
                return env[e.id]
            if e.id == "nil" or e.id == "nullptr":
                return None
            if e.id in self.facts.dtype_of:  # result_type = output_t.scalar_type()
                return DtypeRef(host=self.facts.dtype_of[e.id])
            dt = _dtype_word(e.id)
            if dt is not None and ("MPSDataType" in e.id or "ScalarType" in e.id or e.id.startswith("k")):
                return DtypeRef(dtype=dt)
            return Host(e.id)
        if isinstance(e, o.Num):
            return e.value
        if isinstance(e, o.Str):
            return Host(e.text)
        if isinstance(e, o.ArrayLit):
            return Host("@[...]")
        if isinstance(e, o.Unary):
            v = self.eval(e.expr, env)
            if isinstance(v, (int, float)) and e.op in "-+":
                return -v if e.op == "-" else v
            if isinstance(v, Node):
                raise self.blocked(f"C++ operator {e.op} applied to a graph tensor", "C++ operator on tensor", e.line)
            return Host(_text(e))
        if isinstance(e, o.Binary):
            limit = numeric_limit(e)
            if limit is not None:
                return limit
            l, r = self.eval(e.left, env), self.eval(e.right, env)
            if isinstance(l, Node) or isinstance(r, Node):
                raise self.blocked(f"C++ operator {e.op} applied to a graph tensor", "C++ operator on tensor", e.line)
            if isinstance(l, (int, float)) and isinstance(r, (int, float)) and e.op in "+-*/":
                return {"+": l + r, "-": l - r, "*": l * r, "/": l / r if r else float("nan")}[e.op]
            return Host(_text(e))
        if isinstance(e, o.Cond):
            decided = truth(e.cond, self.known) if self.known else None
            if decided is not None:  # the caller's literal decides it (is_neg ? -inf : inf)
                return self.eval(e.then if decided else e.other, env)
            parts = [self.eval(x, env) for x in (e.then, e.other)]
            if any(isinstance(p, Node) for p in parts):
                raise self.blocked(f"data-dependent choice ({_text(e.cond)} ? ... : ...)", "control flow (?:)", e.line)
            return Host(_text(e))
        if isinstance(e, o.Member):
            obj = self.eval(e.obj, env)
            if isinstance(obj, Node) and e.name == "dataType":
                return DtypeRef(like=obj)
            if isinstance(obj, CachedRef):
                return self.outputs.get(e.name, Unset(_text(e)))
            return Host(_text(e))
        if isinstance(e, o.Send):
            return self.send(e, env)
        if isinstance(e, o.Call):
            return self.call(e, env)
        if isinstance(e, o.BlockLit):
            return Host("block")
        return Host(type(e).__name__)

    def send(self, e: o.Send, env: dict):
        recv = self.eval(e.receiver, env)
        if isinstance(recv, Node) and e.selector == "dataType":
            return DtypeRef(like=recv)
        if not isinstance(recv, GraphRef):
            for a in e.args:
                if isinstance(self.eval(a, env), Node):
                    raise self.blocked(
                        f"graph tensor passed to [{_text(e.receiver)} {e.selector}]",
                        "tensor passed to host code",
                        e.line,
                    )
            return Host(_text(e))
        sel = e.selector
        args = [self.eval(a, env) for a in e.args]
        if sel in self.t.constants:
            value, dtype = args[0], args[-1]
            if not isinstance(value, (int, float)):
                host = _scalar_param(e.args[0])
                if host is None and isinstance(e.args[0], o.Name):
                    host = self.facts.aliases.get(e.args[0].id)  # min_scalar = min_opt.get().to<double>()
                if host is None:
                    raise self.blocked(
                        f"constant from a run-time value ({_text(e.args[0])})", "run-time scalar", e.line
                    )
                return self.alpha(host, dtype, e.line)
            return self.constant(value, dtype, e.line)
        if sel in self.t.casts:
            return self.cast(args[0], args[1], e.line)
        rule = self.t.by_selector.get(sel)
        if rule is None:
            why = self.t.why_not_elementwise(sel)
            if why:
                raise self.blocked(f"selector {sel} is not elementwise ({why})", f"{sel} ({why})", e.line)
            raise self.blocked(f"unknown selector {sel}", sel, e.line)
        operands = args[: rule.arity]
        for a, src in zip(operands, e.args):
            if not isinstance(a, Node):
                raise self.blocked(f"operand {_text(src)} of {sel} is not a graph tensor", "non-tensor operand", e.line)
        return Node(rule.op, tuple(operands))

    def constant(self, value, dtype, line: int) -> Node:
        if isinstance(dtype, DtypeRef):
            if dtype.dtype:
                return Node("const", value=value, dtype=dtype.dtype)
            if dtype.like is not None:
                return Node("const", value=value, like=dtype.like)
            return Node("const", value=value, like=self._input_named(dtype.host))
        raise self.blocked(f"constant of a run-time dtype ({getattr(dtype, 'text', dtype)})", "run-time dtype", line)

    def alpha(self, host: str | None, dtype, line: int) -> Node:
        """The run-time scalar of an alpha kernel: host Scalar ``host`` (None: the function's
        only Scalar argument, resolved by ``locate``), in ``dtype``."""
        if self.alpha_node is not None:
            if self.alpha_node.name == host:
                return self.alpha_node
            return self.another_scalar(host, dtype, line)
        c = self.constant(0, dtype, line)
        self.alpha_node = Node("alpha", name=host, dtype=c.dtype, like=c.like)
        return self.alpha_node

    def placeholder_scalar(self, dtype, line: int) -> Node:
        """A scalar placeholder: a run-time scalar of its own, named when the graph stores it in a cached-graph
        member the function feeds from a Scalar argument (``self.feeds``), else by ``locate``."""
        if self.alpha_node is None:
            return self.alpha(None, dtype, line)
        c = self.constant(0, dtype, line)
        n = Node("alpha", name=None, dtype=c.dtype, like=c.like)
        self.more_scalars.append(n)
        return n

    def another_scalar(self, host: str | None, dtype, line: int) -> Node:
        """A second (third, ...) run-time scalar: with the first, the fields of a parameter struct."""
        for n in self.more_scalars:
            if n.name == host:
                return n
        if host is None or self.alpha_node.name is None:
            raise self.blocked(
                "several run-time scalars, one of them a scalar placeholder: which Scalar "
                "argument feeds which is not written in the graph",
                "several run-time scalars",
                line,
            )
        c = self.constant(0, dtype, line)
        n = Node("alpha", name=host, dtype=c.dtype, like=c.like)
        self.more_scalars.append(n)
        return n

    def cast(self, x, dtype, line: int):
        if not isinstance(x, Node):
            raise self.blocked("cast of a non-tensor", "non-tensor operand", line)
        if isinstance(dtype, DtypeRef):
            if dtype.dtype:
                return Node("cast", (x,), dtype=dtype.dtype)
            return x  # cast to an operand's own dtype: the functor computes in one type
        if isinstance(dtype, Host) and self._common_dtype(dtype.text):
            self.notes.append(
                f"{self.where.rsplit(':', 1)[0]}:{line}: the cast to {' '.join(dtype.text.split())} (every input's "
                "promoted dtype) is the kernel's own: it computes in the iterator's common dtype"
            )
            return x
        raise self.blocked(f"cast to a run-time dtype ({getattr(dtype, 'text', dtype)})", "run-time dtype", line)

    def _common_dtype(self, text: str) -> bool:
        """``c10::promoteTypes(a.scalar_type(), c10::promoteTypes(b.scalar_type(), c.scalar_type()))`` over
        exactly the graph's input tensors: the dtype every input is promoted to."""
        names = _SCALAR_TYPE.findall(text)
        rest = _SCALAR_TYPE.sub("", _PROMOTE.sub("", text))
        inputs = {n.name for n in self.inputs}
        return (
            bool(names) and not rest.replace(",", "").replace("(", "").replace(")", "").strip() and set(names) == inputs
        )

    def _input_named(self, host: str | None) -> Node | None:
        for n in self.inputs:
            if n.name == host:
                return n
        return self.inputs[0] if self.inputs else None

    def call(self, e: o.Call, env: dict):
        f = e.func
        if isinstance(f, o.Member) and f.name == "graph" and isinstance(self.eval(f.obj, env), CachedRef):
            return GraphRef()
        if isinstance(f, o.Member) and f.name == "scalar_type" and not e.args:
            obj = self.eval(f.obj, env)
            if isinstance(obj, Host):  # a host tensor's dtype
                return DtypeRef(host=obj.text)
        name = f.id if isinstance(f, o.Name) else None
        short = name.rsplit("::", 1)[-1] if name else None
        args = [self.eval(a, env) for a in e.args]
        if short in self.t.cast_helpers and len(args) == 3:
            return self.cast(args[1], args[2], e.line)
        if short in self.t.scalar_placeholders and len(args) == 2:
            return self.placeholder_scalar(args[1], e.line)  # fed from a Scalar argument of the function
        if (
            short in self.t.placeholders
            and len(args) == 3
            and isinstance(e.args[2], o.ArrayLit)
            and isinstance(args[1], DtypeRef)
            and _one_element(e.args[2])
        ):
            return self.placeholder_scalar(args[1], e.line)  # mpsGraphRankedPlaceHolder(g, dtype, @[ @1 ]): a scalar
        if short and "PlaceHolder" in short and short not in self.t.placeholders:
            raise self.blocked(f"run-time scalar placeholder ({_text(e)})", "run-time scalar", e.line)
        if short in self.t.placeholders:
            if len(args) != 2:
                raise self.blocked(f"run-time scalar placeholder ({_text(e)})", "run-time scalar", e.line)
            src = e.args[1]
            if isinstance(src, o.Call) and len(src.args) == 1:  # mpsGraphUnrankedPlaceHolder(g, getMPSDataType(t))
                src = src.args[0]
            host = args[1].text if isinstance(args[1], Host) else _text(src)
            n = Node("input", name=host)
            self.inputs.append(n)
            return n
        if short in ("getMPSDataType", "getMPSScalarType") and len(args) == 1:
            if isinstance(args[0], DtypeRef):
                return args[0]
            if isinstance(args[0], Node):
                return DtypeRef(like=args[0])
            return DtypeRef(host=args[0].text if isinstance(args[0], Host) else None)
        if name and any(isinstance(a, (Node, CachedRef)) for a in args):
            helper = self.helpers(short)
            if helper is None:
                raise self.blocked(
                    f"graph tensor passed to {name}(...), which is not graph code in the tree", f"call {short}", e.line
                )
            if self.depth >= 4:
                raise self.blocked(f"helpers nested too deep at {name}", "deep helpers", e.line)
            params, body = helper
            inner = {p.name: a for p, a in zip(params, args)}
            for p in params[len(args) :]:
                inner[p.name] = Host(p.name)
            self.depth += 1
            try:
                r = self.run(body, inner)
            finally:
                self.depth -= 1
            return None if r is VOID else r
        if isinstance(f, o.Name) and isinstance(env.get(f.id), Host) and any(isinstance(a, Node) for a in args):
            raise self.blocked(f"graph built by a block passed in ({f.id})", "block parameter", e.line)
        return Host(_text(e))
