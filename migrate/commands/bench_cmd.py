"""mps-migrate bench: print a script that times a family on a Mac before and after a change."""

from __future__ import annotations

import sys
from pathlib import Path

from migrate.errors import UsageError

HELP = "print a Mac script timing a family (torch.mps events over its OpInfo samples) before and after a change"


def add_arguments(p) -> None:
    p.add_argument("family", help="operator family (atan2)")
    p.add_argument("--root", type=Path, default=Path("."), help="any path inside the PyTorch tree")
    p.add_argument("-o", "--output", type=Path, help="write the script to this file (default: stdout)")


def run(args) -> int:
    from migrate.index import Index
    from migrate.mac_bench import render_script
    from migrate.tree import find_root, load_tree

    ix = Index(load_tree(find_root(args.root)))
    if args.family not in ix.families:
        raise UsageError(f"no operator family {args.family!r} in {ix.tree.yaml.path}")
    text = render_script(ix, args.family)
    if args.output:
        try:
            _write_new(args.output, text)
        except OSError as exc:
            raise UsageError(f"cannot write: {exc.strerror or exc}", str(args.output)) from None
        print(
            f"mps-migrate: run `python {args.output} --label before` on a Mac, rebuild with the change, "
            f"then `--label after`",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(text)
    return 0


def _write_new(path: Path, text: str) -> None:
    """Write through a temporary file in the same folder and rename: never a half-written script."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
