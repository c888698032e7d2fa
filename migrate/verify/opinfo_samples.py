"""OpInfo samples: the inputs test_mps.py's ``test_output_match`` feeds an op.

family -> OpInfo names (``migrate.opinfo.family_entries``: the tree's OpInfo
database, else the installed torch's) -> entries of the installed torch's
``op_db`` selected by (name, variant_test_name) -> for each dtype,
``op.sample_inputs("cpu", dtype, requires_grad=<floating>, set_seed=True)``
(test_output_match draws them on ``mps`` with the same seed) -> ``Case``s
whose reference is ``op(*args)`` on CPU.

A sample the kernel cannot express (kwargs, a non-tensor input, the wrong
number of operands) is counted as skipped with its reason.  ``op_db`` is
imported only when verify runs (it takes seconds); nothing is cached across
processes.  Which aten overload each sample reaches is recorded with a
TorchDispatchMode while the reference runs.
"""

from __future__ import annotations

import importlib
from collections import Counter
from dataclasses import dataclass, field

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from migrate.verify.cases import Case, PyScalar
from migrate.verify.references import NotApplicable, ReferenceUnavailable

OPDB_MODULE = "torch.testing._internal.common_methods_invocations"


@dataclass
class OpInfoRun:
    """Counts for one OpInfo and dtype (the cases are run by the caller)."""

    formatted: str
    dtype: torch.dtype
    samples: int = 0
    skipped: Counter = field(default_factory=Counter)  # reason -> count
    unsupported: str = ""  # why no sample was drawn for this dtype


@dataclass
class Selection:
    opinfos: list  # op_db entries
    notes: list[str] = field(default_factory=list)


def overload_name(func) -> str:
    """``aten::copysign`` + ``Tensor`` -> ``copysign.Tensor`` (``default`` -> no suffix)."""
    base = func._schema.name.split("::", 1)[-1]
    ov = func._overloadname
    return base if ov == "default" else f"{base}.{ov}"


class _Recorder(TorchDispatchMode):
    """Top-level aten overloads a call dispatches (what the MPS dispatch key would receive); with ``names``, also
    the values of those arguments in the first call whose schema has them all (defaults filled in)."""

    def __init__(self, seen: set[str], names: tuple[str, ...] = ()):
        super().__init__()
        self.seen, self.names = seen, names
        self.values: dict | None = None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.add(overload_name(func))
        if self.names and self.values is None:
            self.values = argument_values(func, args, kwargs or {}, self.names)
        return func(*args, **(kwargs or {}))


def argument_values(func, args, kwargs: dict, names: tuple[str, ...]) -> dict | None:
    """{name: value} of the aten call ``func(*args, **kwargs)`` for each of ``names`` (its schema's default where
    the call leaves it out), or None when the schema lacks one of them."""
    params = {a.name: (i, a) for i, a in enumerate(func._schema.arguments)}
    if not all(n in params for n in names):
        return None
    out = {}
    for n in names:
        i, a = params[n]
        out[n] = args[i] if i < len(args) else kwargs.get(n, a.default_value)
    return out


class OpInfoReference:
    """``op(*args)`` on CPU, as test_output_match computes its expected output."""

    name = "torch-cpu"

    def __init__(self, opinfo, overloads: set[str], scalars: tuple[str, ...] = ()):
        self.opinfo, self.overloads = opinfo, overloads
        self.scalars = scalars  # the launch's run-time scalars: read from the operator's call into case.scalars

    def compute(self, case: Case) -> torch.Tensor:
        args = [a.clone() if isinstance(a, torch.Tensor) else a for a in case.reference_args()]
        seen: set[str] = set()
        rec = _Recorder(seen, self.scalars)
        try:
            with rec:
                out = self.opinfo(*args, *case.scalar_args, **(case.scalar_kwargs or {}))
        except TypeError as exc:
            raise NotApplicable(str(exc).splitlines()[0]) from None
        except (RuntimeError, NotImplementedError) as exc:
            raise ReferenceUnavailable(str(exc).splitlines()[0]) from None
        self.overloads |= seen
        if not isinstance(out, torch.Tensor):
            raise NotApplicable(f"{self.opinfo.name} returned {type(out).__name__}")
        if self.scalars:
            if rec.values is None:
                raise NotApplicable(f"no operator call of this sample takes {', '.join(self.scalars)}")
            case.scalars = rec.values
        return out


def load_op_db():
    """The installed torch's op_db (imported now), or raise ImportError with the reason."""
    return importlib.import_module(OPDB_MODULE).op_db


