"""What the kernel's outputs are compared with (pluggable).

A ``Reference`` computes the expected output of one ``Case`` on the CPU:

- ``TorchCpuReference``: the same aten op on CPU (what PyTorch's
  test_output_match compares MPS with).
- ``PortReference``: the old MPSGraph implementation, as the expression DAG
  ``migrate.port`` extracts from the tree, evaluated with torch.  Used when
  ``migrate.port`` is importable and provides the functions; otherwise
  ``old_reference`` returns a note saying why not.
- ``mps_old_outputs``: on an Apple GPU, the real op on ``mps`` before the
  change.  Written for completeness; UNTESTED here (no Apple GPU).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Protocol, runtime_checkable

import torch

from migrate.verify.cases import Case
from migrate.verify.dtypes import table


class ReferenceUnavailable(Exception):
    """This reference cannot compute this case (dtype not supported, ...)."""


class NotApplicable(ReferenceUnavailable):
    """The op does not accept these arguments at all (e.g. no Scalar overload): no case."""


@runtime_checkable
class Reference(Protocol):
    name: str

    def compute(self, case: Case) -> torch.Tensor:
        """Expected output (CPU tensor); raises ReferenceUnavailable."""
        ...


def _dotted(path: str):
    obj = torch
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def reference_names(family: str, index=None) -> list[str]:
    """aten operator names that may be ``family``'s reference, best first: the native functions whose kernel
    the family's is (``migrate.opinfo.aten_names``: ``i1`` -> ``special_i1``), then the family itself and the
    namespaced names (rules/opinfo.yaml ``name_prefixes``: ``special_``, ``linalg_``)."""
    from migrate.opinfo import aten_names
    from migrate.tables import load_table

    names = aten_names(index, family) if index is not None else []
    names += [family] + [r + family for r in load_table("opinfo.yaml")["name_prefixes"].values() if r]
    return list(dict.fromkeys(names))


def torch_callable(family: str, index=None):
    """The torch-CPU reference of ``family``: the aten operator itself (``torch.ops.aten.<name>``, whose
    dispatcher picks the overload the arguments call, ``.out`` with ``out=``), found without a table; only
    rules/verify.yaml ``reference_exceptions`` (each with its reason) say otherwise."""
    exception = (table().get("reference_exceptions") or {}).get(family)
    if exception:
        return _dotted(exception["call"])
    tried = reference_names(family, index)
    for name in tried:
        packet = getattr(torch.ops.aten, name, None)
        if packet is not None:
            return packet
    raise LookupError(
        f"no torch reference for {family!r}: no aten operator {', '.join(tried)} (and no native function of the "
        "tree calls a stub its kernel is registered for)"
    )


class TorchCpuReference:
    name = "torch-cpu"

    def __init__(self, family: str, index=None):
        self.fn = torch_callable(family, index)
        self.scalar_kwargs: dict = {}  # a run-time scalar the launch binds, by name (conventions/scalar_launch.py)
        self.scalar_values: list = []  # a parameter struct's scalars, after the tensors (verify/params_host.py)

    def compute(self, case: Case) -> torch.Tensor:
        args = [a.clone() if isinstance(a, torch.Tensor) else a for a in case.reference_args()]
        args += self.scalar_values
        kw = self.scalar_kwargs
        try:
            if case.out is not None:
                out = torch.empty_like(case.out)
                self.fn(*args, out=out, **kw)
                return out
            return self.fn(*args, **kw)
        except TypeError as exc:
            raise NotApplicable(str(exc).splitlines()[0]) from None
        except (RuntimeError, NotImplementedError) as exc:
            first = str(exc).splitlines()[0]
            if "failed to match any schema" in first:  # no overload of the operator takes these arguments
                raise NotApplicable(_no_overload(self.fn, args, case.out is not None)) from None
            if any(r in first for r in _REFUSED):  # the call fails on MPS too, before any kernel
                raise NotApplicable(first) from None
            raise ReferenceUnavailable(first) from None

    def alternatives(self, case: Case, expected: torch.Tensor) -> list[tuple[str, torch.Tensor]]:
        """torch CPU's other answers for ``case`` (rules/verify.yaml ``reference_policy``), as (why, tensor).
        A reference that computes otherwise than torch CPU (a subclass overriding ``compute``) has none."""
        if type(self).compute is not TorchCpuReference.compute:
            return []
        out = []
        for kind in table()["reference_policy"]:
            try:
                alts = _ALTERNATIVES[kind](self, case, expected)
            except (TypeError, RuntimeError, NotImplementedError, ValueError):
                alts = []
            out += [(_WHY[kind], a.to(expected.dtype)) for a in alts if a.shape == expected.shape]
        return out

    def _call(self, args: list, out_like: torch.Tensor | None) -> torch.Tensor:
        kw = self.scalar_kwargs  # the run-time scalars the launch bound: the same call as compute's
        args = [*args, *self.scalar_values]
        if out_like is not None:
            out = torch.empty_like(out_like)
            self.fn(*args, out=out, **kw)
            return out
        return self.fn(*args, **kw)


def _no_overload(fn, args: list, out: bool) -> str:
    """``atan2(): no overload of aten::atan2 takes (float, Tensor)``."""
    name = getattr(fn, "_qualified_op_name", getattr(fn, "__name__", "op"))
    kinds = [type(a).__name__ for a in args] + (["out=Tensor"] if out else [])
    return f"{name.split('::')[-1]}(): no overload of {name} takes ({', '.join(kinds)})"


_REFUSED = (
    "can't be cast to the desired output type",  # TensorIteratorBase::compute_types, on any device
    "Found dtype ",  # compute_types' check_all_same_dtype ("Found dtype Half but expected Float")
    "failed to match any schema",  # torch.ops' dispatcher: no overload takes these arguments
    "dtype of out",  # a shared kernel's own check before its stub (nan_to_num: "dtype of out: Half should be same as input")
)
_LOW_FLOATS = (torch.float32, torch.float16, torch.bfloat16)


def _float64(ref: TorchCpuReference, case: Case, expected: torch.Tensor) -> list[torch.Tensor]:
    if expected.dtype not in _LOW_FLOATS:
        return []
    args = case.reference_args()
    up = [
        a.to(torch.float64)
        if isinstance(a, torch.Tensor) and (a.is_floating_point() or (a.dtype != torch.bool and not a.is_complex()))
        else a
        for a in args
    ]
    if not any(isinstance(a, torch.Tensor) and a.dtype == torch.float64 for a in up):
        return []
    return [ref._call(up, None)]


def _other_path(ref: TorchCpuReference, case: Case, expected: torch.Tensor) -> list[torch.Tensor]:
    """Every element through the vectorised loop (contiguous inputs: only a tail shorter than a vector
    takes the scalar one) and through the scalar loop (every element at twice its stride)."""
    args = [a.clone() if isinstance(a, torch.Tensor) else a for a in case.reference_args()]
    shape, n = expected.shape, expected.numel()
    if n < 2 or not any(isinstance(a, torch.Tensor) and a.dim() for a in args):
        return []
    pad = _VECTOR_PAD
    # flattened to the output's shape, then followed by `pad` more elements: no element is in the tail
    flat = [
        torch.cat([a.expand(shape).reshape(-1)] * (1 + -(-pad // n)))[: n + pad]
        if isinstance(a, torch.Tensor) and a.dim()
        else a
        for a in args
    ]
    vector = ref._call(flat, None)[:n].reshape(shape)
    strided = [torch.stack([a, a], -1)[..., 0] if isinstance(a, torch.Tensor) and a.dim() else a for a in args]
    return [vector, ref._call(strided, case.out)]


_VECTOR_PAD = 64  # elements, more than any CPU vector (AVX-512 int8: 64)


_ALTERNATIVES = {"float64": _float64, "other_path": _other_path}
_WHY = {
    "float64": "torch CPU's float64 result (rounded) differs from its float32 one",
    "other_path": "torch CPU's vectorised and scalar loops give different answers here",
}


class PortReference:
    """Evaluates the old MPSGraph implementation's DAG (from migrate.port) with torch."""

    name = "old-mpsgraph"

    def __init__(self, dag, evaluate, where: str = ""):
        self.dag, self.evaluate, self.where = dag, evaluate, where
        self.scalars: dict[str, torch.Tensor] = {}  # the graph's run-time scalar, as the launch binds it

    def _inputs(self, case: Case):
        args = case.reference_args()
        like = next((a.dtype for a in args if isinstance(a, torch.Tensor)), torch.float32)
        # a Python number was a graph constant of the tensor's dtype in the MPSGraph helpers
        tensors = [a if isinstance(a, torch.Tensor) else torch.tensor(a, dtype=like) for a in args]
        names = [getattr(n, "name", None) for n in getattr(self.dag, "inputs", ())]
        if names and all(names) and len(names) == len(tensors):
            return {**dict(zip(names, tensors)), **self.scalars}
        return tensors

    def compute(self, case: Case) -> torch.Tensor:
        out_dtype = case.out.dtype if case.out is not None else case.expected_dtype
        try:
            res = self.evaluate(self.dag, self._inputs(case), out_dtype)
        except Exception as exc:  # noqa: BLE001 - a foreign evaluator: any failure means "no reference here"
            raise ReferenceUnavailable(f"{type(exc).__name__}: {exc}") from None
        if not isinstance(res, torch.Tensor):
            raise ReferenceUnavailable(f"evaluate_with_torch returned {type(res).__name__}, not a Tensor")
        return res

    def alternatives(self, case: Case, expected: torch.Tensor) -> list[tuple[str, torch.Tensor]]:
        """The same graph evaluated in float64, rounded (rules/verify.yaml ``reference_policy`` float64):
        MPSGraph rounds every half/bfloat16 step, the exact value of its formula decides."""
        if "float64" not in table()["reference_policy"] or expected.dtype not in _LOW_FLOATS:
            return []
        ins = self._inputs(case)
        up = lambda x: x.to(torch.float64) if x.dtype != torch.bool and not x.is_complex() else x  # noqa: E731
        ins = {k: up(v) for k, v in ins.items()} if isinstance(ins, dict) else [up(v) for v in ins]
        try:
            res = self.evaluate(self.dag, ins, torch.float64)
        except Exception:  # noqa: BLE001 - a foreign evaluator: no alternative then
            return []
        if not isinstance(res, torch.Tensor) or res.shape != expected.shape:
            return []
        return [
            (
                "the old graph's formula in float64 (rounded) differs from its step-by-step rounding",
                res.to(expected.dtype),
            )
        ]


