"""``port --all``'s verify step: each planned port verified against torch CPU (migrate/port/batch.py plans).

Verify compiles a kernel file once per distinct text, so each family is verified with the *combined*
kernel-file additions of all ports plus its own host and dispatch edits: the kernel files compile once for
the whole batch, and a family's own kernel is what runs.

A verify result is ``pass`` (no failing cell), ``FAIL`` (its cells name the cause), or ``pass*`` when
every failing cell is one where the tree's own native kernel of the same launch convention (verified
unpatched, the baseline) fails in the same (dtype, layout): the emulated host, or upstream's host,
behaves that way for every kernel of that convention, the port did not bring it.
"""

from __future__ import annotations

import re

from migrate.apply import unified_diff
from migrate.conventions.launch import HandWritten
from migrate.index import Index
from migrate.port.batch import Row, kernel_paths, combined_kernels
from migrate.port.reduce.plan import ReductionPort
from migrate.port.text_edits import apply_edits
from migrate.port.style import detect
from migrate.port.translate import PortBlocked
from migrate.verify.run import CannotRun, Options, first_failure, verify


# conventions the emulated verify does not launch: two-output kernels, a ternary graph's one-field parameter struct
HOST_ONLY = frozenset({"two_outputs", "ternary_params"})


def host_verified(r: Row) -> bool:
    """Is the row verified through the tree's own host code (verify_on_host) rather than the emulation?"""
    return isinstance(r.port, ReductionPort) or r.convention in HOST_ONLY


def verify_all(root, ix: Index, rows: list[Row], progress=None, host: bool = False) -> None:
    """Fill ``verify``/``detail`` of every planned row (see the module doc); ``host``: every row through the
    tree's own host code (``verify_on_host``), not only the ones only that path launches."""
    on_host = [r for r in rows if r.port is not None and (host or host_verified(r))]
    if on_host:
        verify_on_host(root, ix, on_host, progress)
    ported = [r for r in rows if r.port is not None and r not in on_host]
    combined = combined_kernels(ix, [r for r in ported if not r.standalone])
    combined_diff = {p: unified_diff(p, ix.tree.sources[p], combined[p]) for p in combined}
    baselines: dict[str, object] = {}
    for k, r in enumerate(ported):
        if progress:
            progress(k, len(ported), r.family)
        if r.standalone:  # its own tree: the earlier ports and its own, every file
            new = {**r.base, **apply_edits({**ix.tree.sources, **r.base}, r.port.edits)}
            text = "".join(unified_diff(p, ix.tree.sources[p], new[p]) for p in sorted(new))
        else:
            own = [e for e in r.port.edits if not e.path.endswith(".metal")]
            base = {p: d for p, d in r.base.items() if not p.endswith(".metal")}  # the earlier port's host edits
            new = {**base, **(apply_edits({**ix.tree.sources, **base}, own) if own else {})}
            metal = kernel_paths(r.port) | {p for p in r.base if p.endswith(".metal")}
            text = "".join(combined_diff[p] for p in sorted(combined_diff) if p in metal)
            text += "".join(unified_diff(p, ix.tree.sources[p], new[p]) for p in sorted(new))
        try:
            rep = _verify_parts(root, r, text)
        except (CannotRun, HandWritten, Exception) as exc:  # one family's trouble never stops the batch
            r.verify, r.detail = "not run", " ".join(str(exc).split())[:300]
            continue
        fails = [c for c in rep.cells if c.status == "FAIL"]
        if not fails:
            r.verify = "pass" if rep.ran else "not run"
            after = ", ".join(r.chain) + ("'s port" if len(r.chain) == 1 else "'s ports")
            r.detail = (f"after {after}; " if r.after else "") + ("" if rep.ran else "no case ran")
            r.detail = r.detail.removesuffix("; ")
            continue
        conv = r.convention.removesuffix("_scalar")  # a scalar launcher repeats its era's launch steps
        base = baselines.get(conv)
        if base is None and conv in ("unary_1d", "binary_offsets", "functor_registry"):
            base = baselines[conv] = _baseline(root, ix, conv)
        known = base[1] if base else set()
        refused = [c for c in fails if _cpu_refuses(c)]
        own_fails = [c for c in fails if (c.dtype, c.layout) not in known and c not in refused]
        if not own_fails:
            r.verify = "pass*"
            parts = []
            if len(fails) > len(refused):
                parts.append(
                    f"{len(fails) - len(refused)} cell(s) fail as the tree's own {base[0]} kernel does: "
                    + ", ".join(sorted({c.layout for c in fails if c not in refused}))
                )
            if refused:
                parts.append(
                    f"{len(refused)} cell(s) are calls torch CPU refuses (judged against the old graph): "
                    + ", ".join(sorted({f"{c.dtype} {c.layout}" for c in refused}))
                )
            r.detail = "; ".join(parts)
        else:
            c = own_fails[0]
            r.verify = "FAIL"
            r.detail = f"{len(own_fails)} cell(s); {c.dtype} {c.layout}: {first_failure(c)}"


