"""The CUDA driver API through ctypes (libcuda ships with every NVIDIA driver), sharing
torch's primary context so that torch's CUDA tensors are valid kernel pointers."""

from __future__ import annotations

import ctypes
import functools

from ..errors import BackendUnavailable, KernelFault

CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


class CudaError(Exception):
    def __init__(self, code: int, what: str, text: str):
        super().__init__(f"{what}: CUDA error {code} ({text})")
        self.code = code


@functools.lru_cache(maxsize=None)
def lib() -> ctypes.CDLL:
    try:
        import torch
    except ImportError:
        raise BackendUnavailable("CUDA backend: running kernels needs torch with CUDA") from None
    if not torch.cuda.is_available():
        raise BackendUnavailable(
            "CUDA backend: no CUDA GPU here (torch.cuda.is_available() is False); kernels compile to PTX but cannot run"
        )
    try:
        cu = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        raise BackendUnavailable(f"CUDA backend: cannot load the driver library libcuda.so.1: {e}") from None
    torch.cuda.init()
    torch.zeros(1, device="cuda")  # torch makes its primary context current on this thread
    check(cu, cu.cuInit(0), "cuInit")
    return cu


def error_text(cu, code: int) -> str:
    s = ctypes.c_char_p()
    cu.cuGetErrorString(code, ctypes.byref(s))
    return s.value.decode() if s.value else "unknown"


def check(cu, code: int, what: str) -> None:
    if code != 0:
        raise CudaError(code, what, error_text(cu, code))


def ensure_context() -> ctypes.CDLL:
    cu = lib()
    ctx = ctypes.c_void_p()
    check(cu, cu.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
    if not ctx.value:
        import torch

        dev = ctypes.c_int()
        check(cu, cu.cuDeviceGet(ctypes.byref(dev), torch.cuda.current_device()), "cuDeviceGet")
        check(cu, cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
        check(cu, cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return cu


class Module:
    def __init__(self, ptx: bytes):
        cu = ensure_context()
        self.cu = cu
        self.handle = ctypes.c_void_p()
        log = ctypes.create_string_buffer(8192)
        # JIT options: error log buffer and its size
        opts = (ctypes.c_int * 2)(5, 6)
        vals = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(8192))
        code = cu.cuModuleLoadDataEx(ctypes.byref(self.handle), ctypes.c_char_p(ptx + b"\0"), 2, opts, vals)
        if code != 0:
            raise BackendUnavailable(
                f"CUDA driver rejects the PTX: {error_text(cu, code)}: "
                f"{log.value.decode(errors='replace').strip()[:400]}"
            )
        self._fns: dict[str, ctypes.c_void_p] = {}

    def function(self, name: str) -> ctypes.c_void_p:
        fn = self._fns.get(name)
        if fn is None:
            fn = ctypes.c_void_p()
            check(
                self.cu,
                self.cu.cuModuleGetFunction(ctypes.byref(fn), self.handle, name.encode()),
                f"cuModuleGetFunction({name})",
            )
            self._fns[name] = fn
        return fn

    def launch(self, name: str, grid, block, shared: int, table_ptr: int, threads) -> None:
        cu, fn = self.cu, self.function(name)
        if shared > 48 * 1024:
            check(
                cu,
                cu.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared),
                "cuFuncSetAttribute",
            )
        vals = [ctypes.c_void_p(table_ptr)] + [ctypes.c_uint32(v) for v in threads]
        params = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in vals])
        code = cu.cuLaunchKernel(
            fn,
            *[ctypes.c_uint(v) for v in grid],
            *[ctypes.c_uint(v) for v in block],
            ctypes.c_uint(shared),
            None,
            params,
            None,
        )
        if code == 0:
            code = cu.cuCtxSynchronize()
        if code != 0:
            text = error_text(cu, code)
            raise KernelFault(
                f"{name}: CUDA error {code} ({text}) during the launch; the GPU context may be unusable now", name, text
            )
