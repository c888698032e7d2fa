"""Confinement a worker applies to itself before it loads any kernel (Linux, no privileges needed).

- resource limits: address space, CPU time, file size, no core files;
- a new user + network namespace (`unshare`): no network interface but loopback, which is down;
- Landlock: no file or folder may be written, created or removed outside the worker's folder;
  TCP bind/connect denied (ABI >= 4); no signals to processes outside the sandbox (ABI >= 6).

Each step reports what it did or why it could not: `apply()` returns those lines.
seccomp is not used: Landlock and the namespaces cover files and network.
"""

from __future__ import annotations

import ctypes
import os
import resource
import struct

CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
PR_SET_NO_NEW_PRIVS = 38
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # same on x86-64 and aarch64
RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
# write-like filesystem rights: write_file, remove_dir, remove_file, make_{char,dir,reg,sock,fifo,block,sym}
FS_WRITE = (1 << 1) | (1 << 4) | (1 << 5) | sum(1 << b for b in range(6, 13))
FS_REFER, FS_TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
NET_TCP = 1 | 2  # bind, connect (ABI 4)
SCOPE_ALL = 1 | 2  # abstract unix sockets, signals (ABI 6)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _err() -> str:
    return os.strerror(ctypes.get_errno())


def set_limits(memory_bytes: int) -> list[str]:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 30, 1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    return [
        f"limits: address space {memory_bytes >> 20} MiB, CPU time per launch, files written <= 1 GiB, no core files"
    ]


def limit_cpu(seconds: float) -> None:
    """CPU time this process may still use (SIGXCPU past it): set before each launch."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(r.ru_utime + r.ru_stime + seconds) + 1
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _unshare_network() -> str:
    uid, gid = os.getuid(), os.getgid()
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0:
        try:  # keep our own uid inside the namespace (files in the folder stay ours)
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"{uid} {uid} 1")
            _write("/proc/self/gid_map", f"{gid} {gid} 1")
        except OSError:
            pass
        return "network: none (new user + network namespace)"
    first = _err()
    if _libc.unshare(CLONE_NEWNET) == 0:
        return "network: none (new network namespace)"
    return f"network: NOT isolated (unshare: {first})"


def landlock_abi() -> int:
    abi = _libc.syscall(SYS_CREATE_RULESET, None, 0, RULESET_VERSION)
    return abi if abi > 0 else 0


def _landlock(folder: str) -> list[str]:
    abi = landlock_abi()
    if abi <= 0:
        return [f"files: writes NOT confined (Landlock unavailable: {_err()})"]
    fs = FS_WRITE | (FS_REFER if abi >= 2 else 0) | (FS_TRUNCATE if abi >= 3 else 0)
    net = NET_TCP if abi >= 4 else 0
    scope = SCOPE_ALL if abi >= 6 else 0
    attr = struct.pack("<QQQ", fs, net, scope)[: 8 if abi < 4 else 16 if abi < 6 else 24]
    buf = ctypes.create_string_buffer(attr, len(attr))
    fd = _libc.syscall(SYS_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), 0)
    if fd < 0:
        return [f"files: writes NOT confined (landlock_create_ruleset: {_err()})"]
    try:
        for path, rights in ((folder, fs), ("/dev/null", (1 << 1) | (FS_TRUNCATE if abi >= 3 else 0))):
            pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            rule = ctypes.create_string_buffer(struct.pack("<Qi", rights, pfd), 12)
            ok = _libc.syscall(SYS_ADD_RULE, fd, RULE_PATH_BENEATH, rule, 0) == 0
            os.close(pfd)
            if not ok:
                return [f"files: writes NOT confined (landlock_add_rule {path}: {_err()})"]
        if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or _libc.syscall(SYS_RESTRICT_SELF, fd, 0) != 0:
            return [f"files: writes NOT confined (landlock_restrict_self: {_err()})"]
    finally:
        os.close(fd)
    lines = [f"files: writes only inside the worker folder (Landlock ABI {abi}); reads are not restricted"]
    lines.append("TCP: bind/connect denied (Landlock)" if net else "TCP: not restricted by Landlock (ABI < 4)")
    if scope:
        lines.append("signals: cannot signal processes outside the sandbox (Landlock)")
    return lines


def apply(folder: str, memory_bytes: int) -> list[str]:
    """Confine this (single-threaded) process; returns one line per protection, in place or not."""
    lines = set_limits(memory_bytes)
    lines.append(_unshare_network())
    lines += _landlock(folder)
    lines.append("system calls: not filtered (no seccomp filter)")
    return lines
