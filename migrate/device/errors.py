"""Exceptions raised by migrate.device backends."""

from __future__ import annotations

from dataclasses import dataclass


class DeviceError(Exception):
    """Base class of every error raised by migrate.device."""


class BackendUnavailable(DeviceError):
    """The requested backend cannot run here (e.g. "mps" without an Apple GPU)."""


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int
    column: int
    severity: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.severity}: {self.message}"


class MetalCompileError(DeviceError):
    """The shader does not compile; `diagnostics` point into the user's files."""

    def __init__(self, message: str, diagnostics: tuple[Diagnostic, ...] = ()):
        super().__init__(message)
        self.diagnostics = diagnostics


class UnsupportedMetalFeature(MetalCompileError):
    """The shader uses a Metal feature the CPU backend does not emulate."""

    def __init__(self, feature: str, file: str, line: int, column: int = 1):
        diag = Diagnostic(file, line, column, "error", f"unsupported Metal feature: {feature}")
        super().__init__(f"{diag} (the CPU backend cannot run it)", (diag,))
        self.feature = feature


class KernelArgumentError(DeviceError, TypeError):
    """Wrong kernel name, argument count, argument type or launch geometry."""


class UnknownKernelError(KernelArgumentError, AttributeError):
    """No kernel with that host_name in the library."""


class KernelRuntimeError(DeviceError, RuntimeError):
    """The kernel reported an error (TORCH_REPORT_ERROR) or the runtime failed."""

    def __init__(self, message: str, reports: tuple[str, ...] = ()):
        super().__init__(message)
        self.reports = reports


class OutOfBoundsAccess(KernelRuntimeError):
    """A checked launch touched memory outside a bound buffer."""

    def __init__(
        self,
        message: str,
        kernel: str,
        argument: int | None,
        byte_offset: int | None,
        thread_position: tuple[int, int, int],
        threadgroup_position: tuple[int, int, int],
    ):
        super().__init__(message)
        self.kernel = kernel
        self.argument = argument
        self.byte_offset = byte_offset
        self.thread_position = thread_position
        self.threadgroup_position = threadgroup_position


class KernelFault(KernelRuntimeError):
    """The kernel crashed (a signal), ran out of memory or its time: it never takes the caller down.

    signal: "SIGSEGV", "SIGFPE", ... or "timeout" / "out of memory"; address and thread
    positions are known for faults caught in checked mode, else None.
    """

    def __init__(
        self,
        message: str,
        kernel: str,
        signal: str,
        address: int | None = None,
        thread_position: tuple[int, int, int] | None = None,
        threadgroup_position: tuple[int, int, int] | None = None,
    ):
        super().__init__(message)
        self.kernel = kernel
        self.signal = signal
        self.address = address
        self.thread_position = thread_position
        self.threadgroup_position = threadgroup_position
