"""The host path against the emulation, family by family: `verify FAMILY --format json` (verify's emulated host
launch) and `verify FAMILY --host --format json` (the tree's own host code) on one tree, in the same run, with the
verdict, the cells run and the wall time of each (warm caches: run it twice and read the second table).

    python bench/host_vs_emulation.py TREE [FAMILY ...]   (default: the exec_*_kernel / binary_mps_impl families)
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

DEFAULT = ["exp", "sqrt", "sin", "neg", "fmax", "fmin", "copysign", "hypot", "lgamma", "digamma", "i0"]


def run(args: list[str]) -> tuple[int, dict | None, float]:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "migrate", *args, "--format", "json"], capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    try:
        return p.returncode, json.loads(p.stdout), seconds
    except ValueError:
        return p.returncode, None, seconds


def emulated_summary(data: dict | None) -> str:
    if not data:
        return "-"
    summary = data["summary"]
    op = summary["opinfo"]
    verdict = "PASS" if data["ok"] else "FAIL"
    return f"{verdict}, own {summary['cases']['passed']}/{summary['cases']['ran']}, opinfo {op['passed']}/{op['ran']}"


def host_summary(data: dict | None) -> str:
    if not data:
        return "-"
    cells = data["cells"]
    own = [c for c in cells if c["opinfo"].endswith("(own cases)")]
    opinfo = [c for c in cells if c not in own]

    def count(group: list[dict]) -> str:
        return f"{sum(c['passed'] for c in group)}/{sum(c['passed'] + len(c['failed']) for c in group)}"

    refused = sum(1 for c in cells if c["refused"]) + sum(len(c.get("refused_cases", ())) for c in cells)
    text = f"{data['verdict']}, own {count(own)}, opinfo {count(opinfo)}"
    return text + (f", {refused} refused" if refused else "")


def main() -> int:
    root = Path(sys.argv[1])
    families = sys.argv[2:] or DEFAULT
    print(f"{'family':12} {'emulated (exit, verdict, own cases, OpInfo samples, s)':58} host (exit, verdict, s)")
    for family in families:
        e_rc, e_data, e_s = run(["verify", family, "--root", str(root)])
        h_rc, h_data, h_s = run(["verify", family, "--root", str(root), "--host"])
        emulated = f"{e_rc}, {emulated_summary(e_data)}, {e_s:.1f}"
        host = f"{h_rc}, {host_summary(h_data)}, {h_s:.1f}"
        print(f"{family:12} {emulated:58} {host}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
