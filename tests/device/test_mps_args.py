"""MPS backend argument handling (pure; the backend itself cannot run here)."""

from __future__ import annotations

import pytest
import torch

from migrate.device import BackendUnavailable, KernelArgumentError, get_backend, mps_available
from migrate.device.mps import embed_includes, prepare_call


def test_geometry_normalised_to_three_dims():
    args, kw = prepare_call("k", (1.5, (1, 2)), threads=1280, group_size=[256])
    assert kw == {"threads": [1280, 1, 1], "group_size": [256, 1, 1]}
    assert args == [1.5, (1, 2)]
    _, kw = prepare_call("k", (), threads=[8, 4], group_size=None)
    assert kw == {"threads": [8, 4, 1], "group_size": [8, 1, 1]}


@pytest.mark.parametrize("threads,group", [([1, 2, 3, 4], None), (10, [2048]), (10, [0]), ("10", None), (-1, None)])
def test_bad_geometry_rejected(threads, group):
    with pytest.raises(KernelArgumentError):
        prepare_call("k", (), threads=threads, group_size=group)


def test_cpu_tensor_rejected_for_mps():
    with pytest.raises(KernelArgumentError, match="mps backend needs MPS tensors"):
        prepare_call("k", (torch.zeros(3),), threads=3, group_size=None)


def test_embed_includes_from_migrated_tree(tmp_path):
    (tmp_path / "c10" / "metal").mkdir(parents=True)
    (tmp_path / "c10" / "metal" / "a.h").write_text("#include <c10/metal/b.h>\nint a;\n")
    (tmp_path / "c10" / "metal" / "b.h").write_text("int b;\n")
    src = "#include <c10/metal/a.h>\n#include <c10/metal/b.h>\nkernel void k() {}\n"
    out = embed_includes(src, [tmp_path])
    assert out.count("int b;") == 1 and "int a;" in out and "#include" not in out


def test_get_backend_mps_unavailable_here():
    if mps_available():
        pytest.skip("an Apple GPU is present")
    with pytest.raises(BackendUnavailable):
        get_backend("mps")
    assert get_backend("auto").name == "cpu"
