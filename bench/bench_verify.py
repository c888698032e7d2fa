"""Time `verify` of one binary family (fixtures/verify logaddexp: float32/float16/bfloat16,
every layout, no OpInfo samples) with a cold compile cache (fresh MPS_MIGRATE_CACHE) and
warm (second run on the same cache).  Each run is a fresh process, as a user's.

    python bench/bench_verify.py [family] [--opinfo]
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "verify"


def run(family: str, cache: str, opinfo: bool) -> float:
    cmd = [sys.executable, "-m", "migrate", "verify", family, "--root", str(ROOT),
           "--dtypes", "float32,float16,bfloat16"] + ([] if opinfo else ["--no-opinfo"])
    env = dict(os.environ, MPS_MIGRATE_CACHE=cache)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        sys.exit(f"verify failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    return dt


def main() -> None:
    family = next((a for a in sys.argv[1:] if not a.startswith("--")), "logaddexp")
    opinfo = "--opinfo" in sys.argv
    with tempfile.TemporaryDirectory(prefix="bench-verify-cache-") as cache:
        cold = run(family, cache, opinfo)
        warm = min(run(family, cache, opinfo) for _ in range(3))
    what = f"verify {family} (float32, float16, bfloat16; all layouts{'; OpInfo samples' if opinfo else ''})"
    print(f"{what}: cold cache {cold:.2f} s, warm cache {warm:.2f} s (best of 3)")


if __name__ == "__main__":
    main()
