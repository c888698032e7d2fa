"""A compiled library whose kernels run in the worker process (the library is never loaded here)."""

from __future__ import annotations

import ctypes
from pathlib import Path

from ..cpu.binding import ArgInfo, Bound
from ..cpu.checked import spans
from ..cpu.library import KernelBase, LibraryBase
from ..errors import KernelFault
from .client import ALIGN, POOL, Limits, WorkerProcess, rebuild_error


class IsolatedKernel(KernelBase):
    def _execute(self, bounds: list[Bound], t: tuple, g: tuple, checked: bool) -> None:
        lib: IsolatedLibrary = self.lib
        worker = lib.worker()
        placed, cursor = [], 0
        for lo, hi, members in spans(bounds):
            off = (cursor + ALIGN - 1) // ALIGN * ALIGN + lo % ALIGN  # keeps each buffer's alignment
            placed.append((lo, hi, off, members))
            cursor = off + hi - lo
        base = worker.ensure_arena(cursor)
        slots = [[0, 0] for _ in bounds]
        for lo, hi, off, members in placed:
            ctypes.memmove(base + off, lo, hi - lo)
            for i in members:
                slots[i] = [off + bounds[i].ptr - lo, bounds[i].nbytes]
        msg = {
            "op": "launch",
            "path": str(lib.path),
            "kernel": self.name,
            "slots": slots,
            "threads": list(t),
            "group": list(g),
            "checked": checked,
            "arena": worker.arena_size,
            "cpu": lib.limits.cpu,
        }
        reply = worker.call(msg, lib.limits.timeout, self.name)
        if not reply.get("ok"):
            raise rebuild_error(reply, self.name)
        for lo, hi, off, _ in placed:  # `constant` buffers too: a kernel writing its input must show (#186580)
            ctypes.memmove(lo, base + off, hi - lo)


class IsolatedLibrary(LibraryBase):
    """Kernels of one compiled shader, run by the shared worker for `limits` (restarted when lost)."""

    def __init__(self, so_path: Path, meta: dict, checked: bool = False, limits: Limits = Limits()):
        super().__init__(so_path, meta, checked)
        self.meta = meta
        self.limits = limits
        self._sandbox: list[str] | None = None

    @property
    def sandbox(self) -> list[str]:
        """What confines the worker: one line per protection, in place or not."""
        if self._sandbox is None:
            self._sandbox = POOL.get(self.limits).sandbox
        return self._sandbox

    def worker(self) -> WorkerProcess:
        """The worker, started or restarted as needed, with this library loaded."""
        w = POOL.get(self.limits)
        self._sandbox = w.sandbox
        key = str(self.path)
        if key not in w.loaded:
            reply = w.call({"op": "load", "path": key, "meta": self.meta}, self.limits.timeout, self.path.name)
            if "args" not in reply:
                raise KernelFault(
                    f"{self.path.name}: loading the library failed in the worker: {reply.get('message', reply)}",
                    self.path.name,
                    "load",
                )
            w.loaded[key] = reply["args"]
        return w

    def _make_kernel(self, meta: dict) -> IsolatedKernel:
        args = self.worker().loaded[str(self.path)].get(meta["name"], [])
        return IsolatedKernel(self, meta, [ArgInfo(*a) for a in args])
