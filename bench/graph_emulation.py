"""Families whose host code builds an MPSGraph, run by ``verify FAMILY --host`` through the shim's emulation:
verdict, whether old-mpsgraph was among the references, and the cells where it and torch CPU disagree.

    python bench/graph_emulation.py TREE FAMILY... > out.md
"""

from __future__ import annotations

import json
import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    tree, families = argv[0], argv[1:]
    print("| family | verdict | references | cells (old-mpsgraph) | old vs CPU disagree | not emulated | s |")
    print("|---|---|---|---|---|---|---|")
    for family in families:
        t0 = time.perf_counter()
        p = subprocess.run(
            [sys.executable, "-m", "migrate", "verify", family, "--host", "--root", tree, "--format", "json"],
            capture_output=True, text=True,
        )  # fmt: skip
        try:
            data = json.loads(p.stdout)
        except ValueError:
            line = (p.stderr.strip().splitlines() or ["?"])[-1]
            print(f"| {family} | exit {p.returncode} | - | - | {line[:120]} | - | {time.perf_counter() - t0:.0f} |")
            continue
        cells = data["cells"]
        graph = sum(1 for c in cells if c["graph_cases"])
        errors = sorted({c["error"].split(" (")[0].split("-[MPSGraph ")[-1].rstrip("]") for c in cells if c["error"]})
        disagree = "; ".join(data["old_vs_cpu"]) or "-"
        print(f"| {family} | {data['verdict']} | {', '.join(data['references'])} | {graph}/{len(cells)} | {disagree} | "
              f"{', '.join(errors) or '-'} | {time.perf_counter() - t0:.0f} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
