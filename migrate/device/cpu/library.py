"""A compiled shader library: kernels by host_name, called like compile_shader's."""

from __future__ import annotations

import ctypes
import difflib
import os
import signal
import struct
from pathlib import Path

from ..errors import KernelArgumentError, KernelFault, KernelRuntimeError, OutOfBoundsAccess, UnknownKernelError
from ..launch import geometry
from .binding import KIND_NAMES, ArgInfo, Bound, bind
from .checked import Shadow

ERROR_MESSAGES_SIZE = 4 + 30 * 512  # c10::metal::ErrorMessages
SMALL_LAUNCH = 1 << 14  # threads; below this one OS thread is faster


class _Dispatch(ctypes.Structure):
    _fields_ = [
        ("threads", ctypes.c_uint32 * 3),
        ("group", ctypes.c_uint32 * 3),
        ("ngroups", ctypes.c_uint32 * 3),
        ("nworkers", ctypes.c_int32),
        ("checked", ctypes.c_int32),
        ("guards", ctypes.POINTER(ctypes.c_uint64)),
        ("nguards", ctypes.c_int32),
        ("status", ctypes.c_int32),
        ("fault_addr", ctypes.c_uint64),
        ("fault_tpig", ctypes.c_uint32 * 3),
        ("fault_tgpig", ctypes.c_uint32 * 3),
        ("fault_lid", ctypes.c_uint32 * 3),
        ("message", ctypes.c_char * 256),
        ("fault_signal", ctypes.c_int32),
    ]


