"""Time `verify` of one binary family (fixtures/verify logaddexp: float32/float16/bfloat16,
every layout, no OpInfo samples unless --opinfo) with a cold compile cache and a warm one.
Each run is a fresh process, as a user's.

Cold: a fresh MPS_MIGRATE_CACHE, and the fixture copied with a unique constant appended
to its .metal file, so the generated C++ differs and zig's own compile cache misses too
(zig's one-time libc++ build is not included).  Warm: best of 3 later runs on the same cache.

    python bench/bench_verify.py [family] [--opinfo]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "verify"
KERNEL = "aten/src/ATen/native/mps/kernels/BinaryKernel.metal"


def run(family: str, root: Path, cache: str, opinfo: bool) -> float:
    cmd = [
        sys.executable,
        "-m",
        "migrate",
        "verify",
        family,
        "--root",
        str(root),
        "--dtypes",
        "float32,float16,bfloat16",
    ] + ([] if opinfo else ["--no-opinfo"])
    env = dict(os.environ, MPS_MIGRATE_CACHE=cache)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        sys.exit(f"verify failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    return dt


def in_process(family: str, root: Path, cache: str, opinfo: bool) -> float:
    os.environ["MPS_MIGRATE_CACHE"] = cache
    import torch

    from migrate.verify.run import Options, verify

    opts = Options(dtypes=[torch.float32, torch.float16, torch.bfloat16], opinfo=opinfo)
    verify(root, family, opts=opts)  # loads the tree model, imports op_db
    t0 = time.perf_counter()
    verify(root, family, opts=opts)
    return time.perf_counter() - t0


def main() -> None:
    family = next((a for a in sys.argv[1:] if not a.startswith("--")), "logaddexp")
    opinfo = "--opinfo" in sys.argv
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
        root, cache = Path(tmp) / "tree", str(Path(tmp) / "cache")
        shutil.copytree(FIXTURE, root)
        k = root / KERNEL
        k.write_text(k.read_text() + f"\nconstant int bench_nonce = {time.time_ns() % 1000000007};\n")
        cold = run(family, root, cache, opinfo)
        warm = min(run(family, root, cache, opinfo) for _ in range(3))
        inproc = in_process(family, root, cache, opinfo)
    what = f"verify {family} (float32, float16, bfloat16; all layouts{'; OpInfo samples' if opinfo else ''})"
    print(
        f"{what}: cold cache {cold:.2f} s, warm cache {warm:.2f} s (best of 3, new process each); "
        f"warm in-process (torch imported) {inproc:.2f} s"
    )


if __name__ == "__main__":
    main()
