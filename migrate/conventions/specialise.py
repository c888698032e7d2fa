"""Specialise a shared graph helper for one caller (a string switch such as ``if (op_name == "add")``
in add_sub_lerp_template, a ``rounding_mode`` in div_mode_template).

The caller passes literals (``"floor"``, ``std::nullopt``, numbers, ``true``); they become known host
values while the helper's graph code is translated, so conditions on them are decided at port time
and each caller gets its own kernel.  Conditions that still depend on run-time data stay refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from migrate.source import objc as o

_NULL = ("std::nullopt", "nullopt", "c10::nullopt")


class _Present:
    """A value the caller passes whose content is not known, only that it is there (a Scalar for an
    optional parameter): ``has_value()`` is true."""

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "PRESENT"


PRESENT = _Present()


@dataclass(frozen=True)
class Known:
    value: object  # str, bool, int/float, PRESENT, or None (an empty optional)


@dataclass(frozen=True)
class GeneralPath:
    """A host bool ``scalar.toDouble() != 1.0``: true on the general path (the other is a shortcut)."""

    text: str


_GENERAL = re.compile(
    r"\bbool\s+(\w+)\s*=\s*(\w+\s*\.\s*(?:toDouble\(\)|to\s*<\s*\w+\s*>\s*\(\)))\s*!=\s*([-+\d.]+)\s*;"
)


def general_paths(text: str) -> dict[str, GeneralPath]:
    """Host bools of a helper's body that compare a Scalar argument unequal with a number."""
    return {m.group(1): GeneralPath(f"{' '.join(m.group(2).split())} != {m.group(3)}") for m in _GENERAL.finditer(text)}


_EMPTY_OPTIONALS = ("OptionalScalarRef", "OptionalTensorRef", "optional", "nullopt")


def literal(e) -> Known | None:
    if isinstance(e, o.Call) and not e.args and isinstance(e.func, o.Name):
        if e.func.id.rsplit("::", 1)[-1] in _EMPTY_OPTIONALS:  # at::OptionalScalarRef(): an empty optional
            return Known(None)
    if isinstance(e, o.Str):
        return Known(e.text[1:-1] if e.text[:1] == '"' else e.text)
    if isinstance(e, o.Num):
        return Known(e.value)
    if isinstance(e, o.Name) and e.id in _NULL:
        return Known(None)
    if isinstance(e, o.Name) and e.id in ("true", "false"):
        return Known(e.id == "true")
    return None


def call_literals(text: str, first_line: int, callee: str, params, caller_params=()) -> dict[str, Known]:
    """Parameter name -> literal value of the first call ``callee(...)`` in ``text`` (a caller's body).
    An argument naming one of the caller's ``caller_params`` that is never empty (a ``const Scalar&``
    passed for an optional parameter) is PRESENT."""
    return call_bindings(text, first_line, callee, params, caller_params)[0]


def call_bindings(
    text: str, first_line: int, callee: str, params, caller_params=()
) -> tuple[dict[str, Known], dict[str, str]]:
    """(``call_literals``, parameter name -> the caller's variable passed for it where the argument is a plain
    name), from one parse of the call."""
    args = _call_args(text, first_line, callee)
    plain = {p.name for p in caller_params if not _optional_type(p.type)}
    literals, names = {}, {}
    for prm, a in zip(params, args):
        v = literal(a)
        if v is None and isinstance(a, o.Name) and a.id in plain and _optional_type(prm.type):
            v = Known(PRESENT)
        if v is not None:
            literals[prm.name] = v
        if isinstance(a, o.Name):
            names[prm.name] = a.id
    return literals, names


def _call_args(text: str, first_line: int, callee: str) -> tuple:
    toks = o.tokenize(text, first_line)
    short = callee.rsplit("::", 1)[-1]
    for k, t in enumerate(toks):
        if t.kind == "id" and t.text.rsplit("::", 1)[-1] == short and k + 1 < len(toks) and toks[k + 1].text == "(":
            try:
                return tuple(o.Parser(toks, k + 1).call_args())
            except o.ObjcSyntaxError:
                return ()
    return ()


def _optional_type(t: str) -> bool:
    return "optional" in t.lower()


@dataclass(frozen=True)
class HostFacts:
    """What a helper's host code says before its graph is built: bools that test whether an optional is
    there (``const bool has_min = min_opt.has_value();``), host copies of a Scalar's value
    (``min_scalar = min_opt.get().to<double>()``), and dtypes read off a tensor (``result_type =
    output_t.scalar_type()``)."""

    known: dict
    aliases: dict  # host variable -> the Scalar parameter it holds the value of
    dtype_of: dict  # host variable -> the tensor parameter whose dtype it is


