"""Emulated TensorIterator geometry and exec_*_kernel selection (no compilation)."""

from __future__ import annotations

import torch

from migrate.verify.host import Host, bind_tensor, storage_start_read
from migrate.verify.iterator import Operand, build_iter

F = torch.float32


def it_of(*ts, out=None, dtype=F):
    return build_iter([t if isinstance(t, Operand) else Operand(t) for t in ts], out, dtype, dtype)


def names(op, variants, outs_ins):
    return {f"{op}_{v}_{oi}" for v in variants for oi in outs_ins}


BIN = names(
    "f",
    [
        "dense",
        "dense_ilp4",
        "strided",
        "dense_cast",
        "strided_cast",
        "dense_broadcast",
        "dense_broadcast_rhs",
        "dense_scalar",
        "dense_scalar_lhs",
        "dense_scalar_cast",
        "dense_scalar_lhs_cast",
        "dense_broadcast_cast",
    ],
    ["float_float", "half_half", "float_int"],
)
UN = names("u", ["dense", "dense_scalar", "strided"], ["float_float"]) | {
    "u_dense_castout_float",
    "u_strided_castout_float",
}


def test_functional_output_follows_a_transposed_input_so_iteration_is_dense():
    x = torch.randn(13, 7).t()
    it = it_of(x)
    assert it.output().stride() == x.stride()
    assert it.is_contiguous() and it.shape() == [91]
    assert Host(UN).unary(it, "u").kernel == "u_dense_scalar_float_float"


def test_unary_strided_and_castout_fallback():
    x = torch.randn(13, 7).t()
    it = it_of(x, out=torch.empty(7, 13))
    launch = Host(UN).unary(it, "u")
    assert launch.kernel == "u_strided_float_float"
    sizes, in_strides, out_strides = (a.tolist() for a in launch.args[2:5])
    assert sizes == [13, 7] and in_strides == [28, 4] and out_strides == [4, 52]
    assert launch.threads == [13, 7]
    it = build_iter([Operand(torch.randn(5))], torch.empty(5, dtype=torch.float16), torch.float16, F)
    launch = Host(UN).unary(it, "u")
    assert launch.kernel == "u_dense_castout_float" and launch.args[2].tolist() == [2, 5]


def test_ilp_only_when_forced_or_large():
    it = it_of(torch.randn(37), torch.randn(37))
    assert Host(BIN).binary(it, "f").kernel == "f_dense_float_float"
    ilp = Host(BIN, "ilp").binary(it, "f")
    assert ilp.kernel == "f_dense_ilp4_float_float" and ilp.threads == [10] and ilp.args[3].tolist() == [37]
    big = it_of(torch.randn(1 << 18), torch.randn(1 << 18))
    assert Host(BIN).binary(big, "f").kernel == "f_dense_ilp4_float_float"


def test_binary_broadcast_scalar_and_strided_choices():
    h = Host(BIN)
    a = torch.randn(7, 13)
    assert h.binary(it_of(a, torch.randn(13)), "f").kernel == "f_dense_broadcast_float_float"
    assert h.binary(it_of(torch.randn(13), a), "f").kernel == "f_dense_broadcast_rhs_float_float"
    col = h.binary(it_of(torch.randn(7, 1), a), "f")
    assert col.kernel == "f_strided_float_float"
    assert col.args[5].tolist() == [0, 4]  # the broadcast operand has stride 0 along the fastest dim
    s = torch.arange(8.0)[5]
    lhs = h.binary(it_of(s, torch.randn(9)), "f")
    assert lhs.kernel == "f_dense_scalar_lhs_float_float" and lhs.args[1].data_ptr() == s.data_ptr()


def test_python_scalar_binds_by_value_and_int_scalar_is_promoted_on_host():
    h = Host(BIN)
    t = torch.randn(9, dtype=torch.float16)
    wrapped = Operand(torch.tensor(-2.0), cpu_scalar=True)  # a Python float: float64 on the host
    it = build_iter([Operand(t), wrapped], None, torch.float16, torch.float16)
    launch = h.binary(it, "f")
    assert launch.kernel == "f_dense_scalar_cast_half_half"
    assert launch.args[2].dtype == F and launch.args[2].item() == -2.0
    assert launch.args[3].tolist() == [2, 4, 5, 6]
    it = build_iter([Operand(torch.randn(9)), Operand(torch.tensor(3), cpu_scalar=True)], None, F, F)
    launch = h.binary(it, "f")
    assert launch.kernel == "f_dense_scalar_float_float" and launch.args[2].dtype == F


def test_cpu_scalar_reads_its_own_element_not_the_storage_start():
    store = torch.arange(8.0)
    s = store[6]
    assert bind_tensor(s, cpu_scalar=True).item() == 6.0
    assert bind_tensor(s, cpu_scalar=True, scalar_read=storage_start_read).item() == 0.0


def test_mixed_dtypes_pick_cast_kernels():
    h = Host(BIN)
    it = build_iter([Operand(torch.randn(9)), Operand(torch.arange(9, dtype=torch.int32))], None, F, F)
    launch = h.binary(it, "f")
    assert launch.kernel == "f_dense_cast_float_float" and launch.args[3].tolist() == [4, 4, 6, 3]
    it = build_iter([Operand(torch.randn(9, 2).t()), Operand(torch.ones(2, 9, dtype=torch.int32))], None, F, F)
    assert h.binary(it, "f").kernel == "f_strided_cast_float_float"


def test_empty_launches_nothing():
    assert Host(BIN).binary(it_of(torch.randn(0, 3), torch.randn(0, 3)), "f") is None
