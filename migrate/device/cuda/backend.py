"""CudaBackend.compile_shader: torch.mps.compile_shader's API, run on an NVIDIA GPU."""

from __future__ import annotations

from pathlib import Path

from ..cpu.backend import c10_metal_dirs
from ..errors import BackendUnavailable, KernelArgumentError
from .build import Built, build


class CudaBackend:
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

    def compile_shader(
        self,
        source: str,
        include_dirs: list[str | Path] | None = None,
        *,
        filename: str = "shader.metal",
        opt: int | None = None,
        checked: bool | None = None,
    ):
        from .library import CudaLibrary

        if not isinstance(source, str):
            raise KernelArgumentError(f"compile_shader needs MSL source text, got {type(source).__name__}")
        level = self.opt if opt is None else opt
        if level not in (0, 1, 2, 3):
            raise KernelArgumentError(f"opt must be 0-3, got {level!r}")
        try:
            built = build(
                source,
                c10_metal_dirs(self.root, list(include_dirs or [])),
                filename,
                level,
                self.compile_timeout,
                self.assemble,
            )
        except OSError as e:
            raise BackendUnavailable(f"CUDA backend cannot build: {e}") from e
        self.last_build = built
        return CudaLibrary(built.ptx_path, built.meta)
