"""Time the host reader over the real PyTorch 2.6.0 MPS tree.

    /work/venv/bin/python bench/bench_host.py [--repeat N] [ROOT]

ROOT defaults to the 2.6.0 tree (bench/common.pytorch_tree).  Prints
the whole-tree time (best and median of N runs, each run reads every
.mm/.cpp/.h under aten/src/ATen/native/mps in one process) and where the time
goes: scrub (lexing), finding the function bodies the parser may skip, Objective-C
neutralising, tree-sitter parsing (as the reader runs it: lean bodies skipped through
included ranges; the whole-file parse of the same bytes for reference), rest.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from common import pytorch_tree  # noqa: E402

from migrate.source import SourceFile as scrub  # noqa: E402
from migrate.read.cpp_unit import _LEAN_PARSER, _PARSER, _outside, lean_bodies, lean_heads  # noqa: E402
from migrate.read.host_reader import _keep, read_host_file  # noqa: E402
from migrate.read.objc_neutral import neutralize  # noqa: E402


def timed(fn, items) -> float:
    t = time.perf_counter()
    for x in items:
        fn(x)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="?")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    root = pytorch_tree(args.root)
    files = sorted(p for p in (root / "aten/src/ATen/native/mps").rglob("*") if p.suffix in (".mm", ".cpp", ".h"))
    items = [(p.relative_to(root).as_posix(), p.read_bytes()) for p in files]
    size = sum(len(d) for _, d in items)
    import gc

    gc.disable()  # as the CLI runs
    print(f"{len(items)} host files, {size / 1e6:.2f} MB")

    first = timed(lambda x: read_host_file(x[1], x[0]), items)  # includes one-time regex compiles
    runs = [timed(lambda x: read_host_file(x[1], x[0]), items) for _ in range(args.repeat)]
    print(
        f"read_host_file, whole tree: first {first * 1000:.0f} ms, best {min(runs) * 1000:.0f} ms, "
        f"median {statistics.median(runs) * 1000:.0f} ms ({size / min(runs) / 1e6:.1f} MB/s)"
    )

    datas = [d for _, d in items]
    scs = [scrub(d) for d in datas]
    for sc in scs:
        sc.directives  # noqa: B018  (scrubbed once, as in the reader)

    def lean(sc):  # what the reader leaves out of the parse: bodies, their parameters, non-#if directives
        keep = _keep(sc.code)
        found = lean_bodies(sc, keep)[0]
        return found + lean_heads(sc, keep, found)

    leans = [lean(sc) for sc in scs]
    outs = [bytes(neutralize(sc, lean)) for sc, lean in zip(scs, leans)]
    ranges = [_outside(sc, lean) for sc, lean in zip(scs, leans)]
    fulls = [bytes(neutralize(sc)) for sc in scs]

    def lean_parse(k: int) -> None:
        _LEAN_PARSER.included_ranges = ranges[k]
        _LEAN_PARSER.parse(outs[k])

    stages = {
        "scrub": min(timed(lambda d: scrub(d).directives, datas) for _ in range(3)),
        "lean bodies and heads": min(timed(lean, scs) for _ in range(3)),
        "neutralize": min(timed(lambda k: neutralize(scs[k], leans[k]), range(len(scs))) for _ in range(3)),
        "tree-sitter parse": min(timed(lean_parse, range(len(scs))) for _ in range(3)),
    }
    whole = min(timed(_PARSER.parse, fulls) for _ in range(3))
    lean_bytes = sum(e - s for lean in leans for s, e in lean)
    stages["rest (macros, extraction, sites)"] = max(0.0, min(runs) - sum(stages.values()))
    for name, secs in stages.items():
        print(f"  {name:34s} {secs * 1000:6.0f} ms")
    print(f"  (whole-file parse, for reference:  {whole * 1000:6.0f} ms; {lean_bytes / size:.0%} of the bytes skipped)")
    hfs = [read_host_file(d, p) for p, d in items]
    print(
        f"functions {sum(len(h.functions) for h in hfs)}, registrations {sum(len(h.registrations) for h in hfs)}, "
        f"kernel calls {sum(len(h.kernel_calls) for h in hfs)}, sites {sum(len(h.sites) for h in hfs)}, "
        f"errors {sum(len(h.errors) for h in hfs)}"
    )


if __name__ == "__main__":
    main()
