"""The CUDA backend's proof on an NVIDIA GPU, in one run (issue 17).

Here (CPU machine, our venv):   bash bench/gpu_prepare.sh
    copies the 2.7.0a0 files verify reads into build/gpu-tree/, prebuilds every PTX into
    build/gpu/cache/ and records the CPU backend's verdicts and times in build/gpu/cpu.json.
On the GPU machine (its python, torch with CUDA, compute-sanitizer; no zig, no venv):
    PYTHONPATH=. python bench/gpu_run.py     -> $OUT/report.txt (else build/gpu/report.txt)
(a) verify of FAMILIES on cuda against the CPU verdicts, (b) a planted missing barrier under
racecheck (and its fixed twin), (c) a planted 32-bit index past 2^31 and 2^32 elements
(and its 64-bit twin), (d) time for the family set, cuda against cpu: each backend verifies every
family in ONE process (verify's Python API), so CUDA init and module loads are paid once, as the
CPU backend's library builds (warmed by a first run in prepare), (e) verify --large on the GPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TREE = Path("build/gpu-tree")
GPU = Path("build/gpu")
CACHE = GPU / "cache"
FAMILIES = ["exp", "sinc", "sqrt", "tanh", "erfinv", "i0", "i1", "fmax", "fmin", "copysign"]
LARGE = ["exp", "sqrt", "fmax"]  # (e): verify --large, contiguous layout only

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
    return {
        **os.environ,
        "MPS_MIGRATE_CACHE": str(CACHE.resolve()),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }


def verify_all(backend: str, families: list[str], large: bool = False) -> dict:
    """In this process: verify every family (--no-opinfo, the default seed), timing each and its kernel
    calls (bind, copies to and from the device, launch)."""
    t0 = time.perf_counter()
    import torch  # noqa: F401

    from migrate.device.cpu.library import KernelBase
    from migrate.verify.report import to_json
    from migrate.verify.run import Options, verify

    out = {"backend": backend, "import_s": round(time.perf_counter() - t0, 2), "init_s": 0.0, "families": {}}
    if backend == "cuda":
        t1 = time.perf_counter()
        try:
            from migrate.device.cuda.driver import lib

            lib()
        except Exception as exc:  # no GPU here (prepare): launches fail, PTX still builds
            out["init_error"] = str(exc)
        out["init_s"] = round(time.perf_counter() - t1, 2)
    calls = [0.0, 0]
    plain = KernelBase.__call__

    def timed(self, *a, **k):
        t = time.perf_counter()
        try:
            return plain(self, *a, **k)
        finally:
            calls[0] += time.perf_counter() - t
            calls[1] += 1

    KernelBase.__call__ = timed
    opts = dict(backend=backend, opinfo=False, opt=0, timeout=30.0)
    if large:
        opts.update(large=True, layouts=["contiguous"])
    for fam in families:
        calls[:] = [0.0, 0]
        t = time.perf_counter()
        try:
            rep, err = json.loads(to_json(verify(TREE, fam, opts=Options(**opts)))), None
        except Exception as exc:  # CannotRun, HandWritten...: the report says why
            rep, err = None, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        out["families"][fam] = {
            "seconds": round(time.perf_counter() - t, 2),
            "launch_s": round(calls[0], 2),
            "launches": calls[1],
            "report": rep,
            "error": err,
        }
    KernelBase.__call__ = plain
    out["total_s"] = round(time.perf_counter() - t0, 2)
    return out


def verify_all_process(backend: str, families: list[str], large: bool = False, timeout: float = 3000) -> dict:
    """verify_all in a fresh process (its wall time included): a GPU fault cannot take this one down."""
    path = GPU / f"verify-{backend}{'-large' if large else ''}.json"
    path.unlink(missing_ok=True)
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--verify-all",
        backend,
        "--families",
        ",".join(families),
        "--json",
        str(path),
    ] + (["--large"] if large else [])
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=timeout, cwd=REPO)
    if not path.exists():
        return {"error": f"exit {proc.returncode}: {(proc.stdout + proc.stderr)[-600:]}", "families": {}}
    out = json.loads(path.read_text())
    out["process_s"] = round(time.perf_counter() - t0, 2)
    return out


def verdicts(report: dict | None) -> dict[str, str]:
    if report is None:
        return {}
    return {f"{c['dtype']}/{c['layout']}": c["status"] for c in report["cells"]}


def sources():
    return {
        "race_bad": RACE,
        "race_good": "#define WITH_BARRIER\n" + RACE,
        "overflow_uint": "#define INDEX uint\n" + OVERFLOW,
        "overflow_ulong": "#define INDEX ulong\n" + OVERFLOW,
    }


def prepare() -> None:
    """Here: PTX for every family and planted kernel, the CPU verdicts and times."""
    os.environ["MPS_MIGRATE_CACHE"] = str(CACHE.resolve())
    sys.path.insert(0, str(REPO))
    from migrate.device import get_backend

    os.chdir(REPO)
    be = get_backend("cuda", root=TREE, assemble=True)
    for name, src in sources().items():
        be.compile_shader(src, filename=f"{name}.metal")
    verify_all_process("cpu", FAMILIES)  # builds the CPU libraries: the timed run below is warm, as the GPU's
    cpu = verify_all_process("cpu", FAMILIES)
    cuda = verify_all_process("cuda", FAMILIES)  # builds (and caches) every PTX; launches fail here
    for fam in FAMILIES:
        f = cpu["families"].get(fam, {})
        print(
            f"prepared {fam}: cpu {f.get('seconds')} s, {f.get('report') and f['report']['summary']['cases']} "
            f"{f.get('error') or ''}; cuda error {cuda['families'].get(fam, {}).get('error')}",
            flush=True,
        )
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


def compare_families(lines: list[str], cpu: dict, cuda: dict) -> bool:
    agree_all = True
    for fam in FAMILIES:
        c, g = cpu["families"].get(fam, {}), cuda["families"].get(fam, {})
        rep = g.get("report")
        got, want = verdicts(rep), verdicts(c.get("report"))
        diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
        agree_all &= not diff and bool(got)
        summ = lambda f: f["report"]["summary"]["cases"] if f.get("report") else f.get("error")  # noqa: E731
        lines.append(
            f"  {fam}: {'AGREE' if not diff and got else 'DIFFER'} cells {len(got)}, cuda {summ(g)} vs cpu {summ(c)}"
        )
        if diff:
            per = Counter(k.split("/")[0] for k in diff)
            lines.append("    differing cells per dtype: " + ", ".join(f"{d} {n}" for d, n in sorted(per.items())))
        for k in diff[:5]:
            cell = next((x for x in rep["cells"] if f"{x['dtype']}/{x['layout']}" == k), None) if rep else None
            why = (cell["failures"][:1] or [cell["stats"]["first_failure"]]) if cell else ""
            lines.append(f"    {k}: cuda {got.get(k)} cpu {want.get(k)} {why}")
    return agree_all


def timing(lines: list[str], cpu: dict, cuda: dict) -> None:
    tot = lambda r, key: sum(f.get(key, 0) for n, f in r["families"].items() if n in FAMILIES)  # noqa: E731
    for name, r in (("cuda", cuda), ("cpu backend", cpu)):
        lines.append(
            f"  {name}: {tot(r, 'seconds'):.1f} s verifying the {len(FAMILIES)} families in one process, "
            f"of which kernel calls {tot(r, 'launch_s'):.1f} s ({tot(r, 'launches')} calls); "
            f"process {r.get('process_s', 0):.1f} s (imports {r.get('import_s', 0):.1f} s, "
            f"CUDA init {r.get('init_s', 0):.1f} s)"
        )
    lines.append("  per family, verify s / kernel-call s (calls): cuda | cpu")
    for fam in FAMILIES:
        g, c = cuda["families"].get(fam, {}), cpu["families"].get(fam, {})
        lines.append(
            f"    {fam}: {g.get('seconds', 0):.2f} / {g.get('launch_s', 0):.2f} ({g.get('launches', 0)}) | "
            f"{c.get('seconds', 0):.2f} / {c.get('launch_s', 0):.2f} ({c.get('launches', 0)})"
        )


def large(lines: list[str]) -> None:
    r = verify_all_process("cuda", LARGE, large=True)
    if r.get("error"):
        lines.append(f"  could not run: {r['error']}")
    for fam, f in r["families"].items():
        cells = [c for c in (f["report"] or {}).get("cells", []) if c["layout"].startswith("large_")]
        lines.append(f"  {fam}: {f['seconds']:.1f} s {f.get('error') or ''}")
        for c in cells:
            why = c["failures"][:1] or [c["stats"]["first_failure"]]
            lines.append(
                f"    {c['dtype']}/{c['layout']}: {c['status']} {c['kernels']} {why if c['status'] != 'pass' else ''}"
            )


def main() -> int:
    if "--verify-all" in sys.argv:
        a = sys.argv
        fams = a[a.index("--families") + 1].split(",") if "--families" in a else FAMILIES
        os.chdir(REPO)
        sys.path.insert(0, str(REPO))
        out = verify_all(a[a.index("--verify-all") + 1], fams, "--large" in a)
        Path(a[a.index("--json") + 1]).write_text(json.dumps(out))
        return 0
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
    cuda = verify_all_process("cuda", FAMILIES)
    if cuda.get("error"):
        lines.append(f"  cuda run failed: {cuda['error']}")
    agree_all = compare_families(lines, cpu, cuda)
    lines.append(f"  all families agree: {agree_all}")
    lines.append(
        "(d) time for the family set, each backend in one process (same cases; CPU libraries prebuilt, PTX prebuilt)"
    )
    timing(lines, cpu, cuda)
    flush()
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
    lines.append("(e) verify --backend cuda --large (contiguous; cases past 2^31 and 2^32 elements, sampled)")
    flush()
    try:
        large(lines)
    except Exception as exc:
        lines.append(f"  large cases could not run: {type(exc).__name__}: {exc}")
    flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