_HAS_VALUE = re.compile(r"\bbool\s+(\w+)\s*=\s*\(?\s*(\w+)\s*\.\s*has_value\s*\(\s*\)")
_VALUE_OF = re.compile(r"\b(\w+)\s*=\s*(\w+)\s*(?:\.\s*get\s*\(\s*\)\s*)?\.\s*to\s*<\s*\w+\s*>\s*\(\s*\)\s*;")
_ST = r"\s*\.\s*scalar_type\s*\(\s*\)"
_DTYPE_OF = re.compile(  # result_type = output_t.scalar_type(); self_dtype = getMPSScalarType(self.scalar_type())
    rf"\b(\w+)\s*=\s*(?:(\w+){_ST}|getMPS(?:Scalar|Data)Type\s*\(\s*(\w+)(?:{_ST})?\s*\))\s*;"
)


def host_facts(text: str, known: dict[str, Known]) -> HostFacts:
    facts = {}
    for m in _HAS_VALUE.finditer(text):
        opt = known.get(m.group(2))
        if opt is not None:  # `&& min_opt->defined()` after it: a present optional tensor is defined
            facts[m.group(1)] = Known(opt.value is not None)
    aliases = {m.group(1): m.group(2) for m in _VALUE_OF.finditer(text) if m.group(1) != m.group(2)}
    return HostFacts(facts, aliases, {m[1]: m[2] or m[3] for m in _DTYPE_OF.finditer(text)})


def truth(cond, known: dict[str, Known]):
    """True / False when ``cond`` is decided by the known values, else None."""
    v = _value(cond, known)
    if isinstance(v, Known):
        return bool(v.value) if v.value is not None else False
    return None


def _value(e, known: dict[str, Known]):
    if isinstance(e, o.Name):
        return known.get(e.id)
    lit = literal(e)
    if lit is not None:
        return lit
    if isinstance(e, o.Unary):
        inner = _value(e.expr, known)
        if e.op == "*":  # *optional
            return inner
        if e.op == "!" and isinstance(inner, Known):
            return Known(not (inner.value is not None and bool(inner.value)))
        return None
    if isinstance(e, o.Call) and isinstance(e.func, o.Member) and not e.args:
        obj = _value(e.func.obj, known)
        if isinstance(obj, Known) and e.func.name == "has_value":
            return Known(obj.value is not None)
        if isinstance(obj, Known) and e.func.name == "value":
            return obj
        return None
    if isinstance(e, o.Binary):
        left, right = _value(e.left, known), _value(e.right, known)
        if e.op in ("&&", "||"):
            lt = None if left is None else bool(left.value) if left.value is not None else False
            rt = None if right is None else bool(right.value) if right.value is not None else False
            if e.op == "&&":
                return Known(False) if False in (lt, rt) else Known(True) if lt is rt is True else None
            return Known(True) if True in (lt, rt) else Known(False) if lt is rt is False else None
        if e.op in ("==", "!=") and isinstance(left, Known) and isinstance(right, Known):
            return Known((left.value == right.value) == (e.op == "=="))
    return None


def simplify(cond, known: dict[str, Known]):
    """``cond`` with the sub-conditions the known values decide folded away (``x && true`` -> ``x``);
    the same object when nothing folds."""
    if isinstance(cond, o.Binary) and cond.op in ("&&", "||"):
        left, right = simplify(cond.left, known), simplify(cond.right, known)
        lt, rt = truth(left, known), truth(right, known)
        neutral = cond.op == "&&"  # true is neutral for &&, false for ||
        if lt is neutral:
            return right
        if rt is neutral:
            return left
        if (left, right) != (cond.left, cond.right):
            return o.Binary(cond.op, left, right, cond.line)
    return cond


_LIMITS = {"infinity": float("inf"), "quiet_NaN": float("nan")}


def numeric_limit(e) -> float | None:
    """``[-]std::numeric_limits<float>::infinity()`` (the reader parses the template as ``a < T > f()``)."""
    if not (isinstance(e, o.Binary) and e.op == ">" and isinstance(e.left, o.Binary) and e.left.op == "<"):
        return None
    call, head = e.right, e.left.left
    if not (
        isinstance(call, o.Call)
        and not call.args
        and isinstance(call.func, o.Name)
        and call.func.id in _LIMITS
        and isinstance(e.left.right, o.Name)
        and e.left.right.id in ("float", "double")
    ):
        return None
    sign = 1.0
    if isinstance(head, o.Unary) and head.op == "-":
        sign, head = -1.0, head.expr
    if isinstance(head, o.Name) and head.id.rsplit("::", 1)[-1] == "numeric_limits":
        return sign * _LIMITS[call.func.id]
    return None
