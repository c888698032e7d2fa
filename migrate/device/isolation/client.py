"""The parent's side: one persistent worker per limit setting, restarted after a crash or timeout.

Buffers cross through the shared arena (arena.py), whose memfd every worker gets at start: a
launch sends the offsets of its buffers (library.py copies in and back those that do not live
there). A dead worker, a reply that does not come within the timeout, or a fault reported by the
worker becomes a KernelFault naming the kernel and the signal; the arena, and every tensor in it,
outlives the worker.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import (
    DeviceError,
    KernelArgumentError,
    KernelFault,
    KernelRuntimeError,
    OutOfBoundsAccess,
    UnknownKernelError,
)
from .arena import arena
from .protocol import recv, send
from ...resources import python_module

START_TIMEOUT = 60.0  # seconds for a worker to start (Python start-up on a loaded machine)
ALIGN = 64


def default_memory() -> int:
    """4 GiB, plus what the fiber stacks of each launch thread reserve (256 MiB for 1024 fibers)."""
    from ..cpu.library import _workers

    return (4 << 30) + _workers() * (264 << 20)


@dataclass(frozen=True)
class Limits:
    timeout: float = 60.0  # wall-clock seconds per launch
    memory: int = field(default_factory=default_memory)  # address space of the worker, bytes

    @property
    def cpu(self) -> float:
        """CPU seconds per launch (a backstop: the wall-clock timeout fires first)."""
        return self.timeout * max(1, os.cpu_count() or 1)


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name if code < 0 else f"exit status {code}"
    except ValueError:
        return f"signal {-code}"


_SIGNAL_WHAT = {
    "SIGSEGV": "segmentation fault",
    "SIGBUS": "bus error",
    "SIGFPE": "arithmetic trap",
    "SIGILL": "illegal instruction (a trap)",
    "SIGABRT": "abort",
    "SIGKILL": "killed",
    "SIGXCPU": "CPU time limit exceeded",
    "SIGTRAP": "trap",
}


_OOM_TEXT = "cannot allocate memory"  # glibc's words (thread-local data) and the runtime's (a failed malloc)


def _package_root() -> str:
    return str(Path(__file__).resolve().parents[3])


class WorkerProcess:
    """A started worker: its folder, socket, arena and the libraries it has loaded."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.folder = tempfile.mkdtemp(prefix="mps-migrate-worker-")
        self.log = os.path.join(self.folder, "worker.log")
        self.arena_fd = arena().fd  # the process's arena: it outlives this worker
        self.loaded: dict[str, dict] = {}
        self.peak_memory = 0
        parent, child = socket.socketpair()
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": self.folder,
            "TMPDIR": self.folder,
            "LANG": "C.UTF-8",
            "PYTHONPATH": _package_root(),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        if os.environ.get("MPS_MIGRATE_THREADS"):
            env["MPS_MIGRATE_THREADS"] = os.environ["MPS_MIGRATE_THREADS"]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [
                    *python_module("migrate.device.isolation.worker"),
                    str(child.fileno()),
                    str(limits.memory),
                    str(self.arena_fd),
                ],
                cwd=self.folder,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=(child.fileno(), self.arena_fd),
                start_new_session=True,
            )
        child.close()
        self.sock = parent
        self._sandbox: list[str] | None = None  # read from the worker's first message, when first needed

    @property
    def sandbox(self) -> list[str]:
        """What confines the worker: one line per protection, in place or not."""
        if self._sandbox is None:
            hello, _ = self._reply(START_TIMEOUT)
            if hello is None or not isinstance(hello.get("sandbox"), list):
                self.kill()
                raise DeviceError(f"the kernel worker did not start: {self.status()}{self.log_tail()}")
            self._sandbox = [str(x) for x in hello["sandbox"]]
        return self._sandbox

    def _reply(self, timeout: float) -> tuple[dict | None, bool]:
        """(message or None, whether the time ran out)."""
        self.sock.settimeout(timeout)
        try:
            return recv(self.sock), False
        except socket.timeout:
            return None, True
        except OSError:
            return None, False

    def alive(self) -> bool:
        if self.proc.returncode is not None:
            return False
        try:  # WNOWAIT: leave the child to _reap, which keeps its resource usage
            return os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None
        except ChildProcessError:
            return False

    def _reap(self) -> None:
        if self.proc.returncode is None:
            try:
                _, status, usage = os.wait4(self.proc.pid, 0)
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                self.peak_memory = usage.ru_maxrss * 1024
            except ChildProcessError:
                self.proc.wait()

    def status(self) -> str:
        """How the worker ended: a signal name (described), an exit status, or "no reply"."""
        if self.alive():
            return "no reply"
        self._reap()
        name = _signal_name(self.proc.returncode)
        return f"{name} ({_SIGNAL_WHAT[name]})" if name in _SIGNAL_WHAT else name

    def log_text(self, since: int = 0) -> str:
        try:
            with open(self.log, "rb") as f:
                f.seek(since)
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def log_size(self) -> int:
        try:
            return os.path.getsize(self.log)
        except OSError:
            return 0

    def log_tail(self) -> str:
        lines = [ln for ln in self.log_text().splitlines() if ln.strip()]
        if not lines:
            return ""
        said = next((ln for ln in lines if "panic" in ln), lines[-1])  # a UB trap's message comes first
        return f"; worker output: {said.strip()[:200]}"

    def call(self, msg: dict, timeout: float, kernel: str) -> dict:
        """Send one request; a dead or silent worker is killed and becomes a KernelFault."""
        self.sandbox  # noqa: B018 - the worker is confined before it gets any request
        logged = self.log_size()
        try:
            send(self.sock, msg)
        except OSError:
            pass
        try:
            reply, timed_out = self._reply(timeout)
        except BaseException:  # interrupted (Ctrl-C): the kernel may still be running, on shared memory
            self.kill()
            raise
        if reply is not None:
            return reply
        if not timed_out:  # the connection closed: the worker is exiting, let it finish
            deadline = time.monotonic() + min(timeout, 5.0)
            while self.alive() and time.monotonic() < deadline:
                time.sleep(0.005)
        self.kill()
        if timed_out:
            raise KernelFault(
                f"{kernel}: timeout: no result after {timeout:g} s (wall clock); the worker was "
                "killed and is restarted for the next launch",
                kernel,
                "timeout",
            )
        why = self.status()
        sig = why.split(" ")[0]
        limit = f"{self.limits.memory >> 20} MiB address-space limit"
        if _OOM_TEXT in self.log_text(logged).lower():
            why += f"; out of memory: an allocation failed under the worker's {limit}"
            sig = "out of memory"
        elif self.peak_memory * 2 >= self.limits.memory:
            why += f"; out of memory: the worker used {self.peak_memory >> 20} MiB of its {limit}"
            sig = "out of memory"
        raise KernelFault(
            f"{kernel}: the kernel crashed its worker: {why}{self.log_tail()}; the worker is "
            "restarted for the next launch",
            kernel,
            sig,
        )

    def kill(self) -> None:
        if self.alive():
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                self.proc.kill()
        self._reap()

    def close(self) -> None:
        if self.alive():
            try:
                send(self.sock, {"op": "quit"})
                self.proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()
        self.sock.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class Pool:
    """One worker per Limits, shared by every library of this process and restarted when lost."""

    def __init__(self):
        self.workers: dict[Limits, WorkerProcess] = {}
        atexit.register(self.close)

    def get(self, limits: Limits) -> WorkerProcess:
        w = self.workers.get(limits)
        if w is None or not w.alive():
            if w is not None:
                w.close()
            w = self.workers[limits] = WorkerProcess(limits)
        return w

    def close(self) -> None:
        for w in self.workers.values():
            w.close()
        self.workers.clear()


POOL = Pool()

_ERRORS = {c.__name__: c for c in (KernelRuntimeError, KernelArgumentError, UnknownKernelError)}


def rebuild_error(reply: dict, kernel: str) -> DeviceError:
    """A worker's error reply -> the exception the in-process backend would have raised."""
    kind, msg = reply.get("error"), str(reply.get("message", ""))
    pos = lambda k: tuple(reply[k]) if isinstance(reply.get(k), list) else None  # noqa: E731
    if kind == "OutOfBoundsAccess":
        return OutOfBoundsAccess(
            msg,
            kernel,
            reply.get("argument"),
            reply.get("byte_offset"),
            pos("thread_position"),
            pos("threadgroup_position"),
        )
    if kind == "KernelFault":
        return KernelFault(
            msg,
            kernel,
            str(reply.get("signal")),
            reply.get("address"),
            pos("thread_position"),
            pos("threadgroup_position"),
        )
    if kind == "MemoryError":
        return KernelFault(f"{kernel}: {msg}", kernel, "out of memory")
    cls = _ERRORS.get(kind)
    if cls is not None:
        return cls(msg)
    return KernelRuntimeError(f"{kernel}: the worker failed: {kind}: {msg}")
