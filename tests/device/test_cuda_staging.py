"""The CUDA backend's host side without a GPU: buffers staged to the "device", the table of
pointers, the copy-back. The device here is host memory (a copy per buffer) and the launch runs
the CPU backend's kernel on those copies, so what the GPU would read and write is checked here.

Regression (GPU run 1): the const buffers' device copies were freed as soon as they were made;
torch's caching allocator gave their blocks to the next copies, so a binary kernel's input,
other and output shared one block and the output kept verify's poison."""

from __future__ import annotations

import weakref

import pytest
import torch

from migrate.device import get_backend
from migrate.device.cuda import toolchain
from tests import corpus

pytestmark = pytest.mark.skipif(toolchain.libdevice() is None, reason="no libdevice.10.bc on this machine")
BINARY = "aten/src/ATen/native/mps/kernels/BinaryKernel.metal"


@pytest.fixture(scope="module")
def tree():
    return corpus.pytorch_270a0_root()


@pytest.fixture(scope="module")
def libs(tree, tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("MPS_MIGRATE_CACHE", str(tmp_path_factory.mktemp("staging-cache")))
    src = (tree / BINARY).read_text()
    cu = get_backend("cuda", root=tree).compile_shader(src, filename="BinaryKernel.metal")
    cpu = get_backend("cpu", root=tree).compile_shader(src, filename="BinaryKernel.metal")
    yield cu, cpu
    mp.undo()


class HostDevice:
    """to_device for run_staged: a host copy per buffer, watched for being freed early."""

    def __init__(self):
        self.copies = weakref.WeakValueDictionary()  # pointer -> copy, not keeping it alive
        self.made = 0
        self.freed: list[int] = []

    def __call__(self, host: torch.Tensor) -> torch.Tensor:
        dev = host.clone()
        weakref.finalize(dev, self.freed.append, dev.data_ptr())
        self.copies[dev.data_ptr()] = dev
        self.made += 1
        return dev

    def launch(self, kernel, threads):
        def run(table_ptr: int) -> None:
            assert not self.freed, "a device copy was freed before the launch"
            n = len(kernel.args)
            ptrs = torch.empty(0, dtype=torch.int64).set_(self.copies[table_ptr].untyped_storage())[:n].tolist()
            assert len(set(p for p in ptrs if p)) == len([p for p in ptrs if p]), "two buffers share a device block"
            kernel(*[self.copies[p] for p in ptrs], threads=threads)

        return run


def test_copy_back_slots_equal_the_cpu_backends_writable_buffers(libs):
    cu, cpu = libs
    assert len(cu.kernel_names) > 40
    for name in cu.kernel_names:
        writable = [s for s, a in enumerate(cpu.kernel(name).args) if a.kind != -1 and not a.is_const]
        assert cu.kernel(name).copied_back() == writable == [2], name  # output: device void* / result_of<T,F>*


@pytest.mark.parametrize("dense", [True, False])
def test_binary_kernel_writes_reach_the_output(libs, dense):
    """fmax through the CUDA host path ([input, other, output(, offsets)]), run on host copies."""
    cu, cpu = libs
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(37, generator=g), torch.randn(37, generator=g)
    out = torch.full((37,), -7.0)
    args = [a, b, out]
    if not dense:  # per thread the byte offsets of output, input, other (uint3, padded to 16 bytes)
        off = torch.arange(37, dtype=torch.int32) * 4
        args.append(torch.stack([off, off, off, torch.zeros_like(off)], 1).contiguous())
    name = "fmax_dense_float" if dense else "fmax_float"
    k = cu.kernel(name)
    bounds, t, grp = k.bind(args, [37], None)
    dev = HostDevice()
    k.run_staged(bounds, dev, dev.launch(cpu.kernel(name), [37]))
    assert torch.equal(out, torch.fmax(a, b))
    assert dev.made == len(args) + 1  # every buffer and the pointer table
