"""Run Metal (MSL) kernels: on an Apple GPU ("mps"), on the CPU ("cpu") or an NVIDIA GPU ("cuda").

from migrate.device import get_backend
lib = get_backend("cpu").compile_shader(source)
lib.my_kernel(out, a, 3.14, threads=[n], group_size=[256])
"""

from __future__ import annotations

from pathlib import Path

from .errors import (
    BackendUnavailable,
    DeviceError,
    Diagnostic,
    KernelArgumentError,
    KernelFault,
    KernelRuntimeError,
    MetalCompileError,
    OutOfBoundsAccess,
    UnknownKernelError,
    UnsupportedMetalFeature,
)
from .mps import mps_available

__all__ = [
    "get_backend",
    "mps_available",
    "BackendUnavailable",
    "DeviceError",
    "Diagnostic",
    "KernelArgumentError",
    "KernelFault",
    "KernelRuntimeError",
    "MetalCompileError",
    "OutOfBoundsAccess",
    "UnknownKernelError",
    "UnsupportedMetalFeature",
]


def get_backend(name: str = "auto", root: str | Path | None = None, **options):
    """ "cpu", "mps", "cuda", or "auto" (mps when an Apple GPU is usable, else cpu).

    root: a PyTorch source tree whose c10/metal headers shaders should use.
    options (cpu): opt=0..3, checked=False.
    """
    if name == "auto":
        name = "mps" if mps_available() else "cpu"
    if name == "cpu":
        from .cpu import CpuBackend

        return CpuBackend(root=root, **options)
    if name == "mps":
        from .mps import MpsBackend

        return MpsBackend(root=root)
    if name == "cuda":
        from .cuda import CudaBackend

        return CudaBackend(root=root, **options)
    raise ValueError(f"unknown backend {name!r}: expected 'cpu', 'mps', 'cuda' or 'auto'")
