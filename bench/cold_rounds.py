"""Issue 11's speed target on a shared machine: rounds of one cold torchgen parse and one cold lint.

    python bench/cold_rounds.py [ROOT] [--rounds N] [--jobs N] [--whole]

Each round runs ``bench/cold_process.py torchgen ROOT`` and ``bench/cold_process.py lint ROOT`` in new
processes (imports before the clock), torchgen first in even rounds and last in odd ones, and takes the
round's ratio lint / torchgen: a load change between rounds then moves both sides of a ratio alike.
Prints the median ratio, its quartiles, how many rounds met the target (<= 0.3) and the best of each side.
``--jobs``: MPS_MIGRATE_JOBS for the lint (default: unset, the CLI's automatic choice).
``--whole``: time whole processes instead, start to exit, as a user waits for them (common.whole_ms:
``mps-migrate lint ROOT`` with its imports and report, and a process importing torchgen and parsing), after
one unmeasured round that compiles both sides' modules.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from common import cold_ms, pytorch_tree, whole_ms

TARGET = 0.3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="?")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--jobs", help="MPS_MIGRATE_JOBS for the lint (default: the automatic choice)")
    ap.add_argument("--whole", action="store_true", help="time whole processes, imports and report included")
    args = ap.parse_args()
    root = pytorch_tree(args.root)
    with tempfile.TemporaryDirectory() as pycache:
        if args.whole:
            run = lambda what: whole_ms(what, root, Path(pycache), args.jobs)  # noqa: E731
            run("torchgen"), run("lint")  # compiles both sides' modules
        else:
            run = lambda what: cold_ms(what, root, args.jobs)  # noqa: E731
        rounds(args, root, run)


def rounds(args, root, run) -> None:
    torchgen, lint = [], []
    for k in range(args.rounds):
        order = ("torchgen", "lint") if k % 2 == 0 else ("lint", "torchgen")
        got = {what: run(what) for what in order}
        torchgen.append(got["torchgen"])
        lint.append(got["lint"])
    ratios = sorted(a / b for a, b in zip(lint, torchgen))
    n = len(ratios)
    kind = "whole processes" if args.whole else "imports before the clock"
    print(f"{root}: {n} rounds ({kind}), lint jobs {args.jobs or 'auto'}, load average {os.getloadavg()[0]:.1f}")
    print(f"torchgen parse_native_yaml  best {min(torchgen):6.1f} ms   median {statistics.median(torchgen):6.1f} ms")
    print(f"mps-migrate lint, no cache  best {min(lint):6.1f} ms   median {statistics.median(lint):6.1f} ms")
    print(
        f"ratio per round: median {statistics.median(ratios):.3f}, quartiles {ratios[n // 4]:.3f}"
        f" / {ratios[(3 * n) // 4]:.3f}; best / best {min(lint) / min(torchgen):.3f};"
        f" rounds <= {TARGET}: {sum(r <= TARGET for r in ratios)} of {n}"
    )


if __name__ == "__main__":
    main()
