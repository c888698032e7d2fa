"""Torch-faithful rewrites of an old graph's DAG before emission (rules/port_idioms.yaml).

``apply(dag, family, root)`` returns the DAG the port emits and the behaviour changes, each with
an example input evaluated with torch on the old and the new subexpression.  The old DAG itself
stays untouched: verify's old-MPSGraph reference is built from it.
"""

from __future__ import annotations

import math
import re
import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from migrate.port.dag import Dag, Node
from migrate.port import verdict_only
from migrate.port.rules import table
from migrate.tables import dtype_family, load_table

INTEGRAL = frozenset(dtype_family("integral"))
COMMUTATIVE = frozenset({"add", "mul", "maximum", "minimum", "eq", "ne", "logical_and", "logical_or"})
_TOKEN = re.compile(r"\s*(?:([A-Za-z_]\w*)|([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+))|(.))")


@dataclass(frozen=True)
class Pat:
    kind: str  # "op" | "var" | "const" | "cast" (name: the target dtype)
    name: str = ""
    args: tuple["Pat", ...] = ()
    value: float = 0.0


def parse(text: str) -> Pat:
    toks = [m.groups() for m in _TOKEN.finditer(text) if any(m.groups())]
    pos = 0

    def expr() -> Pat:
        nonlocal pos
        ident, num, sym = toks[pos]
        pos += 1
        if num is not None:
            return Pat("const", value=float(num))
        if ident is None:
            raise ValueError(f"rules/port_idioms.yaml: unexpected {sym!r} in {text!r}")
        if ident == "cast" and [t[2] for t in toks[pos : pos + 4]] == ["<", None, ">", "("]:
            dtype = toks[pos + 1][0]  # cast<float>(x), as `port --list` writes a cast
            pos += 4
            inner = expr()
            if toks[pos][2] != ")":
                raise ValueError(f"rules/port_idioms.yaml: expected ')' in {text!r}")
            pos += 1
            return Pat("cast", dtype, (inner,))
        if pos < len(toks) and toks[pos][2] == "(":
            pos += 1
            args = [expr()]
            while toks[pos][2] == ",":
                pos += 1
                args.append(expr())
            if toks[pos][2] != ")":
                raise ValueError(f"rules/port_idioms.yaml: expected ')' in {text!r}")
            pos += 1
            if ident not in table().ops:
                raise ValueError(f"rules/port_idioms.yaml: unknown op {ident!r} in {text!r}")
            return Pat("op", ident, tuple(args))
        return Pat("var", ident)

    out = expr()
    if pos != len(toks):
        raise ValueError(f"rules/port_idioms.yaml: trailing text in {text!r}")
    return out


@dataclass(frozen=True)
class Idiom:
    name: str
    match: Pat
    emit: Pat
    why: str
    example: dict
    families: frozenset[str] | None
    excluded: frozenset[str]
    whole: bool
    example_dtype: str = "float32"  # the torch dtype of the example's inputs (an integer-only idiom's: int64)

    @property
    def integral(self) -> bool:
        """An idiom for integer dtypes: it rewrites the integer arm of a dtype branch."""
        return not self.example_dtype.startswith(("float", "bfloat"))


@lru_cache(maxsize=1)
def idioms() -> tuple[Idiom, ...]:
    raw = load_table("port_idioms.yaml")
    return tuple(
        Idiom(
            d["name"],
            parse(d["match"]),
            parse(d["emit"]),
            d["why"],
            dict(d.get("example") or {}),
            frozenset(d["families"]) if d.get("families") else None,
            frozenset(d.get("except") or ()),
            bool(d.get("whole")),
            str(d.get("example_dtype") or "float32"),
        )
        for d in raw["idioms"]
    )


def _match(p: Pat, n: Node, env: dict) -> dict | None:
    if p.kind == "var":
        if p.name in env:
            return env if repr(env[p.name]) == repr(n) else None
        return {**env, p.name: n}
    if p.kind == "const":
        ok = n.op == "const" and isinstance(n.value, (int, float)) and float(n.value) == p.value
        return env if ok else None
    if p.kind == "cast":
        return _match(p.args[0], n.args[0], env) if n.op == "cast" and n.dtype == p.name else None
    if n.op != p.name or len(n.args) != len(p.args):
        return None
    orders = [n.args] + ([n.args[::-1]] if p.name in COMMUTATIVE and len(n.args) == 2 else [])
    for args in orders:
        e = env
        for pa, a in zip(p.args, args):
            e = _match(pa, a, e)
            if e is None:
                break
        if e is not None:
            return e
    return None


def _build(p: Pat, env: dict, like: Node | None, memo: dict | None = None) -> Node:
    """The pattern's node; a subpattern written twice is one node (the emitter names it once)."""
    memo = {} if memo is None else memo
    if p.kind == "var":
        return env[p.name]
    if p not in memo:
        if p.kind == "const":
            memo[p] = Node("const", value=p.value, like=like)
        elif p.kind == "cast":
            memo[p] = Node("cast", (_build(p.args[0], env, like, memo),), dtype=p.name)
        else:
            memo[p] = Node(p.name, tuple(_build(a, env, like, memo) for a in p.args))
    return memo[p]


