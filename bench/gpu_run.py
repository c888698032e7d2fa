"""The CUDA backend's proof on an NVIDIA GPU, in one run (issue 17).

Here (CPU machine, our venv):   bash bench/gpu_prepare.sh
    copies the 2.7.0a0 files verify reads into build/gpu-tree/, prebuilds every PTX into
    build/gpu/cache/ and records the CPU backend's verdicts and times in build/gpu/cpu.json.
On the GPU machine (its python, torch with CUDA, compute-sanitizer; no zig, no venv):
    PYTHONPATH=. python bench/gpu_run.py     -> $OUT/report.txt (else build/gpu/report.txt)
(a) verify of FAMILIES on cuda against the CPU verdicts, (b) a planted missing barrier under
racecheck (and its fixed twin), (c) a planted 32-bit index past 2^31 and 2^32 elements
(and its 64-bit twin), (d) time for the family set, cuda against cpu.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TREE = Path("build/gpu-tree")
GPU = Path("build/gpu")
CACHE = GPU / "cache"
FAMILIES = ["exp", "sinc", "sqrt", "tanh", "erfinv", "i0", "i1", "fmax", "fmin", "copysign"]
ENTRY = "import sys; from migrate.cli import main; sys.exit(main())"

RACE = r"""
#include <metal_stdlib>
using namespace metal;
// each thread adds its neighbour's staged value: the read needs a barrier after the writes
kernel void neighbour_sum(device float* out [[buffer(0)]], constant float* in [[buffer(1)]],
                          uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]],
                          uint n [[threads_per_threadgroup]]) {
  threadgroup float stage[256];
  stage[l] = in[i];
#ifdef WITH_BARRIER
  threadgroup_barrier(mem_flags::mem_threadgroup);
#endif
  out[i] = stage[l] + stage[(l + 1) % n];
}
"""

OVERFLOW = r"""
#include <metal_stdlib>
using namespace metal;
// marks element y * width + x; INDEX is uint (the planted bug) or ulong
kernel void mark(device uchar* out [[buffer(0)]], constant ulong& n [[buffer(1)]], constant uint& width [[buffer(2)]],
                 uint2 pos [[thread_position_in_grid]]) {
  const INDEX idx = INDEX(pos.y) * INDEX(width) + INDEX(pos.x);
  if (ulong(idx) < n) out[idx] += 1;
}
"""


def env() -> dict:
    return {**os.environ, "MPS_MIGRATE_CACHE": str(CACHE.resolve()),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}


def verify(family: str, backend: str, timeout: float = 900) -> tuple[dict | None, float, str]:
    cmd = [sys.executable, "-c", ENTRY, "verify", family, "--root", str(TREE), "--backend", backend,
           "--no-opinfo", "--format", "json"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=timeout, cwd=REPO)
    dt = time.perf_counter() - t0
    try:
        return json.loads(proc.stdout), dt, proc.stderr[-400:]
    except ValueError:
        return None, dt, (proc.stdout + proc.stderr)[-400:]


def verdicts(report: dict | None) -> dict[str, str]:
    if report is None:
        return {}
    return {f"{c['dtype']}/{c['layout']}": c["status"] for c in report["cells"]}


def sources():
    return {"race_bad": RACE, "race_good": "#define WITH_BARRIER\n" + RACE,
            "overflow_uint": "#define INDEX uint\n" + OVERFLOW, "overflow_ulong": "#define INDEX ulong\n" + OVERFLOW}


def prepare() -> None:
    """Here: PTX for every family and planted kernel, the CPU verdicts and times."""
    os.environ["MPS_MIGRATE_CACHE"] = str(CACHE.resolve())
    sys.path.insert(0, str(REPO))
    from migrate.device import get_backend

    os.chdir(REPO)
    be = get_backend("cuda", root=TREE, assemble=True)
    for name, src in sources().items():
        be.compile_shader(src, filename=f"{name}.metal")
    cpu = {}
    for fam in FAMILIES:
        verify(fam, "cpu")  # builds the CPU library: the timed run below is warm, as the GPU's (prebuilt PTX)
        report, dt, err = verify(fam, "cpu")
        cpu[fam] = {"seconds": round(dt, 2), "verdicts": verdicts(report), "ok": report and report["ok"],
                    "summary": report and report["summary"]["cases"], "error": None if report else err}
        verify(fam, "cuda")  # builds (and caches) every PTX the GPU run needs; launches fail here
        print(f"prepared {fam}: cpu {dt:.1f} s, {cpu[fam]['summary']}", flush=True)
    (GPU / "cpu.json").write_text(json.dumps(cpu, indent=1))


RACE_DRIVER = r"""
import sys, torch
from migrate.device import get_backend
lib = get_backend("cuda", root="build/gpu-tree").compile_shader(open(sys.argv[1]).read(), filename=sys.argv[2] + ".metal")
x = torch.randn(1 << 16, device="cuda"); out = torch.empty_like(x)
lib.neighbour_sum(out, x, threads=[x.numel()], group_size=[256])
torch.cuda.synchronize()
ref = x.view(-1, 256); ref = (ref + ref.roll(-1, 1)).view(-1)
print("values match:", bool(torch.equal(out, ref)))
"""


def racecheck(lines: list[str]) -> None:
    from migrate.device.cuda import sanitizer

    for name in ("race_bad", "race_good"):
        src = GPU / f"{name}.metal"
        src.write_text(sources()[name])
        t0 = time.perf_counter()
        rc, found, out = sanitizer.run_tool("racecheck", ["-c", RACE_DRIVER, str(src), name])
        tail = [ln for ln in out.splitlines() if "hazard" in ln.lower() or "SUMMARY" in ln or "values" in ln][:6]
        lines.append(f"  {name}: exit {rc}, racecheck hazards {found} ({time.perf_counter() - t0:.1f} s)")
        lines += [f"    {t}" for t in tail]


def overflow(lines: list[str]) -> None:
    import torch

    from migrate.device import get_backend

    be = get_backend("cuda", root=TREE)
    width = 1 << 16
    for n in ((1 << 31) + (1 << 20), (1 << 32) + (1 << 20)):
        height = -(-n // width)
        out = torch.zeros(n, dtype=torch.uint8, device="cuda")
        for name in ("overflow_uint", "overflow_ulong"):
            out.zero_()
            lib = be.compile_shader(sources()[name], filename=f"{name}.metal")
            t0 = time.perf_counter()
            lib.mark(out, n, width, threads=[width, height], group_size=[256, 4])
            torch.cuda.synchronize()
            dt = time.perf_counter() - t0
            wrong = int((out != 1).sum())
            first = int((out != 1).nonzero()[0]) if wrong else -1
            verdict = "PASS" if wrong == 0 else f"FAIL: {wrong} elements not written exactly once, first at {first}"
            lines.append(f"  n={n} (2^{n.bit_length() - 1}+2^20) {name}: {verdict} ({dt:.2f} s)")
        del out
        torch.cuda.empty_cache()


def main() -> int:
    if "--prepare" in sys.argv:
        prepare()
        return 0
    os.chdir(REPO)
    sys.path.insert(0, str(REPO))
    os.environ["MPS_MIGRATE_CACHE"] = str(CACHE.resolve())
    out_dir = Path(os.environ.get("OUT") or GPU)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = out_dir / "report.txt"
    lines: list[str] = []

    def flush():
        report.write_text("\n".join(lines) + "\n")
        print("\n".join(lines[-1:]), flush=True)

    import torch
    lines.append(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, python {sys.version.split()[0]}")
    cpu = json.loads((GPU / "cpu.json").read_text())
    lines.append("(a) verify of 2.7.0a0 families, cuda vs the CPU backend's verdicts (--no-opinfo, same seed)")
    flush()
    total_cuda = total_cpu = 0.0
    agree_all = True
    for fam in FAMILIES:
        rep, dt, err = verify(fam, "cuda")
        got, want = verdicts(rep), cpu[fam]["verdicts"]
        diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
        agree_all &= not diff and bool(got)
        total_cuda += dt
        total_cpu += cpu[fam]["seconds"]
        summ = rep["summary"]["cases"] if rep else err
        lines.append(f"  {fam}: {'AGREE' if not diff and got else 'DIFFER'} cells {len(got)}, cuda {summ} "
                     f"({dt:.1f} s) vs cpu {cpu[fam]['summary']} ({cpu[fam]['seconds']:.1f} s)")
        for k in diff[:5]:
            cell = next((c for c in rep["cells"] if f"{c['dtype']}/{c['layout']}" == k), None) if rep else None
            why = (cell["failures"][:1] or [cell["stats"]["first_failure"]]) if cell else ""
            lines.append(f"    {k}: cuda {got.get(k)} cpu {want.get(k)} {why}")
        flush()
    lines.append(f"  all families agree: {agree_all}")
    lines.append(f"(d) time for the family set: cuda {total_cuda:.1f} s, cpu backend {total_cpu:.1f} s "
                 "(each a fresh process: torch import, references, launches)")
    lines.append("(b) planted missing barrier under compute-sanitizer racecheck")
    flush()
    try:
        racecheck(lines)
    except Exception as exc:  # keep the rest of the report
        lines.append(f"  racecheck could not run: {type(exc).__name__}: {exc}")
    flush()
    lines.append("(c) planted 32-bit index (uint) vs 64-bit (ulong), past 2^31 and 2^32 elements")
    flush()
    try:
        overflow(lines)
    except Exception as exc:
        lines.append(f"  overflow case could not run: {type(exc).__name__}: {exc}")
    flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
