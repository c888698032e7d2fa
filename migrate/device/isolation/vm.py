"""mmap through libc: address-space reservations and fixed mappings of the arena's memfd."""

from __future__ import annotations

import ctypes
import mmap

PAGE = mmap.PAGESIZE
RW = mmap.PROT_READ | mmap.PROT_WRITE
MAP_FIXED, MAP_NORESERVE = 0x10, 0x4000

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_FAILED = ctypes.c_void_p(-1).value


def round_up(n: int, to: int = PAGE) -> int:
    return (n + to - 1) // to * to


def _check(addr, what: str) -> int:
    if addr in (None, _FAILED):
        import os

        raise MemoryError(f"{what}: {os.strerror(ctypes.get_errno())}")
    return addr


def reserve(size: int) -> int:
    """`size` bytes of address space (PROT_NONE), inaccessible until something is mapped over them."""
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE
    return _check(_libc.mmap(None, size, 0, flags, -1, 0), f"reserving {size >> 20} MiB")


def map_fixed(addr: int, size: int, fd: int, offset: int) -> None:
    """The file range [offset, offset + size) of `fd`, shared and writable, at `addr` (inside a reservation)."""
    _check(_libc.mmap(addr, size, RW, mmap.MAP_SHARED | MAP_FIXED, fd, offset), f"mapping {size >> 20} MiB")


def unmap(addr: int, size: int) -> None:
    _libc.munmap(addr, size)
