"""DAG -> Metal functor text and the dtype registrations it needs."""

from __future__ import annotations

import math
from dataclasses import dataclass

from migrate.port.dag import FLOATING, LEAVES, Dag, Node
from migrate.port.rules import table
from migrate.tables import dtype_family

ARG_NAMES = {1: ("x",), 2: ("a", "b"), 3: ("a", "b", "c")}


@dataclass(frozen=True)
class Plan:
    """What to register: (input dtype, output dtype) pairs, and the functor's overloads."""

    float_out: str  # "same" | "bool"
    int_mode: str | None  # None (floats only) | "float" (int -> float) | "same" (int -> int) | "bool"
    int_dtypes: tuple[str, ...]

    def pairs(self) -> list[tuple[str, str]]:
        out = [(t, t if self.float_out == "same" else "bool") for t in dtype_family("float")]
        for t in self.int_dtypes:
            out.append((t, {"float": "float", "same": t, "bool": "bool"}[self.int_mode]))
        return out


def plan_dtypes(dag: Dag, ints: bool, bools: bool = True) -> Plan:
    """Registrations: floats always; integers when ``ints`` and the DAG accepts them; bool when
    ``bools`` too, or always for int -> float math (the whole INT2FLOAT family, as MPS008 wants)."""
    float_out = "bool" if dag.returns_bool else "same"
    accepted = dag.accepts()
    if not ints or "int" not in accepted:
        return Plan(float_out, None, ())
    mode = "bool" if dag.returns_bool else "float" if dag.needs_float else "same"
    if (dag.alpha is not None or dag.params) and mode != "same":
        return Plan(float_out, None, ())  # alpha arrives in the input dtype: int -> float has no alpha kernel
    with_bool = mode == "float" or (bools and "bool" in accepted)
    int_dtypes = tuple(t for t in dtype_family("integral") if t != "bool" or with_bool)
    return Plan(float_out, mode, int_dtypes)