def _port_dag(index, family: str, known=None):
    """(dag, where) of the family's MPSGraph implementation, via migrate.port.locate; ``known``: argument
    values that reach one stub of several, and the implementation that takes those arguments."""
    locate = importlib.import_module("migrate.port.locate")
    impls = locate.family_impls(index, family)
    if not impls:
        return None, ""
    im = impls[0]
    if known:
        im = next((i for i in impls if set(known) <= {p.name for p in locate.params_of(index, i.function)}), im)
    return locate.graph_dag(index, im.function, known=known), im.function.span.where


def old_reference(index, family: str, known=None) -> tuple[Reference | None, str]:
    """(PortReference, "") or (None, "old MPSGraph reference unavailable: <why>").

    ``index`` is the tree *before* the change (the patch is not applied).
    """
    why = "old MPSGraph reference unavailable: "
    try:
        dag_mod = importlib.import_module("migrate.port.dag")
        evaluate = dag_mod.evaluate_with_torch
        importlib.import_module("migrate.port.locate").graph_dag  # noqa: B018 - presence check
    except ImportError as exc:
        return None, why + f"migrate.port is not importable ({exc})"
    except AttributeError as exc:
        return None, why + f"migrate.port lacks an expected function ({exc})"
    try:
        dag, where = _port_dag(index, family, known)
    except Exception as exc:  # noqa: BLE001 - foreign code (PortBlocked, ...): report why
        return None, why + f"{type(exc).__name__}: {exc}"
    if dag is None:
        return None, why + f"no overload of {family!r} is routed to an MPSGraph implementation in the tree"
    return PortReference(dag, evaluate, where), ""


