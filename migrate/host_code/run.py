"""``verify FAMILY --host``: the family's overloads run on fake-MPS tensors through the tree's own host code.

plan (the index: each overload's route names the host file that implements it; files defining the functions a
build leaves undefined are added) -> build (``build.build_family``) -> the worker process: the OpInfo samples
``test_output_match`` feeds (drawn on CPU with the same seed, scalars included; cached with their CPU references,
``samples.py``) run on fake-MPS tensors and compared with the references (torch.testing's default tolerances, NaN
equal to NaN). A crash, a kernel fault or a timeout ends the worker: that case FAILs with the signal, the rest run
in a new one. This process never imports torch.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from migrate.errors import UsageError

from .build import HostBuild, build_family, build_preload
from .units import TreeUnits, cache_root
from migrate.resources import python_module

MAX_CLOSURE_ROUNDS = 4
REPEATED_CRASHES = 3  # consecutive cases dying with the same message: the rest are reported, not run


@dataclass
class Cell:
    opinfo: str
    dtype: str
    passed: int = 0
    failed: list[str] = field(default_factory=list)  # one line per failing sample
    refused: str = ""  # the host code has no kernel for the dtype (one clean error), or the samples reach MPSGraph
    refused_cases: list[str] = field(default_factory=list)  # own cases (a layout) the host code refuses cleanly
    expected: dict | None = None  # the tree's test_mps expectation for this cell (verify.expectations), if any
    graph_cases: int = 0  # cases whose host code ran an MPSGraph (the emulation: the old-mpsgraph reference)
    error: str = ""  # the host code reached a selector the emulation lacks (with its call sites)
    changed: list[str] = field(default_factory=list)  # cases whose output differs from the old implementation's
    old_cases: int = 0  # cases compared with the old implementation (--old)
    old_graph_cases: int = 0  # of them, those whose old code ran an MPSGraph

    @property
    def ok(self) -> bool:
        return not self.failed and self.passed > 0

    @property
    def status(self) -> str:
        """PASS, FAIL, REFUSED or none; XFAIL (fails as the tree expects) and XPASS (an xfail that passes: stale)."""
        if self.error:
            return "ERROR"
        if self.failed and self.expected:
            return "XFAIL"
        if self.refused and not self.failed:  # its other samples agree without reaching a kernel: not a pass
            return "REFUSED"
        if self.ok and self.expected and self.expected["kind"] == "xfail":
            return "XPASS"
        return "PASS" if self.ok else ("FAIL" if self.failed else "REFUSED" if self.refused else "none")


@dataclass
class HostReport:
    family: str
    host_files: list[str]
    registered: list[str]
    cells: list[Cell]
    notes: list[str]
    build_errors: list[str]
    fallbacks: set[str]  # overloads the fake device's CPU fallback answered
    seconds: float
    stages: dict[str, float] = field(default_factory=dict)  # seconds: build (index, plan, build), worker
    old: str = ""  # the old implementation compared with (--old): a revision or a tree
    old_disagree: list[str] = field(default_factory=list)  # --old: the cells where it and torch CPU disagree

    @property
    def verdict(self) -> str:
        if self.build_errors:
            return "ERROR"
        if not any(c.passed or c.failed for c in self.cells):  # refused cells alone verify nothing
            return "NO-CASES"
        if any(f.partition(".")[0] == self.family for f in self.fallbacks):  # the host code did not run them
            return "INCOMPLETE"
        if any(c.status in ("FAIL", "XPASS") for c in self.cells) or self.behaviour_changes:
            return "FAIL"
        return "INCOMPLETE" if any(c.status == "ERROR" for c in self.cells) else "PASS"

    @property
    def references(self) -> list[str]:
        """torch CPU always; old-mpsgraph when the tree's host code ran an MPSGraph (through the emulation)."""
        if not self.old:
            return ["torch-cpu"] + (["old-mpsgraph"] if any(c.graph_cases for c in self.cells) else [])
        refs = ["torch-cpu"]
        if self.old:
            kind = "old-mpsgraph" if any(c.old_graph_cases for c in self.cells) else "old"
            refs.append(f"{kind} ({self.old})")
        return refs

    @property
    def behaviour_changes(self) -> list[str]:
        """The cells where the new code's output differs from the old implementation's (--old)."""
        return [f"{c.opinfo} {c.dtype}" for c in self.cells if c.changed]

    @property
    def old_vs_cpu(self) -> list[str]:
        """The cells where the old MPSGraph code (emulated) and torch CPU disagree: the tree's own graph code, or
        with --old the old implementation's."""
        if self.old:
            return self.old_disagree
        return [f"{c.opinfo} {c.dtype}" for c in self.cells if c.graph_cases and c.status in ("FAIL", "XFAIL")]


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
    """Build, then add the host files defining functions the library still needs, until none is added. The files
    a family needed last time are built at once (remembered per tree and family)."""
    memo = cache_root() / "closures" / (hashlib.sha256(f"{index.tree.root}:{sorted(map(str, files))}".encode())
                                        .hexdigest()[:24] + ".json")  # fmt: skip
    try:
        remembered = [Path(p) for p in json.loads(memo.read_text()) if Path(p).is_file()]
    except (OSError, ValueError):
        remembered = []
    start = files + [p for p in remembered if p not in files]
    build = build_family(units, start, operators, progress)
    if not build.ok and remembered:
        start, build = files, build_family(units, files, operators, progress)
    files = start
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
            break
        candidate = build_family(units, files + more, operators, progress)
        if not candidate.ok:  # a file that does not compile: keep the smaller build, name what it lacks
            break
        files, build = files + more, candidate
    memo.parent.mkdir(parents=True, exist_ok=True)
    memo.write_text(json.dumps([str(p) for p in files]))
    return build


