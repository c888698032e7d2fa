"""Host scalars a function computes from its optional arguments, and their values.

``scalar_t pos_inf_replacement = pos_inf.has_value() ? static_cast<scalar_t>(pos_inf.value())
: std::numeric_limits<scalar_t>::max();`` (nan_to_num): a run-time scalar of the graph that no Scalar argument
holds.  ``host_scalars`` reads such locals (their text and the arguments they read); port writes the same
expression into the generated host stub, and verify evaluates it (``evaluate``) for each dtype, as the stub
would.  Only what these defaults are written with is understood: casts, ``value_or``, ``has_value() ? :``,
``value()``, ``to<T>()``, ``std::numeric_limits<T>`` and number literals; anything else is not a host scalar.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from migrate.source import objc as o

TYPES = ("scalar_t", "opmath_t", "double", "float")  # the local's declared type
_CASTS = ("static_cast", "c10::static_cast", "float", "double")
_LIMITS = ("max", "lowest", "min", "infinity", "quiet_NaN", "epsilon")
_MEMBERS = ("value_or", "has_value", "value", "to", "get")


class HostExprError(ValueError):
    pass


@dataclass(frozen=True)
class HostScalar:
    expr: str  # the initialiser's text, whitespace collapsed
    reads: tuple[str, ...]  # the function arguments it reads, in order of first use
    floating: bool = False  # computed inside an AT_DISPATCH_FLOATING_* lambda: for floating dtypes only


def host_scalars(text: str, first_line: int, params) -> dict[str, HostScalar]:
    """Locals ``TYPE NAME = EXPR;`` of ``text`` whose EXPR reads only arguments among ``params`` (names) in
    the forms ``evaluate`` understands."""
    toks = o.tokenize(text, first_line)
    names = set(params)
    out: dict[str, HostScalar] = {}
    for k, t in enumerate(toks[:-3]):
        if not (t.text in TYPES and toks[k + 1].kind == "id" and toks[k + 2].text == "="):
            continue
        end = k + 3
        depth = 0
        while toks[end].kind != "eof" and not (depth == 0 and toks[end].text in (";", ",")):
            depth += toks[end].text in "([{"
            depth -= toks[end].text in ")]}"
            end += 1
        if toks[end].text != ";":
            continue
        try:
            e = o.Parser(toks[k + 3 : end] + [o.Tok("eof", "", t.line, toks[end].pos)], 0).expression()
            reads = _reads(e, names)
        except (o.ObjcSyntaxError, HostExprError, IndexError):
            continue
        if reads:
            expr = " ".join(text[toks[k + 3].pos : toks[end].pos].split())
            macro = _dispatch_around(toks, k)
            out[toks[k + 1].text] = HostScalar(expr, reads, "FLOATING" in macro and "ALL" not in macro)
    return out


def _dispatch_around(toks, k: int) -> str:
    """The ``AT_DISPATCH_*`` macro whose argument list holds token ``k`` ("" when none)."""
    depth = 0
    for j in range(k - 1, 0, -1):
        if toks[j].text == ")":
            depth += 1
        elif toks[j].text == "(":
            if depth == 0 and toks[j - 1].text.startswith("AT_DISPATCH_"):
                return toks[j - 1].text
            depth = max(depth - 1, 0)
    return ""


def _reads(e, names: set[str]) -> tuple[str, ...]:
    """The arguments ``e`` reads; HostExprError for a form ``evaluate`` does not know."""
    seen: list[str] = []

    def walk(x):
        if isinstance(x, o.Num):
            return
        if isinstance(x, o.Name):
            if x.id not in names:
                raise HostExprError(f"reads {x.id}")
            seen.append(x.id)
            return
        if isinstance(x, o.Unary) and x.op in "-+*":
            return walk(x.expr)
        if isinstance(x, o.Cond):
            for y in (x.cond, x.then, x.other):
                walk(y)
            return
        if _limit(x) is not None:
            return
        if isinstance(x, o.Call):
            if isinstance(x.func, o.Name) and x.func.id in _CASTS and len(x.args) == 1:
                return walk(x.args[0])
            if isinstance(x.func, o.Member) and x.func.name in _MEMBERS:
                walk(x.func.obj)
                for a in x.args:
                    walk(a)
                return
        if isinstance(x, o.Binary) and x.op == ">" and _to_call(x) is not None:
            return walk(_to_call(x))
        raise HostExprError(f"unknown form {type(x).__name__}")

    walk(e)
    return tuple(dict.fromkeys(seen))


def _limit(x) -> str | None:
    """``std::numeric_limits<T>::max()`` (parsed as ``(numeric_limits < T) > max()``): the member's name."""
    if not (isinstance(x, o.Binary) and x.op == ">" and isinstance(x.left, o.Binary) and x.left.op == "<"):
        return None
    head, call = x.left.left, x.right
    if not (isinstance(head, o.Name) and head.id.rsplit("::", 1)[-1] == "numeric_limits"):
        return None
    if isinstance(call, o.Call) and isinstance(call.func, o.Name) and call.func.id.lstrip(":") in _LIMITS:
        return call.func.id.lstrip(":")
    return None