def old_reference_at_head(root: Path, family: str, why: str):
    """The old MPSGraph reference from git HEAD when the working tree no longer has it (after port --write)."""
    from migrate.baseline import files_at_revision
    from migrate.errors import UsageError
    from migrate.index import Index
    from migrate.tree import load_tree

    try:  # HEAD's version of the native files the working tree changed (port --write edits them)
        at_head = files_at_revision(root, "HEAD", ["aten/src/ATen/native"])
    except UsageError:  # not a git work tree
        at_head = None
    overlay = at_head[0] if at_head else {}
    if not overlay:
        return None, why, ""
    old, why_head = old_reference(Index(load_tree(root, overlay=overlay)), family)
    if old is None:
        return None, f"{why}; at git HEAD too ({why_head.split(': ', 1)[-1]})", ""
    return old, "", "git HEAD (the working tree no longer has it)"


def mps_old_outputs(case: Case, family: str) -> torch.Tensor:
    """UNTESTED (needs an Apple GPU): run the op on ``mps`` with the installed
    (pre-change) torch and bring the result back to the CPU."""
    fn = torch_callable(family)

    def to_mps(a):
        return a.to("mps") if isinstance(a, torch.Tensor) and a.dim() > 0 else a

    args = [to_mps(a) for a in case.reference_args()]
    if case.out is not None:
        out = torch.empty_like(case.out, device="mps")
        fn(*args, out=out)
        return out.cpu()
    return fn(*args).cpu()


class MpsReference:
    """UNTESTED: the old outputs from a real Apple GPU (see mps_old_outputs)."""

    name = "old-mps"

    def __init__(self, family: str):
        self.family = family

    def compute(self, case: Case) -> torch.Tensor:
        try:
            return mps_old_outputs(case, self.family)
        except RuntimeError as exc:
            raise ReferenceUnavailable(str(exc).splitlines()[0]) from None
