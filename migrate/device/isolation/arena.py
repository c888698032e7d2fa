"""The shared arena, the parent's side: one memfd for every worker, mapped here at an address that never moves.

Tensors allocated here are views on that mapping: a launch whose buffers all live here sends the
worker their offsets and copies nothing, and a kernel's writes (into `constant` buffers too) show
at once. The mapping grows inside an address-space reservation made once, so a tensor stays valid
as long as it is referenced, whatever happens to the workers (a new one maps the same memfd); its
pages are reused once the tensor is gone. The memfd is sealed against shrinking, so no worker can
truncate it under this mapping (a SIGBUS here).
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import threading
import weakref

from .vm import PAGE, map_fixed, reserve, round_up

RESERVE = 1 << 40  # address space only: nothing is committed until a page is touched
MIN_RESERVE = 1 << 30
MIN_GROW = 64 << 20


def sealed_memfd() -> int:
    """Memory that can grow (ftruncate) but never shrink; the seals are final."""
    fd = os.memfd_create("mps-migrate-arena", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
    return fd


class Arena:
    """Page-aligned ranges of the memfd: best fit from the freed ranges, else from the top."""

    def __init__(self, size: int = RESERVE):
        while True:  # a smaller reservation where an address-space limit forbids this one
            try:
                self.base = reserve(size)
                break
            except MemoryError:
                if size <= MIN_RESERVE:
                    raise
                size //= 2
        self.reserved = size
        self.fd = sealed_memfd()
        self.mapped = 0  # bytes of the memfd mapped at base
        self.top = 0  # every offset from here on is free
        self.free: list[tuple[int, int]] = []  # (offset, bytes), sorted and coalesced, all below top
        self._gone: list[tuple[int, int]] = []  # ranges of dead tensors, taken into `free` by the next alloc
        self._lock = threading.Lock()

    def offset(self, lo: int, hi: int) -> int | None:
        """The memfd offset of the address range [lo, hi), or None when it is not in the arena."""
        return lo - self.base if self.base <= lo and hi <= self.base + self.mapped else None

    def alloc(self, nbytes: int) -> int:
        n = round_up(max(nbytes, 1))
        with self._lock:
            self._collect()
            fits = [(size, i) for i, (_, size) in enumerate(self.free) if size >= n]
            if fits:
                size, i = min(fits)
                off = self.free[i][0]
                if size == n:
                    del self.free[i]
                else:
                    self.free[i] = (off + n, size - n)
                return off
            off = self.top
            self._grow(off + n)
            self.top = off + n
            return off

    def release(self, off: int, nbytes: int) -> None:
        """Give a range back (safe from a finalizer: only appends)."""
        self._gone.append((off, round_up(max(nbytes, 1))))

    def _collect(self) -> None:
        while self._gone:
            off, n = self._gone.pop()
            self.free.append((off, n))
        self.free.sort()
        merged: list[tuple[int, int]] = []
        for off, n in self.free:
            if merged and merged[-1][0] + merged[-1][1] == off:
                merged[-1] = (merged[-1][0], merged[-1][1] + n)
            else:
                merged.append((off, n))
        if merged and merged[-1][0] + merged[-1][1] == self.top:
            self.top = merged.pop()[0]
        self.free = merged

    def _grow(self, end: int) -> None:
        if end <= self.mapped:
            return
        if end > self.reserved:
            raise MemoryError(f"the shared arena is full ({self.reserved >> 20} MiB of address space)")
        new = min(self.reserved, round_up(max(end, 2 * self.mapped, MIN_GROW)))
        if os.fstat(self.fd).st_size < new:  # a worker may have grown it already (never shrunk: sealed)
            os.ftruncate(self.fd, new)
        map_fixed(self.base + self.mapped, new - self.mapped, self.fd, self.mapped)
        self.mapped = new

    def storage(self, nbytes: int):
        """A torch UntypedStorage of `nbytes` in the arena; its range is freed when the storage dies."""
        import torch

        off = self.alloc(nbytes)
        buf = (ctypes.c_char * round_up(nbytes)).from_address(self.base + off)  # whole pages: few ctypes types
        weakref.finalize(buf, self.release, off, nbytes).atexit = False  # torch holds buf while the storage lives
        return torch.frombuffer(buf, dtype=torch.uint8, count=nbytes).untyped_storage()


_ARENA: Arena | None = None
_ARENA_LOCK = threading.Lock()


def arena() -> Arena:
    """The process's arena, made on first use and kept until the process ends."""
    global _ARENA
    with _ARENA_LOCK:
        if _ARENA is None:
            _ARENA = Arena()
        return _ARENA


def resident(t) -> bool:
    """Whether a tensor's memory is in the arena (a launch takes it without copies)."""
    p = t.untyped_storage().data_ptr()
    return _ARENA is not None and p != 0 and _ARENA.offset(p, p) is not None


def empty_strided(size, stride, dtype=None):
    """torch.empty_strided, in the arena."""
    import torch

    dtype = dtype or torch.get_default_dtype()
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride) or any(s <= 0 for s in size) or any(st < 0 for st in stride):
        return torch.empty_strided(size, stride, dtype=dtype)  # no bytes (or torch's error)
    nbytes = (1 + sum((s - 1) * st for s, st in zip(size, stride))) * dtype.itemsize
    return torch.empty(0, dtype=dtype).set_(arena().storage(nbytes), 0, size, stride)


def empty(*size, dtype=None):
    """torch.empty (contiguous), in the arena."""
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    stride, acc = [], 1
    for s in reversed(size):
        stride.insert(0, acc)
        acc *= max(s, 1)
    return empty_strided(size, stride, dtype)


def copy(t, memo: dict | None = None):
    """A copy of tensor `t` in the arena: the whole storage, so sizes, strides and storage offset are t's.

    Tensors passed with the same `memo` dict that share a storage share one copy (views stay views).
    A tensor already in the arena, or one this cannot place (not a CPU strided tensor, no bytes), is t itself.
    """
    import torch

    if (
        not isinstance(t, torch.Tensor)
        or t.device.type != "cpu"
        or t.layout != torch.strided
        or t.is_quantized
        or resident(t)
    ):
        return t
    if t.is_conj() or t.is_neg():
        t = t.resolve_conj().resolve_neg()
    src = t.untyped_storage()
    if src.nbytes() == 0:
        return t
    memo = {} if memo is None else memo
    key = (src.data_ptr(), src.nbytes())
    dst = memo.get(key)
    if dst is None:
        dst = memo[key] = arena().storage(src.nbytes())
        dst.copy_(src)
    return torch.empty(0, dtype=t.dtype).set_(dst, t.storage_offset(), t.shape, t.stride())


__all__ = ["Arena", "PAGE", "arena", "copy", "empty", "empty_strided", "resident"]
