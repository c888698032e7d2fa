"""A family's host library: the shim runtime, the tree's ``OperationUtils.mm``, the family's host files and its
MPS registrations, linked into one shared library the worker loads (and the DispatchStub preload beside it).
Every object is cached by its inputs; the link is cached by the objects' names."""

from __future__ import annotations

import hashlib
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import registrations, stubs, toolchain
from .units import MPS_DIR, TreeUnits, UnitResult, _write, cache_root, compile_object

RUNTIME = ("objc_glue.c", "metal.mm", "metal_device.mm", "aten_mps.mm", "mpsgraph.mm")


@dataclass
class HostBuild:
    library: Path | None
    preload: Path | None
    registered: set[str]
    failures: list[UnitResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.library is not None and not self.failures


def _runtime_sources(units: TreeUnits) -> list[Path]:
    runtime = toolchain.shim_dir() / "runtime"
    sources = [runtime / name for name in RUNTIME]
    text = stubs.stub_source([toolchain.shim_dir() / "include"], [s for s in sources if s.suffix == ".mm"])
    generated = cache_root() / "generated" / f"stubs-{hashlib.sha256(text.encode()).hexdigest()[:16]}.mm"
    if not generated.exists():
        _write(generated, text.encode())
    return [*sources, generated]


def _link(units: TreeUnits, objects: list[Path], name: str, libs: list[str]) -> tuple[Path | None, str]:
    tc = units.tc
    key = hashlib.sha256("\n".join([name, *map(str, objects), *libs]).encode()).hexdigest()[:24]
    out = cache_root() / "libs" / f"{name}-{key}.so"
    if out.exists():
        return out, ""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.so")
    torch_lib = tc.torch_dir / "lib"
    cmd = [
        tc.cxx, "-shared", "-o", str(tmp), *map(str, objects), *libs,
        f"-L{torch_lib}", "-ltorch_cpu", "-lc10", f"-Wl,-rpath,{torch_lib}", "-ldl",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        return None, proc.stderr.strip()
    tmp.replace(out)
    return out, ""


def build_family(units: TreeUnits, host_files: list[Path], operators: set[str], progress=None) -> HostBuild:
    t0 = time.perf_counter()
    key = "\n".join([str(units.decl), *sorted(operators)])  # per declarations: trees differ (an old one, a port)
    reg = cache_root() / "registrations" / (hashlib.sha256(key.encode()).hexdigest()[:16])
    reg = reg.with_suffix(".cpp")
    registered = registrations.write_selected(units.decl, operators, reg)
    sources = [*_runtime_sources(units), units.root / MPS_DIR / "OperationUtils.mm", *host_files, reg]
    objects, failures = [], []
    for src in sources:
        obj, result = compile_object(units, src)
        if progress and not result.cached:
            progress(f"compiled {src.name}")
        if obj is None:
            failures.append(result)
        else:
            objects.append(obj)
    build = HostBuild(None, None, registered, failures)
    if failures:
        build.seconds = time.perf_counter() - t0
        return build
    objc_libs = [
        "-Wl,--wrap=__objc_exec_class", f"-L{units.tc.gcc_lib}", "-lgnustep-base", "-lobjc", "-lBlocksRuntime",
    ]  # fmt: skip
    build.library, err = _link(units, objects, "host", objc_libs)
    if build.library is None:
        build.failures.append(UnitResult(sources[-1], False, (), f"link: {err}"))
    build.preload = build_preload(units)
    if build.preload is None:
        build.failures.append(UnitResult(toolchain.shim_dir() / "runtime" / "dispatch_stub_preload.cpp", False, (),
                                         "the DispatchStub preload library did not build"))  # fmt: skip
    build.seconds = time.perf_counter() - t0
    return build


def build_preload(units: TreeUnits) -> Path | None:
    """The library preloaded into the worker (DispatchStub's MPS slot), or None if it does not build."""
    obj, _ = compile_object(units, toolchain.shim_dir() / "runtime" / "dispatch_stub_preload.cpp")
    return _link(units, [obj], "preload", [])[0] if obj is not None else None