class _Emitter:
    def __init__(self, dag: Dag, mode: str, takes: frozenset[str] | None = None):
        self.dag, self.mode = dag, mode  # mode: "float" (compute in float) | "int" (compute in T)
        self.takes = takes  # the dtypes T can be in this overload (its SFINAE condition); None: any
        self.t = table()
        self.args = dict(zip((id(n) for n in dag.inputs), ARG_NAMES[len(dag.inputs)]))
        if dag.alpha is not None:
            self.args[id(dag.alpha)] = alpha_name(dag)
        self.args.update((id(p), f"params.{p.name}") for p in dag.params)  # migrate.port.params
        uses: dict[int, int] = {}
        for n in dag.nodes():
            for a in n.args:
                uses[id(a)] = uses.get(id(a), 0) + 1
        self.shared = {k for k, v in uses.items() if v > 1}
        # a select nested in another op reads better as a named local
        self.shared |= {id(a) for n in dag.nodes() for a in n.args if a.op == "select"}
        self.lines: list[str] = []
        self.done: dict[int, tuple[str, str]] = {}  # node -> (expression, "num" | "bool")

    def num(self, n: Node) -> str:
        e, kind = self.expr(n)
        if kind == "bool":
            return f"float({e})" if self.mode == "float" else f"T({e})"
        return e

    def boolean(self, n: Node) -> str:
        e, kind = self.expr(n)
        return e if kind == "bool" else f"({e} != 0)"

    def literal(self, v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        f = float(v)
        if math.isnan(f):
            return "NAN"
        if math.isinf(f):
            return "INFINITY" if f > 0 else "-INFINITY"
        if self.mode == "float":
            return f"{f!r}f"
        return f"T({int(f) if f.is_integer() else f!r})"

    def expr(self, n: Node) -> tuple[str, str]:
        if id(n) in self.done:
            return self.done[id(n)]
        if n.op in ("input", "alpha"):
            name = self.args[id(n)]
            r = (f"float({name})" if self.mode == "float" else name, "num")
        elif n.op == "const":
            r = (self.literal(n.value), "num")
        elif n.op == "dtype_if" and self.takes and self.takes <= set(n.dtype.split(",")):
            r = self.expr(n.args[1])  # the overload's T is always one of the branch's dtypes
        elif n.op == "dtype_if" and self.takes and not self.takes & set(n.dtype.split(",")):
            r = self.expr(n.args[2])  # never one of them
        elif n.op == "dtype_if":  # per-dtype specialisation: a compile-time choice on the functor's T
            then, other = self.expr(n.args[1]), self.expr(n.args[2])
            kind = "bool" if then[1] == other[1] == "bool" else "num"
            a, b = (then[0], other[0]) if kind == "bool" else (self.num(n.args[1]), self.num(n.args[2]))
            test = " || ".join(f"::metal::is_same_v<T, {d}>" for d in n.dtype.split(","))
            r = (f"({test} ? {a} : {b})", kind)
        elif n.op == "cast":
            if n.dtype == "bool":
                r = (self.boolean(n.args[0]), "bool")
            elif n.dtype in FLOATING:
                r = (self.num(n.args[0]), "num")
            else:
                inner = self.num(n.args[0])
                r = (f"float({n.dtype}({inner}))" if self.mode == "float" else f"T({n.dtype}({inner}))", "num")
        else:
            rule = self.t.ops[n.op]
            if rule.cls == "logical":
                ops = [self.boolean(a) for a in n.args]
            elif rule.cls == "select":
                ops = [self.boolean(n.args[0])]
                kinds = [self.expr(a)[1] for a in n.args[1:]]
                ops += [self.expr(a)[0] if kinds == ["bool", "bool"] else self.num(a) for a in n.args[1:]]
            else:
                ops = [self.num(a) for a in n.args]
            tmpl = rule.metal if self.mode == "float" or rule.cls == "logical" else rule.metal_int
            if tmpl is None:
                raise ValueError(f"{n.op} has no {'integer' if self.mode == 'int' else 'floating'} Metal form")
            kind = (
                "bool"
                if rule.returns_bool or (rule.cls == "select" and all(self.expr(a)[1] == "bool" for a in n.args[1:]))
                else "num"
            )
            ops = [
                _strip(x) if any(f.format(i=i) in tmpl for f in ("({{{i}}})", "({{{i}}},", ", {{{i}}})")) else x
                for i, x in enumerate(ops)
            ]
            r = (tmpl.format(*ops), kind)
        if id(n) in self.shared and n.op not in LEAVES:
            var = f"t{len(self.lines)}"
            ctype = "bool" if r[1] == "bool" else "float" if self.mode == "float" else "auto"
            self.lines.append(f"const {ctype} {var} = {_strip(r[0])};")
            r = (var, r[1])
        self.done[id(n)] = r
        return r


def alpha_name(dag: Dag) -> str:
    """The functor's name for the alpha argument: the host Scalar's name when it is usable."""
    name = dag.alpha.name or ""
    taken = set(ARG_NAMES[len(dag.inputs)]) | {"T", "float", "half", "bool"}
    temp = name[:1] == "t" and name[1:].isdigit()  # the functor's shared temporaries are t0, t1, ...
    return name if name.isidentifier() and name not in taken and not temp else "alpha"


def struct_name(name: str) -> str:
    """The parameter struct of a kernel with several run-time scalars: hardtanh_backward -> HardtanhBackwardParams."""
    return "".join(w.capitalize() for w in name.split("_")) + "Params"


def _strip(e: str) -> str:
    """Drop one pair of outer parentheses when they enclose the whole expression."""
    if not (e.startswith("(") and e.endswith(")")):
        return e
    depth = 0
    for i, c in enumerate(e):
        depth += c == "("
        depth -= c == ")"
        if depth == 0 and i != len(e) - 1:
            return e
    return e[1:-1]


def _body(dag: Dag, mode: str, ret: str, takes: frozenset[str] | None = None) -> list[str]:
    em = _Emitter(dag, mode, takes)
    e, kind = em.expr(dag.output)
    if ret == "bool":
        value = e if kind == "bool" else f"({e} != 0)"
    elif ret == "T":
        rest = e[len("static_cast<T>") :] if e.startswith("static_cast<T>(") else ""
        value = e if rest and _strip(rest) != rest else f"static_cast<T>({_strip(e)})"
    else:  # float
        value = e if kind == "num" else f"float({e})"
    return em.lines + [f"return {_strip(value)};"]


def functor(name: str, dag: Dag, plan: Plan, origin: str, traits=None) -> str:
    """``struct NAME_functor`` with SFINAE overloads for floating and integral inputs (``traits``: the
    tree's type traits, migrate.conventions.target; default: modern c10/metal's)."""
    from migrate.conventions.target import MODERN_TRAITS

    traits = traits or MODERN_TRAITS
    names = ARG_NAMES[len(dag.inputs)] + ((alpha_name(dag),) if dag.alpha is not None else ())
    params = ", ".join(
        [f"const T {a}" for a in names] + ([f"const {struct_name(name)}<T> params"] if dag.params else [])
    )
    fret = "bool" if plan.float_out == "bool" else "T"
    overloads = []
    if plan.int_mode is None:
        overloads.append(("template <typename T>", fret, _body(dag, "float", fret)))
    else:
        sf = f"template <typename T, ::metal::enable_if_t<{traits.floating}<T>, bool> = true>"
        si = f"template <typename T, ::metal::enable_if_t<{traits.integral}<T>, bool> = true>"
        overloads.append((sf, fret, _body(dag, "float", fret, frozenset(dtype_family("float")))))
        iret = {"float": "float", "same": "T", "bool": "bool"}[plan.int_mode]
        ints = frozenset(dtype_family("integral"))
        overloads.append((si, iret, _body(dag, "float" if plan.int_mode == "float" else "int", iret, ints)))
    if _exact(dag) and plan.int_mode in ("bool", None):  # comparisons: one template, in T (exact)
        overloads = [("template <typename T>", fret, _body(dag, "int", fret))]
    out = [f"struct {name}_functor {{"]
    if len(dag.ops()) > 1:
        shape = formula(dag)
        out.insert(
            0,
            f"// Ported by mps-migrate from MPSGraph: {shape}"
            if len(shape) <= 80
            else "// Ported by mps-migrate from an MPSGraph graph",
        )
    for head, ret, body in overloads:
        out.append(f"  {head}")
        out.append(f"  inline {ret} operator()({params}) {{")
        out += [f"    {line}" for line in body]
        out.append("  }")
    out.append("};")
    return "\n".join(out) + "\n"


def _exact(dag: Dag) -> bool:
    """Only comparisons and logic, the same expression for every dtype: computing in T is exact."""
    t = table()
    return all(
        t.ops[o].cls == "logical" or (t.ops[o].cls == "predicate" and t.ops[o].metal == t.ops[o].metal_int)
        for o in dag.ops()
    ) and not any(n.op == "const" for n in dag.nodes())


def formula(dag: Dag) -> str:
    """The DAG with the functor's argument names: ``div(x, add(exp(neg(x)), 1.0))``."""
    names = dict(zip((id(n) for n in dag.inputs), ARG_NAMES[len(dag.inputs)]))
    if dag.alpha is not None:
        names[id(dag.alpha)] = alpha_name(dag)
    names.update((id(p), f"params.{p.name}") for p in dag.params)

    def show(n: Node) -> str:
        if id(n) in names:
            return names[id(n)]
        if n.op == "const":
            return repr(n.value)
        if n.op == "cast":
            return f"cast<{n.dtype}>({show(n.args[0])})"
        return f"{n.op}({', '.join(show(a) for a in n.args)})"

    return show(dag.output)
