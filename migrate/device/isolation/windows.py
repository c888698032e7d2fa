"""The worker's view of the arena: each span of a launch mapped on its own, between guard gaps.

A window is one page-aligned range of the memfd, mapped with GUARD bytes of inaccessible address
space on each side, so a kernel running off the end (or the start) of a buffer faults instead of
reaching the next tensor. Windows stay mapped for later launches (the same tensors come back),
up to a byte budget and a count; the least recently used go first.
"""

from __future__ import annotations

import os
from collections import OrderedDict

from .vm import PAGE, map_fixed, reserve, unmap

GUARD = 64 << 10
MAX_WINDOWS = 256


class Windows:
    def __init__(self, fd: int, budget: int):
        self.fd, self.budget = fd, budget
        self.mapped: OrderedDict[tuple[int, int], int] = OrderedDict()  # (offset, bytes) -> reservation start
        self.bytes = 0

    def map(self, wanted: list[tuple[int, int]]) -> list[int]:
        """The address of each (memfd offset, bytes) range, mapped now or earlier."""
        size = os.fstat(self.fd).st_size
        for off, n in wanted:
            if off < 0 or n <= 0 or off % PAGE or n % PAGE or off + n > size:
                raise ValueError(f"arena window [{off}, {off + n}) is not page-aligned inside the {size}-byte arena")
        keep = set(wanted)
        out = []
        for key in wanted:
            base = self.mapped.get(key)
            if base is None:
                self._evict(key[1] + 2 * GUARD, keep)
                base = self._open(*key)
                self.mapped[key] = base
                self.bytes += key[1] + 2 * GUARD
            self.mapped.move_to_end(key)
            out.append(base + GUARD)
        return out

    def _open(self, off: int, n: int) -> int:
        base = reserve(n + 2 * GUARD)
        try:
            map_fixed(base + GUARD, n, self.fd, off)
        except MemoryError:
            unmap(base, n + 2 * GUARD)
            raise
        return base

    def _evict(self, more: int, keep: set) -> None:
        for key in [k for k in self.mapped if k not in keep]:
            if self.bytes + more <= self.budget and len(self.mapped) < MAX_WINDOWS:
                return
            unmap(self.mapped.pop(key), key[1] + 2 * GUARD)
            self.bytes -= key[1] + 2 * GUARD
