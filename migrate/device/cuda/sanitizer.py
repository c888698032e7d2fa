"""compute-sanitizer (racecheck, memcheck) around a CUDA-backend run: races between the
threads of a threadgroup (a missing barrier) and out-of-bounds accesses on the GPU."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from migrate.errors import UsageError

TOOLS = ("racecheck", "memcheck")
ENTRY = "import sys; from migrate.cli import main; sys.exit(main())"
_SUMMARY = re.compile(r"(RACECHECK|ERROR) SUMMARY: (\d+) (?:hazard|error)")


def find() -> str | None:
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    roots = [os.environ.get("CUDA_HOME"), "/usr/local/cuda"] + sorted(glob.glob("/usr/local/cuda-*"), reverse=True)
    for r in roots:
        if r and (Path(r) / "bin/compute-sanitizer").is_file():
            return str(Path(r) / "bin/compute-sanitizer")
    return None


def run_tool(tool: str, argv: list[str], only_ours: bool = True) -> tuple[int, int, str]:
    """(exit code of the program, hazards/errors found, output) of `argv` (Python arguments) under `tool`."""
    cs = find()
    if cs is None:
        raise UsageError("--racecheck needs compute-sanitizer (CUDA toolkit), which is not on this machine")
    cmd = [cs, "--tool", tool, "--error-exitcode", "86", "--print-limit", "20"]
    if tool == "racecheck":
        cmd += ["--racecheck-report", "hazard"]
    if only_ours:  # torch's own kernels are not under test
        cmd += ["--kernel-regex", "kns=__msl_cuda_"]
    proc = subprocess.run(
        cmd + [sys.executable, *argv],
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(Path(__file__).resolve().parents[3]), os.environ.get("PYTHONPATH")])
            ),
        },
    )
    out = proc.stdout + proc.stderr
    if only_ours and proc.returncode not in (0, 1, 86) and "kernel-regex" in out:
        return run_tool(tool, argv, only_ours=False)
    counts = [int(m[2]) for m in _SUMMARY.finditer(out)]
    found = sum(counts) if counts else (1 if proc.returncode == 86 else 0)
    return (0 if proc.returncode == 86 else proc.returncode), found, out


def verify_under_sanitizers(args) -> int:
    if args.backend != "cuda":
        raise UsageError("--racecheck needs --backend cuda")
    argv = [a for a in sys.argv[1:] if a != "--racecheck"]
    if "verify" not in argv:
        argv = ["verify", args.family, "--root", str(args.root), "--backend", "cuda", "--format", args.format]
    worst = 0
    for tool in TOOLS:
        rc, found, out = run_tool(tool, ["-c", ENTRY, *argv])
        if tool == TOOLS[0]:
            sys.stdout.write("\n".join(ln for ln in out.splitlines() if not ln.startswith("=========")) + "\n")
        hazards = [ln for ln in out.splitlines() if ln.startswith("=========") and ("Error" in ln or "hazard" in ln)]
        print(
            f"{tool}: {found} {'hazard' if tool == 'racecheck' else 'error'}(s)"
            + ("".join(f"\n  {h}" for h in hazards[:10]) if found else "")
        )
        worst = max(worst, rc, 1 if found else 0)
    return worst
