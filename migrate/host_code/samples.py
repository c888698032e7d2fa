"""The cases of a host run, in the worker: OpInfo samples (or derived ones) with their CPU references, cached per
torch version and selection (drawing needs op_db, seconds to import; the samples are seeded, so a cache is exact),
and the comparison of a host output with them."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
from pathlib import Path

import torch

MPS_DTYPES = ("float32", "float16", "bfloat16", "complex64", "int64", "int32", "int16", "int8", "uint8", "bool")
UPCAST = {"float16": "float32", "bfloat16": "float32"}  # torch CPU's other answer for reduced-precision floats
FORMAT = "host-cases-v3"


def _dtype(name: str) -> torch.dtype:
    return getattr(torch, name)


def _call_of(opinfo) -> tuple:
    try:
        return ("pickled", pickle.dumps(opinfo.op))
    except Exception:  # noqa: BLE001 - lambdas and local functions: kept in this process only
        return ("opinfo", opinfo.name, opinfo.variant_test_name)


def callable_of(call: tuple, op_db_cache: dict):
    kind = call[0]
    if kind == "pickled":
        return pickle.loads(call[1])
    if kind == "aten":
        op = torch.ops.aten
        for part in call[1].split("."):
            op = getattr(op, part)
        return op
    if "op_db" not in op_db_cache:
        from torch.testing._internal.common_methods_invocations import op_db

        op_db_cache["op_db"] = {(o.name, o.variant_test_name): o for o in op_db}
    return op_db_cache["op_db"][(call[1], call[2])]


def _reference(op, case: dict, upcast: torch.dtype | None = None):
    """(output, None) or (None, error) of the op on CPU; with ``upcast`` the case's low-precision tensors are
    computed in it and the result rounded once to the case's dtype."""
    low = _dtype(case["dtype"])

    def arg(a):
        if not isinstance(a, torch.Tensor):
            return a
        return a.to(upcast) if upcast is not None and a.dtype == low else a.clone()

    try:
        out = op(*[arg(a) for a in case["args"]], **{k: arg(v) for k, v in case["kwargs"].items()})
        if upcast is not None and isinstance(out, torch.Tensor) and out.dtype == upcast:
            out = out.to(low)
        return out, None
    except Exception as exc:  # noqa: BLE001 - a sample CPU refuses: the host code must refuse it too
        text = str(exc).strip()
        return None, f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def _with_references(op, case: dict, wide: bool = True) -> dict:
    """``case`` with its CPU reference (or the error CPU raised) and, for half and bfloat16, the reference computed
    in float32 and rounded once (``wide``: not for an out= case, whose output dtype is the out tensor's)."""
    case["reference"], case["reference_error"] = _reference(op, case)
    if wide and case["dtype"] in UPCAST and case["reference_error"] is None:
        case["wide_reference"], _ = _reference(op, case, _dtype(UPCAST[case["dtype"]]))
    return case


def _opinfos(selection: dict, op_db) -> tuple[list, list[str]]:
    by_key = {(o.name, o.variant_test_name): o for o in op_db}
    chosen, notes = [], []
    for name, variant in selection["entries"]:
        op = by_key.get((name, variant))
        if op is None:
            full = name + (f".{variant}" if variant else "")
            notes.append(f"OpInfo {full} is in the database source but not in the installed torch's op_db")
        else:
            chosen.append(op)
    if not selection["entries"]:
        chosen = [o for o in op_db if o.name in selection["names"] or o.aten_name in selection["names"]]
        if chosen:
            notes.append(f"OpInfo {', '.join(o.formatted_name for o in chosen)}: selected from op_db by name")
        else:
            notes.append(f"no OpInfo entry tests {selection['family']} (names tried: {', '.join(selection['names'])})")
    return chosen, notes


def _draw(selection: dict) -> tuple[list[dict], list[str]]:
    from torch.testing._internal.common_methods_invocations import op_db

    from .derived import DERIVED

    cases: list[dict] = []
    derived = DERIVED.get(selection["family"])
    if derived:
        source, overload, make = derived
        name, _, variant = source.partition(":")  # "nn.functional.pad:reflect": an OpInfo's variant
        opinfos = [next(o for o in op_db if o.name == name and o.variant_test_name == variant)]
        notes = [f"{selection['family']} has no OpInfo: its cases come from {source}'s samples "
                 "(migrate/host_code/derived.py)"]  # fmt: skip
    else:
        opinfos, notes = _opinfos(selection, op_db)
    for opinfo in opinfos:
        call = ("aten", derived[1]) if derived and derived[1] else _call_of(opinfo)
        label = f"{selection['family']} (from {derived[0]})" if derived else opinfo.formatted_name
        on_mps, on_cpu = opinfo.supported_dtypes("mps"), opinfo.supported_dtypes("cpu")
        for dname in MPS_DTYPES:
            dtype = _dtype(dname)
            if dtype not in on_mps or dtype not in on_cpu:
                continue
            for s in opinfo.sample_inputs("cpu", dtype, requires_grad=False, set_seed=True):
                s = s.transform(lambda x: x.detach() if isinstance(x, torch.Tensor) else x)
                drawn = derived[2](s, dtype) if derived else ((s.input, *s.args), dict(s.kwargs))
                if drawn is None:  # a sample that reaches another family (a 2-d pad list is reflection_pad1d's)
                    continue
                args, kwargs = drawn
                case = {"index": len(cases), "opinfo": label, "dtype": dname, "call": call, "args": args,
                        "kwargs": kwargs, "xfail_key": "" if derived else opinfo.name + opinfo.variant_test_name}  # fmt: skip
                op = callable_of(call, {"op_db": {(o.name, o.variant_test_name): o for o in opinfos}})
                cases.append(_with_references(op, case))
    if not derived:
        cases += _own(selection["family"], opinfos, len(cases))
    cases += _reduction_own(selection["family"], opinfos, len(cases))
    return cases, notes


