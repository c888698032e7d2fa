"""The pinned compiler (clang from the `ziglang` wheel) and its flags."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ...resources import kernels_dir, python_module

# Every half/bfloat operation rounds (as on the GPU); no a*b+c fusion.
NUMERICS_FLAGS = (
    "-ffp-contract=off",
    "-Xclang",
    "-ffloat16-excess-precision=none",
    "-Xclang",
    "-fbfloat16-excess-precision=none",
    "-fno-math-errno",
    "-fno-strict-aliasing",
)
COMMON_FLAGS = (
    "-std=c++17",
    "-fno-exceptions",
    "-fno-rtti",
    "-fno-color-diagnostics",
    "-fno-caret-diagnostics",
    "-ferror-limit=6",
)
METAL_VERSION = 310  # Metal 3.1: `if IF_CONSTEXPR` is a plain `if`, both branches must compile


def msl_dir() -> Path:
    return kernels_dir() / "msl"


def compiler_cmd() -> list[str]:
    return python_module("ziglang", "c++")


X86_64_V3 = {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "movbe", "xsave"}


@functools.lru_cache(maxsize=None)
def _x86_64_level() -> str:
    """x86_64_v3 where the host has it (AVX2 vectors, F16C half conversions), else v2."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        flags = []
    return "x86_64_v3" if X86_64_V3 <= set(flags) else "x86_64_v2"


@functools.lru_cache(maxsize=None)
def target_flags() -> tuple[str, ...]:
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        return ("-target", "x86_64-linux-gnu", f"-mcpu={_x86_64_level()}")
    if machine in ("aarch64", "arm64"):
        return ("-target", "aarch64-linux-gnu", "-mcpu=baseline")
    raise OSError(f"CPU backend: unsupported host architecture {platform.machine()!r}")


@functools.lru_cache(maxsize=None)
def compiler_id() -> str:
    try:
        return "ziglang-" + importlib.metadata.version("ziglang")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover
        out = subprocess.run(compiler_cmd() + ["--version"], capture_output=True, text=True)
        return out.stdout.strip()


def preprocess_cmd(src: Path, include_dirs: list[Path]) -> list[str]:
    d = msl_dir()
    cmd = compiler_cmd() + [
        "-E",
        "-x",
        "c++",
        *COMMON_FLAGS,
        *target_flags(),
        "-nostdinc",
        "-nostdinc++",
        f"-I{d / 'include'}",
    ]
    cmd += [f"-I{p}" for p in include_dirs]
    cmd += [
        "-include",
        str(d / "prepass.h"),
        "-D__METAL__=1",
        f"-D__METAL_VERSION__={METAL_VERSION}",
        "-D__MPS_MIGRATE_CPU__=1",
        str(src),
    ]
    return cmd


# glibc's vector math library: with it, clang turns the math calls of a vectorised loop
# into calls of its SIMD variants (expf -> _ZGVdN8v_expf, 1 ulp like libm's). zig ships
# no stub for it, so the host's own copy is linked by path; without one, math stays scalar.
LIBMVEC = ("/lib/x86_64-linux-gnu/libmvec.so.1", "/usr/lib/x86_64-linux-gnu/libmvec.so.1", "/lib64/libmvec.so.1")


@functools.lru_cache(maxsize=None)
def vector_math() -> tuple[str, ...]:
    """(-fveclib=libmvec, path) where the host's glibc has libmvec for this target, else ()."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return ()
    found = next((p for p in LIBMVEC if Path(p).is_file()), None)
    return ("-fveclib=libmvec", found) if found else ()


def compile_cmd(src: Path, out: Path, opt: int) -> list[str]:
    d = msl_dir()
    return compiler_cmd() + [
        "-shared",
        "-fPIC",
        f"-O{opt}",
        "-g0",
        "-w",
        *COMMON_FLAGS,
        *NUMERICS_FLAGS,
        *target_flags(),
        "-fvisibility=hidden",
        "-fno-finite-loops",
        *vector_math(),
        f"-I{d}",
        "-include",
        str(d / "metal_stdlib.h"),
        "-x",
        "c++",
        str(src),
        "-x",
        "none",
        "-o",
        str(out),
        "-lm",
        "-lpthread",
    ]


@functools.lru_cache(maxsize=None)
def runtime_fingerprint() -> str:
    """Hash of everything besides the shader that decides the build output."""
    h = hashlib.sha256()
    h.update(compiler_id().encode())
    h.update(repr((NUMERICS_FLAGS, COMMON_FLAGS, target_flags(), METAL_VERSION)).encode())
    for f in sorted(msl_dir().rglob("*")):
        if f.is_file():
            h.update(f.name.encode())
            h.update(f.read_bytes())
    for f in sorted(Path(__file__).parent.glob("*.py")):
        h.update(f.read_bytes())
    return h.hexdigest()


PROBE = '#include <cstdint>\nextern "C" int __msl_probe(int x) { return x + 1; }\n'


def ensure_runtime(cache: Path, opt: int = 0, announce_after: float = 2.0, progress_every: float = 10.0) -> None:
    """zig builds libc++/compiler_rt once per target and optimisation level (about a minute each):
    do it on a tiny file, with progress lines on stderr and no time limit, so no first build is
    silent and a slow one (a loaded machine) is never killed by a shader compile's timeout."""
    flags = compile_cmd(Path("x.cpp"), Path("x.so"), opt)[3:]
    key = hashlib.sha256(repr((compiler_id(), flags)).encode()).hexdigest()[:16]
    marker = cache / f"runtime-{key}.ready"
    if marker.exists():
        return
    cache.mkdir(parents=True, exist_ok=True)
    say = lambda msg: print(f"mps-migrate: {msg}", file=sys.stderr, flush=True)  # noqa: E731
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(dir=cache, prefix=".probe-") as tmp:
        src, out = Path(tmp) / "probe.cpp", Path(tmp) / "probe.so"
        src.write_text(PROBE)
        proc = subprocess.Popen(
            compile_cmd(src, out, opt), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        announced = False
        while True:
            try:
                _, err = proc.communicate(timeout=progress_every if announced else announce_after)
                break
            except subprocess.TimeoutExpired:
                if not announced:
                    say(
                        "first use of the CPU backend on this machine: zig builds its C++ runtime once "
                        "(about a minute)..."
                    )
                    announced = True
                else:
                    say(f"  still building the C++ runtime ({time.monotonic() - t0:.0f} s)")
        if proc.returncode != 0:
            raise OSError("the C++ compiler cannot build a trivial library: " + err.strip()[-500:])
    if announced:
        say(f"C++ runtime ready ({time.monotonic() - t0:.0f} s)")
    marker.write_text("ok\n")
