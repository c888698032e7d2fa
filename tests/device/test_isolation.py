"""Kernels run in a confined worker process: planted crashes, hangs and hostile kernels end in a
KernelFault naming the kernel and the signal, the caller survives and the next launch runs in a
restarted worker. Limits are small so the tests stay fast."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import numpy as np
import pytest

from migrate.device import KernelFault, KernelRuntimeError, MetalCompileError, get_backend
from migrate.device.cpu.library import CpuLibrary
from migrate.device.isolation.library import IsolatedLibrary

PLANTED = r"""
#include <metal_stdlib>
using namespace metal;
extern "C" void* malloc(ulong n);
extern "C" int open(constant char* path, int flags, ...);
extern "C" int truncate(constant char* path, long n);
extern "C" int ftruncate(int fd, long n);

kernel void add_one(device float* y [[buffer(0)]], constant float* x [[buffer(1)]],
                    uint i [[thread_position_in_grid]]) {
  y[i] = x[i] + 1.0f;
}
kernel void oob_write(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  y[i * 100000000u] = 1.0f;
}
kernel void null_deref(device float* y [[buffer(0)]], constant ulong& addr [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) {
  device float* p = (device float*)addr;
  p[i] = y[i];
}
kernel void endless(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  for (uint k = 0; k < 10u; k *= 2u) y[i] += 1.0f;
}
kernel void half_barrier(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]],
                         uint l [[thread_position_in_threadgroup]]) {
  threadgroup float t[64];
  t[l] = y[i];
  if (l < 32) threadgroup_barrier(mem_flags::mem_threadgroup);
  y[i] = t[63 - l];
}
kernel void int_div(device int* y [[buffer(0)]], constant int* x [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  y[i] = y[i] / x[i];
}
kernel void hog(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  device float* prev = nullptr;
  while (y[0] != 12345.0f) {  // 16 MiB more each turn, every page touched
    device float* p = (device float*)malloc(1ul << 24);
    for (ulong k = 0; k < (1ul << 22); k += 1024) p[k] = y[i];
    *(device float* device*)p = prev;
    prev = p;
  }
  y[i] = prev[0];
}
kernel void write_constant(constant float* x [[buffer(0)]], device float* y [[buffer(1)]],
                           uint i [[thread_position_in_grid]]) {
  ((device float*)x)[i] = -1.0f;
  y[i] = 1.0f;
}
kernel void shrink_arena(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  y[i] = 2.0f;
  truncate("arena", 0);  // every way to the shared buffers, after the kernel's last store
  for (int fd = 3; fd < 256; ++fd) ftruncate(fd, 0);
}
kernel void create_file(constant char* path [[buffer(0)]], device int* fd [[buffer(1)]],
                        uint i [[thread_position_in_grid]]) {
  fd[0] = open(path, 0101, 0644);  // O_WRONLY | O_CREAT
}
"""


@pytest.fixture(scope="module")
def backend(cache_dir):
    mp = pytest.MonkeyPatch()
    mp.setenv("MPS_MIGRATE_CACHE", str(cache_dir))
    yield get_backend("cpu", timeout=3, memory=1 << 30)
    mp.undo()


@pytest.fixture(scope="module")
def lib(backend):
    return backend.compile_shader(PLANTED, opt=1)


def add_one_still_works(lib) -> None:
    y, x = np.zeros(8, np.float32), np.arange(8, dtype=np.float32)
    lib.add_one(y, x)
    assert y.tolist() == (x + 1).tolist()


def test_isolation_is_the_default_and_in_process_stays_available(backend, lib):
    assert isinstance(lib, IsolatedLibrary)
    inproc = get_backend("cpu", isolate=False).compile_shader(PLANTED, opt=1)
    assert isinstance(inproc, CpuLibrary)
    y, x = np.zeros(8, np.float32), np.arange(8, dtype=np.float32)
    inproc.add_one(y, x)
    add_one_still_works(lib)
    assert y.tolist() == (x + 1).tolist()


def test_aliased_buffers_stay_aliased_across_the_worker(lib):
    y = np.arange(8, dtype=np.float32)
    lib.add_one(y, y)  # in place: output and input are one buffer
    assert y.tolist() == [float(v + 1) for v in range(8)]
    z = np.zeros(16, np.float32)
    lib.add_one(z[8:], z[:8])  # views of one array: the worker sees one span
    assert z.tolist() == [0.0] * 8 + [1.0] * 8


def test_a_write_into_a_constant_buffer_shows_as_in_process(lib):
    """Isolated, a kernel that writes its `constant` input through a cast changes the caller's array, as it
    does in this process: verify catches that bug by the input changing (#186580)."""
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    lib.write_constant(x, y)
    assert x.tolist() == [-1.0] * 8 and y.tolist() == [1.0] * 8
    x[:] = 1.0
    get_backend("cpu", isolate=False).compile_shader(PLANTED, opt=1).write_constant(x, y)
    assert x.tolist() == [-1.0] * 8


SHRINK = """
import numpy as np
from migrate.device import get_backend
lib = get_backend("cpu", timeout=10, memory=1 << 30).compile_shader({src!r}, opt=1)
y = np.zeros(4, np.float32)
lib.shrink_arena(y)
print(y.tolist())
"""


def test_worker_cannot_shrink_the_shared_arena(lib, cache_dir):
    # a truncated shared mapping would be a SIGBUS in the parent's copy-back: run it in a child
    env = dict(os.environ, MPS_MIGRATE_CACHE=str(cache_dir))
    out = subprocess.run(
        [sys.executable, "-c", SHRINK.format(src=PLANTED)], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[2.0, 2.0, 2.0, 2.0]"


def test_out_of_bounds_write_far_past_the_buffer(lib):
    with pytest.raises(KernelFault) as e:
        lib.oob_write(np.zeros(4, np.float32))
    assert e.value.signal == "SIGSEGV" and e.value.kernel == "oob_write"
    assert "oob_write: the kernel crashed its worker: SIGSEGV" in str(e.value)
    add_one_still_works(lib)


def test_checked_mode_names_the_thread_and_the_address(lib):
    y = np.zeros(4, np.float32)
    with pytest.raises(KernelFault) as e:
        lib.oob_write(y, checked=True)
    assert e.value.thread_position == (1, 0, 0)  # thread 0 writes y[0], thread 1 400 MB past it
    assert "byte offset 400000000 from buffer argument 0 (16 bytes)" in str(e.value)
    assert e.value.address is not None and y.tolist() == [0.0] * 4  # nothing copied back
    add_one_still_works(lib)


def test_null_dereference(lib):
    with pytest.raises(KernelFault) as e:
        lib.null_deref(np.ones(4, np.float32), 0)
    assert e.value.signal == "SIGSEGV"
    with pytest.raises(KernelFault) as e:
        lib.null_deref(np.ones(4, np.float32), 0, checked=True)
    assert e.value.address == 0 and "(null pointer)" in str(e.value) and e.value.thread_position == (0, 0, 0)
    add_one_still_works(lib)


def test_endless_loop_times_out(lib):
    with pytest.raises(KernelFault) as e:
        lib.endless(np.zeros(4, np.float32))
    assert e.value.signal == "timeout" and "no result after 3 s" in str(e.value)
    add_one_still_works(lib)


def test_barrier_reached_by_half_the_threadgroup(lib):
    with pytest.raises(
        KernelRuntimeError,
        match=r"deadlock: threadgroup_barrier reached by 32 of 64 threads "
        r"of threadgroup \[0, 0, 0\]",
    ):
        lib.half_barrier(np.zeros(64, np.float32), group_size=[64])
    add_one_still_works(lib)


@pytest.mark.skipif(
    platform.machine().lower() not in ("x86_64", "amd64"),
    reason="integer division by zero traps on x86-64 only (aarch64 returns 0)",
)
def test_integer_division_by_zero_traps(lib):
    with pytest.raises(KernelFault) as e:
        lib.int_div(np.ones(4, np.int32), np.zeros(4, np.int32))
    assert e.value.signal == "SIGFPE"
    with pytest.raises(KernelFault) as e:
        lib.int_div(np.ones(4, np.int32), np.zeros(4, np.int32), checked=True)
    assert "SIGFPE at instruction" in str(e.value) and e.value.thread_position == (0, 0, 0)
    add_one_still_works(lib)


def test_unbounded_allocation_is_out_of_memory(backend):
    # its own worker: a smaller address space, and time to fill it on a loaded machine
    small = get_backend("cpu", timeout=120, memory=512 << 20).compile_shader(PLANTED, opt=1)
    with pytest.raises(KernelFault) as e:
        small.hog(np.zeros(1, np.float32))
    assert e.value.signal == "out of memory" and "512 MiB address-space limit" in str(e.value)
    add_one_still_works(small)


def test_sandbox_reports_every_protection(lib):
    lines = lib.sandbox
    assert [ln.split(":")[0] for ln in lines][:3] == ["limits", "network", "files"]
    assert "address space 1024 MiB" in lines[0]
    assert lines[-1] == "system calls: not filtered (no seccomp filter)"


def test_kernel_cannot_write_outside_its_folder(lib, tmp_path):
    files = next(ln for ln in lib.sandbox if ln.startswith("files:"))
    if "NOT" in files:
        pytest.skip(f"sandbox not available here: {files}")
    outside = tmp_path / "escaped.txt"
    path = lambda p: np.frombuffer(str(p).encode() + b"\0", np.uint8)  # noqa: E731
    fd = np.zeros(1, np.int32)
    lib.create_file(path(outside), fd, threads=[1])
    assert fd[0] == -1 and not outside.exists()
    lib.create_file(path("inside.txt"), fd, threads=[1])  # relative: the worker's own folder
    assert fd[0] >= 0
    # the same kernel run in this process does create the file: the sandbox is what stopped it
    get_backend("cpu", isolate=False).compile_shader(PLANTED, opt=1).create_file(path(outside), fd, threads=[1])
    assert fd[0] >= 0 and outside.exists()


TEMPLATE_EXPLOSION = r"""
template <int N, int M> struct boom { static constant int v = boom<N - 1, 2 * M>::v + boom<N - 1, 2 * M + 1>::v; };
template <int M> struct boom<0, M> { static constant int v = M; };
kernel void k(device int* y [[buffer(0)]]) { y[0] = boom<48, 0>::v; }
"""
ENDLESS_INCLUDE = r"""
#if __INCLUDE_LEVEL__ < 100
#include __FILE__
#include __FILE__
#endif
kernel void k(device int* y [[buffer(0)]]) { y[0] = 1; }
"""


@pytest.mark.parametrize("source", [TEMPLATE_EXPLOSION, ENDLESS_INCLUDE], ids=["template", "include"])
def test_pathological_shader_is_a_compile_error_after_the_timeout(cache_dir, monkeypatch, source):
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(cache_dir))
    be = get_backend("cpu", compile_timeout=2)
    with pytest.raises(MetalCompileError, match=r"did not finish within 2 s and was stopped"):
        be.compile_shader(source, filename="boom.metal")