def _ops(p: Pat) -> set[str]:
    return ({p.name} if p.kind == "op" else set()) | {o for a in p.args for o in _ops(a)}


def _available(p: Pat, root: Path | None) -> str | None:
    """The first name the tree's c10/metal headers lack for ``p``'s ops, or None."""
    for op in sorted(_ops(p)):
        need = table().ops[op].requires
        if need and root is not None and not _defines(root, need):
            return need
    return None


@lru_cache(maxsize=16)
def _defines(root: Path, name: str) -> bool:
    """Do the c10/metal headers the kernel compiles against define ``name(``?  The tree's own, or --
    for a partial tree without them -- the installed torch's, as the compiler's include path has it."""
    folder = root / "c10" / "metal"
    if not folder.is_dir():
        try:
            from migrate.device.cpu.backend import c10_metal_dirs
        except ImportError:  # pragma: no cover - the light install has no compiler
            return False
        folder = next((d / "c10" / "metal" for d in c10_metal_dirs(root, []) if (d / "c10" / "metal").is_dir()), folder)
    if not folder.is_dir():
        return False
    rx = re.compile(rb"\b" + re.escape(name.encode()) + rb"\s*\(")
    return any(rx.search(h.read_bytes()) for h in folder.glob("*.h"))


def apply(dag: Dag, family: str, root: Path | None) -> tuple[Dag, list[str], list[str]]:
    """(DAG to emit, behaviour changes, notes)."""
    changes: list[str] = []
    notes: list[str] = []
    out = dag.output
    for idiom in idioms():
        if (idiom.families is not None and family not in idiom.families) or family in idiom.excluded:
            continue
        missing = _available(idiom.emit, root)
        memo: dict[int, Node] = {}
        hits: list[dict] = []
        matched: list[dict] = []

        def rewrite(n: Node, top: bool, integral: bool = False) -> Node:
            if id(n) in memo:
                return memo[id(n)]
            ints = n.op == "dtype_if" and all(d in INTEGRAL for d in n.dtype.split(","))
            branch = n.op == "dtype_if"  # an arm of a whole-graph dtype branch is the whole graph for its dtypes
            args = tuple(
                rewrite(a, top and branch and k > 0, integral or (ints and k == 1)) for k, a in enumerate(n.args)
            )
            m = n if args == n.args else Node(n.op, args, n.name, n.value, n.dtype, n.like)
            env = _match(idiom.match, m, {}) if (top or not idiom.whole) else None
            if env is not None:
                matched.append(env)
                if not integral or idiom.integral:  # a float idiom in an integer-only arm: no NaN or overflow
                    hits.append(env)
                if missing is None:
                    like = next((v for v in env.values() if v.op != "const"), None)
                    m = _build(idiom.emit, env, like)
            memo[id(n)] = m
            return m

        out = rewrite(out, True)
        if not matched or (missing is None and not hits):
            continue
        if missing is not None:
            notes.append(
                f"kept the old graph's {idiom.name} formula: the tree's c10/metal defines no {missing}; {idiom.why}"
            )
            continue
        changes.append(f"behaviour change ({idiom.name}): {idiom.why}; {_example(idiom, hits[0])}")
    from migrate.port.dag import fold_same_arms

    out = fold_same_arms(out)  # NaN-propagating max in both arms of an integer branch: one formula
    new = dataclasses.replace(dag, inputs=list(dag.inputs), output=out, params=list(dag.params))
    return new, changes, notes


def _example(idiom: Idiom, env: dict) -> str:
    """``a=1000.0, b=1000.0: old graph inf, port 1000.6931`` (float32, or int64 for integer examples; with torch;
    the example's inputs alone for a verdict, as without torch)."""
    if verdict_only.active():
        return f"e.g. {idiom.example}"
    try:
        import torch
    except ImportError:  # pragma: no cover - port FAMILY needs the [verify] extra anyway
        return f"e.g. {idiom.example}"
    from migrate.port.dag import evaluate_with_torch

    values = {}
    fresh = {}
    dtype = getattr(torch, idiom.example_dtype)
    for k, v in env.items():
        if v.op == "const":
            fresh[k] = Node("const", value=v.value, dtype=v.dtype)
        else:
            fresh[k] = Node("input", name=k)
            value = idiom.example.get(k, 0.5)
            values[k] = torch.tensor(float(value) if dtype.is_floating_point else int(value), dtype=dtype)
    inputs = [n for n in fresh.values() if n.op == "input"]
    old = evaluate_with_torch(Dag(inputs, _build(idiom.match, fresh, inputs[0])), values)
    new = evaluate_with_torch(Dag(inputs, _build(idiom.emit, fresh, inputs[0])), values)
    if not dtype.is_floating_point:  # the old graph's float result, stored into the integer output
        old = old.to(new.dtype)
    shown = ", ".join(f"{k}={_num(values[k].item())}" for k in values)
    return f"{shown}: old graph {_num(old.item())}, port {_num(new.item())}"


def _num(x) -> str:
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return repr(x)
    if isinstance(x, float) and x == 0 and math.copysign(1, x) < 0:
        return "-0.0"
    return f"{x:.8g}"
