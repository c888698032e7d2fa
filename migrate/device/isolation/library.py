"""A compiled library whose kernels run in the worker process (the library is never loaded here)."""

from __future__ import annotations

import ctypes
from pathlib import Path

from ..cpu.binding import ArgInfo, Bound
from ..cpu.checked import spans
from ..cpu.library import KernelBase, LibraryBase
from ..errors import KernelFault
from . import arena as shared
from .arena import Arena, arena
from .client import ALIGN, POOL, Limits, WorkerProcess, rebuild_error
from .vm import PAGE, round_up


def _place(bounds: list[Bound], ar: Arena) -> tuple[list, list, list, int, int]:
    """Where the worker finds each buffer: (windows [memfd offset, bytes], slots [window, offset in it,
    nbytes], staged (lo, hi, arena address) spans to copy in and back, staging offset, staging bytes).

    A span (overlapping buffers as one, so aliasing holds) that lives in the arena is sent as its
    offset; one that does not gets a page-aligned place in a staging range of the arena."""
    found = spans(bounds)
    away = [(lo, hi) for lo, hi, _ in found if ar.offset(lo, hi) is None]
    need = sum(round_up(lo % ALIGN + hi - lo) for lo, hi in away)
    stage = ar.alloc(need) if need else 0
    windows: list[list[int]] = []
    slots = [[-1, 0, 0] for _ in bounds]
    staged, cursor = [], stage
    for lo, hi, members in found:
        off = ar.offset(lo, hi)
        if off is None:  # keeps each buffer's alignment
            off = cursor + lo % ALIGN
            staged.append((lo, hi, ar.base + off))
            cursor += round_up(lo % ALIGN + hi - lo)
        first = off // PAGE * PAGE
        windows.append([first, round_up(off + hi - lo) - first])
        for i in members:
            slots[i] = [len(windows) - 1, off - first + bounds[i].ptr - lo, bounds[i].nbytes]
    return windows, slots, staged, stage, need


class IsolatedKernel(KernelBase):
    def _execute(self, bounds: list[Bound], t: tuple, g: tuple, checked: bool) -> None:
        lib: IsolatedLibrary = self.lib
        worker, ar = lib.worker(), arena()
        windows, slots, staged, stage, need = _place(bounds, ar)
        msg = {
            "op": "launch",
            "path": str(lib.path),
            "kernel": self.name,
            "windows": windows,
            "slots": slots,
            "threads": list(t),
            "group": list(g),
            "checked": checked,
            "cpu": lib.limits.cpu,
        }
        try:
            for lo, hi, at in staged:
                ctypes.memmove(at, lo, hi - lo)
            reply = worker.call(msg, lib.limits.timeout, self.name)
            if not reply.get("ok"):
                raise rebuild_error(reply, self.name)
            for lo, hi, at in staged:  # `constant` buffers too: a kernel writing its input must show (#186580)
                ctypes.memmove(lo, at, hi - lo)
        finally:
            if need:
                ar.release(stage, need)


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

    # buffers the kernels take without copies (the shared arena; see arena.py)
    empty = staticmethod(shared.empty)
    empty_strided = staticmethod(shared.empty_strided)
    arena_tensor = staticmethod(shared.copy)

    def _make_kernel(self, meta: dict) -> IsolatedKernel:
        args = self.worker().loaded[str(self.path)].get(meta["name"], [])
        return IsolatedKernel(self, meta, [ArgInfo(*a) for a in args])