def _workers() -> int:
    env = os.environ.get("MPS_MIGRATE_THREADS")
    if env and env.isdigit() and int(env) > 0:
        return int(env)
    return max(1, min(64, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


def _read_errors(ptr: int) -> list[str]:
    raw = ctypes.string_at(ptr, ERROR_MESSAGES_SIZE)
    count = min(struct.unpack_from("<I", raw, 0)[0], 30)
    out = []
    for i in range(count):
        off = 4 + i * 512
        cstr = lambda a, n: raw[off + a : off + a + n].split(b"\0", 1)[0].decode(errors="replace")  # noqa: E731
        line = struct.unpack_from("<I", raw, off + 508)[0]
        out.append(f"{cstr(0, 128)}:{line}: {cstr(256, 250)} (in {cstr(128, 128)})")
    return out


def arg_infos(dll, meta: dict) -> list[ArgInfo]:
    """The binder's view of each buffer slot of a kernel, asked from its library."""
    infos = (ArgInfo * max(1, meta["nslots"]))()
    getattr(dll, f"__msl_info_{meta['index']}")(infos)
    return list(infos)[: meta["nslots"]]


class KernelBase:
    """Argument binding and error reports; subclasses run the launch (_execute)."""

    def __init__(self, lib, meta: dict, args: list[ArgInfo]):
        self.lib = lib
        self.name: str = meta["name"]
        self.meta = meta
        self.args = args
        self._param_of = {int(s): pi for s, pi in meta["slots"].items()}
        self.error_slots = [s for s, pi in self._param_of.items() if "ErrorMessages" in meta["params"][pi]["text"]]

    @property
    def uses_fibers(self) -> bool:
        return bool(self.meta["fibers"])

    def signature(self) -> str:
        parts = []
        for s in range(len(self.args)):
            pi = self._param_of.get(s)
            parts.append(f"[{s}] " + (self.meta["params"][pi]["text"] if pi is not None else "(unused)"))
        return f"{self.name}(" + ", ".join(parts) + ")"

    def __repr__(self) -> str:
        return f"<CpuKernel {self.signature()}>"

    def __call__(self, *args, threads=None, group_size=None, checked: bool | None = None):
        bounds, t, g = self.bind(args, threads, group_size)
        if t[0] * t[1] * t[2] == 0:
            return
        self._execute(bounds, t, g, self.lib.checked if checked is None else checked)
        reports: list[str] = []
        for s in self.error_slots:
            if bounds[s].ptr and bounds[s].nbytes >= ERROR_MESSAGES_SIZE:
                reports += _read_errors(bounds[s].ptr)
        if reports:
            raise KernelRuntimeError(
                f"{self.name} reported {len(reports)} error(s):\n  " + "\n  ".join(reports), tuple(reports)
            )

    def bind(self, args, threads, group_size) -> tuple[list[Bound], tuple, tuple]:
        """Python arguments -> (one Bound per slot, threads, group)."""
        nslots = len(self.args)
        args = list(args)
        auto_err: list[int] = []
        if len(args) == nslots - len(self.error_slots) and self.error_slots:
            for s in sorted(self.error_slots):
                args.insert(s, None)
                auto_err.append(s)
        if len(args) != nslots:
            raise KernelArgumentError(
                f"{self.name} takes {nslots} buffer argument(s), got {len(args)}: {self.signature()}"
            )
        t, g = geometry([a for a in args if a is not None], threads, group_size)
        bounds: list[Bound] = []
        for s, (a, info) in enumerate(zip(args, self.args)):
            if s in auto_err:
                buf = ctypes.create_string_buffer(ERROR_MESSAGES_SIZE)
                bounds.append(Bound(ctypes.addressof(buf), ERROR_MESSAGES_SIZE, buf, True))
            elif info.kind == -1:
                bounds.append(Bound(0, 0))
            else:
                what = f"{self.name}: argument {s} ({KIND_NAMES.get(info.kind, '?')} buffer)"
                bounds.append(bind(a, info, what))
        return bounds, t, g

    def _execute(self, bounds: list[Bound], t: tuple, g: tuple, checked: bool) -> None:
        raise NotImplementedError


class CpuKernel(KernelBase):
    """A kernel run in this process (its library is loaded here)."""

    def __init__(self, lib: "CpuLibrary", meta: dict):
        super().__init__(lib, meta, arg_infos(lib._dll, meta))
        self._launch = getattr(lib._dll, f"__msl_launch_{meta['index']}")
        self._launch.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_Dispatch)]
        self._launch.restype = ctypes.c_int

    def _execute(self, bounds: list[Bound], t: tuple, g: tuple, checked: bool) -> None:
        total = t[0] * t[1] * t[2]
        d = _Dispatch()
        d.threads[:] = t
        d.group[:] = g
        d.ngroups[:] = [(t[i] + g[i] - 1) // g[i] for i in range(3)]
        d.nworkers = 1 if total < SMALL_LAUNCH else _workers()
        if checked:
            self._run_checked(d, bounds)
        else:
            self._run(d, [b.ptr for b in bounds])

    def _run(self, d: _Dispatch, ptrs: list[int]) -> None:
        arr = (ctypes.c_void_p * max(1, len(ptrs)))(*ptrs)
        self._launch(arr, ctypes.byref(d))
        if d.status == 2:
            raise KernelRuntimeError(f"{self.name}: {d.message.decode(errors='replace')}")

    def _run_checked(self, d: _Dispatch, bounds: list[Bound]) -> None:
        d.checked = 1
        for flush_end in (True, False):
            shadow = Shadow(bounds, flush_end)
            try:
                guards, n = shadow.guard_array()
                d.guards = ctypes.cast(guards, ctypes.POINTER(ctypes.c_uint64))
                d.nguards = n
                d.status = 0
                self._run(d, shadow.pointers())
                if d.status == 1:
                    arg, off = shadow.locate(d.fault_addr)
                    tpig, tgpig = tuple(d.fault_tpig), tuple(d.fault_tgpig)
                    where = "before the start of" if off is not None and off < 0 else "past the end of"
                    size = bounds[arg].nbytes if arg is not None else 0
                    msg = (
                        f"{self.name}: out-of-bounds access {where} buffer argument {arg} "
                        f"(byte offset {off}, buffer has {size} bytes) by thread_position_in_grid={list(tpig)} "
                        f"(threadgroup {list(tgpig)}); no memory was modified"
                    )
                    raise OutOfBoundsAccess(msg, self.name, arg, off, tpig, tgpig)
                if d.status == 3:
                    raise self._fault(d, shadow)
                if not flush_end:
                    shadow.copy_back()
            finally:
                shadow.close()

    def _fault(self, d: _Dispatch, shadow: Shadow) -> KernelFault:
        """A checked-mode fault outside the guard pages: signal, address and thread."""
        sig = signal_name(d.fault_signal)
        addr, tpig, tgpig = d.fault_addr, tuple(d.fault_tpig), tuple(d.fault_tgpig)
        if sig == "SIGFPE":  # si_addr is the trapping instruction
            where = f"instruction {addr:#x} (integer division by zero or overflow)"
        else:
            where = f"address {addr:#x}" + (" (null pointer)" if addr < 4096 else "")
        starts = [(p, i) for i, p in enumerate(shadow.pointers()) if p and p <= addr]
        if starts and sig != "SIGFPE" and addr >= 4096:
            p, i = max(starts)
            where += f", byte offset {addr - p} from buffer argument {i} ({shadow.bounds[i].nbytes} bytes)"
        msg = (
            f"{self.name}: {sig} at {where} by thread_position_in_grid={list(tpig)} "
            f"(threadgroup {list(tgpig)}); no memory was modified"
        )
        return KernelFault(msg, self.name, sig, addr, tpig, tgpig)


def signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


class LibraryBase:
    """Kernels of one compiled shader, by host_name (attribute access)."""

    def __init__(self, so_path: Path, meta: dict, checked: bool = False):
        self.path = so_path
        self.checked = checked
        self._meta = {k["name"]: k for k in meta["kernels"]}
        self._kernels: dict[str, KernelBase] = {}

    def _make_kernel(self, meta: dict) -> KernelBase:
        raise NotImplementedError

    @property
    def kernel_names(self) -> tuple[str, ...]:
        return tuple(self._meta)

    def kernel(self, name: str) -> KernelBase:
        k = self._kernels.get(name)
        if k is None:
            meta = self._meta.get(name)
            if meta is None:
                close = difflib.get_close_matches(name, self._meta, n=3)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                raise UnknownKernelError(f"no kernel named {name!r} in this library ({len(self._meta)} kernels){hint}")
            k = self._kernels[name] = self._make_kernel(meta)
        return k

    def __getattr__(self, name: str) -> KernelBase:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.kernel(name)

    def __contains__(self, name: str) -> bool:
        return name in self._meta

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._meta))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {len(self._meta)} kernels from {self.path.name}>"


class CpuLibrary(LibraryBase):
    """A library loaded into this process: fastest, but a crashing kernel takes the process down."""

    def __init__(self, so_path: Path, meta: dict, checked: bool = False):
        super().__init__(so_path, meta, checked)
        self._dll = ctypes.CDLL(str(so_path))

    def _make_kernel(self, meta: dict) -> CpuKernel:
        return CpuKernel(self, meta)

    # tensors the kernels take without copies: plain ones here (IsolatedLibrary: in the shared arena)
    @staticmethod
    def empty(*size, dtype=None):
        import torch

        return torch.empty(*size, dtype=dtype)

    @staticmethod
    def empty_strided(size, stride, dtype=None):
        import torch

        return torch.empty_strided(size, stride, dtype=dtype)

    @staticmethod
    def arena_tensor(t, memo: dict | None = None):
        return t
