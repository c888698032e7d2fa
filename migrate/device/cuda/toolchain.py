"""CUDA-mode clang (zig's, no CUDA installation) and libdevice, ptxas where present."""

from __future__ import annotations

import functools
import glob
import hashlib
import os
import shutil
import sys
from pathlib import Path

from ..cpu import toolchain as cpu_toolchain
from ...resources import python_module

ARCH = "sm_90"  # H100/H200; PTX is JIT-compiled forward by the driver
PTX_ISA = "+ptx80"


def msl_dir() -> Path:
    return cpu_toolchain.msl_dir()


@functools.lru_cache(maxsize=None)
def libdevice() -> Path | None:
    """libdevice.10.bc: CUDA's float math as bitcode (MPS_MIGRATE_LIBDEVICE, a CUDA
    installation, or the nvidia-cuda-nvcc / triton wheels)."""
    env = os.environ.get("MPS_MIGRATE_LIBDEVICE")
    if env:
        return Path(env) if Path(env).is_file() else None
    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(str(Path(nvcc).resolve().parent.parent))
    roots += ["/usr/local/cuda"] + sorted(glob.glob("/usr/local/cuda-*"), reverse=True)
    for r in roots:
        if r and (Path(r) / "nvvm/libdevice/libdevice.10.bc").is_file():
            return Path(r) / "nvvm/libdevice/libdevice.10.bc"
    for sp in sys.path:
        for rel in ("nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc", "triton/backends/nvidia/lib/libdevice.10.bc"):
            if (Path(sp) / rel).is_file():
                return Path(sp) / rel
    return None


@functools.lru_cache(maxsize=None)
def ptxas() -> str | None:
    found = shutil.which("ptxas")
    if found:
        return found
    lib = libdevice()
    if lib is not None and (lib.parents[2] / "bin/ptxas").is_file():
        return str(lib.parents[2] / "bin/ptxas")
    return None


# zig's libc++ as `zig c++` configures it (its flags, read off `zig c++ -###`); clang in
# CUDA mode would otherwise take the host's libstdc++.
LIBCXX_DEFINES = tuple(
    """__GLIBC_MINOR__=31 _LIBCPP_ABI_VERSION=1 _LIBCPP_ABI_NAMESPACE=__1 _LIBCPP_HAS_THREADS=1
_LIBCPP_HAS_MONOTONIC_CLOCK _LIBCPP_HAS_TERMINAL _LIBCPP_HAS_MUSL_LIBC=0 _LIBCXXABI_DISABLE_VISIBILITY_ANNOTATIONS
_LIBCPP_DISABLE_VISIBILITY_ANNOTATIONS _LIBCPP_HAS_VENDOR_AVAILABILITY_ANNOTATIONS=0 _LIBCPP_HAS_FILESYSTEM=1
_LIBCPP_HAS_RANDOM_DEVICE _LIBCPP_HAS_LOCALIZATION _LIBCPP_HAS_UNICODE _LIBCPP_HAS_WIDE_CHARACTERS
_LIBCPP_HAS_NO_STD_MODULES _LIBCPP_HAS_TIME_ZONE_DATABASE _LIBCPP_PSTL_BACKEND_SERIAL
_LIBCPP_HARDENING_MODE=_LIBCPP_HARDENING_MODE_NONE
_LIBCPP_ASSERTION_SEMANTIC_DEFAULT=_LIBCPP_ASSERTION_SEMANTIC_IGNORE""".split()
)
SYSTEM_DIRS = (
    "libcxx/include",
    "libcxxabi/include",
    "include",
    "libc/include/x86-linux-gnu",
    "libc/include/generic-glibc",
    "libc/include/x86-linux-any",
    "libc/include/any-linux-any",
)


@functools.lru_cache(maxsize=None)
def zig_lib() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("ziglang")
    if spec is None or not spec.submodule_search_locations:
        raise OSError("the ziglang package (the compiler) is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "lib"


def include_flags() -> list[str]:
    z = zig_lib()
    return ["-nostdinc", "-nostdinc++"] + [f"-isystem{z / d}" for d in SYSTEM_DIRS] + [f"-D{d}" for d in LIBCXX_DEFINES]


def compile_cmd(src: Path, out: Path, opt: int, lib: Path) -> list[str]:
    d = msl_dir()
    return [
        *python_module("ziglang", "clang"),
        "-x",
        "cuda",
        "--cuda-device-only",
        f"--cuda-gpu-arch={ARCH}",
        "-nocudalib",
        "-nocudainc",
        "--cuda-path=/nonexistent",
        "-Wno-unknown-cuda-version",
        "-Xclang",
        "-target-feature",
        "-Xclang",
        PTX_ISA,
        "-S",
        f"-O{opt}",
        "-g0",
        "-w",
        *cpu_toolchain.COMMON_FLAGS,
        *cpu_toolchain.NUMERICS_FLAGS,
        "-fno-finite-loops",
        *include_flags(),
        f"-I{d}",
        "-include",
        str(d / "cuda_runtime.h"),
        "-Xclang",
        "-mlink-builtin-bitcode",
        "-Xclang",
        str(lib),
        str(src),
        "-o",
        str(out),
    ]


@functools.lru_cache(maxsize=None)
def runtime_fingerprint() -> str:
    """Everything besides the shader that decides the PTX, readable without a compiler
    (the GPU machine finds prebuilt PTX by it)."""
    h = hashlib.sha256()
    h.update(
        repr(
            (ARCH, PTX_ISA, cpu_toolchain.COMMON_FLAGS, cpu_toolchain.NUMERICS_FLAGS, cpu_toolchain.METAL_VERSION)
        ).encode()
    )
    for f in sorted(msl_dir().rglob("*")):
        if f.is_file():
            h.update(f.name.encode())
            h.update(f.read_bytes())
    here = Path(__file__).parent
    cpu = here.parent / "cpu"
    for f in sorted(here.glob("*.py")) + sorted(cpu.glob("prepass*.py")) + [cpu / "lexer.py"]:
        h.update(f.read_bytes())
    return h.hexdigest()
