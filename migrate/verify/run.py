"""verify: run a family's Metal kernel as the host would and compare it with references."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch

from migrate.device import DeviceError, KernelFault, MetalCompileError
from migrate.errors import UsageError
from migrate.verify.cell import Cell
from migrate.verify.cases import Case, CpuScalar, PyScalar, build_cases, nonzero_divisors
from migrate.verify.compare import Mismatch, Stats, compare
from migrate.verify.compile_step import CannotRun, CompileFailure, compile_or_block, failure_of
from migrate.verify.dtypes import dtype_name, from_metal, ordered, table
from migrate.verify.host import Host
from migrate.verify.iterator import Operand, build_iter
from migrate.verify.conventions import locate
from migrate.verify.kernel_source import KernelSource
from migrate.verify.template_host import HostError, TemplateHost
from migrate.verify.references import NotApplicable, Reference, ReferenceUnavailable, TorchCpuReference


@dataclass
class Options:
    backend: str = "cpu"
    dtypes: list[torch.dtype] | None = None
    layouts: list[str] | None = None
    atol: float | None = None
    rtol: float | None = None
    seed: int | None = None
    opt: int = 0
    large: bool = False  # cuda: also a case past 2^31 and one past 2^32 elements (migrate/verify/large.py)
    checked: bool = False  # CPU backend guard pages: out-of-bounds reads/writes become failures
    timeout: float = 30.0  # wall-clock seconds per kernel launch in the isolated worker
    compile_timeout: float | None = None  # seconds per compiler stage (None: the backend's default)
    memory: int | None = None  # address-space bytes of the worker (None: the backend's default)
    progress: object = None  # callable(done, total) or None
    opinfo: bool = True  # also run the installed torch's OpInfo samples (layout "opinfo")
    scalar_read: object = None  # fault injection for the host's CPU-scalar read (tests)
    # one stub of several (migrate/conventions/stub_choice.py): its kernel, and the arguments that reach it
    stub: str | None = None
    known: dict | None = None  # parameter -> migrate.conventions.specialise.Known


@dataclass
class Report:
    family: str
    source: KernelSource | None
    seed: int
    references: list[str]
    cells: list[Cell] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    opinfo_names: list[str] = field(default_factory=list)  # formatted names of the OpInfos whose samples ran
    overloads: list[str] = field(default_factory=list)  # "overload: OpInfo names" lines
    compile_failures: list[CompileFailure] = field(default_factory=list)  # files that do not compile

    def totals(self, opinfo: bool) -> tuple[int, int]:
        """(cases ran, cases passed) of the generated cases or of the OpInfo samples."""
        cells = [c for c in self.cells if c.layout.startswith("opinfo:") == opinfo]
        return sum(c.cases for c in cells), sum(c.passed for c in cells)

    @property
    def ok(self) -> bool:
        return all(c.status not in UNEXPECTED for c in self.cells)

    @property
    def ran(self) -> int:
        return sum(c.cases for c in self.cells)

    @property
    def exit_code(self) -> int:
        """0 pass, 1 a failure, 2 nothing failed but no case ran (nothing was verified)."""
        if not self.ok:
            return 1
        return 0 if self.ran else 2


UNEXPECTED = ("FAIL", "BLOCKED", "XPASS")  # what the exit code counts (XFAIL is the tree's own expectation)


# ------------------------------------------------------------------ operands
def _operands(case: Case) -> list[Operand]:
    ops = []
    for a in case.args:
        if isinstance(a, PyScalar):  # wrapped_scalar_tensor: a Python float is a 0-dim CPU double
            wrapped = {bool: torch.bool, int: torch.int64, float: torch.float64, complex: torch.complex128}
            ops.append(Operand(torch.tensor(a.value, dtype=wrapped[type(a.value)]), cpu_scalar=True))
        elif isinstance(a, CpuScalar):
            ops.append(Operand(a.tensor, cpu_scalar=True))
        else:
            ops.append(Operand(a))
    return ops


def _common_dtype(case: Case, out_dtype: torch.dtype) -> torch.dtype:
    args = case.reference_args()
    dt = torch.result_type(args[0], args[1]) if len(args) >= 2 else args[0].dtype
    for a in args[2:]:
        dt = torch.promote_types(dt, a.dtype if isinstance(a, torch.Tensor) else torch.tensor(a).dtype)
    if (out_dtype.is_floating_point or out_dtype.is_complex) and not (dt.is_floating_point or dt.is_complex):
        dt = out_dtype  # integer inputs promoted to float by the op
    return dt


def _inputs_at(case: Case, shape):
    def at(idx):
        vals = []
        for a in case.reference_args():
            if isinstance(a, torch.Tensor):
                v = a.expand(shape)[idx] if shape else a
                vals.append(v.item())
            else:
                vals.append(a)
        return tuple(vals)

    return at


def _fill_sentinel(t: torch.Tensor) -> None:
    raw = torch.empty(0, dtype=torch.uint8).set_(t.untyped_storage())
    raw.fill_(table()["sentinel_byte"])


def _snapshot(case: Case) -> list[bytes]:
    raw = lambda s: torch.empty(0, dtype=torch.uint8).set_(s).numpy().tobytes()  # noqa: E731
    return [raw(a.untyped_storage()) for a in case.args if isinstance(a, torch.Tensor)]


# ------------------------------------------------------------------- runner
class Runner:
    def __init__(self, source: KernelSource, lib, refs: list[Reference], opts: Options):
        self.source, self.lib, self.refs, self.opts = source, lib, refs, opts
        self.names = set(lib.kernel_names) if lib is not None else set()
        self.compile_failures: list[CompileFailure] = []  # shared with the OpInfo runners (run_opinfo)
        self.scalar_names: tuple[str, ...] = ()  # the launch's run-time scalars, as the operator names them
        self.negated = False  # the CPU kernel hands the stub -scalar (sub_out: add_stub(-alpha))

    def _flavors(self) -> list[str]:
        return table()["flavors"] if self.source.convention == "functor_registry" else ["default"]

    def _host(self, flavor: str, case: Case | None = None):
        site = self._site(case)
        if self.source.convention in ("params_1d", "functor_params"):
            from migrate.verify.params_host import host_for

            return host_for(site, self.names)
        if self.source.convention != "functor_registry":
            return TemplateHost(site)
        alpha = site.scalar if site is not None else None
        return Host(self.names, None if flavor == "default" else flavor, self.opts.scalar_read, alpha)

    def _site(self, case: Case | None):
        """The launch site, with the run-time scalars of ``case`` (an OpInfo sample's own) where it has them."""
        site = self.source.site
        got = case.scalars if case is not None else None
        if not got or site is None:
            return site
        if site.scalar_values is not None:  # a parameter struct: the fields' arguments in the table's order
            return replace(site, scalar_values=[got[k] for k in self.scalar_names])
        value = got[site.extra]
        return replace(site, scalar=-value if self.negated else value)

    def empty_strided(self, size, stride, dtype):
        """An output the kernel takes without copies (the isolated worker's arena); torch's elsewhere."""
        return getattr(self.lib, "empty_strided", torch.empty_strided)(size, stride, dtype=dtype)

    def _place(self, case: Case) -> None:
        """The case's tensors (views stay views) where the kernel takes them without copies."""
        move = getattr(self.lib, "arena_tensor", None)
        if move is not None:
            memo: dict = {}
            case.args = tuple(move(a, memo) if isinstance(a, torch.Tensor) else a for a in case.args)
            case.out = move(case.out, memo) if case.out is not None else None

    def run_case(self, case: Case, cell: Cell) -> None:
        if self.compile_failures:  # nothing to launch: the cell is blocked, never "not registered"
            self._block(cell)
            return
        self._place(case)
        before = (cell.stats.mismatches, len(cell.failures), cell.cases)
        self._run_case(case, cell)
        if cell.cases > before[2] and (cell.stats.mismatches, len(cell.failures)) == before[:2]:
            cell.passed += 1

    def _block(self, cell: Cell) -> None:
        failure = self.compile_failures[0]
        if cell.blocked is None:
            cell.blocked = failure
            failure.blocks.append((cell.dtype, cell.layout))

    def _run_case(self, case: Case, cell: Cell) -> None:
        expected: dict[str, torch.Tensor] = {}
        for r in self.refs:
            try:
                expected[r.name] = r.compute(case)
                if case.expected_dtype is None:
                    case.expected_dtype = expected[r.name].dtype
            except NotApplicable as exc:
                note = f"{r.name} does not accept these arguments: {exc}"
                if note not in cell.skipped:
                    cell.skipped.append(note)
                return
            except ReferenceUnavailable as exc:
                note = f"{r.name}: {exc}"
                if note not in cell.skipped:
                    cell.skipped.append(note)
        primary = next((n for n in (r.name for r in self.refs) if n in expected), None)
        if primary is None:
            return
        exp = expected[primary]
        cell.cases += 1
        out_dtype = case.out.dtype if case.out is not None else exp.dtype
        common = _common_dtype(case, out_dtype)
        at = _inputs_at(case, tuple(exp.shape))
        before = _snapshot(case)
        seen: set[str] = set()
        alts = None
        for flavor in self._flavors():
            host = self._host(flavor, case)
            out = self.empty_strided(case.out.shape, case.out.stride(), out_dtype) if case.out is not None else None
            ops = _operands(case)
            if self.source.operand_order is not None and len(ops) == len(self.source.operand_order):
                ops = [ops[i] for i in self.source.operand_order]  # the CPU iterator's order (kernel_source)
            it = build_iter(ops, out, out_dtype, common, self.empty_strided)
            try:
                launch = host.plan(self.source.arity, it, self.source.name)
            except HostError as exc:
                cell.failures.append(f"the emulated host raises: {exc}")
                return
            key = launch.kernel if launch else "(nothing to launch)"
            if key in seen:
                continue
            seen.add(key)
            cell.kernels.add(key)
            if launch is not None:
                _fill_sentinel(it.output())
                if launch.kernel not in self.names:
                    cell.failures.append(
                        f"host picks {launch.kernel}, which the library does not register" + _host_notes(launch)
                    )
                    continue
                try:
                    self.lib.kernel(launch.kernel)(*launch.args, threads=launch.threads)
                except MetalCompileError as exc:  # a template library's later parameter list
                    self.compile_failures.append(failure_of(exc, self.source.path))
                    self._block(cell)
                    return
                except KernelFault as exc:  # a crash, timeout or fault: name the case too
                    cell.failures.append(f"{str(exc).splitlines()[0]} [case {case_label(case, exp.shape)}]")
                    continue
                except DeviceError as exc:
                    cell.failures.append(f"{launch.kernel}: {str(exc).splitlines()[0]}")
                    continue
                if launch.finish is not None:
                    launch.finish()
            got = it.output()
            st = compare(got, exp, at, self.opts.atol, self.opts.rtol)
            ref = next(r for r in self.refs if r.name == primary)
            if st.mismatches and hasattr(ref, "alternatives"):  # the reference's other answers (rules/verify.yaml)
                if alts is None:
                    alts = ref.alternatives(case, exp) if hasattr(ref, "alternatives") else []
                if alts:
                    st = compare(got, exp, at, self.opts.atol, self.opts.rtol, excuse=alts)
            if st.first is not None:
                st.first.reason += f" via {key}, reference {primary}" + (_host_notes(launch) if launch else "")
            cell.stats.merge(st)
        if _snapshot(case) != before:
            cell.failures.append(f"an input buffer was modified by {', '.join(sorted(seen))}")
        names = [r.name for r in self.refs if r.name in expected]
        if len(names) == 2:
            old, ref = expected[names[1]], expected[names[0]]
            if old.dtype != ref.dtype:
                note = f"{names[1]} gives {dtype_name(old.dtype)} where {names[0]} gives {dtype_name(ref.dtype)}"
                if note not in cell.skipped:
                    cell.skipped.append(note)
                old = old.to(ref.dtype)
            ab = compare(old, ref, at, self.opts.atol, self.opts.rtol)
            if cell.old_vs_cpu is None:
                cell.old_vs_cpu = Stats()
            cell.old_vs_cpu.merge(ab)


def _host_notes(launch) -> str:
    """What the emulated host did that explains a difference (its binding, as the tree's code does it)."""
    return "".join(f"; host: {n}" for n in launch.notes)


def case_label(case: Case, shape) -> str:
    return f"{dtype_name(case.dtype)} {case.layout} size {list(shape)}"


def registered_dtypes(source: KernelSource) -> list[torch.dtype]:
    if source.input_dtypes is not None:
        return list(source.input_dtypes)
    return ordered(d for r in source.registrations if r.dtypes and (d := from_metal(r.dtypes[0])) is not None)


def handled_before_stub(ix, family: str) -> dict[str, str]:
    """torch dtype name -> why no kernel needs it: the family's shared CPU kernel handles that dtype itself
    before calling its stub (nan_to_num_out copies integers)."""
    from migrate.conventions.cpu_iter import definition
    from migrate.conventions.stub_choice import dtype_shortcuts

    out: dict[str, str] = {}
    for e in ix.families.get(family, ()):
        for d in e.dispatch:
            if "CPU" not in d.keys:
                continue
            stubs = set(ix.stubs_of_shared_kernel(d.kernel_name))
            got = definition(ix.tree.root, d.kernel_name) if stubs else None
            for kind, bools, test in dtype_shortcuts(got[1], got[2], stubs) if got else ():
                for dt in _DTYPE_FAMILIES[kind] + (("bool",) if bools else ()):
                    out.setdefault(dt, f"{d.kernel_name} handles {dt} itself before its stub (`if ({test})`)")
    return out


_DTYPE_FAMILIES = {
    "integral": ("int64", "int32", "int16", "int8", "uint8"),
    "floating": ("float64", "float32", "float16", "bfloat16"),
}


def coverage(
    family_fn,
    registered: list[torch.dtype],
    before: list[torch.dtype] | None = None,
    wanted: list[torch.dtype] | None = None,
    handled: dict[str, str] | None = None,
) -> tuple[list[str], list[Cell]]:
    """dtypes the torch CPU op accepts that no kernel registers: (notes, failing "coverage" cells).

    A failure when the tree before the patch registered the dtype, or when the kernel registers
    another dtype of the same rules/verify.yaml ``coverage_groups`` group (float32/float16
    registered, bfloat16 dropped); otherwise a note (complex, integers: often deliberate).
    """
    notes: list[str] = []
    cells: list[Cell] = []
    names = {d: dtype_name(d) for d in registered}
    for name in table()["dtype_order"]:
        dt = getattr(torch, name)
        if dt in registered or (wanted is not None and dt not in wanted):
            continue
        if handled and name in handled:
            notes.append(f"coverage: no {name} kernel is needed: {handled[name]}")
            continue
        if before is not None and dt in before:
            cells.append(
                Cell(
                    name,
                    "coverage",
                    failures=[f"the tree before the patch registers a {name} kernel, the patched tree does not"],
                )
            )
            continue
        try:
            family_fn.compute(Case(dt, "probe", tuple(torch.ones(2, dtype=dt) for _ in range(family_fn.arity))))
        except ReferenceUnavailable:
            continue
        peers = [n for g in table()["coverage_groups"] if name in g for n in g if n in names.values()]
        if peers:
            cells.append(
                Cell(
                    name,
                    "coverage",
                    failures=[
                        f"torch CPU supports {name} and {', '.join(peers)} kernels are registered, but no {name} kernel is"
                    ],
                )
            )
        else:
            notes.append(f"coverage: torch CPU supports {name} but no {name} kernel is registered")
    return notes, cells


def _registered_before(root: Path, family: str, tmp: Path, index, name: str):
    """Input dtypes the unpatched tree registers for ``family``'s kernel ``name``; none when a patch (a port) adds
    the kernel, or when the family's kernel there is another one (clamp_min's Tensor overload runs maximum's,
    which the patch keeps)."""
    try:
        before = locate(root, family, {}, tmp, index=index)
    except UsageError:
        return set()
    return registered_dtypes(before) if before.name == name else set()


def verify(root: Path, family: str, patch=None, opts: Options | None = None, references=None) -> Report:
    """Verify ``family``'s kernel in the tree at ``root`` (``patch``: (diff text, name) applied in memory);
    with ``opts.stub``, the kernel of that stub, against calls whose arguments reach it."""
    from migrate.verify.kernel_source import ONLY_STUB

    opts = opts or Options()
    token = ONLY_STUB.set(opts.stub)
    try:
        return _verify(root, family, patch, opts, references)
    finally:
        ONLY_STUB.reset(token)


def _verify(
    root: Path,
    family: str,
    patch: tuple[str, str] | None = None,
    opts: Options | None = None,
    references: list[Reference] | None = None,
) -> Report:
    """Verify ``family``'s kernel in the tree at ``root`` (``patch``: (diff text, name) applied in memory)."""
    opts = opts or Options()
    seed = opts.seed if opts.seed is not None else table()["seed"]
    from migrate.index import Index
    from migrate.tree import load_tree

    from migrate.verify.patch import read_patch

    overlay = read_patch(root, *patch) if patch else {}
    base = Index(load_tree(root))  # the tree before the patch: read once
    with tempfile.TemporaryDirectory(prefix="mps-migrate-verify-") as tmp:
        source = locate(root, family, overlay, Path(tmp), index=None if overlay else base)
        before = _registered_before(root, family, Path(tmp), base, source.name) if overlay else None
        registered = registered_dtypes(source)
        runnable = [d for d in (opts.dtypes or registered) if d in registered]
        lib, failed = compile_or_block(source, root, opts) if runnable else (None, None)  # nothing to run: no compile
    notes: list[str] = []
    default_references = references is None
    negated = False  # the CPU kernel negates the scalar before its stub (sub_out: add_stub(-alpha))
    if references is None:
        try:
            cpu = TorchCpuReference(family, base)
        except LookupError as exc:
            raise CannotRun(str(exc)) from None
        from migrate.conventions.stub_choice import call_kwargs

        chosen = call_kwargs(opts.known)
        if opts.stub:  # the arguments that reach this stub (rounding_mode="trunc"): every call passes them
            cpu.scalar_kwargs.update(chosen)
            notes.append(
                f"{opts.stub}: torch CPU called with "
                + (", ".join(f"{k}={v!r}" for k, v in chosen.items()) or "the arguments' defaults")
            )
        if source.site is not None and source.site.scalar is not None:
            site = source.site
            value = int(site.scalar) if float(site.scalar).is_integer() else site.scalar  # integral inputs take it
            from migrate.conventions.scalar_launch import negated_by_cpu_kernel

            negated = negated_by_cpu_kernel(base, family, site.extra)
            cpu.scalar_kwargs = {site.extra: -value if negated else value, **dict(site.reference_kwargs)}
            notes.append(
                f"run-time scalar {site.extra} = {site.scalar:g} ({site.scalar_from})"
                + (f"; {negated}: the reference gets {site.extra}={-value}" if negated else "")
                + "".join(f"; the reference gets {k}={v}" for k, v in site.reference_kwargs)
                + f"; an OpInfo sample's case binds the sample's own {site.extra} (as the operator receives it)"
            )
        references = [cpu]
        from migrate.verify.references import old_reference, old_reference_at_head

        old, why = old_reference(base, family, opts.known)
        where = "the working tree"
        if old is None:
            old, why, where = old_reference_at_head(root, family, why)
        if old is not None:
            alpha = getattr(getattr(old, "dag", None), "alpha", None)
            site = source.site
            if alpha is not None and alpha.name and site is not None and site.scalar is not None and not negated:
                old.scalars = {alpha.name: torch.tensor(float(site.scalar), dtype=torch.float64)}
            references.append(old)
            notes.append(f"old MPSGraph reference: DAG of {getattr(old, 'where', '') or family}, read from {where}")
        else:
            notes.append(why)
    if source.operand_order is not None:
        notes.append(
            f"the kernel gets the inputs in the order of the CPU iterator (schema inputs "
            f"{source.operand_order}), as the stub's iterator hands them"
        )
    from migrate.verify.params_host import prepare

    notes += prepare(source, references, opts, family)  # a launch with a struct of run-time scalars
    report = Report(family, source, seed, [r.name for r in references], notes=notes)
    wanted = opts.dtypes or registered
    for d in wanted:
        if d not in registered:
            report.notes.append(f"{dtype_name(d)}: no kernel registered for this input dtype; skipped")
    dtypes = [d for d in ordered(wanted) if d in registered]
    if isinstance(references[0], TorchCpuReference):
        probe = references[0]
        probe.arity = source.arity
        handled = handled_before_stub(base, family)
        cov_notes, cov_cells = coverage(probe, registered, before, opts.dtypes, handled)
        report.notes += cov_notes
        report.cells += cov_cells
    layouts = opts.layouts or table()["layouts"]
    unknown = [x for x in layouts if x not in table()["layouts"]]
    if unknown:
        raise UsageError(f"unknown layout(s) {', '.join(unknown)} (known: {', '.join(table()['layouts'])})")
    runner = Runner(source, lib, references, opts)
    runner.compile_failures = report.compile_failures
    runner.scalar_names, runner.negated = _scalar_names(source, family), bool(negated)
    if failed is not None:
        report.compile_failures.append(failed)
    work = [(d, nonzero_divisors(build_cases(d, source.arity, layouts, seed), family)) for d in dtypes]
    if family in (table().get("nonzero_divisor") or {}):
        report.notes.append("integer cases have no zero divisor: torch CPU refuses one (ZeroDivisionError)")
    total, done = sum(len(c) for _, c in work), 0
    for d, cases in work:
        cells: dict[str, Cell] = {}
        for case in cases:
            cell = cells.setdefault(case.layout, Cell(dtype_name(d), case.layout))
            runner.run_case(case, cell)
            done += 1
            if opts.progress:
                opts.progress(done, total)
        report.cells += cells.values()
    if opts.large and runner.lib is not None:
        from migrate.verify.large import large_cells

        report.cells += large_cells(runner, dtypes, seed)
    if opts.opinfo and "opinfo" in layouts and default_references:
        run_opinfo(report, base, runner, references[1:], dtypes, overlay)
    sandbox = getattr(lib, "sandbox", None)
    if sandbox is not None:
        report.notes.append("kernels ran in an isolated worker process: " + "; ".join(sandbox))
    return report


def _scalar_names(source: KernelSource, family: str) -> tuple[str, ...]:
    """The run-time scalars the launch binds, as the operator's schema names them (none: a plain launch)."""
    site = source.site
    if site is None:
        return ()
    if site.scalar_values is not None:
        from migrate.verify.params_host import scalar_args

        return tuple(scalar_args(family) or ())
    return (site.extra,) if site.scalar is not None else ()


def run_opinfo(report: Report, index, runner: "Runner", extra_refs: list[Reference], dtypes, overlay=None) -> None:
    """The installed torch's OpInfo samples of the family, one cell per (dtype, OpInfo), each judged against
    the tree's own expectations (``overlay``: the patch's files, whose expectations win)."""
    from migrate.verify import opinfo_samples as ops

    from migrate.verify.expectations import load

    sel = ops.select(index, report.family)
    report.notes += sel.notes
    expectations = load(index.tree.root, {**index.tree.sources, **(overlay or {})}) if sel.opinfos else None
    reached: dict[str, set[str]] = {}
    names = runner.scalar_names
    if names and extra_refs and sel.opinfos:  # each sample binds its own scalars; the old graph holds one value
        report.notes.append(
            "OpInfo samples: compared with torch CPU only (the old MPSGraph reference holds one scalar)"
        )
        extra_refs = []
    for op in sel.opinfos:
        report.opinfo_names.append(op.formatted_name)
        seen = reached.setdefault(op.formatted_name, set())
        sub = Runner(runner.source, runner.lib, [ops.OpInfoReference(op, seen, names), *extra_refs], runner.opts)
        sub.compile_failures = runner.compile_failures
        sub.scalar_names, sub.negated = names, runner.negated
        for d in dtypes:
            run = ops.OpInfoRun(op.formatted_name, d)
            expect = None
            if runner.opts.stub:  # one stub of several: only samples passing the arguments that reach it
                from migrate.conventions.stub_choice import call_kwargs

                expect = call_kwargs(runner.opts.known)
            cases = ops.sample_cases(op, d, runner.source.arity, run, seen, expect, names)
            cell = Cell(
                dtype_name(d),
                f"opinfo:{op.formatted_name}",
                samples=run.samples,
                skip_reasons=dict(run.skipped),
                skipped=[run.unsupported] if run.unsupported else [],
            )
            for case in cases:
                sub.run_case(case, cell)
            cell.expected = expectations.lookup(op.name + op.variant_test_name, dtype_name(d))  # test_mps's key
            report.cells.append(cell)
    if sel.opinfos and not runner.compile_failures:  # a blocked run calls no overload
        report.overloads = ops.overload_map(index, report.family, reached)


def first_failure(cell: Cell) -> str:
    if cell.blocked is not None:
        return f"blocked: {cell.blocked.where} does not compile: {cell.blocked.message}"
    if cell.failures:
        return cell.failures[0]
    m: Mismatch | None = cell.stats.first
    return m.describe() if m else ""
