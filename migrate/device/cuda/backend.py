"""CudaBackend.compile_shader: torch.mps.compile_shader's API, run on an NVIDIA GPU."""

from __future__ import annotations

from pathlib import Path

from ..cpu.backend import BuildingBackend
from .build import Built, build


class CudaBackend(BuildingBackend):
    """Compiles MSL to PTX here (no GPU or CUDA installation needed, only libdevice);
    kernels run where a CUDA driver and torch with CUDA are present, else calling one
    raises BackendUnavailable. assemble=True also runs ptxas (where present) at compile time."""

    name = "cuda"

    def __init__(
        self,
        root: str | Path | None = None,
        opt: int = 2,
        assemble: bool = False,
        compile_timeout: float | None = None,
        **_ignored,
    ):
        self.root = Path(root) if root is not None else None
        self.opt = opt
        self.assemble = assemble
        self.compile_timeout = 600.0 if compile_timeout is None else float(compile_timeout)
        self.last_build: Built | None = None

    def _build(self, source: str, dirs: list[Path], filename: str, level: int) -> Built:
        return build(source, dirs, filename, level, self.compile_timeout, self.assemble)

    def _library(self, built: Built, checked: bool):
        from .library import CudaLibrary

        return CudaLibrary(built.path, built.meta)
