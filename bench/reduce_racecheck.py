"""A generated reduction kernel (var's Welford kernel, as `port var` writes it for the 2.7.0a0 tree) with and without
its threadgroup barrier, launched on the CUDA backend under compute-sanitizer's racecheck (issue 42: a missing
barrier in a generated reduction is caught on the CUDA backend).

Here (no GPU):   .venv/bin/python bench/reduce_racecheck.py --prepare
                 writes build/race/: both sources, the tree's c10/metal headers, the prebuilt PTX (cache)
GPU machine:     PYTHONPATH=. python3 bench/reduce_racecheck.py        (carry build/race)
                 writes build/race/report.txt: per kernel, racecheck's exit, hazards and whether values match
Also here:       .venv/bin/python bench/reduce_racecheck.py --cpu    (both kernels on the CPU backend)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = Path("build/race")
ROOT = OUT / "tree"  # only c10/metal: what the kernels include
TREE = Path(os.environ.get("TREE", "/root/.cache/mps-corpus/pytorch-v2.7.0a0"))
BARRIER = "  partial[tid] = acc;\n  ::metal::threadgroup_barrier(::metal::mem_flags::mem_threadgroup);\n"
ROWS, COLS, GROUP = 64, 1024, 256

DRIVER = (
    r"""
import sys, torch
from migrate.device import get_backend
backend, path = sys.argv[1], sys.argv[2]
lib = get_backend(backend, root="build/race/tree").compile_shader(open(path).read(), filename=path.split("/")[-1])
dev = "cuda" if backend == "cuda" else "cpu"
x = torch.randn(ROWS, COLS, generator=torch.Generator().manual_seed(0)).to(dev)
out = torch.full((ROWS,), float("nan"), device=dev)
lib.var_float([ROWS, COLS], (1, 1), COLS, [1.0], x, out, [COLS, 1], [1, 0], threads=[ROWS * GROUP], group_size=[GROUP])
if dev == "cuda":
    torch.cuda.synchronize()
ok = torch.allclose(out.cpu(), x.cpu().var(dim=1), rtol=1e-4, atol=1e-5)
print("values match:", bool(ok))
""".replace("ROWS", str(ROWS))
    .replace("COLS", str(COLS))
    .replace("GROUP", str(GROUP))
)


def sources() -> dict[str, str]:
    from migrate.port.reduce.kernel import library_of, preamble, section
    from migrate.port.reduce.recipes import recipe

    lib = library_of({}, TREE if TREE.exists() else ROOT)
    good = preamble(lib) + "\n" + section(recipe("var"), lib, "")
    assert BARRIER in good, "the Welford kernel no longer has the barrier this script removes"
    return {"var_good": good, "var_no_barrier": good.replace(BARRIER, "  partial[tid] = acc;\n")}


def prepare() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    (ROOT / "c10").mkdir(parents=True)
    shutil.copytree(TREE / "c10/metal", ROOT / "c10/metal")
    os.environ["MPS_MIGRATE_CACHE"] = str((OUT / "cache").resolve())
    from migrate.device import get_backend

    be = get_backend("cuda", root=str(ROOT))
    for name, text in sources().items():
        (OUT / f"{name}.metal").write_text(text)
        be.compile_shader(text, filename=f"{name}.metal")
    print(f"prepared {OUT}: carry it (and the repository) to the GPU machine")


def run_cpu() -> None:
    for name in ("var_good", "var_no_barrier"):
        r = subprocess.run(
            [sys.executable, "-c", DRIVER, "cpu", str(OUT / f"{name}.metal")], capture_output=True, text=True
        )
        print(name, (r.stdout + r.stderr).strip().splitlines()[-1:])


def run_gpu() -> None:
    from migrate.device.cuda import sanitizer

    os.environ["MPS_MIGRATE_CACHE"] = str((OUT / "cache").resolve())
    lines = [f"racecheck of var's generated Welford kernel, {ROWS} rows of {COLS}, threadgroups of {GROUP}"]
    for name in ("var_good", "var_no_barrier"):
        t0 = time.perf_counter()
        rc, found, out = sanitizer.run_tool("racecheck", ["-c", DRIVER, "cuda", str(OUT / f"{name}.metal")])
        tail = [ln for ln in out.splitlines() if "hazard" in ln.lower() or "SUMMARY" in ln or "values" in ln][:6]
        lines.append(f"  {name}: exit {rc}, racecheck hazards {found} ({time.perf_counter() - t0:.1f} s)")
        lines += [f"    {t}" for t in tail]
    (OUT / "report.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    if "--prepare" in sys.argv:
        prepare()
    elif "--cpu" in sys.argv:
        run_cpu()
    else:
        run_gpu()
