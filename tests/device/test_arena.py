"""Tensors in the shared arena cross to the isolated worker without copies: the same results as the copy
path, writes (into `constant` buffers too) show at once, views alias, the tensors outlive a crashed worker,
freed ranges are reused, and an overrun of an arena tensor faults instead of reaching the next one."""

from __future__ import annotations

import ctypes
import mmap

import numpy as np
import pytest
import torch

from migrate.device import KernelFault, get_backend
from migrate.device.isolation import arena as shared
from migrate.device.isolation.client import POOL
from migrate.device.isolation.library import _place
from migrate.device.isolation.windows import GUARD, Windows

SRC = r"""
#include <metal_stdlib>
using namespace metal;
extern "C" int raise(int sig);

kernel void mad(device float* y [[buffer(0)]], constant float* x [[buffer(1)]], constant float* z [[buffer(2)]],
                uint i [[thread_position_in_grid]]) {
  y[i] = x[i] * z[i] + x[i];
}
kernel void write_constant(constant float* x [[buffer(0)]], device float* y [[buffer(1)]],
                           uint i [[thread_position_in_grid]]) {
  ((device float*)x)[i] = -1.0f;
  y[i] = 1.0f;
}
kernel void store_then_crash(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  y[i] = 7.0f;
  raise(11);  // SIGSEGV, after the store (an opaque call: the store stays before it)
}
kernel void store_at(device float* y [[buffer(0)]], constant uint& at [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
  y[at + i] = 5.0f;
}
"""


@pytest.fixture(scope="module")
def backend(cache_dir):
    mp = pytest.MonkeyPatch()
    mp.setenv("MPS_MIGRATE_CACHE", str(cache_dir))
    yield get_backend("cpu", timeout=10, memory=1 << 30)
    mp.undo()


@pytest.fixture(scope="module")
def lib(backend):
    return backend.compile_shader(SRC, opt=1)


def staged(kernel, *args) -> list:
    """The spans a launch of these arguments copies in and back (none: zero copy)."""
    bounds, _, _ = kernel.bind(args, None, None)
    _, _, spans, stage, need = _place(bounds, shared.arena())
    if need:
        shared.arena().release(stage, need)
    return spans


def test_zero_copy_launch_matches_the_copy_path(lib):
    g = torch.Generator().manual_seed(0)
    x, z = torch.randn(100_003, generator=g), torch.randn(100_003, generator=g)
    ax, az, ay = lib.arena_tensor(x), lib.arena_tensor(z), lib.empty(100_003)
    assert staged(lib.mad, ay, ax, az) == [] and len(staged(lib.mad, ay, x, az)) == 1  # resident: offsets only
    y = torch.empty(100_003)
    lib.mad(y, x, z)  # copied in and back
    lib.mad(ay, ax, az)  # offsets only
    assert torch.equal(ay, y) and torch.equal(y, x * z + x)
    assert torch.equal(ax, x) and torch.equal(az, z)


def test_mixed_launch_copies_only_what_is_not_in_the_arena(lib):
    x, z = torch.arange(64.0), torch.full((64,), 2.0)
    ay = lib.empty(64)
    lib.mad(ay, x, lib.arena_tensor(z))
    assert ay.tolist() == (x * 3).tolist()
    y = np.zeros(64, np.float32)  # a numpy output, arena inputs
    lib.mad(y, lib.arena_tensor(x), lib.arena_tensor(z))
    assert y.tolist() == (x * 3).tolist()


def test_a_write_into_a_constant_arena_buffer_shows(lib):
    x, y = lib.empty(8), lib.empty(8)
    x.fill_(1.0)
    lib.write_constant(x, y)
    assert x.tolist() == [-1.0] * 8 and y.tolist() == [1.0] * 8


def test_views_of_one_allocation_alias(lib):
    z = lib.empty(24)
    z.zero_()
    lib.mad(z[8:16], z[:8], z[16:])  # three views of one allocation: one span, one window
    assert z[8:16].tolist() == [0.0] * 8
    z[:8] = torch.arange(8.0)
    z[16:] = 2.0
    lib.mad(z[8:16], z[:8], z[16:])
    assert z[8:16].tolist() == [3.0 * k for k in range(8)]
    base = lib.arena_tensor(torch.arange(40.0))
    odd = base.as_strided((8,), (1,), 13)  # a storage offset into the allocation
    y = lib.empty(8)
    lib.mad(y, odd, base[30:38])
    assert y.tolist() == [(13 + k) * (30 + k) + 13 + k for k in range(8)]
    lib.mad(base[:8], base[:8], base[20:28])  # in place: the output is the input
    assert base[:8].tolist() == [k * (20 + k) + k for k in range(8)]


