"""``verify FAMILY --host``: the family's overloads run on fake-MPS tensors through the tree's own host code.

plan (the index: each overload's route names the host file that implements it; files defining the functions a
build leaves undefined are added) -> build (``build.build_family``) -> cases (the OpInfo samples
``test_output_match`` feeds, drawn on CPU with the same seed, scalars included) -> the worker process (a crash,
a kernel fault or a timeout ends it: that case FAILs with the signal, the rest run in a new worker) -> each output
compared with the OpInfo's op on CPU (torch.testing's default tolerances, NaN equal to NaN).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from migrate.errors import UsageError
from migrate.model import Impl

from .build import HostBuild, build_family
from .units import MPS_DIR, TreeUnits

MPS_DTYPES = ("float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool")
MAX_CLOSURE_ROUNDS = 4
UPCAST = {"float16": "float32", "bfloat16": "float32"}  # torch CPU's other answer for reduced-precision floats
REPEATED_CRASHES = 3  # consecutive cases dying with the same message: the rest are reported, not run


@dataclass
class Cell:
    opinfo: str
    dtype: str
    passed: int = 0
    failed: list[str] = field(default_factory=list)  # one line per failing sample
    refused: str = ""  # the host code has no kernel for the dtype (one clean error), or the samples reach MPSGraph

    @property
    def ok(self) -> bool:
        return not self.failed and self.passed > 0


@dataclass
class HostReport:
    family: str
    host_files: list[str]
    registered: list[str]
    cells: list[Cell]
    notes: list[str]
    build_errors: list[str]
    fallbacks: set[str]
    seconds: float
    stages: dict[str, float] = field(default_factory=dict)  # seconds per stage: build, cases, worker, compare

    @property
    def verdict(self) -> str:
        if self.build_errors:
            return "ERROR"
        if not any(c.passed or c.failed for c in self.cells):  # refused cells alone verify nothing
            return "NO-CASES"
        return "PASS" if all(not c.failed for c in self.cells) else "FAIL"


def plan(index, family: str) -> tuple[list[Path], set[str]]:
    """(the family's host files, the operators whose MPS registrations the build needs)."""
    entries = index.families.get(family)
    if not entries:
        raise UsageError(f"no operator family {family!r} in {index.tree.root}")
    files: list[Path] = []
    for overload in _overloads(entries):
        route = index.routes.get(overload)
        path = route.defined_at.path if route and route.defined_at else None
        if path and path.endswith(".mm") and "operations/" in path:
            full = index.tree.root / path
            if full not in files:
                files.append(full)
    if not files:
        raise UsageError(f"{family} has no MPS host code in the tree (no overload's route reaches a host file)")
    impls = {index.routes[o].impl for o in _overloads(entries) if o in index.routes} - {Impl.DELEGATING, Impl.UNDEFINED}
    if impls == {Impl.MPSGRAPH}:
        raise NotRunnable(
            f"{family}'s host code builds an MPSGraph ({', '.join(p.name for p in files)}), which is not run off-Apple"
        )
    return files, {family} | (shared_views(index) - runtime_operators())


_ALIAS_RETURN = re.compile(r"\(\w\)")  # Tensor(a): a view of an input (Tensor(a!) is an in-place or out result)


def shared_views(index) -> set[str]:
    """Operators returning a view whose MPS kernel is the CPU one (``CPU, CUDA, MPS: unfold``): registered on MPS,
    so a view stays a view (the CPU fallback would return a copy, and writes through it would be lost)."""
    out = set()
    for name, entries in index.families.items():
        for e in entries:
            if _ALIAS_RETURN.search(e.func.split("->", 1)[-1]) and any(
                "MPS" in d.keys and len(d.keys) > 1 for d in e.dispatch
            ):
                out.add(name)
    return out


def runtime_operators() -> set[str]:
    """The operators the shim runtime's fake device registers itself (never taken from the tree)."""
    from .toolchain import shim_dir

    text = (shim_dir() / "runtime" / "aten_mps.mm").read_text(encoding="utf-8")
    return {m.partition(".")[0] for m in re.findall(r'm\.impl\("([^"]+)"', text)}


def _overloads(entries) -> list[str]:
    return [e.name + (f".{e.overload}" if e.overload else "") for e in entries]


class NotRunnable(Exception):
    """The family's host code cannot run here (exit 2, one line)."""


_UNDEF = re.compile(r"^\s+U (.+)$", re.M)


def _undefined_functions(library: Path) -> set[str]:
    out = subprocess.run(["nm", "-D", "-C", "--undefined-only", str(library)], capture_output=True, text=True)
    names = set()
    for sym in _UNDEF.findall(out.stdout):
        head = sym.split("(", 1)[0]
        if head.startswith(("at::native::", "at::mps::")):
            names.add(head.rsplit("::", 1)[-1])
    return names


def build_closure(units: TreeUnits, index, files: list[Path], operators: set[str], progress=None) -> HostBuild:
    """Build, then add the host files defining functions the library still needs, until none is added."""
    build = build_family(units, files, operators, progress)
    for _ in range(MAX_CLOSURE_ROUNDS):
        if not build.ok:
            return build
        more = []
        for name in sorted(_undefined_functions(build.library)):
            for fn in index.functions.get(name, ()):
                full = index.tree.root / fn.span.path
                if full.suffix == ".mm" and full not in files and full not in more:
                    more.append(full)
        if not more:
            return build
        candidate = build_family(units, files + more, operators, progress)
        if not candidate.ok:  # a file that does not compile: keep the smaller build, name what it lacks
            return build
        files, build = files + more, candidate
    return build


def _dtype(name: str):
    import torch

    return getattr(torch, name)


def draw_cases(index, family: str) -> tuple[list[dict], list[str]]:
    """The OpInfo samples for the family on every MPS dtype the OpInfo lists on CPU."""
    from migrate.verify.opinfo_samples import load_op_db, select

    from .derived import DERIVED

    if family in DERIVED:
        return _derived_cases(family, load_op_db())
    selection = select(index, family)
    cases: list[dict] = []
    for opinfo in selection.opinfos:
        call = _call_of(opinfo)
        on_mps = opinfo.supported_dtypes("mps")  # the OpInfo's dtypesIfMPS, as test_output_match draws them
        dtypes = [d for d in MPS_DTYPES if _dtype(d) in on_mps and _dtype(d) in opinfo.supported_dtypes("cpu")]
        for dname in dtypes:
            dtype = _dtype(dname)
            floating = dtype.is_floating_point or dtype.is_complex
            for s in opinfo.sample_inputs("cpu", dtype, requires_grad=False, set_seed=True):
                s = s.transform(lambda x: x.detach() if hasattr(x, "detach") else x)
                cases.append(
                    {
                        "index": len(cases), "opinfo": opinfo.formatted_name, "dtype": dname,
                        "call": call,
                        "args": (s.input, *s.args), "kwargs": dict(s.kwargs), "floating": floating,
                    }
                )  # fmt: skip
    return cases, selection.notes


def _call_of(opinfo) -> tuple:
    """How the worker calls the OpInfo's op: the function itself when it pickles (most do; the worker then need
    not import op_db, seconds), else by its op_db key."""
    import pickle

    try:
        return ("pickled", pickle.dumps(opinfo.op), opinfo.name, opinfo.variant_test_name)
    except Exception:  # noqa: BLE001 - lambdas and local functions: found in op_db by the worker
        return ("opinfo", opinfo.name, opinfo.variant_test_name)


def _derived_cases(family: str, op_db) -> tuple[list[dict], list[str]]:
    from .derived import DERIVED

    source, overload, make = DERIVED[family]
    opinfo = next(o for o in op_db if o.name == source and not o.variant_test_name)
    cases: list[dict] = []
    on_mps = opinfo.supported_dtypes("mps")
    for dname in MPS_DTYPES:
        dtype = _dtype(dname)
        if dtype not in on_mps or dtype not in opinfo.supported_dtypes("cpu"):
            continue
        for s in opinfo.sample_inputs("cpu", dtype, requires_grad=False, set_seed=True):
            args, kwargs = make(s, dtype)
            cases.append(
                {
                    "index": len(cases), "opinfo": f"{family} (from {source})", "dtype": dname,
                    "call": ("aten", overload), "args": args, "kwargs": kwargs,
                }
            )  # fmt: skip
    return cases, [f"{family} has no OpInfo: its cases come from {source}'s samples (migrate/host_code/derived.py)"]


def _callable(opinfo_by_key: dict, call: tuple):
    import torch

    if call[0] == "aten":
        op = torch.ops.aten
        for part in call[1].split("."):
            op = getattr(op, part)
        return op
    return opinfo_by_key[tuple(call[-2:])]


def _reference(opinfo_by_key: dict, case: dict, upcast=None):
    """The op on CPU; with ``upcast`` (a dtype) its tensors of the case's dtype are computed in it and the
    result cast back (what a kernel accumulating half/bfloat16 in float computes)."""
    import torch

    op = _callable(opinfo_by_key, case["call"])
    low = _dtype(case["dtype"])

    def arg(a):
        if not isinstance(a, torch.Tensor):
            return a
        return a.to(upcast) if upcast is not None and a.dtype == low else a.clone()

    args = [arg(a) for a in case["args"]]
    try:
        out = op(*args, **case["kwargs"])
        if upcast is not None and isinstance(out, torch.Tensor) and out.dtype == upcast:
            out = out.to(low)
        return out, None
    except Exception as exc:  # noqa: BLE001 - a sample CPU refuses: the host code must refuse it too
        return None, f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"


def _compare(out, ref) -> str | None:
    import torch

    try:
        torch.testing.assert_close(out, ref, equal_nan=True, check_device=False)
    except AssertionError as exc:
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        return "; ".join(lines[:3])
    except Exception as exc:  # noqa: BLE001 - outputs of different structure
        return f"{type(exc).__name__}: {exc}"
    return None


def run_worker(build: HostBuild, root: Path, cases: list[dict], timeout: float) -> dict[int, dict]:
    """Every case's row from the worker; a case that crashed or timed out gets an error naming the signal, and
    the cases after it run in a new worker."""
    import torch

    kernels = sorted(str(p) for p in (root / MPS_DIR / "kernels").glob("*.metal"))
    rows: dict[int, dict] = {}
    remaining = list(cases)
    crashes: list[str] = []
    env = dict(os.environ, LD_PRELOAD=str(build.preload))
    while remaining:
        with tempfile.TemporaryDirectory(prefix="mps-host-run-") as tmp:
            job = {"library": str(build.library), "root": str(root), "kernel_files": kernels, "cases": remaining}
            torch.save(job, Path(tmp) / "job.pt")
            cmd = [sys.executable, "-m", "migrate.host_code.worker", str(Path(tmp) / "job.pt"), tmp]
            proc = subprocess.Popen(
                cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, start_new_session=True,
            )  # fmt: skip
            try:
                _, err = proc.communicate(timeout=timeout)
                why = _death(proc.returncode, err)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
                why = f"timed out after {timeout:g} s"
            for case in remaining:
                path = Path(tmp) / f"{case['index']}.pt"
                if path.exists():
                    rows[case["index"]] = torch.load(path, weights_only=False)
            started = Path(tmp) / "started"
            crashed = int(started.read_text()) if started.exists() else remaining[0]["index"]
        if all(c["index"] in rows for c in remaining):
            break
        why = why or "the worker ended without a result"
        rows.setdefault(crashed, {"index": crashed, "crash": why})
        remaining = [c for c in remaining if c["index"] not in rows]
        crashes.append(why)
        same = len(crashes) >= REPEATED_CRASHES and len(set(crashes[-REPEATED_CRASHES:])) == 1
        if "symbol lookup error" in why or same:  # every later case would most likely die the same way
            note = "" if "symbol lookup error" in why else f" (not run: the {REPEATED_CRASHES} cases before it died so)"
            for c in remaining:
                rows[c["index"]] = {"index": c["index"], "crash": why + note}
            break
    return rows


def _death(returncode: int, stderr: str) -> str | None:
    if returncode == 0:
        return None
    tail = [ln for ln in stderr.strip().splitlines() if ln.strip()][-1:] or [""]
    if returncode < 0:
        return f"the host process died of {signal.Signals(-returncode).name}: {tail[0]}".rstrip(": ")
    return f"the host process exited with {returncode}: {tail[0]}".rstrip(": ")


def verify_host(root: Path, index, family: str, timeout: float = 300.0, progress=None) -> HostReport:
    t0 = time.perf_counter()
    stages: dict[str, float] = {}
    units = TreeUnits(root, progress)
    files, operators = plan(index, family)
    build = build_closure(units, index, files, operators, progress)
    stages["build"] = time.perf_counter() - t0
    rel = [str(p.relative_to(root)) for p in files]
    if not build.ok:
        errors = [f.first_error() or "" for f in build.failures]
        return HostReport(family, rel, [], [], [], errors, set(), time.perf_counter() - t0)
    t1 = time.perf_counter()
    cases, notes = draw_cases(index, family)
    from migrate.verify.opinfo_samples import load_op_db

    by_key = {(o.name, o.variant_test_name): o for o in load_op_db()}
    t2 = time.perf_counter()
    stages["cases"] = t2 - t1
    rows = run_worker(build, root, cases, timeout) if cases else {}
    t3 = time.perf_counter()
    stages["worker"] = t3 - t2
    cells: dict[tuple[str, str], Cell] = {}
    fallbacks: set[str] = set()
    own = {o for o in build.registered}
    upcast_matches: dict[str, int] = {}
    for case in cases:
        cell = cells.setdefault((case["opinfo"], case["dtype"]), Cell(case["opinfo"], case["dtype"]))
        row = rows.get(case["index"], {"crash": "no result"})
        fallbacks |= set(row.get("fallbacks", ()))
        where = f"sample {case['index']}"
        if "crash" in row:
            cell.failed.append(f"{where}: {row['crash']}")
            continue
        ref, ref_error = _reference(by_key, case)
        if "error" in row:
            if ref_error is None:
                cell.failed.append(f"{where}: the host code raised {row['error']}")
            else:
                cell.passed += 1
            continue
        if ref_error is not None:
            cell.failed.append(f"{where}: CPU raised {ref_error}, the host code did not")
            continue
        problem = _compare(row["output"], ref)
        if problem and case["dtype"] in UPCAST:
            wide, _ = _reference(by_key, case, upcast=_dtype(UPCAST[case["dtype"]]))
            if wide is not None and _compare(row["output"], wide) is None:
                problem = None
                upcast_matches[case["dtype"]] = upcast_matches.get(case["dtype"], 0) + 1
        if problem:
            cell.failed.append(f"{where}: {problem}")
        else:
            cell.passed += 1
    for dtype, n in upcast_matches.items():
        notes.append(
            f"{n} {dtype} sample(s) differ from torch CPU's {dtype} result and match it computed in "
            f"{UPCAST[dtype]} and rounded once (the kernel accumulates in float)"
        )
    for cell in cells.values():
        _mark_refused(cell)
    missed = sorted(f for f in fallbacks if f in own)
    if missed:
        notes.append(f"ran on the CPU fallback, not the host code: {', '.join(missed)}")
    stages["compare"] = time.perf_counter() - t3
    return HostReport(
        family, rel, sorted(build.registered), list(cells.values()), notes, [], fallbacks, time.perf_counter() - t0,
        stages,
    )  # fmt: skip


_REFUSAL = re.compile(
    r"the host code raised (NotImplementedError|TypeError|RuntimeError): .*(not implemented for|"
    r"not supported|unsupported|Failed to create function state object)",
    re.I,
)


_NOT_RUN = "not run off-Apple"


def _mark_refused(cell: Cell) -> None:
    """A dtype the host code refuses (no kernel for it: one clean error for every sample that reaches it, the
    others agreeing) is reported apart, as test_mps's expected failures do, not as a mismatch; so is a cell whose
    samples reach MPSGraph (not run here). A wrong value or a crash among them keeps the cell a failure."""
    if not cell.failed:
        return
    messages = {f.split(": ", 1)[1] for f in cell.failed}
    if all(_NOT_RUN in m for m in messages):
        cell.refused = "MPSGraph (not run off-Apple): " + sorted(messages)[0].rsplit(": ", 1)[-1]
        cell.failed = []
    elif len(messages) == 1 and _REFUSAL.search(next(iter(messages))):
        cell.refused = next(iter(messages)).removeprefix("the host code raised ")
        cell.failed = []


def render(report: HostReport) -> str:
    lines = [
        f"{report.family}: {report.verdict} (host path: the tree's host code on the CPU backend)",
        f"  host files: {', '.join(report.host_files)}; MPS registrations: {', '.join(report.registered) or '-'}",
    ]
    lines += [f"  build error: {e}" for e in report.build_errors]
    by_op: dict[str, list[Cell]] = defaultdict(list)
    for c in report.cells:
        by_op[c.opinfo].append(c)
    for op, cells in by_op.items():
        for c in cells:
            total = c.passed + len(c.failed)
            status = "PASS" if c.ok else ("FAIL" if c.failed else "REFUSED" if c.refused else "none")
            if c.refused.startswith("MPSGraph"):
                lines.append(f"  NOT RUN {op} {c.dtype}: {c.refused}")
                continue
            if c.refused:
                agree = f" ({c.passed} sample(s) not reaching a kernel agree)" if c.passed else ""
                lines.append(f"  REFUSED {op} {c.dtype}: the host code raises {c.refused}{agree}")
                continue
            lines.append(f"  {status:4} {op} {c.dtype}: {c.passed}/{total} samples")
            lines += [f"       {f}" for f in c.failed[:5]]
    lines += [f"  note: {n}" for n in report.notes]
    others = sorted(report.fallbacks - set(report.registered))
    if others:
        lines.append(f"  other ops on the CPU fallback: {', '.join(others)}")
    spent = ", ".join(f"{k} {v:.1f} s" for k, v in report.stages.items())
    lines.append(f"  ({report.seconds:.1f} s" + (f": {spent})" if spent else ")"))
    return "\n".join(lines)
