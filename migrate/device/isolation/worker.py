"""The worker process: confines itself, then loads compiled kernel libraries and runs launches.

    python -m migrate.device.isolation.worker FD MEMORY_BYTES ARENA_FD

FD is a connected socket to the parent; messages are length-prefixed JSON (never pickle: the
parent must not trust what comes back). Buffers live in the arena, a memfd (ARENA_FD) shared with
the parent and sealed against shrinking; each launch names the ranges of it to map (windows.py).
"""

from __future__ import annotations

import os
import sys

from .protocol import recv, send  # no imports that start threads before the sandbox is in place
from .sandbox import apply, limit_cpu


def _error(exc: BaseException) -> dict:
    out = {"error": type(exc).__name__, "message": str(exc)}
    for k in ("kernel", "argument", "byte_offset", "thread_position", "threadgroup_position", "signal", "address"):
        if hasattr(exc, k):
            out[k] = getattr(exc, k)
    return out


class Worker:
    def __init__(self, sock, arena_fd: int, memory: int):
        from .windows import Windows

        self.sock = sock
        self.libs: dict[str, object] = {}
        self.windows = Windows(arena_fd, memory // 4)  # mapped arena ranges kept for later launches

    def load(self, msg: dict) -> dict:
        from migrate.device.cpu.library import CpuLibrary, arg_infos

        lib = self.libs.get(msg["path"])
        if lib is None:
            lib = self.libs[msg["path"]] = CpuLibrary(msg["path"], msg["meta"])
        kernels = lib._meta.values()
        return {
            "args": {
                k["name"]: [tuple(getattr(a, f) for f, _ in a._fields_) for a in arg_infos(lib._dll, k)]
                for k in kernels
            }
        }

    def launch(self, msg: dict) -> dict:
        from migrate.device.cpu.binding import Bound

        kernel = self.libs[msg["path"]].kernel(msg["kernel"])
        at = self.windows.map([(int(off), int(n)) for off, n in msg["windows"]])
        bounds = [Bound(at[w] + delta if w >= 0 else 0, n if w >= 0 else 0) for w, delta, n in msg["slots"]]
        limit_cpu(msg["cpu"])
        kernel._execute(bounds, tuple(msg["threads"]), tuple(msg["group"]), msg["checked"])
        return {"ok": True}

    def serve(self) -> None:
        while True:
            msg = recv(self.sock)
            if msg is None or msg.get("op") == "quit":
                return
            try:
                reply = getattr(self, msg["op"])(msg)
            except MemoryError:
                reply = {"error": "MemoryError", "message": "out of memory (address-space limit)"}
            except Exception as exc:  # noqa: BLE001 - every failure goes back to the parent as a reply
                reply = _error(exc)
            send(self.sock, reply)


def main() -> None:
    import socket

    fd, memory, arena_fd = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    sandbox = apply(os.getcwd(), memory)
    sock = socket.socket(fileno=fd)
    send(sock, {"sandbox": sandbox, "pid": os.getpid()})
    Worker(sock, arena_fd, memory).serve()


if __name__ == "__main__":
    main()
