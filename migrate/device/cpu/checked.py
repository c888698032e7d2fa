"""Checked launches: every buffer is copied into a mapping fenced by
PROT_NONE guard regions; a touch of a guard becomes a report (kernel, buffer,
offset, thread position) and the caller's memory is left untouched.

Each launch runs twice: once with the buffers flush against the guard that
follows them (catches overruns) and once flush against the guard before them
(catches underruns); results are copied back from the second run.
"""

from __future__ import annotations

import ctypes
import mmap
from dataclasses import dataclass

from .binding import Bound

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PAGE = mmap.PAGESIZE
MIN_GUARD = 1 << 20


def _round(n: int) -> int:
    return (n + PAGE - 1) // PAGE * PAGE


@dataclass
class _Region:
    base: int
    total: int
    lo: int  # original [lo, hi)
    hi: int
    data: int  # shadow address of lo
    guards: tuple[tuple[int, int], tuple[int, int]]


def spans(bounds: list[Bound]) -> list[tuple[int, int, list[int]]]:
    """Bound buffers as disjoint [lo, hi) spans, each with the argument indices inside it."""
    items = sorted((b.ptr, b.ptr + b.nbytes, i) for i, b in enumerate(bounds) if b.ptr and b.nbytes > 0)
    out: list[tuple[int, int, list[int]]] = []
    for lo, hi, i in items:
        if out and lo < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi), out[-1][2] + [i])
        else:
            out.append((lo, hi, [i]))
    return out


class Shadow:
    """Guarded copies of the bound buffers for one pass."""

    def __init__(self, bounds: list[Bound], flush_end: bool):
        self.bounds = bounds
        self.regions: list[_Region] = []
        self.members: list[list[int]] = []
        try:
            for lo, hi, members in spans(bounds):
                size = hi - lo
                data_bytes = _round(size)
                guard = max(MIN_GUARD, data_bytes)
                total = guard + data_bytes + guard
                base = _libc.mmap(None, total, 0, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x4000, -1, 0)
                if base in (None, ctypes.c_void_p(-1).value):
                    raise MemoryError("checked launch: mmap failed")
                _libc.mprotect(base + guard, data_bytes, mmap.PROT_READ | mmap.PROT_WRITE)
                data = base + guard + (data_bytes - size if flush_end else 0)
                ctypes.memmove(data, lo, size)
                self.regions.append(
                    _Region(
                        base, total, lo, hi, data, ((base, base + guard), (base + guard + data_bytes, base + total))
                    )
                )
                self.members.append(members)
        except BaseException:
            self.close()
            raise

    def pointers(self) -> list[int]:
        ptrs = [b.ptr for b in self.bounds]
        for r, members in zip(self.regions, self.members):
            for i in members:
                ptrs[i] = r.data + (self.bounds[i].ptr - r.lo)
        return ptrs

    def guard_array(self):
        flat = [x for r in self.regions for g in r.guards for x in g]
        return (ctypes.c_uint64 * max(1, len(flat)))(*flat), len(flat) // 2

    def locate(self, addr: int) -> tuple[int | None, int | None]:
        """Faulting address -> (argument index, byte offset from that argument's pointer)."""
        for r, members in zip(self.regions, self.members):
            if r.base <= addr < r.base + r.total:
                best = min(members, key=lambda i: abs(addr - (r.data + self.bounds[i].ptr - r.lo)))
                return best, addr - (r.data + self.bounds[best].ptr - r.lo)
        return None, None

    def copy_back(self) -> None:
        for r in self.regions:
            ctypes.memmove(r.lo, r.data, r.hi - r.lo)

    def close(self) -> None:
        for r in self.regions:
            _libc.munmap(r.base, r.total)
        self.regions = []
