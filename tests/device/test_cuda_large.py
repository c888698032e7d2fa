"""verify --large (cuda): the cases past 2^31 and 2^32 elements, built and planned without a GPU
(tensors on the meta device); running them is bench/gpu_run.py's part (e)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from migrate.cli import main
from migrate.device import get_backend
from migrate.device.cuda import toolchain
from migrate.verify.conventions import locate
from migrate.verify.large import SIZES, LargeCase, large_cases, make_inputs, plan, sample_positions, too_wide
from migrate.verify.references import TorchCpuReference
from migrate.verify.run import Options, Runner, registered_dtypes
from tests import corpus


def test_one_case_past_2_31_and_one_past_2_32_in_the_smallest_dtype():
    cases = large_cases([torch.float32, torch.bfloat16, torch.float16])
    assert [c.n for c in cases] == [(1 << 31) + (1 << 20), (1 << 32) + (1 << 20)]
    assert {c.dtype for c in cases} == {torch.float16}
    assert [c.layout for c in cases] == ["large_2^31+2^20", "large_2^32+2^20"]
    assert large_cases([torch.int32, torch.uint8])[0].dtype == torch.uint8
    assert large_cases([torch.complex64]) == []


def test_sample_positions_straddle_every_32_bit_boundary():
    n = SIZES[1]
    pos = sample_positions(n, seed=3)
    assert torch.equal(pos, torch.unique(pos)) and int(pos.min()) == 0 and int(pos.max()) == n - 1
    for p in (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32:
        assert bool((pos == p).any()), p
    assert not bool((sample_positions(SIZES[0]) >= 1 << 32).any())
    assert torch.equal(sample_positions(n, seed=3), pos)  # reproducible


def test_large_is_cuda_only(capsys):
    root = corpus.pytorch_270a0_root()
    assert main(["verify", "exp", "--root", str(root), "--large", "--backend", "cpu"]) == 2
    assert "--large needs --backend cuda" in capsys.readouterr().err


@pytest.mark.skipif(toolchain.libdevice() is None, reason="no libdevice.10.bc on this machine")
def test_2_7_unary_host_cannot_index_past_2_32_threads(tmp_path, monkeypatch):
    """2.7.0a0's exp: one thread per element, so past 2^32 elements the launch itself is the bug."""
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path / "cache"))
    root = corpus.pytorch_270a0_root()
    source = locate(root, "exp", {}, tmp_path)
    lib = get_backend("cuda", root=root).compile_shader(
        source.text, source.include_dirs, filename=Path(source.path).name
    )
    ref = TorchCpuReference("exp")
    runner = Runner(source, lib, [ref], Options(backend="cuda"))
    dt = large_cases(registered_dtypes(source))[0].dtype  # uint8: exp_float_uchar is registered
    out_dt = ref.fn(torch.zeros(1, dtype=dt)).dtype
    verdicts = []
    for n in SIZES:
        case = LargeCase(n, dt)
        launch, out = plan(runner, case, make_inputs(case, 1, "meta", 0), out_dt)
        assert launch.kernel in lib.kernel_names and out.numel() == n
        verdicts.append(too_wide(launch))
    assert verdicts[0] is None  # 2^31+2^20 threads: a uint position holds it; the GPU run decides
    assert "thread_position_in_grid is a uint" in verdicts[1]