def _reduction_own(family: str, opinfos: list, start: int) -> list[dict]:
    """verify's own cases for a reduction, softmax, norm or loss family (``reduction_cases.py``), in the dtypes its
    OpInfo takes on MPS and CPU, with CPU references."""
    from .reduction_cases import reduction_cases

    if not opinfos:
        return []
    on_mps, on_cpu = opinfos[0].supported_dtypes("mps"), opinfos[0].supported_dtypes("cpu")
    dtypes = [d for d in map(_dtype, MPS_DTYPES) if d in on_mps and d in on_cpu and not d.is_complex]
    cases = []
    for own in reduction_cases(family, dtypes):
        case = {"index": start + len(cases), "opinfo": f"{family} (own cases)", **own}
        cases.append(_with_references(callable_of(own["call"], {}), case))
    return cases


def _own(family: str, opinfos: list, start: int) -> list[dict]:
    """verify's own cases for the first elementwise OpInfo (``own_cases.py``), with CPU references; a case whose
    arguments the op does not take (CPU raises TypeError) is left out."""
    from .own_cases import arity_of, own_cases

    opinfo = next((o for o in opinfos if arity_of(o)), None)
    if opinfo is None:
        return []
    call = _call_of(opinfo)
    op = callable_of(call, {"op_db": {(opinfo.name, opinfo.variant_test_name): opinfo}})
    on_mps, on_cpu = opinfo.supported_dtypes("mps"), opinfo.supported_dtypes("cpu")
    cases = []
    for dname in MPS_DTYPES:
        if _dtype(dname) not in on_mps or _dtype(dname) not in on_cpu or _dtype(dname).is_complex:
            continue  # complex: OpInfo samples only (own special values meet C99 Annex G's inf/NaN rules on CPU)
        for own in own_cases(family, arity_of(opinfo), _dtype(dname)):
            case = {"index": start + len(cases), "opinfo": f"{family} (own cases)", "dtype": dname, "call": call,
                    **own}  # fmt: skip
            _with_references(op, case, wide=not case["kwargs"])
            if not (case["reference_error"] or "").startswith("TypeError"):
                cases.append(case)
    return cases


_DRAWN_BY = (
    "samples.py",
    "derived.py",
    "own_cases.py",
    "reduction_cases.py",
)  # the modules whose code decides the cases drawn


def load_cases(selection: dict, cache_dir: Path) -> tuple[list[dict], list[str]]:
    """The selection's cases and references: from the cache, else drawn (and cached)."""
    key = hashlib.sha256(
        json.dumps(
            [FORMAT, torch.__version__, selection, *(Path(__file__).with_name(f).read_bytes().hex() for f in _DRAWN_BY)]
        ).encode()
    ).hexdigest()[:24]
    path = cache_dir / f"{key}.pt"
    try:
        data = torch.load(path, weights_only=False)
        return data["cases"], data["notes"]
    except Exception:  # noqa: BLE001 - no entry, or an unreadable one: draw again
        pass
    cases, notes = _draw(selection)
    if all(c["call"][0] != "opinfo" for c in cases):  # an op kept by op_db key is not cached: redraw
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="tmp-", suffix=".pt")
        os.close(fd)
        torch.save({"cases": cases, "notes": notes}, tmp)
        os.replace(tmp, path)
    return cases, notes


def compare(out, case: dict) -> tuple[str | None, bool]:
    """(the mismatch, or None; whether it matched only the upcast reference)."""
    problem = _assert_close(out, case["reference"])
    if problem and case.get("wide_reference") is not None and _assert_close(out, case["wide_reference"]) is None:
        return None, True
    return problem, False


def _assert_close(out, ref) -> str | None:
    try:
        torch.testing.assert_close(out, ref, equal_nan=True, check_device=False)
    except AssertionError as exc:
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        return "; ".join(lines[:3])
    except Exception as exc:  # noqa: BLE001 - outputs of different structure
        return f"{type(exc).__name__}: {exc}"
    return None
