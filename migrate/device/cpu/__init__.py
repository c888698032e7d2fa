"""CPU backend: MSL compiled as C++ with the pinned clang (ziglang wheel)."""

from .backend import CpuBackend

__all__ = ["CpuBackend"]
