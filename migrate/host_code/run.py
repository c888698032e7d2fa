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

from .build import HostBuild, build_family
from .units import MPS_DIR, TreeUnits

MPS_DTYPES = ("float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool")
MAX_CLOSURE_ROUNDS = 4
REPEATED_CRASHES = 3  # consecutive cases dying with the same message: the rest are reported, not run


@dataclass
class Cell:
    opinfo: str
    dtype: str
    passed: int = 0
    failed: list[str] = field(default_factory=list)  # one line per failing sample

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

    @property
    def verdict(self) -> str:
        if self.build_errors:
            return "ERROR"
        if not any(c.passed or c.failed for c in self.cells):
            return "NO-CASES"
        return "PASS" if all(c.ok or not (c.passed or c.failed) for c in self.cells) else "FAIL"


def plan(index, family: str) -> tuple[list[Path], set[str]]:
    """(the family's host files, the operators whose MPS registrations the build needs)."""
    entries = index.families.get(family)
    if not entries:
        raise UsageError(f"no operator family {family!r} in {index.tree.root}")
    files: list[Path] = []
    for e in entries:
        overload = e.name + (f".{e.overload}" if e.overload else "")
        route = index.routes.get(overload)
        path = route.defined_at.path if route and route.defined_at else None
        if path and path.endswith(".mm") and "operations/" in path:
            full = index.tree.root / path
            if full not in files:
                files.append(full)
    if not files:
        raise UsageError(f"{family} has no MPS host code in the tree (no overload's route reaches a host file)")
    return files, {family}


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
    from migrate.verify.opinfo_samples import select

    selection = select(index, family)
    cases: list[dict] = []
    for opinfo in selection.opinfos:
        dtypes = [d for d in MPS_DTYPES if _dtype(d) in opinfo.supported_dtypes("cpu")]
        for dname in dtypes:
            dtype = _dtype(dname)
            floating = dtype.is_floating_point or dtype.is_complex
            for s in opinfo.sample_inputs("cpu", dtype, requires_grad=False, set_seed=True):
                s = s.transform(lambda x: x.detach() if hasattr(x, "detach") else x)
                cases.append(
                    {
                        "index": len(cases), "opinfo": opinfo.formatted_name, "dtype": dname,
                        "call": ("opinfo", opinfo.name, opinfo.variant_test_name),
                        "args": (s.input, *s.args), "kwargs": dict(s.kwargs), "floating": floating,
                    }
                )  # fmt: skip
    return cases, selection.notes


def _reference(opinfo_by_key: dict, case: dict):
    import torch

    op = opinfo_by_key[tuple(case["call"][1:])]
    args = [a.clone() if isinstance(a, torch.Tensor) else a for a in case["args"]]
    try:
        return op(*args, **case["kwargs"]), None
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
    units = TreeUnits(root, progress)
    files, operators = plan(index, family)
    build = build_closure(units, index, files, operators, progress)
    rel = [str(p.relative_to(root)) for p in files]
    if not build.ok:
        errors = [f.first_error() or "" for f in build.failures]
        return HostReport(family, rel, [], [], [], errors, set(), time.perf_counter() - t0)
    cases, notes = draw_cases(index, family)
    from migrate.verify.opinfo_samples import load_op_db

    by_key = {(o.name, o.variant_test_name): o for o in load_op_db()}
    rows = run_worker(build, root, cases, timeout) if cases else {}
    cells: dict[tuple[str, str], Cell] = {}
    fallbacks: set[str] = set()
    own = {o for o in build.registered}
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
        if problem:
            cell.failed.append(f"{where}: {problem}")
        else:
            cell.passed += 1
    missed = sorted(f for f in fallbacks if f in own)
    if missed:
        notes.append(f"ran on the CPU fallback, not the host code: {', '.join(missed)}")
    return HostReport(
        family, rel, sorted(build.registered), list(cells.values()), notes, [], fallbacks, time.perf_counter() - t0
    )


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
            status = "PASS" if c.ok else ("FAIL" if c.failed else "none")
            lines.append(f"  {status:4} {op} {c.dtype}: {c.passed}/{total} samples")
            lines += [f"       {f}" for f in c.failed[:5]]
    lines += [f"  note: {n}" for n in report.notes]
    others = sorted(report.fallbacks - set(report.registered))
    if others:
        lines.append(f"  other ops on the CPU fallback: {', '.join(others)}")
    lines.append(f"  ({report.seconds:.1f} s)")
    return "\n".join(lines)
