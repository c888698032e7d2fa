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
NO_SKELETON_HINT = ("no kernel file", "pre-c10/metal kernel file", "no host file", "pre-c10/metal host file",
                    "skeleton placeholder", "half-ported")

HELP = "port an MPSGraph operator family to a native Metal kernel (prints the patch; --write applies it)"


def add_arguments(p) -> None:
    p.add_argument("family", nargs="?", help="operator family, e.g. logaddexp")
    p.add_argument("--root", default=".", help="the PyTorch tree (default: .)")
    p.add_argument("--write", action="store_true", help="apply the patch (atomic writes)")
    p.add_argument("--list", action="store_true", help="every MPSGraph-routed family: portable or not, and why")
    p.add_argument("--skeleton", action="store_true",
                   help="write a hand-completion skeleton instead (functor with a TODO listing the old graph's "
                        "selectors, registrations, host stub; no dispatch change), for any MPSGraph-routed family")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output of --list")


def run(args) -> int:
    from migrate.port.listing import list_families, summary
    from migrate.port.patch import NothingToPort, apply_edits, plan_port
    from migrate.port.translate import PortBlocked

    root = find_root(Path(args.root))
    tree = load_tree(root)
    ix = Index(tree)
    if args.list:
        if args.family:
            raise UsageError("give a family or --list, not both")
        verdicts = list_families(ix)
        if args.format == "json":
            print(json.dumps([v.__dict__ for v in verdicts], indent=1))
            return 0
        width = max((len(v.family) for v in verdicts), default=6)
        for v in verdicts:
            where = f"  [{v.where}]" if v.where and v.status != "portable" else ""
            print(f"{v.family:<{width}}  {v.status:<12}  {v.detail}{where}")
        print(summary(verdicts))
        return 0
    if not args.family:
        raise UsageError("name a family to port (or --list)")
    if args.skeleton:
        from migrate.port.skeleton import plan_skeleton as plan
    else:
        plan = plan_port
    try:
        port = plan(ix, args.family)
    except KeyError:
        raise UsageError(f"unknown operator family {args.family!r} (not in native_functions.yaml)") from None
    except NothingToPort as exc:
        print(f"mps-migrate: {exc}", file=sys.stderr)
        return 0
    except PortBlocked as exc:
        where = f" ({exc.where})" if exc.where else ""
        what = "write a skeleton for" if args.skeleton else "port"
        hint = "; --skeleton writes a hand-completion skeleton" if not args.skeleton and exc.construct not in NO_SKELETON_HINT else ""
        raise UsageError(f"cannot {what} {args.family}: {exc.reason}{where}{hint}") from None
    try:
        new = apply_edits(tree.sources, port.edits)
    except ValueError as exc:
        raise UsageError(f"cannot port {args.family}: {exc}") from None
    for note in port.notes:
        print(f"mps-migrate: note: {note}", file=sys.stderr)
    if not args.write:
        for path in sorted(new):
            sys.stdout.write(unified_diff(path, tree.sources[path], new[path]))
        return 0
    write_outcome(root, FixOutcome(original={p: tree.sources[p] for p in new}, new=new))
    if args.skeleton:
        print(f"wrote a skeleton for {args.family}: {port.kind} functor {port.name}_functor (placeholder), "
              f"{len(new)} file(s) written", file=sys.stderr)
        return 0
    print(f"ported {args.family}: {port.kind} functor {port.name}_functor, stub {port.stub}, "
          f"{len(port.impls)} overload(s) rerouted, {len(new)} file(s) written", file=sys.stderr)
    print_next_steps(ix, args.family)
    return 0
