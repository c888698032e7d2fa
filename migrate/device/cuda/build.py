"""MSL source -> cached PTX: the CPU backend's clang -E and pre-pass, then CUDA-mode clang.

Cache (`$MPS_MIGRATE_CACHE` or ~/.cache/mps-migrate, subfolder cuda-v1), as the CPU
backend's, but keyed without the compiler and with paths relative to the working
directory where they lie inside it: a cache built here and carried to a GPU machine
(same checkout layout, no zig there) is found as it is.
  <k1>.manifest.json   header dependencies (+ hashes) -> build key k2
  <k2>.json, <k2>.ptx  kernel metadata (argument tables read from the PTX) and the PTX
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from ..cpu import toolchain as cpu_toolchain
from ..cpu.build import Built, _atomic_write, _compile_error, _run, _sha, built_before, preprocessed, write_manifest
from ..errors import BackendUnavailable, MetalCompileError
from . import toolchain
from .launchers import launchers

FORMAT = "cuda-v1"


def cache_root() -> Path:
    from migrate.cache import cache_base

    return cache_base() / FORMAT


def _rel(p: Path | str) -> str:
    p = Path(p).resolve()
    try:
        return str(p.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


_AI = re.compile(r"\.(b8|b32|u32|s32) __msl_ai_(\d+)\[(\d+)\]\s*(?:=\s*\{([^}]*)\})?")


def arg_tables(ptx: str) -> dict[int, list[list[int]]]:
    """The __msl_ai_<i> constant arrays of the PTX (6 int32 per slot) -> {i: [[kind, size, ...]]}."""
    out: dict[int, list[list[int]]] = {}
    for m in _AI.finditer(ptx):
        raw = [int(x, 0) for x in (m[4] or "").replace(" ", "").split(",") if x]
        if m[1] == "b8":  # little-endian bytes; PTX leaves out trailing zeros
            data = bytes(v & 0xFF for v in raw) + bytes(int(m[3]) - len(raw))
            ints = [int.from_bytes(data[i : i + 4], "little", signed=True) for i in range(0, len(data), 4)]
        else:
            ints = [v - (1 << 32) if v >= 1 << 31 else v for v in raw] + [0] * (int(m[3]) - len(raw))
        out[int(m[2])] = [ints[i : i + 6] for i in range(0, len(ints), 6)]
    return out


def build(
    source: str,
    include_dirs: list[Path],
    filename: str = "shader.metal",
    opt: int = 2,
    timeout: float = 600.0,
    assemble: bool = False,
) -> Built:
    """assemble: also run ptxas (where present) on the PTX, so unresolved calls and
    PTX the driver would reject are compile errors here."""
    t0 = time.perf_counter()
    root = cache_root()
    filename = Path(filename).name or "shader.metal"
    key = [FORMAT, toolchain.runtime_fingerprint(), source, filename, [_rel(p) for p in include_dirs], opt]
    k1, hit = built_before(root, key, ".ptx", lambda man: not assemble or man.get("assembled"))
    if hit is not None:
        return Built(*hit, True, time.perf_counter() - t0)

    lib = toolchain.libdevice()
    if lib is None:
        raise BackendUnavailable(
            "CUDA backend: no prebuilt PTX for this shader and no libdevice.10.bc to build it "
            "(set MPS_MIGRATE_LIBDEVICE or CUDA_HOME, or pip install nvidia-cuda-nvcc-cu12)"
        )
    try:
        cpu_toolchain.compiler_id()
    except Exception as e:  # pragma: no cover
        raise BackendUnavailable(f"CUDA backend: the compiler (ziglang) is missing: {e}") from None
    src, result = preprocessed(root, k1, source, include_dirs, filename, timeout)
    # threadgroup objects: the CPU pre-pass makes them `static thread_local` (one per worker); a block's shared memory here
    text = re.sub(r"\bstatic\s+thread_local\b", "__shared__", result.text)
    cu = text + "\n" + launchers(result.kernels)
    cu = cu.replace(str(src), filename)
    flags = toolchain.compile_cmd(Path("x.cu"), Path("x.ptx"), opt, lib)[3:]
    k2 = _sha(
        json.dumps(
            [toolchain.runtime_fingerprint(), cpu_toolchain.compiler_id(), flags[:-3], _sha(lib.read_bytes()), cu]
        ).encode()
    )
    ptx, meta_path = root / f"{k2}.ptx", root / f"{k2}.json"
    cached = ptx.exists() and meta_path.exists()
    if not cached:
        with tempfile.TemporaryDirectory(dir=_mkdir(root), prefix=".build-") as tmp:
            gen = Path(tmp) / f"{filename}.gen.cu"
            gen.write_text(cu)
            out = Path(tmp) / "out.ptx"
            cc = _run(toolchain.compile_cmd(gen, out, opt, lib), timeout, "compilation", filename)
            if cc.returncode != 0:
                raise _compile_error("compilation", cc.stderr.replace(".gen.cu", ".gen.cpp"), src, filename, source)
            text_ptx = out.read_text()
            tables = arg_tables(text_ptx)
            meta = {
                "filename": filename,
                "kernels": [
                    {
                        "name": k.host_name,
                        "index": i,
                        "entry": f"__msl_cuda_{i}",
                        "fibers": k.uses_sync,
                        "nslots": (max(k.slots) + 1) if k.slots else 0,
                        "params": [{"text": p.text, "attr": list(p.attr)} for p in k.params],
                        "slots": {str(s): pi for s, pi in k.slots.items()},
                        "tgmem": sorted(int(p.attr[1]) for p in k.params if p.attr[0] == "tgmem"),
                        "args": tables.get(i, [])[: (max(k.slots) + 1) if k.slots else 0],
                        "file": k.origin.file.replace(str(src), filename),
                        "line": k.origin.line,
                    }
                    for i, k in enumerate(result.kernels)
                ],
            }
            _atomic_write(meta_path, json.dumps(meta).encode())
            os.replace(out, ptx)
    meta = json.loads(meta_path.read_text())
    assembled = False
    if assemble and toolchain.ptxas():
        check_ptx(ptx, filename, timeout)
        assembled = True
    write_manifest(root, k1, k2, src, result.files, _rel, assembled=assembled)
    return Built(ptx, meta, cached, time.perf_counter() - t0)


def _mkdir(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p


def check_ptx(ptx: Path, filename: str, timeout: float = 600.0) -> None:
    """ptxas for the target architecture: what the driver's JIT would do on the GPU."""
    cmd = [toolchain.ptxas(), f"-arch={toolchain.ARCH}", str(ptx), "-o", os.devnull]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()][:5]
        raise MetalCompileError(
            f"Metal compile error in {filename}\nptxas rejects the generated PTX:\n" + "\n".join(lines)
        )
