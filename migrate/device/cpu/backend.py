"""CpuBackend.compile_shader: torch.mps.compile_shader, run on the CPU."""

from __future__ import annotations

from pathlib import Path

from migrate.errors import require_module
from migrate.resources import torch_include_dir

from ..errors import BackendUnavailable, KernelArgumentError
from .build import COMPILE_TIMEOUT, Built, build
from .library import CpuLibrary, LibraryBase


def c10_metal_dirs(root: Path | None, include_dirs: list[Path]) -> list[Path]:
    """Include path: user dirs, then the migrated tree's c10/metal (if it has
    one) and its aten/src (for <ATen/native/mps/kernels/*.h>, as PyTorch's
    shader library), then the installed torch's headers."""
    dirs = [Path(p).resolve() for p in include_dirs]
    if root is not None:
        root = Path(root).resolve()
        if (root / "c10" / "metal").is_dir():
            dirs.append(root)
        if (root / "aten" / "src" / "ATen").is_dir():
            dirs.append(root / "aten" / "src")
    if not any((d / "c10" / "metal").is_dir() for d in dirs):
        inc = torch_include_dir()
        if inc is not None:
            dirs.append(inc)
    return dirs


class BuildingBackend:
    """torch.mps.compile_shader's API for a backend that builds the MSL here (CPU, CUDA): the argument
    checks and include path; a subclass builds (``_build``) and wraps the result (``_library``)."""

    name = ""
    root: Path | None
    opt: int
    checked = False
    last_build = None

    def compile_shader(
        self,
        source: str,
        include_dirs: list[str | Path] | None = None,
        *,
        filename: str = "shader.metal",
        opt: int | None = None,
        checked: bool | None = None,
    ):
        if not isinstance(source, str):
            raise KernelArgumentError(f"compile_shader needs MSL source text, got {type(source).__name__}")
        level = self.opt if opt is None else opt
        self._building()
        if level not in (0, 1, 2, 3):
            raise KernelArgumentError(f"opt must be 0-3, got {level!r}")
        try:
            built = self._build(source, c10_metal_dirs(self.root, list(include_dirs or [])), filename, level)
        except OSError as e:
            raise BackendUnavailable(f"{self.name.upper()} backend cannot build: {e}") from e
        self.last_build = built
        return self._library(built, self.checked if checked is None else checked)

    def _building(self) -> None:
        """Work to start while the shader builds."""

    def _build(self, source: str, dirs: list[Path], filename: str, level: int):
        raise NotImplementedError

    def _library(self, built, checked: bool):
        raise NotImplementedError


class CpuBackend(BuildingBackend):
    """isolate=True (default): kernels run in a confined worker process (migrate.device.isolation),
    `timeout` wall-clock seconds per launch, `memory` bytes of address space; isolate=False loads
    them into this process (fastest; a crashing kernel takes the process down).
    compile_timeout: seconds the compiler may take per stage (a MetalCompileError past it)."""

    name = "cpu"

    def __init__(
        self,
        root: str | Path | None = None,
        opt: int = 1,
        checked: bool = False,
        isolate: bool = True,
        timeout: float | None = None,
        memory: int | None = None,
        compile_timeout: float | None = None,
    ):
        from ..isolation.client import Limits

        require_module("ziglang")  # the compiler, run as `python -m ziglang`
        self.root = Path(root) if root is not None else None
        self.opt = opt
        self.checked = checked
        self.isolate = isolate
        defaults = Limits()
        self.limits = Limits(
            defaults.timeout if timeout is None else float(timeout), defaults.memory if memory is None else int(memory)
        )
        self.compile_timeout = COMPILE_TIMEOUT if compile_timeout is None else float(compile_timeout)
        self.last_build: Built | None = None

    def _memory(self):
        if self.isolate:
            from ..isolation import arena

            return arena.empty, arena.empty_strided, arena.copy
        return CpuLibrary.empty, CpuLibrary.empty_strided, CpuLibrary.arena_tensor

    def empty(self, *size, dtype=None):
        """torch.empty whose memory a launch takes without copies (isolated: in the shared arena)."""
        return self._memory()[0](*size, dtype=dtype)

    def empty_strided(self, size, stride, dtype=None):
        return self._memory()[1](size, stride, dtype)

    def arena_tensor(self, t, memo: dict | None = None):
        """A copy of `t` (same sizes, strides, storage offset) a launch takes without copies; in process: t."""
        return self._memory()[2](t, memo)

    def _building(self) -> None:
        if self.isolate:  # the worker starts while the shader builds
            from ..isolation.client import POOL

            POOL.get(self.limits)

    def _build(self, source: str, dirs: list[Path], filename: str, level: int) -> Built:
        return build(source, dirs, filename, level, self.compile_timeout)

    def _library(self, built: Built, checked: bool) -> LibraryBase:
        if self.isolate:
            from ..isolation.library import IsolatedLibrary

            return IsolatedLibrary(built.path, built.meta, checked, self.limits)
        return CpuLibrary(built.path, built.meta, checked)