def _verify_parts(root, r: Row, text: str):
    """The family's verify report; a port with one kernel per stub (migrate/port/multi.py) verifies each
    kernel against calls whose arguments reach its stub, and the cells of all of them make one report."""
    if not r.port.parts:
        return verify(root, r.family, (text, f"<port {r.family}>"), Options())
    rep = None
    for part in r.port.parts:
        known = part.choice.values if part.choice is not None else None
        got = verify(root, r.family, (text, f"<port {r.family}>"), Options(stub=part.stub, known=known))
        if rep is None:
            rep = got
        else:
            rep.cells += got.cells
            rep.notes += got.notes
    return rep


_OUT_DTYPE_REFUSALS = ("can't be cast", "dtype of out")  # TensorIterator's; a shared kernel's own TORCH_CHECK


def _cpu_refuses(cell) -> bool:
    """A cell whose case torch CPU refuses as a call (an out= dtype the result cannot be cast to, or one the
    shared kernel checks before its stub): MPS runs the same shared code after the port and raises the same
    before any kernel runs, so the kernel is not at fault."""
    return any(n.startswith("torch-cpu:") and any(r in n for r in _OUT_DTYPE_REFUSALS) for n in cell.skipped)


def _baseline(root, ix: Index, convention: str):
    """(family, failing (dtype, layout) cells) of the tree's own native kernel of ``convention``."""
    arity = 1 if convention == "unary_1d" else 2
    try:
        target = detect(ix, arity)
    except PortBlocked:
        return None
    fams = _native_families(ix, target)
    for fam in fams:
        try:
            rep = verify(root, fam, None, Options())
        except Exception:  # a baseline that cannot run gives no allowance
            continue
        if rep.ran:
            return fam, {(c.dtype, c.layout) for c in rep.cells if c.status == "FAIL"}
    return None


def _native_families(ix: Index, target) -> list[str]:
    """Families whose MPS stub the target host file registers, widest dtype coverage first."""
    data = ix.tree.sources[target.hpath]
    names = re.findall(rb'(?:exec_unary_kernel|binary_mps_impl)\s*\(\s*iter\s*,\s*"(\w+)"\s*\)', data)
    fams = [n.decode() for n in names if n.decode() in ix.families]
    kdata = ix.tree.sources[target.kpath]
    return sorted(dict.fromkeys(fams), key=lambda f: -kdata.count(f"({f},".encode()) - kdata.count(f'"{f}_'.encode()))


OLD_LABEL = "the unported tree"