def test_arena_tensor_keeps_layout_and_shared_storage():
    base = torch.arange(20.0)
    v, t = base[3:11], base.view(4, 5).t()
    memo: dict = {}
    av, at = shared.copy(v, memo), shared.copy(t, memo)
    assert shared.resident(av) and shared.resident(at)
    assert av.untyped_storage().data_ptr() == at.untyped_storage().data_ptr()  # one storage, as before
    assert (av.stride(), av.storage_offset(), at.stride()) == (v.stride(), 3, t.stride())
    assert torch.equal(av, v) and torch.equal(at, t)
    assert shared.copy(av) is av and not shared.resident(v)


def test_tensors_stay_valid_after_the_worker_crashes(lib, backend):
    x, z = lib.arena_tensor(torch.arange(16.0)), lib.arena_tensor(torch.full((16,), 3.0))
    y = lib.empty(16)
    lib.mad(y, x, z)
    before = POOL.get(backend.limits).proc.pid
    crashed = lib.empty(4)
    crashed.zero_()
    with pytest.raises(KernelFault) as e:
        lib.store_then_crash(crashed, threads=[1])
    assert e.value.signal == "SIGSEGV"
    assert crashed.tolist() == [7.0, 0.0, 0.0, 0.0]  # what the kernel stored before it crashed shows, as in one process
    assert x.tolist() == [float(k) for k in range(16)] and y.tolist() == [4.0 * k for k in range(16)]
    lib.mad(y, z, x)  # a new worker maps the same memory
    assert POOL.get(backend.limits).proc.pid != before
    assert y.tolist() == [3.0 * k + 3.0 for k in range(16)]


def test_freed_ranges_are_reused_and_live_ones_are_not():
    ar = shared.Arena(1 << 30)  # its own: no other test's ranges
    a = ar.storage(5000)
    at = a.data_ptr()
    del a
    b = torch.empty(0).set_(ar.storage(5000))
    assert b.data_ptr() == at  # the dead tensor's range, not a new one
    view = b[100:]
    del b  # the view keeps the storage alive
    c = torch.empty(0).set_(ar.storage(5000))
    assert c.data_ptr() == at + 2 * mmap.PAGESIZE
    view.fill_(1.0)
    c.fill_(2.0)
    assert view.sum().item() == 1150.0 and c.sum().item() == 2500.0
    del view, c
    assert ar.alloc(3 * mmap.PAGESIZE) == 0 and ar.top == 3 * mmap.PAGESIZE  # both back, merged


def test_an_overrun_of_an_arena_tensor_faults_before_the_next_one(lib):
    a, b = lib.empty(mmap.PAGESIZE // 4), lib.empty(mmap.PAGESIZE // 4)  # one page each
    b.fill_(1.0)
    with pytest.raises(KernelFault) as e:
        lib.store_at(a, mmap.PAGESIZE // 4, threads=[1])  # just past a's page: the guard gap
    assert e.value.signal == "SIGSEGV"
    assert b.tolist() == [1.0] * (mmap.PAGESIZE // 4)
    lib.store_at(a, 3, threads=[1])
    assert a[3].item() == 5.0


def test_worker_windows_stay_within_their_budget():
    ar = shared.arena()
    storages = [ar.storage(1 << 20) for _ in range(6)]
    offs = [s.data_ptr() - ar.base for s in storages]
    w = Windows(ar.fd, budget=3 * ((1 << 20) + 2 * GUARD))
    w.map([(offs[0], 1 << 20)])
    for off in offs[1:]:
        w.map([(off, 1 << 20)])
    assert w.bytes <= w.budget and len(w.mapped) == 3
    assert (offs[0], 1 << 20) not in w.mapped  # least recently used out
    again = w.map([(offs[-1], 1 << 20)])
    assert again == [w.mapped[(offs[-1], 1 << 20)] + GUARD]
    ctypes.memset(ar.base + offs[0], 42, 1)  # a window shows what the parent wrote
    assert ctypes.string_at(w.map([(offs[0], 1 << 20)])[0], 1) == b"*"
