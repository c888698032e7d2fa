"""mps-migrate port: generate the native Metal replacement of an MPSGraph operator family."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from migrate.apply import unified_diff
from migrate.fixloop import FixOutcome, write_outcome
from migrate.opinfo import print_next_steps
from migrate.errors import UsageError
from migrate.index import Index
from migrate.tree import find_root, load_tree

# constructs of PortBlocked a skeleton does not help with (the tree's target files, existing kernels)
NO_SKELETON_HINT = (
    "no kernel file",
    "pre-c10/metal kernel file",
    "no host file",
    "pre-c10/metal host file",
    "skeleton placeholder",
    "half-ported",
    "no binary registration macro",
    "no binary launch",
    "no unary launch",
    "run-time scalar (era)",
)

HELP = "port an MPSGraph operator family to a native Metal kernel (prints the patch; --write applies it)"


def add_arguments(p) -> None:
    p.add_argument("family", nargs="?", help="operator family, e.g. logaddexp")
    p.add_argument("--root", default=".", help="the PyTorch tree (default: .)")
    flags = {
        "--write": "apply the patch (atomic writes)",
        "--list": "every MPSGraph-routed family: portable or not, and why",
        "--skeleton": "write a hand-completion skeleton instead (functor with a TODO listing the old graph's "
        "selectors, registrations, host stub; no dispatch change), for any MPSGraph-routed family",
        "--all": "port every portable family, verify each against torch CPU, print one table "
        "(--write writes only the families whose verify passed)",
        "--host": "with --all: verify every family through the tree's own host code, against torch CPU and the old "
        "MPSGraph code (measured behaviour changes; minutes per family), not only reductions",
    }
    for flag, text in flags.items():
        p.add_argument(flag, action="store_true", help=text)
    p.add_argument("--patch-dir", metavar="DIR", help="with --all: write one patch file per ported family here")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output of --list and --all")


def run(args) -> int:
    from migrate.port.listing import list_families, summary

    root = find_root(Path(args.root), (args.command, args.family))
    tree = load_tree(root)
    ix = Index(tree)
    if args.all:
        if args.family or args.list or args.skeleton:
            raise UsageError("--all ports every family: give no family, --list or --skeleton with it")
        return _run_all(args, root, tree, ix)
    if args.patch_dir or args.host:
        raise UsageError(f"{'--patch-dir' if args.patch_dir else '--host'} goes with --all")
    if args.list:
        if args.family:
            raise UsageError("give a family or --list, not both")
        verdicts = list_families(ix)
        if args.format == "json":
            print(json.dumps([v.__dict__ for v in verdicts], indent=1))
            return 0
        from migrate.port.listing import render

        sys.stdout.write(render(verdicts))
        print(summary(verdicts))
        return 0
    if not args.family:
        raise UsageError("name a family to port (or --list)")
    if args.family not in ix.families:
        raise UsageError(f"unknown operator family {args.family!r} (not in native_functions.yaml)")
    if args.skeleton:
        return _skeleton(args, root, tree, ix)
    from migrate.port.chain import combined, plan_chain

    parts = _planned(args, plan_chain, ix)
    if parts is None:
        return 0
    for part in parts[:-1]:
        print(f"mps-migrate: note: {part.needed_by} waits for {part.family}, ported first: {part.why}", file=sys.stderr)
    if len(parts) > 1:
        order = " -> ".join(p.family for p in parts)
        print(f"mps-migrate: note: the patch holds {len(parts)} ports, in this order: {order}", file=sys.stderr)
    for part in parts:
        for note in part.port.notes:
            print(f"mps-migrate: note: {note}", file=sys.stderr)
    if not args.write:
        for part in parts:
            for path in sorted(part.after):
                sys.stdout.write(unified_diff(path, part.before[path], part.after[path]))
        return 0
    new = combined(parts)
    write_outcome(root, FixOutcome(original={p: tree.sources.get(p, b"") for p in new}, new=new))
    for part in parts:
        port = part.port
        what = ", ".join(f"{p.name}_functor for {p.stub}" for p in port.parts)
        print(
            f"ported {part.family}: {port.kind} functor"
            + (f"s {what}" if port.parts else f" {port.name}_functor, stub {port.stub}")
            + f", {len(port.impls)} overload(s) rerouted, {len(part.after)} file(s) written",
            file=sys.stderr,
        )
    from migrate.host_code.derived import DERIVED

    for part in parts:
        print_next_steps(ix, part.family, called_by=DERIVED.get(part.family, ("",))[0])
    return 0


def _blocked(args, exc) -> str:
    where = f" ({exc.where})" if exc.where else ""
    what = "write a skeleton for" if args.skeleton else "port"
    hint = (
        "; --skeleton writes a hand-completion skeleton"
        if not args.skeleton and exc.construct not in NO_SKELETON_HINT
        else ""
    )
    return f"cannot {what} {args.family}: {exc.reason}{where}{hint}"


def _planned(args, plan, ix: Index):
    """``plan(ix, family)``; None (the reason printed) when there is nothing to port; a block is a UsageError."""
    from migrate.port.write import NothingToPort
    from migrate.port.translate import PortBlocked

    try:
        return plan(ix, args.family)
    except NothingToPort as exc:
        print(f"mps-migrate: {exc}", file=sys.stderr)
        return None
    except PortBlocked as exc:
        raise UsageError(_blocked(args, exc)) from None
    except ValueError as exc:
        raise UsageError(f"cannot port {args.family}: {exc}") from None


def _skeleton(args, root: Path, tree, ix: Index) -> int:
    from migrate.port.skeleton import plan_skeleton
    from migrate.port.text_edits import apply_edits

    port = _planned(args, plan_skeleton, ix)
    if port is None:
        return 0
    try:
        new = apply_edits(tree.sources, port.edits)
    except ValueError as exc:
        raise UsageError(f"cannot write a skeleton for {args.family}: {exc}") from None
    for note in port.notes:
        print(f"mps-migrate: note: {note}", file=sys.stderr)
    if not args.write:
        for path in sorted(new):
            sys.stdout.write(unified_diff(path, tree.sources[path], new[path]))
        return 0
    write_outcome(root, FixOutcome(original={p: tree.sources.get(p, b"") for p in new}, new=new))
    print(
        f"wrote a skeleton for {args.family}: {port.kind} functor {port.name}_functor (placeholder), "
        f"{len(new)} file(s) written",
        file=sys.stderr,
    )
    return 0


def _run_all(args, root: Path, tree, ix: Index) -> int:
    """port --all: plan every family, verify each, print the table; --write / --patch-dir as asked."""
    from migrate.batch_verify import verify_all
    from migrate.port.batch import plan_all, table
    from migrate.port.patch import plan_port
    from migrate.port.text_edits import apply_edits

    rows = plan_all(ix)

    def progress(k: int, n: int, fam: str) -> None:
        print(f"mps-migrate: verifying {fam} ({k + 1}/{n})", file=sys.stderr, flush=True)

    verify_all(root, ix, rows, progress, host=args.host)
    if args.patch_dir:
        out = Path(args.patch_dir)
        out.mkdir(parents=True, exist_ok=True)
        for r in rows:
            if r.patch:
                (out / f"{r.family}.diff").write_text(r.patch, encoding="utf-8")
    written = []
    if args.write:
        overlay: dict[str, bytes] = {}
        for r in sorted(rows, key=lambda r: len(r.chain)):  # a row planned after others' ports comes after them
            if r.verify != "pass":
                continue
            cur = load_tree(root, overlay) if overlay else tree
            try:
                port = plan_port(Index(cur), r.family)
                new = apply_edits(cur.sources, port.edits)
            except Exception as exc:  # a family that no longer plans after others were applied is skipped
                r.detail = f"not written: {exc}"
                continue
            overlay.update(new)
            written.append(r.family)
        if overlay:
            write_outcome(root, FixOutcome(original={p: tree.sources.get(p, b"") for p in overlay}, new=overlay))
    if args.format == "json":
        print(json.dumps({"families": [r.as_json() for r in rows], "written": written}, indent=1))
    else:
        sys.stdout.write(table(rows))
    counts = {k: sum(r.verify == k for r in rows) for k in ("pass", "pass*", "FAIL", "not run", "blocked")}
    print(
        f"{len(rows)} MPSGraph-routed families: {counts['pass']} ported and verified, {counts['pass*']} verified "
        f"except where the tree's own kernels fail too, {counts['FAIL']} failed verify, {counts['not run']} not "
        f"verified, {counts['blocked']} blocked" + (f"; wrote {len(written)}" if args.write else ""),
        file=sys.stderr,
    )
    return 0 if not counts["FAIL"] else 1