def selection(index, family: str) -> dict:
    """What the worker draws: the OpInfo entries (name, variant) the tree's OpInfo database names for the family,
    and the names to look for in op_db when it names none (read without importing op_db here)."""
    from migrate.opinfo import family_entries

    entries = family_entries(index, family)
    if not entries and index.tree.opinfo_files:
        entries = family_entries(index, family, installed=True)
    keys = list(dict.fromkeys((e.name, e.variant) for e in entries))
    return {"family": family, "entries": keys, "names": list(index.opinfo_names(family))}


class Worker:
    """A worker process started early: it imports torch while this process plans and builds."""

    def __init__(self, preload: Path):
        env = dict(os.environ, LD_PRELOAD=str(preload))
        self.proc = subprocess.Popen(
            python_module("migrate.host_code.worker"), env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip

    def run(self, job: dict, timeout: float) -> str | None:
        """None when it ran every case, else why it died."""
        try:
            _, err = self.proc.communicate(json.dumps(job) + "\n", timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.communicate()
            return f"timed out after {timeout:g} s"
        return _death(self.proc.returncode, err)

    def cancel(self) -> None:
        try:
            self.proc.communicate("null\n", timeout=60)
        except (subprocess.TimeoutExpired, OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.communicate()


def run_worker(
    build: HostBuild, index, chosen: dict, timeout: float, first: Worker | None = None, extra: dict | None = None
) -> tuple[list, list[str], dict]:
    """(the cases' (opinfo, dtype), the worker's notes, every case's row). A case that crashed or timed out gets
    a row naming the signal, and the cases after it run in a new worker."""
    root = index.tree.root
    exports = {name: path for path, metal in index.tree.metals.items() for name in metal.exports}
    rows: dict[int, dict] = {}
    crashes: list[str] = []
    listed: list = []
    notes: list[str] = []
    worker = first
    while True:
        with tempfile.TemporaryDirectory(prefix="mps-host-run-") as tmp:
            job = {
                "library": str(build.library), "root": str(root), "exports": exports, "selection": chosen,
                "cache_dir": str(cache_root() / "cases"), "result_dir": tmp, "skip": sorted(rows), **(extra or {}),
            }  # fmt: skip
            worker = worker or Worker(build.preload)
            why = worker.run(job, timeout)
            worker = None
            if (Path(tmp) / "cases.json").exists():
                data = json.loads((Path(tmp) / "cases.json").read_text())
                listed, notes = data["cases"], data["notes"]
            for path in Path(tmp).glob("[0-9]*.json"):
                row = json.loads(path.read_text())
                rows[row["index"]] = row
            started = Path(tmp) / "started"
            crashed = int(started.read_text()) if started.exists() else None
        if why is None:
            return listed, notes, rows
        if crashed is None or crashed in rows:  # died before its first case: nothing to retry
            notes.append(f"the worker could not start: {why}")
            return listed, notes, rows
        rows[crashed] = {"index": crashed, "failure": why}
        crashes.append(why)
        same = len(crashes) >= REPEATED_CRASHES and len(set(crashes[-REPEATED_CRASHES:])) == 1
        if "symbol lookup error" in why or same:  # every later case would most likely die the same way
            note = "" if "symbol lookup error" in why else f" (not run: the {REPEATED_CRASHES} cases before it died so)"
            for i in range(len(listed)):
                rows.setdefault(i, {"index": i, "failure": why + note})
            return listed, notes, rows


def _death(returncode: int, stderr: str) -> str | None:
    if returncode == 0:
        return None
    tail = [ln for ln in stderr.strip().splitlines() if ln.strip()][-1:] or [""]
    if returncode < 0:
        return f"the host process died of {signal.Signals(-returncode).name}: {tail[0]}".rstrip(": ")
    return f"the host process exited with {returncode}: {tail[0]}".rstrip(": ")


def verify_host(
    root: Path,
    load_index,
    family: str,
    timeout: float = 300.0,
    progress=None,
    old: tuple | None = None,
    old_optional: bool = False,
) -> HostReport:
    """``load_index``: the tree's Index, or a function making it (called once the worker is starting). ``old``:
    (tree, its load_index, label) of the old implementation, run first on the same cases; each case of the new
    run is compared with its output. An old implementation that cannot run is the report's error, or with
    ``old_optional`` a note (the new code is still verified against torch CPU)."""  # fmt: skip
    t0 = time.perf_counter()
    stages: dict[str, float] = {}
    units = TreeUnits(root, progress)
    preload = build_preload(units)
    worker = Worker(preload) if preload else None
    try:
        index = load_index() if callable(load_index) else load_index
        files, operators = plan(index, family)
    except BaseException:
        if worker:
            worker.cancel()
        raise
    build = build_closure(units, index, files, operators, progress)
    stages["build"] = time.perf_counter() - t0
    rel = [str(p.relative_to(root)) for p in files]
    if not build.ok:
        if worker:
            worker.cancel()
        errors = [f.first_error() or "" for f in build.failures]
        return HostReport(family, rel, [], [], [], errors, set(), time.perf_counter() - t0, stages)
    chosen = selection(index, family)
    with tempfile.TemporaryDirectory(prefix="mps-host-old-") as saved:
        extra, old_disagree, old_problem, old_approximated = None, [], "", []
        if old is not None:
            problem, old_disagree, old_approximated = _run_old(old, family, chosen, timeout, saved, progress)
            if problem and old_optional:
                old_problem, old = problem, None
            elif problem:
                if worker:
                    worker.cancel()
                return HostReport(family, rel, [], [], [], [problem], set(), time.perf_counter() - t0, stages,
                                  old=old[2])  # fmt: skip
            else:
                extra = {"old_dir": saved}
        listed, notes, rows = run_worker(build, index, chosen, timeout, worker, extra)
    stages["worker"] = time.perf_counter() - t0 - stages["build"]
    cells, fallbacks = collect_cells(listed, rows, notes)
    for cell in cells:
        if cell.error:
            cell.error += call_sites([*files, root / "aten/src/ATen/native/mps/OperationUtils.mm"], cell.error, root)
    missed = sorted(f for f in fallbacks if f.partition(".")[0] == family)
    if missed:
        notes.append(f"ran on the CPU fallback, not the host code: {', '.join(missed)}")
    if old_problem:
        notes.append(f"no old reference: {old_problem}")
    elif old_approximated and approximation_note(old_approximated) not in notes:
        notes.append(approximation_note(old_approximated))
    if old is not None:
        missing = sum(1 for r in rows.values() if "old_missing" in r)
        if missing:
            notes.append(f"{missing} case(s) have no old output to compare with (the old code could not run them)")
    return HostReport(
        family, rel, sorted(build.registered), cells, notes, [], fallbacks, time.perf_counter() - t0,
        stages, old[2] if old else "", old_disagree,
    )  # fmt: skip


def _run_old(old: tuple, family: str, chosen: dict, timeout: float, saved: str, progress) -> tuple:
    """Runs the old implementation's host code on the cases, saving each output in ``saved``: (None, or why it
    could not run; the cells where its outputs and torch CPU disagree; the selectors the emulation approximated)."""
    old_root, load_old, label = old
    units = TreeUnits(old_root, progress)
    index = load_old() if callable(load_old) else load_old
    files, operators = plan(index, family)
    build = build_closure(units, index, files, operators, progress)
    if not build.ok:
        return f"the old implementation ({label}) does not build: {build.failures[0].first_error()}", [], []
    listed, notes, rows = run_worker(build, index, chosen, timeout, None, {"save_dir": saved})
    started = [n for n in notes if n.startswith("the worker could not start")]
    if started:
        return f"the old implementation ({label}): {started[0]}", [], []
    cells, _ = collect_cells(listed, rows, [])
    disagree = [f"{c.opinfo} {c.dtype}" for c in cells if c.status in ("FAIL", "XFAIL")]
    return None, disagree, _approximated(rows)


_SELECTOR = re.compile(r"-\[MPSGraph ([\w:]+)\]")


def call_sites(paths: list[Path], message: str, root: Path, most: int = 3) -> str:
    """``" (sent at FILE:LINE, ...)"``: where the host files send the selector ``message`` names (its first
    label followed by its second, as a send spells them)."""
    m = _SELECTOR.search(message)
    if not m:
        return ""
    labels = m.group(1).rstrip(":").split(":")
    pattern = re.compile(r"\b" + r"\s*:[^\]]*?\b".join(map(re.escape, labels[:2])) + r"\s*:")
    found = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for hit in pattern.finditer(text):
            rel = path.relative_to(root) if path.is_relative_to(root) else path
            found.append(f"{rel}:{text.count(chr(10), 0, hit.start()) + 1}")
    if not found:
        return ""
    more = f" and {len(found) - most} more" if len(found) > most else ""
    return f" (sent at {', '.join(found[:most])}{more})"


def collect_cells(listed: list, rows: dict[int, dict], notes: list[str]) -> tuple[list[Cell], set[str]]:
    """(the cells, the operators the CPU fallback answered) from the worker's cases (opinfo, dtype, layout: set for
    verify's own cases) and rows; adds the upcast counts to ``notes``. An own case the host code refuses cleanly is
    listed apart (``refused_cases``); an OpInfo cell refused for every sample reaching a kernel is REFUSED."""
    cells: dict[tuple[str, str], Cell] = {}
    fallbacks: set[str] = set()
    upcast: dict[str, int] = {}
    for i, (opinfo, dtype, layout) in enumerate(listed):
        cell = cells.setdefault((opinfo, dtype), Cell(opinfo, dtype))
        row = rows.get(i, {"failure": "no result"})
        fallbacks |= {f.removeprefix("aten::") for f in row.get("fallbacks", ())}
        cell.expected = cell.expected or row.get("expected")
        cell.graph_cases += row.get("graph_runs", 0) > 0
        cell.old_cases += "old_graph" in row
        cell.old_graph_cases += bool(row.get("old_graph"))
        if "changed" in row:
            cell.changed.append(f"{layout or 'sample'} {i}: {row['changed']}")
        if "failure" in row and layout and _REFUSAL.search(row["failure"]):
            cell.refused_cases.append(f"{layout} {i}: {row['failure'].removeprefix('the host code raised ')}")
        elif "failure" in row:
            cell.failed.append(f"{layout or 'sample'} {i}: {row['failure']}")
        else:
            cell.passed += 1
            if row.get("upcast"):
                upcast[dtype] = upcast.get(dtype, 0) + 1
    approximated = _approximated(rows)
    if approximated:
        notes.append(approximation_note(approximated))
    for dtype, n in upcast.items():
        notes.append(
            f"{n} {dtype} sample(s) differ from torch CPU's {dtype} result and match it computed in float32 and "
            "rounded once (the kernel accumulates in float)"
        )
    for cell in cells.values():
        _mark_refused(cell)
    return list(cells.values()), fallbacks


def _approximated(rows: dict[int, dict]) -> list[str]:
    """The transcendental selectors the worker's emulated graphs computed (graph_eval.APPROXIMATED)."""
    return sorted({op for row in rows.values() for op in row.get("approximated", ())})


def approximation_note(ops: list[str]) -> str:
    return (
        f"the emulated MPSGraph computed {', '.join(ops)} with torch CPU's kernels: Apple's GPU precision of these "
        "(and fast:: math) is not reproduced, so a difference of that size against old-mpsgraph is not seen "
        "(docs/host-code.md, honest limits)"
    )


_REFUSAL = re.compile(
    r"the host code raised (NotImplementedError|TypeError|RuntimeError): .*(not implemented for|"
    r"not supported|does not support|unsupported|Failed to create function state object)",
    re.I,
)


_NOT_RUN = "not run off-Apple"
_NOT_EMULATED = "MPSGraph selector not emulated"


def _mark_refused(cell: Cell) -> None:
    """A dtype the host code refuses (no kernel for it: one clean error for every sample that reaches it, the
    others agreeing) is reported apart, as test_mps's expected failures do, not as a mismatch; so is a cell whose
    samples reach MPSGraph (not run here). A wrong value or a crash among them keeps the cell a failure."""
    if not cell.failed:
        return
    messages = {f.split(": ", 1)[1] for f in cell.failed}
    missing = sorted(m for m in messages if _NOT_EMULATED in m)
    if missing and len(missing) == len(messages):
        cell.error = missing[0].removeprefix("the host code raised ").removeprefix("RuntimeError: ")
        cell.failed = []
    elif all(_NOT_RUN in m for m in messages):
        cell.refused = "MPSGraph (not run off-Apple): " + sorted(messages)[0].rsplit(": ", 1)[-1]
        cell.failed = []
    elif all(_REFUSAL.search(m) for m in messages):  # one refusal, perhaps of several kernel variants
        cell.refused = sorted(messages)[0].removeprefix("the host code raised ")
        if len(messages) > 1:
            cell.refused += f" (and {len(messages) - 1} other variant(s))"
        cell.failed = []


def _one_line(refused: list[str]) -> str:
    messages = sorted({r.split(": ", 1)[1] for r in refused})
    return messages[0] + (f" (and {len(messages) - 1} other message(s))" if len(messages) > 1 else "")


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
            status = c.status
            if c.error:
                lines.append(f"  ERROR {op} {c.dtype}: {c.error}")
                continue
            if c.refused.startswith("MPSGraph"):
                lines.append(f"  NOT RUN {op} {c.dtype}: {c.refused}")
                continue
            if c.refused:
                agree = f" ({c.passed} sample(s) not reaching a kernel agree)" if c.passed else ""
                lines.append(f"  REFUSED {op} {c.dtype}: the host code raises {c.refused}{agree}")
                continue
            if c.refused_cases and not c.passed and not c.failed:
                lines.append(f"  REFUSED {op} {c.dtype}: the host code raises {_one_line(c.refused_cases)}")
                continue
            unit = "cases" if c.refused_cases or op.endswith("(own cases)") else "samples"
            lines.append(f"  {status:4} {op} {c.dtype}: {c.passed}/{total} {unit}")
            if c.expected and status in ("XFAIL", "XPASS"):
                what = "the tree expects it" if status == "XFAIL" else "stale: the tree expects a failure"
                lines.append(f"       {what}: {c.expected['table']} ({c.expected['path']}:{c.expected['line']}): "
                             f"{c.expected['reason']}")  # fmt: skip
            lines += [f"       {f}" for f in c.failed[:5]]
            lines += [f"       refused (a clean error; torch CPU computes it): {r}" for r in c.refused_cases[:3]]
    for c in report.cells:
        if c.changed:
            lines.append(f"  CHANGED {c.opinfo} {c.dtype}: {len(c.changed)}/{c.old_cases} case(s) differ from the old "
                         "implementation")  # fmt: skip
            lines += [f"       {f}" for f in c.changed[:5]]
    refs = ", ".join(report.references)
    if report.references[1:2] == ["old-mpsgraph"]:
        n = sum(1 for c in report.cells if c.graph_cases)
        refs += f" (the tree's MPSGraph host code through the shim's emulation, in {n} cell(s))"
    lines.append(f"  references: {refs}")
    if report.old_vs_cpu:
        old = f"the old implementation ({report.old})" if report.old else "old-mpsgraph"
        lines.append(f"  {old} and torch CPU disagree: {'; '.join(report.old_vs_cpu)}")
    if report.behaviour_changes:
        lines.append(f"  behaviour changes against {report.old}: {'; '.join(report.behaviour_changes)}")
    lines += [f"  note: {n}" for n in report.notes]
    others = sorted(report.fallbacks - set(report.registered))
    if others:
        lines.append(f"  other ops on the CPU fallback: {', '.join(others)}")
    spent = ", ".join(f"{k} {v:.1f} s" for k, v in report.stages.items())
    lines.append(f"  ({report.seconds:.1f} s" + (f": {spent})" if spent else ")"))
    return "\n".join(lines)
