"""CPU backend benchmarks: compile time (cold / cached) of a unary family and
element throughput of dense unary/binary kernels versus torch's CPU op on the
same tensors, in the same run (ratio = ours / torch). The isolated rows run in verify's worker
process: on tensors in its shared arena (no copies; torch on the same tensors, and on plain ones,
which may get transparent huge pages where shared memory gets none), and on plain tensors
(copied in and back).

    python bench/bench_device.py [--n 16777216]
Targets: cached load < 0.1 s; -O1 compile < 2 s (after zig's one-time set-up);
throughput ratio >= 0.3 for every kernel.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SRC = r"""
#include <c10/metal/indexing.h>
using namespace metal;
DEFINE_UNARY_FLOATING_FUNCTOR(exp);
REGISTER_UNARY_OP(exp, float, float);
REGISTER_UNARY_OP(exp, half, half);
REGISTER_UNARY_OP(exp, bfloat, bfloat);
struct mad_functor {
  template <typename T> inline T operator()(const T a, const T b) { return static_cast<T>(a * b + a); }
};
REGISTER_BINARY_OP(mad, float, float);
"""

CACHED = """
import sys, time; sys.path.insert(0, {root!r})
t = time.perf_counter()
from migrate.device import get_backend
t1 = time.perf_counter()
lib = get_backend("cpu").compile_shader({src!r})
t2 = time.perf_counter()
print(f"{{t1 - t:.3f}} {{t2 - t1:.4f}}")
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    import torch

    from migrate.device import get_backend

    with tempfile.TemporaryDirectory() as cache:
        os.environ["MPS_MIGRATE_CACHE"] = cache
        for opt in (0, 1):
            be = get_backend("cpu", opt=opt)
            t = time.perf_counter()
            lib = be.compile_shader(SRC)
            print(f"cold compile -O{opt}: {time.perf_counter() - t:.2f} s  ({len(lib.kernel_names)} kernels)")
        t = time.perf_counter()
        get_backend("cpu").compile_shader(SRC)
        print(f"cached compile_shader, same process: {time.perf_counter() - t:.4f} s")
        out = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", CACHED.format(root=str(ROOT), src=SRC)],
            capture_output=True,
            text=True,
            env=dict(os.environ),
        )
        imp, load = out.stdout.split()
        print(f"cached compile_shader, fresh process: {float(load):.4f} s (import migrate.device: {imp} s)")

        n = args.n
        x = torch.randn(n)
        y = torch.empty(n)
        xh, yh = x.half(), torch.empty(n, dtype=torch.half)
        xb, yb = x.bfloat16(), torch.empty(n, dtype=torch.bfloat16)
        rows = []
        iso, lib = lib, get_backend("cpu", isolate=False).compile_shader(SRC)  # kernel speed: in this process
        xa, ya = iso.arena_tensor(x), iso.empty(n)  # the isolated worker takes these without copies
        for name, run, ref in [
            (
                "exp float (dense ILP4)",
                lambda: lib.exp_dense_float_float(y, x, n, threads=[(n + 3) // 4]),
                lambda: torch.exp(x, out=y),
            ),
            (
                "exp float (dense_scalar)",
                lambda: lib.exp_dense_scalar_float_float(y, x, threads=[n]),
                lambda: torch.exp(x, out=y),
            ),
            (
                "exp half (dense ILP4)",
                lambda: lib.exp_dense_half_half(yh, xh, n, threads=[(n + 3) // 4]),
                lambda: torch.exp(xh, out=yh),
            ),
            (
                "exp float ILP4, isolated",  # tensors in the worker's arena: offsets only
                lambda: iso.exp_dense_float_float(ya, xa, n, threads=[(n + 3) // 4]),
                lambda: torch.exp(xa, out=ya),
            ),
            (
                "  isolated, torch on plain",  # torch on its own memory (transparent huge pages; shared memory has none)
                lambda: iso.exp_dense_float_float(ya, xa, n, threads=[(n + 3) // 4]),
                lambda: torch.exp(x, out=y),
            ),
            (
                "  isolated, copy path",  # plain tensors: copied into the arena and back per launch
                lambda: iso.exp_dense_float_float(y, x, n, threads=[(n + 3) // 4]),
                lambda: torch.exp(x, out=y),
            ),
            (
                "exp half (dense_scalar)",
                lambda: lib.exp_dense_scalar_half_half(yh, xh, threads=[n]),
                lambda: torch.exp(xh, out=yh),
            ),
            (
                "exp bfloat (dense ILP4)",
                lambda: lib.exp_dense_bfloat_bfloat(yb, xb, n, threads=[(n + 3) // 4]),
                lambda: torch.exp(xb, out=yb),
            ),
            (
                "exp bfloat (dense_scalar)",
                lambda: lib.exp_dense_scalar_bfloat_bfloat(yb, xb, threads=[n]),
                lambda: torch.exp(xb, out=yb),
            ),
            (
                "mad float (dense_ilp4)",
                lambda: lib.mad_dense_ilp4_float_float(y, x, x, n, threads=[(n + 3) // 4]),
                lambda: torch.addcmul(x, x, x, out=y),
            ),
            (
                "mad float (dense)",
                lambda: lib.mad_dense_float_float(y, x, x, threads=[n]),
                lambda: torch.addcmul(x, x, x, out=y),
            ),
        ]:
            best = [float("inf"), float("inf")]
            for _ in range(args.repeat + 1):  # interleaved: both see the same machine load
                for i, f in enumerate((run, ref)):
                    best[i] = min(best[i], _time(f))
            rows.append((name, *best))
        threads = os.environ.get("MPS_MIGRATE_THREADS") or len(os.sched_getaffinity(0))
        print(f"\nthroughput, {n} elements, {threads} worker threads, torch threads {torch.get_num_threads()}")
        for name, ours, theirs in rows:
            print(
                f"  {name:26s} cpu-backend {n / ours / 1e6:8.1f} Melem/s   torch {n / theirs / 1e6:8.1f} Melem/s"
                f"   ratio ours/torch = {theirs / ours:.2f}x{'' if theirs / ours >= 0.3 else '  (< 0.3 target)'}"
            )


def _time(f) -> float:
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
