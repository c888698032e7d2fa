"""The host toolchain: clang-19 (Objective-C++ for the GNUstep 1.5 ABI), GNU libobjc, the Blocks runtime and
GNUstep's Foundation, all Debian packages; the torch wheel's headers and libraries.

Host files are compiled with ``-fobjc-runtime=gnustep-1.5`` (the only clang runtime mode that lowers Objective-C
subscripts to message sends GNU libobjc can answer) and run on GNU libobjc through the shim's ``objc_glue.c``.
"""

from __future__ import annotations

import glob
import os
import shutil
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from migrate.resources import installed_torch_dir, kernels_dir

APT_PACKAGES = ("clang-19", "libobjc-12-dev", "libblocksruntime-dev", "libgnustep-base-dev")
INSTALL = "apt-get install -y " + " ".join(APT_PACKAGES)


class ToolchainMissing(Exception):
    """The host toolchain is not installed: one line with the apt command."""


@dataclass(frozen=True)
class Toolchain:
    cxx: str
    cc: str
    gcc_lib: Path  # the folder holding libobjc.so and GNU libobjc's objc/ headers (include/objc)
    gnustep_include: Path
    torch_dir: Path

    @property
    def objc_include(self) -> Path:
        return self.gcc_lib / "include" / "objc"


def shim_dir() -> Path:
    return kernels_dir() / "host_shim"


@cache
def find() -> Toolchain:
    """The installed toolchain, or ToolchainMissing naming what lacks and the apt command."""
    cxx = shutil.which(os.environ.get("MPS_MIGRATE_HOST_CXX") or "clang++-19")
    cc = shutil.which("clang-19") or (cxx and cxx.replace("clang++", "clang"))
    missing = []
    if not cxx:
        missing.append("clang-19")
    libs = sorted(glob.glob("/usr/lib/gcc/*/*/include/objc/runtime.h"))
    gcc_lib = Path(libs[-1]).parents[2] if libs else None
    if gcc_lib is None or not (gcc_lib / "libobjc.so").exists():
        missing.append("GNU libobjc (libobjc-12-dev)")
    if not Path("/usr/include/Block.h").exists():
        missing.append("the Blocks runtime (libblocksruntime-dev)")
    gnustep = Path("/usr/include/GNUstep")
    if not (gnustep / "Foundation" / "Foundation.h").exists():
        missing.append("GNUstep's Foundation (libgnustep-base-dev)")
    if missing:
        raise ToolchainMissing(f"host code needs {', '.join(missing)}, which is not installed: {INSTALL}")
    torch_dir = installed_torch_dir()
    if torch_dir is None:
        raise ModuleNotFoundError("No module named 'torch'", name="torch")
    return Toolchain(cxx, cc or "clang-19", gcc_lib, gnustep, torch_dir)


def objc_headers(cache_dir: Path, tc: Toolchain) -> Path:
    """A folder whose ``objc/`` holds GNU libobjc's headers (linked one by one: gcc's include folder itself has
    its own stddef.h and friends, which must not shadow clang's)."""
    dest = cache_dir / "objc-include"
    target = dest / "objc"
    if not (target / "runtime.h").exists():
        target.mkdir(parents=True, exist_ok=True)
        for header in tc.objc_include.iterdir():
            link = target / header.name
            if not link.exists():
                try:
                    link.symlink_to(header)
                except FileExistsError:
                    pass
    return dest


OBJC_FLAGS = (
    "-x", "objective-c++", "-std=c++20", "-fobjc-runtime=gnustep-1.5", "-fblocks", "-fobjc-exceptions",
    "-fconstant-string-class=NSConstantString",
)  # fmt: skip
# The defines a macOS build of libtorch_cpu compiles its .mm files with (USE_MPS: DispatchStub's MPS slot).
# FMT_USE_CONSTEVAL=0: fmt checks format strings at compile time only from C++20 on; the trees build as C++17 and
# pass run-time strings to fmt::format (the torch 2.13 headers need C++20 here). FMT_HEADER_ONLY: libtorch keeps
# its fmt symbols to itself.
DEFINES = (
    "-DUSE_MPS", "-DHAVE_AVX512_CPU_DEFINITION", "-DHAVE_AVX2_CPU_DEFINITION", "-DMPS_MIGRATE_SHIM",
    "-DFMT_USE_CONSTEVAL=0", "-DFMT_HEADER_ONLY=1",
)  # fmt: skip
