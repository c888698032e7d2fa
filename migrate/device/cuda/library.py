"""A compiled PTX library: kernels by host_name, bound and called like the CPU backend's.

CPU tensors, numpy arrays and Python values are bound as the CPU backend binds them, copied
to the GPU for the launch and back afterwards (non-const buffers); CUDA tensors bind as they are.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

from ..cpu.binding import KIND_NAMES, ArgInfo, Bound, _is_tensor, bind
from ..cpu.library import ERROR_MESSAGES_SIZE, KernelBase, LibraryBase
from ..errors import KernelArgumentError
from ..launch import geometry

MAX_GRID = (2**31 - 1, 65535, 65535)


class CudaBound(Bound):
    pass


def _arginfo(row: list[int]) -> ArgInfo:
    return ArgInfo(*row) if row else ArgInfo(-1, 0, 0, 0, 0, 0)


class CudaKernel(KernelBase):
    def __init__(self, lib: "CudaLibrary", meta: dict):
        super().__init__(lib, meta, [_arginfo(r) for r in meta["args"]])
        self.entry = meta["entry"]
        self.shared = (max(meta["tgmem"]) + 1) * 16384 if meta.get("tgmem") else 0

    def __repr__(self) -> str:
        return f"<CudaKernel {self.signature()}>"

    def bind(self, args, threads, group_size):
        args = list(args)
        cuda = [i for i, a in enumerate(args) if _is_tensor(a) and a.device.type == "cuda" and a.dim() > 0]
        if not cuda:
            return super().bind(args, threads, group_size)
        host = [a.new_empty(0, device="cpu") if i in cuda else a for i, a in enumerate(args)]
        bounds, _, _ = super().bind(host, threads, group_size)
        t, g = geometry(args, threads, group_size)
        auto = len(args) == len(self.args) - len(self.error_slots)
        slot_of = [s for s in range(len(self.args)) if not (auto and s in self.error_slots)]
        for i in cuda:
            a, st = args[i], args[i].untyped_storage()
            bounds[slot_of[i]] = CudaBound(a.data_ptr(), st.data_ptr() + st.nbytes() - a.data_ptr(), a)
        return bounds, t, g

    def _execute(self, bounds: list[Bound], t: tuple, g: tuple, checked: bool) -> None:
        import torch

        mod = self.lib.module()
        grid = tuple((t[i] + g[i] - 1) // g[i] for i in range(3))
        if any(grid[i] > MAX_GRID[i] for i in range(3)):
            raise KernelArgumentError(
                f"{self.name}: {list(grid)} threadgroups exceed CUDA's grid limits {list(MAX_GRID)}"
            )

        def launch(table_ptr: int) -> None:
            torch.cuda.synchronize()
            mod.launch(self.entry, grid, g, self.shared, table_ptr, t)

        self.run_staged(bounds, lambda host: host.to("cuda"), launch)

    def copied_back(self) -> list[int]:
        """Buffer slots whose device copy is copied back after a launch: all but const ones
        (an ErrorMessages slot is written by the kernel, whatever its qualifier)."""
        return [
            s
            for s, info in enumerate(self.args)
            if info.kind != -1 and not (info.is_const and s not in self.error_slots)
        ]

    def run_staged(self, bounds: list[Bound], to_device, launch) -> None:
        """Copy the host buffers to the device (to_device: uint8 tensor -> its device copy), call
        launch(pointer of the device table of buffer pointers), then copy the written ones back.
        Every device copy lives until the launch is over: a freed copy's block is what the caching
        allocator hands the next one, so inputs and output would alias."""
        import torch

        back = set(self.copied_back())
        staged: list[tuple[torch.Tensor, torch.Tensor]] = []
        alive: list[torch.Tensor] = []
        ptrs: list[int] = []
        for s, b in enumerate(bounds):
            if isinstance(b, CudaBound) or not b.ptr:
                ptrs.append(b.ptr)
                continue
            host = torch.frombuffer((ctypes.c_char * max(b.nbytes, 1)).from_address(b.ptr), dtype=torch.uint8)
            dev = to_device(host)
            alive.append(dev)
            ptrs.append(dev.data_ptr())
            if s in back:
                staged.append((host, dev))
        table = to_device(torch.tensor(ptrs or [0], dtype=torch.int64))
        launch(table.data_ptr())
        for host, dev in staged:
            host.copy_(dev)
        del table, alive


class CudaLibrary(LibraryBase):
    """PTX loaded on the first launch (compiling needs no GPU)."""

    def __init__(self, ptx_path: Path, meta: dict, checked: bool = False):
        super().__init__(ptx_path, meta, checked)
        self._module = None

    def module(self):
        if self._module is None:
            from .driver import Module

            self._module = Module(self.path.read_bytes())
        return self._module

    def _make_kernel(self, meta: dict) -> CudaKernel:
        return CudaKernel(self, meta)

    @property
    def ptx(self) -> str:
        return self.path.read_text()


__all__ = ["CudaLibrary", "CudaKernel", "KIND_NAMES", "ERROR_MESSAGES_SIZE", "bind"]
