"""Typed expression DAGs read from MPSGraph code, and their torch reference.

A ``Node`` is an input, a scalar constant, a cast, or an op of rules/mpsgraph.yaml.
``evaluate_with_torch`` computes what the MPSGraph code computed, op by op in each
node's dtype (as MPSGraph does), with the table's torch functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from migrate.port.rules import table, torch_fn
from migrate.tables import dtype_family

# dtype names a graph cast or constant can carry ("like" = the dtype of another node)
DTYPE_WORDS = {
    "Bool": "bool",
    "Float": "float",
    "Float32": "float",
    "Half": "half",
    "Float16": "half",
    "BFloat16": "bfloat",
    "Int": "int",
    "Int32": "int",
    "Long": "long",
    "Int64": "long",
    "Short": "short",
    "Int16": "short",
    "Char": "char",
    "Int8": "char",
    "Byte": "uchar",
    "UInt8": "uchar",
    "kFloat": "float",
    "kHalf": "half",
    "kBFloat16": "bfloat",
    "kInt": "int",
    "kLong": "long",
    "kBool": "bool",
    "kShort": "short",
    "kChar": "char",
    "kByte": "uchar",
}
FLOATING = dtype_family("float")  # rules/dtypes.yaml
LEAVES = ("input", "const", "alpha")
# structural nodes that are no op of rules/mpsgraph.yaml: ``dtype_if(input, then, else)`` takes
# ``then`` when ``input``'s dtype is one of ``dtype`` (comma-separated Metal names)
STRUCTURAL = ("cast", "dtype_if")


@dataclass(eq=False)
class Node:
    op: str  # "input" | "const" | "alpha" (a run-time scalar) | "cast" | an op of rules/mpsgraph.yaml
    args: tuple["Node", ...] = ()
    name: str | None = None  # input, alpha: the host variable
    value: float | int | bool | None = None  # const
    dtype: str | None = None  # cast target / explicit const or alpha dtype (Metal name)
    like: "Node | None" = None  # const, alpha: takes this node's dtype
    expr: str | None = None  # alpha: the host expression computing it from the arguments (port.host_expr)

    def __repr__(self) -> str:
        if self.op in ("input", "alpha"):
            return self.name or "?"
        if self.op == "const":
            return repr(self.value)
        if self.op == "cast":
            return f"cast<{self.dtype}>({self.args[0]!r})"
        if self.op == "dtype_if":
            return f"if_dtype<{self.dtype}>({', '.join(map(repr, self.args))})"
        return f"{self.op}({', '.join(map(repr, self.args))})"


def same(a: Node, b: Node) -> bool:
    """The two nodes compute the same thing (structurally)."""
    if a is b:
        return True
    if (a.op, a.name, a.value, a.dtype, len(a.args)) != (b.op, b.name, b.value, b.dtype, len(b.args)):
        return False
    if (a.like is None) != (b.like is None) or (a.like is not None and not same(a.like, b.like)):
        return False
    return all(same(x, y) for x, y in zip(a.args, b.args))


def fold_same_arms(n: Node, memo: dict | None = None) -> Node:
    """``n`` with every ``dtype_if`` whose two arms compute the same thing replaced by that arm."""
    memo = {} if memo is None else memo
    if id(n) in memo:
        return memo[id(n)]
    args = tuple(fold_same_arms(a, memo) for a in n.args)
    if n.op == "dtype_if" and same(args[1], args[2]):
        out = args[1]
    else:
        out = n if args == n.args else Node(n.op, args, n.name, n.value, n.dtype, n.like)
    memo[id(n)] = out
    return out


@dataclass
class Dag:
    inputs: list[Node]
    output: Node
    source: str = ""  # "path:line" of the graph code
    alpha: Node | None = None  # the run-time scalar (a host Scalar argument), if any
    notes: tuple[str, ...] = ()  # choices the translation made (an OS-version branch taken, ...)
    params: list[Node] = field(default_factory=list)  # several run-time scalars: a parameter struct (port.params)
    args: list[tuple[str, str]] = field(default_factory=list)  # (type, name) of the host arguments the struct
    # is computed from, when a field is a host expression (``Node.expr``); else the fields are the arguments
    floating_only: bool = False  # those expressions are the host's for floating dtypes only (AT_DISPATCH_FLOATING)
    members: dict[str, Node] = field(default_factory=dict)  # every cached-graph member a graph op result is
    # stored into, by name (``output`` among them): an operator returning several tensors reads its outputs here

    def nodes(self, integral: bool = False) -> list[Node]:
        """Every node once, operands before users; ``integral``: only those an integral input's overload
        computes (a dtype branch taken by every integer dtype, ``if_dtype<char,int,long,short,uchar>``,
        contributes only its integer arm)."""
        ints = set(dtype_family("integral")) - {"bool"}
        seen: set[int] = set()
        order: list[Node] = []

        def visit(n: Node) -> None:
            if id(n) in seen:
                return
            seen.add(id(n))
            args = n.args
            if integral and n.op == "dtype_if" and ints <= set(n.dtype.split(",")):
                args = n.args[:2]
            for a in args:
                visit(a)
            if n.like is not None:
                visit(n.like)
            order.append(n)

        visit(self.output)
        return order

    def ops(self) -> list[str]:
        return [n.op for n in self.nodes() if n.op not in LEAVES + STRUCTURAL]

    def classes(self) -> set[str]:
        t = table()
        return {t.ops[o].cls for o in self.ops()}

    @property
    def needs_float(self) -> bool:
        """Integer inputs are computed in float (a math op, or a cast to a floating type)."""
        nodes = self.nodes(integral=True)
        t = table()
        math = any(n.op not in LEAVES + STRUCTURAL and t.ops[n.op].cls == "math" for n in nodes)
        return math or any(n.op == "cast" and n.dtype in FLOATING for n in nodes)

    @property
    def returns_bool(self) -> bool:
        o = self.output
        while o.op in ("select", "dtype_if"):
            o = o.args[-1] if o.op == "dtype_if" else o.args[1]
        if o.op == "cast":
            return o.dtype == "bool"
        if o.op in LEAVES:
            return False
        return table().ops[o.op].returns_bool

    def structure(self) -> str:
        return repr(self.output)

    def accepts(self) -> set[str]:
        """Operand families ("float", "int", "bool") every op of the DAG accepts."""
        ok = {"float", "int", "bool"}
        t = table()
        for o in self.ops():
            rule = t.ops[o]
            fams = set(rule.dtypes)
            if rule.cls == "math" or (rule.cls in ("round", "predicate") and rule.metal_int is None):
                fams |= {"int", "bool"} if "float" in fams else set()
            ok &= fams
        return ok


_TORCH_DTYPES = {
    "bool": "bool",
    "float": "float32",
    "half": "float16",
    "bfloat": "bfloat16",
    "int": "int32",
    "long": "int64",
    "short": "int16",
    "char": "int8",
    "uchar": "uint8",
}


def torch_dtype(metal: str):
    import torch

    return getattr(torch, _TORCH_DTYPES[metal])


def evaluate_with_torch(dag: Dag, inputs: dict, out_dtype=None, opmath: bool = False):
    """What the MPSGraph code computes for ``inputs`` (name -> CPU tensor), with torch.

    The alpha node's value is ``inputs[alpha.name]`` (a number or a 0-dim tensor).

    Integer inputs of a DAG that needs float math are cast to ``out_dtype`` (default
    float32) first, as the legacy unary/binary helpers did.  Every op runs in its
    operands' dtype (half stays half, as in MPSGraph); constants take the dtype of the
    node they were made ``like``.  ``opmath=True`` computes half/bfloat in float32 and
    rounds once at the end instead -- what the generated functor does.
    """
    import torch

    if opmath and any(
        isinstance(x, torch.Tensor) and x.dtype in (torch.float16, torch.bfloat16) for x in inputs.values()
    ):
        low = next(x.dtype for x in inputs.values() if x.dtype in (torch.float16, torch.bfloat16))
        wide = {k: x.float() if isinstance(x, torch.Tensor) and x.dtype == low else x for k, x in inputs.items()}
        out = evaluate_with_torch(dag, wide)
        return out.to(out_dtype if out_dtype is not None else (low if out.is_floating_point() else out.dtype))

    t = table()
    env: dict[int, torch.Tensor] = {}
    cast_to = out_dtype if out_dtype is not None and out_dtype.is_floating_point else torch.float32
    for n in dag.nodes():
        if n.op == "input":
            x = inputs[n.name]
            if dag.needs_float and not x.is_floating_point():
                x = x.to(cast_to)
            env[id(n)] = x
        elif n.op in ("const", "alpha"):
            if n.dtype is not None:
                dt = torch_dtype(n.dtype)
            elif n.like is not None:
                dt = env[id(n.like)].dtype
            else:
                dt = env[id(dag.inputs[0])].dtype
            value = n.value if n.op == "const" else inputs[n.name]
            env[id(n)] = value.to(dt) if isinstance(value, torch.Tensor) else torch.tensor(value, dtype=dt)
        elif n.op == "cast":
            env[id(n)] = env[id(n.args[0])].to(torch_dtype(n.dtype))
        elif n.op == "dtype_if":  # decided by the input's dtype as the host passed it
            given = inputs[n.args[0].name].dtype
            take = any(torch_dtype(d) == given for d in n.dtype.split(","))
            env[id(n)] = env[id(n.args[1 if take else 2])]
        else:
            rule = t.ops[n.op]
            args = [env[id(a)] for a in n.args]
            if rule.cls == "logical":
                args = [a if a.dtype == torch.bool else a != 0 for a in args]
            elif rule.cls == "select":
                cond = args[0] if args[0].dtype == torch.bool else args[0] != 0
                dt = torch.promote_types(args[1].dtype, args[2].dtype)
                args = [cond, args[1].to(dt), args[2].to(dt)]
            else:
                dts = [a.dtype for a in args]
                dt = next((d for d in dts if d.is_floating_point), None) or next(
                    (d for d in dts if d != torch.bool), dts[0]
                )
                args = [a if a.dtype == dt else a.to(dt) for a in args]
            integral = not args[-1].is_floating_point()
            spec = rule.torch_int if integral and rule.torch_int else rule.torch
            env[id(n)] = torch_fn(spec)(*args)
    out = env[id(dag.output)]
    if out_dtype is not None and out.dtype != out_dtype:
        out = out.to(out_dtype)
    return out