def verify_on_host(root, ix: Index, rows: list[Row], progress=None) -> None:
    """Rows whose port writes reduction or gather kernels (migrate/port/reduce), or kernels only the host path
    launches (``HOST_ONLY``): their ports applied in order to one scratch copy of the tree (a row planned after
    other ports after them), lint run on it once (the generated files must have no finding), then each family
    verified through the tree's own host code (``verify --host``) there, against torch CPU and against the
    unported tree's own code (its MPSGraph through the emulation): a case where the two differ is a measured
    behaviour change, listed next to the ones the port infers."""
    import tempfile
    from pathlib import Path

    from migrate.host_code.run import verify_host
    from migrate.host_code.scratch import scratch_copy
    from migrate.lint import lint_root
    from migrate.port.patch import plan_port
    from migrate.tree import load_tree

    with tempfile.TemporaryDirectory(prefix="mps-port-all-") as tmp:
        scratch = scratch_copy(Path(root), Path(tmp))
        written: dict[str, set[str]] = {}
        rows = sorted(rows, key=lambda r: len(r.chain))  # clamp after the ports it waits for
        for r in rows:
            cur = Index(load_tree(scratch))
            try:
                port = plan_port(cur, r.family)
                new = apply_edits(cur.tree.sources, port.edits)
            except (PortBlocked, ValueError) as exc:
                r.verify, r.detail = "not run", f"does not apply after the other reduction ports: {exc}"
                continue
            for path, data in new.items():
                (scratch / path).write_bytes(data)
            written[r.family] = set(new)
        before = {(f.code, f.path, f.message) for f in lint_root(Path(root)).findings}  # the tree's own: not new
        findings = [f for f in lint_root(scratch).findings if (f.code, f.path, f.message) not in before]
        old = (Path(root), ix, OLD_LABEL)  # the unported tree's own code: each family's old reference
        for k, r in enumerate(rows):
            if r.family not in written:
                continue
            if progress:
                progress(k, len(rows), r.family)
            own = [f for f in findings if f.path in written[r.family] and not f.path.endswith(".mm")]
            if own:
                r.verify, r.detail = "FAIL", f"lint: {own[0].code} {own[0].message}"[:300]
                continue
            try:
                rep = verify_host(scratch, lambda: Index(load_tree(scratch)), r.family, old=old, old_optional=True)
            except Exception as exc:  # NotRunnable, a yaml torchgen refuses: one family's trouble never stops the batch
                r.verify, r.detail = "not run", " ".join(str(exc).split())[:300]
                continue
            fails = [c for c in rep.cells if c.status in ("FAIL", "ERROR")]
            stale = [c for c in rep.cells if c.status == "XPASS"]  # the tree's xfail is stale (MPS009), not the port
            ran = any(c.status == "PASS" for c in rep.cells)
            r.verify = "FAIL" if fails or rep.build_errors else ("pass" if ran else "not run")
            what = rep.build_errors[:1] or [f"{c.status} {c.opinfo} {c.dtype}" for c in (fails or stale)[:4]]
            r.detail = ("host path: " + ", ".join(what))[:300] if what else "host path"
            r.changes += measured_changes(rep)


def measured_changes(rep) -> list[str]:
    """The behaviour change a host report measured against the old code, in the words of port's inferred ones."""
    cells = [c for c in rep.cells if c.changed]
    if not cells:
        return []
    what = "; ".join(f"{c.opinfo} {c.dtype}: {_case_change(c.changed[0])}" for c in cells[:3])
    more = f" (+{len(cells) - 3} more cell(s))" if len(cells) > 3 else ""
    kind = "old-mpsgraph" if any(c.old_graph_cases for c in cells) else "old code"
    return [f"behaviour change (measured against {kind}, {OLD_LABEL}): {what}{more}"[:400]]


def _case_change(line: str) -> str:
    """``case: N / M elements differ`` from a case's comparison message (torch.testing's, or the first line)."""
    case, _, why = line.partition(": ")
    m = re.search(r"Mismatched elements: (\d+ / \d+)", why)
    return f"{case}: {m.group(1)} elements differ" if m else " ".join(line.split())[:120]
