"""Which stub a shared CPU kernel calls, for which argument values.

``div_out_mode`` calls ``div_true_stub`` when ``rounding_mode`` is empty, ``div_trunc_stub`` for
``"trunc"`` and ``div_floor_stub`` for ``"floor"``; ``clamp_out`` calls ``clamp_scalar_stub`` with both
bounds, ``clamp_max_scalar_stub`` with ``max`` only.  A port writes one kernel per stub, each from the
MPS function specialised for those values (migrate/conventions/specialise.py decides the host conditions).

The kernel's body is read with the port's statement parser; its optional and string-compared
parameters get every value the body tells apart (empty, present, each compared literal), and each
combination is run through the body: a condition the values decide takes its branch, any other
(``min.toDouble() != min.toDouble()``: data) takes both.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from migrate.source import objc as o
from migrate.conventions.specialise import PRESENT, Known, truth

_MAX_COMBINATIONS = 64


class _Other:
    """A string none of the compared literals equals."""

    def __repr__(self) -> str:
        return "OTHER"


OTHER = _Other()


@dataclass(frozen=True)
class StubChoice:
    stub: str
    known: tuple[tuple[str, Known], ...]  # (parameter, value), the kernel's parameter order

    @property
    def values(self) -> dict[str, Known]:
        return dict(self.known)

    def describe(self) -> str:
        """``rounding_mode="trunc"``, ``min given, max empty``."""
        parts = []
        for name, k in self.known:
            if k.value is None:
                parts.append(f"{name} empty")
            elif k.value is PRESENT:
                parts.append(f"{name} given")
            elif k.value is OTHER:
                parts.append(f"{name} another string")
            else:
                parts.append(f'{name}="{k.value}"' if isinstance(k.value, str) else f"{name}={k.value}")
        return ", ".join(parts) or "always"


def call_kwargs(known: dict[str, Known] | None) -> dict:
    """The keyword arguments a torch call passes to reach a stub: the literal values of ``known``
    (``rounding_mode="trunc"``); an empty or merely given optional is left to its default."""
    return {k: v.value for k, v in (known or {}).items() if isinstance(v.value, (str, bool, int, float))}


def stub_choices(params: list[tuple[str, str]], body: str, first_line: int, stubs: set[str]) -> list[StubChoice]:
    """One StubChoice per stub of ``stubs`` the body reaches, in the order of the first combination that
    reaches it; ``params``: (type, name) of the kernel.  [] when the body cannot be read."""
    try:
        statements, _ = o.parse_statements(body, first_line)
    except o.ObjcSyntaxError:
        return []
    domains = _domains(params, statements)
    names = list(domains)
    combos = list(itertools.islice(itertools.product(*(domains[n] for n in names)), _MAX_COMBINATIONS + 1))
    if len(combos) > _MAX_COMBINATIONS:
        return []
    found: dict[str, StubChoice] = {}
    for combo in combos:
        known = {n: Known(v) for n, v in zip(names, combo)}
        for stub in _reached(statements, known, stubs)[0]:
            if stub not in found:
                found[stub] = StubChoice(stub, tuple(known.items()))
    return list(found.values())


def _optional(type_: str) -> bool:
    return bool(re.search(r"optional|Optional", type_))


def _domains(params: list[tuple[str, str]], statements) -> dict[str, list]:
    """Values each parameter the body tells apart can take: None/PRESENT for an optional, and each string
    it is compared with."""
    strings: dict[str, list[str]] = {}
    for e in _expressions(statements):
        if isinstance(e, o.Binary) and e.op in ("==", "!="):
            for a, b in ((e.left, e.right), (e.right, e.left)):
                name = _operand_name(a)
                if name is not None and isinstance(b, o.Str):
                    strings.setdefault(name, []).append(b.text.strip('"'))
    out: dict[str, list] = {}
    for type_, name in params:
        values = list(dict.fromkeys(strings.get(name, ())))
        if values:
            values.append(OTHER)
        if _optional(type_):
            out[name] = [None, *values] if values else [None, PRESENT]
        elif values:
            out[name] = values
    return out


def _operand_name(e) -> str | None:
    """``*opt``, ``opt.value()``, ``name``: the parameter it reads."""
    if isinstance(e, o.Unary) and e.op == "*":
        e = e.expr
    if isinstance(e, o.Call) and isinstance(e.func, o.Member) and e.func.name in ("value", "get") and not e.args:
        e = e.func.obj
    return e.id if isinstance(e, o.Name) else None


def _expressions(statements):
    for s in statements:
        if isinstance(s, o.If):
            yield from _walk(s.cond)
            yield from _expressions(s.then)
            yield from _expressions(s.other)


def _walk(e):
    yield e
    for child in (getattr(e, "left", None), getattr(e, "right", None), getattr(e, "expr", None)):
        if child is not None:
            yield from _walk(child)


def _reached(statements, known: dict[str, Known], stubs: set[str]) -> tuple[list[str], bool]:
    """(stubs called on some path through ``statements`` for the ``known`` values, every path returns)."""
    out: list[str] = []
    for s in statements:
        if isinstance(s, o.If):
            decided = truth(s.cond, known)
            arms = (s.then,) if decided is True else (s.other,) if decided is False else (s.then, s.other)
            returned = True
            for arm in arms:
                got, ret = _reached(arm, known, stubs)
                out += got
                returned &= ret
            if returned:
                return out, True
        elif isinstance(s, o.ExprStmt) and isinstance(s.expr, o.Call) and isinstance(s.expr.func, o.Name):
            if s.expr.func.id.rsplit("::", 1)[-1] in stubs:
                out.append(s.expr.func.id.rsplit("::", 1)[-1])
        elif isinstance(s, o.Return):
            return out, True
    return out, False


def dtype_shortcuts(body: str, first_line: int, stubs: set[str]) -> list[tuple[str, bool, str]]:
    """Dtype families a kernel's body handles itself before calling any stub: ``if
    (c10::isIntegralType(self.scalar_type(), /*includeBool=*/true)) { ...; return result; }`` (nan_to_num_out
    copies integers) -> [("integral", True, the condition's text)]; ("floating", False, ...) for
    ``isFloatingType``. Only top-level tests before the first statement reaching a stub count."""
    try:
        statements, _ = o.parse_statements(body, first_line)
    except o.ObjcSyntaxError:
        return []
    out = []
    for s in statements:
        if _reached([s], {}, stubs)[0]:
            break
        if not (isinstance(s, o.If) and s.then and isinstance(s.then[-1], o.Return)):
            continue
        c = s.cond
        if isinstance(c, o.Call) and isinstance(c.func, o.Name) and c.args:
            test = c.func.id.rsplit("::", 1)[-1]
            if test == "isIntegralType":
                bools = len(c.args) > 1 and isinstance(c.args[1], o.Name) and c.args[1].id == "true"
                out.append(("integral", bools, f"{c.func.id}(...)"))
            elif test == "isFloatingType":
                out.append(("floating", False, f"{c.func.id}(...)"))
    return out
