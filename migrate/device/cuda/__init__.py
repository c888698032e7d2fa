"""CUDA backend: MSL through the CPU backend's pre-pass, compiled to PTX by the pinned
clang (ziglang wheel), run on an NVIDIA GPU through the CUDA driver API."""

from .backend import CudaBackend

__all__ = ["CudaBackend"]