def _to_call(x):
    """``a.to<scalar_t>()`` parses as ``(a.to < scalar_t) > ()``: the object ``a``, or None."""
    left = x.left
    if isinstance(left, o.Binary) and left.op == "<" and isinstance(left.left, o.Member) and left.left.name == "to":
        return left.left.obj
    return None


def evaluate(expr: str, values: dict, dtype) -> float:
    """``expr`` with the arguments bound to ``values`` (None: an empty optional) for ``scalar_t`` = the torch
    ``dtype``; the cast to ``dtype`` itself is left to the caller (``Scalar::to`` / ``static_cast``)."""
    import torch

    toks = o.tokenize(expr)
    e = o.Parser(toks, 0).expression()

    def limit(name: str) -> float:
        if dtype.is_floating_point:
            fi = torch.finfo(dtype)
            return {
                "max": fi.max,
                "lowest": -fi.max,
                "min": fi.tiny,
                "infinity": math.inf,
                "quiet_NaN": math.nan,
                "epsilon": fi.eps,
            }[name]
        if dtype == torch.bool:
            return {"max": 1, "lowest": 0, "min": 0}.get(name, 0)
        ii = torch.iinfo(dtype)
        return {"max": ii.max, "lowest": ii.min, "min": ii.min}.get(name, 0)

    def test(x) -> bool:
        """A condition: an optional argument tests its presence (``posinf ? ... : ...``), not its value."""
        if isinstance(x, o.Name):
            return values[x.id] is not None
        if isinstance(x, o.Unary) and x.op == "!":
            return not test(x.expr)
        return bool(ev(x))

    def ev(x):
        if isinstance(x, o.Num):
            return x.value
        if isinstance(x, o.Name):
            return values[x.id]
        if isinstance(x, o.Unary):
            v = ev(x.expr)
            return -v if x.op == "-" else v
        if isinstance(x, o.Cond):
            return ev(x.then) if test(x.cond) else ev(x.other)
        name = _limit(x)
        if name is not None:
            return limit(name)
        if isinstance(x, o.Call) and isinstance(x.func, o.Name):
            return ev(x.args[0])
        if isinstance(x, o.Call) and isinstance(x.func, o.Member):
            obj = ev(x.func.obj)
            member = x.func.name
            if member == "has_value":
                return obj is not None
            if member == "value_or":
                return ev(x.args[0]) if obj is None else obj
            if obj is None:
                raise HostExprError(f"{expr}: {member}() of an empty optional")
            return obj
        if isinstance(x, o.Binary) and _to_call(x) is not None:
            return ev(_to_call(x))
        raise HostExprError(f"{expr}: cannot evaluate {type(x).__name__}")

    return ev(e)