def select(index, family: str) -> Selection:
    """The op_db entries testing ``family`` (names from the OpInfo database source)."""
    from migrate.opinfo import calls_of, family_calls, family_entries

    notes: list[str] = []
    entries = family_entries(index, family)
    if not entries and index.tree.opinfo_files:
        entries = family_entries(index, family, installed=True)
        if entries:
            notes.append(f"the tree's OpInfo database has no entry for {family}; names from the installed torch's")
    try:
        op_db = load_op_db()
    except Exception as exc:  # noqa: BLE001 - torch's test helpers: any import failure means "no samples"
        return Selection(
            [], notes + [f"OpInfo samples unavailable: cannot import {OPDB_MODULE} ({type(exc).__name__}: {exc})"]
        )
    if not entries:
        # entries defined outside common_methods_invocations.py (opinfo/definitions/*.py) escape the scan
        calls = family_calls(index, family)
        found = [o for o in op_db if calls & calls_of(o.name, o.aten_name, [a.name for a in o.aliases])]
        if found:
            names = ", ".join(o.formatted_name for o in found)
            return Selection(
                found, [f"OpInfo {names}: not in the scanned database source; selected from op_db by what it calls"]
            )
        return Selection(
            [], [f"no OpInfo entry calls {family} (aten names tried: {', '.join(sorted(family_calls(index, family)))})"]
        )
    by_key = {(o.name, o.variant_test_name): o for o in op_db}
    chosen = []
    for e in dict.fromkeys((e.name, e.variant) for e in entries):
        op = by_key.get(e)
        if op is None:
            full = e[0] + (f".{e[1]}" if e[1] else "")
            notes.append(f"OpInfo {full} is in the database source but not in the installed torch's op_db")
        else:
            chosen.append(op)
    return Selection(chosen, notes)


def _operand(x):
    """A sample argument as a Case operand, or None if the kernel cannot take it."""
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, (bool, int, float, complex)):
        return PyScalar(x)
    return None


def _record_skipped(opinfo, sample, seen: set[str]) -> None:
    """The overloads a skipped sample would call (for the overload map); failures ignored."""
    try:
        with _Recorder(seen):
            opinfo(sample.input, *sample.args, **sample.kwargs)
    except Exception:  # noqa: BLE001 - only the dispatch record matters here
        pass


def _number(x) -> bool:
    return x is None or (isinstance(x, (bool, int, float)) and not isinstance(x, torch.Tensor))


def sample_cases(
    opinfo,
    dtype: torch.dtype,
    arity: int,
    run: OpInfoRun,
    seen: set[str],
    expect: dict | None = None,
    scalars: tuple[str, ...] = (),
) -> list[Case]:
    """The OpInfo's samples for ``dtype`` as Cases; skipped samples are counted in ``run``
    (and the overloads they call added to ``seen``).  ``expect``: the arguments that reach the one stub
    verified (rounding_mode="trunc"): a sample passing others calls another stub.  ``scalars``: the run-time
    scalars the launch binds: a sample may pass them (keywords among them, numbers after the operands)."""
    layout = f"opinfo:{opinfo.formatted_name}"
    if dtype not in opinfo.supported_dtypes("cpu"):
        run.unsupported = f"the OpInfo does not list {str(dtype).removeprefix('torch.')} on CPU"
        return []
    floating = dtype.is_floating_point or dtype.is_complex
    cases = []
    for s in opinfo.sample_inputs("cpu", dtype, requires_grad=floating, set_seed=True):
        run.samples += 1
        s = s.transform(lambda x: x.detach() if isinstance(x, torch.Tensor) else x)
        if expect is not None and s.kwargs != expect:
            shown = ", ".join(f"{k}={v!r}" for k, v in s.kwargs.items()) or "no kwargs"
            run.skipped[f"{shown}: another stub than the one verified"] += 1
            continue
        raw, extra = [s.input, *s.args], ()
        if scalars and set(s.kwargs) <= set(scalars) and all(_number(v) for v in s.kwargs.values()):
            if len(raw) > arity and all(_number(x) for x in raw[arity:]):  # the scalars passed by position
                raw, extra = raw[:arity], tuple(raw[arity:])
        elif s.kwargs:
            run.skipped[f"kwargs {', '.join(sorted(s.kwargs))} not expressible by the functor"] += 1
            _record_skipped(opinfo, s, seen)
            continue
        ops = [_operand(x) for x in raw]
        if any(o is None for o in ops):
            _record_skipped(opinfo, s, seen)
            kinds = ", ".join(sorted({type(x).__name__ for x, o in zip(raw, ops) if o is None}))
            run.skipped[f"argument of type {kinds} not expressible by the kernel"] += 1
            continue
        if not isinstance(ops[0], torch.Tensor) and not any(isinstance(o, torch.Tensor) for o in ops):
            run.skipped["no tensor operand"] += 1
            continue
        if len(ops) != arity:
            _record_skipped(opinfo, s, seen)
            run.skipped[f"{len(ops)} operand(s), the kernel takes {arity}"] += 1
            continue
        cases.append(Case(dtype, layout, tuple(ops), scalar_args=extra, scalar_kwargs=dict(s.kwargs) or None))
    return cases


def overload_map(index, family: str, reached: dict[str, set[str]]) -> list[str]:
    """One line per overload of ``family``: the OpInfos whose samples call it, or that none does."""
    lines = []
    by_overload: dict[str, list[str]] = {}
    for name, ovs in reached.items():
        for ov in ovs:
            by_overload.setdefault(ov, []).append(name)
    for e in index.families.get(family, ()):
        names = sorted(by_overload.get(e.overload_name, ()))
        lines.append(f"{e.overload_name}: " + (f"OpInfo {', '.join(names)}" if names else "no OpInfo sample calls it"))
    known = {e.overload_name for e in index.families.get(family, ())}
    for ov, names in sorted(by_overload.items()):
        if ov not in known:
            lines.append(f"{ov}: OpInfo {', '.join(sorted(names))} (not an overload of {family} in the tree)")
    return lines
