"""addcmul and addcdiv on a 2.7-era tree (fixtures/port27): the graph's casts to every input's promoted dtype
are the kernel's own, the Scalar a one-field parameter struct bound as CPU binds it, CPU's order of operations."""

from __future__ import annotations

import pytest

from migrate.index import Index
from migrate.port.patch import plan_port
from migrate.port.translate import PortBlocked
from migrate.tree import load_tree
from tests.test_port_era27 import copy_tree

MM = "aten/src/ATen/native/mps/operations/PointwiseOps.mm"
PROMOTED = "c10::promoteTypes(t1.scalar_type(), c10::promoteTypes(self.scalar_type(), t2.scalar_type()))"


def _port(root, family):
    port = plan_port(Index(load_tree(root)), family, torch_dtypes=False, cleanup=False)
    return port, "".join(e.replacement for e in port.edits)


def test_addcmul_binds_the_scalar_in_opmath_and_multiplies_in_cpu_order(tmp_path):
    port, text = _port(copy_tree(tmp_path), "addcmul")
    assert "c10::metal::opmath_t<T> value;" in text  # float for half and bfloat, as addcmul_cpu_kernel
    assert "std::array<opmath_t, 1>{value.to<opmath_t>()}" in text
    assert "float(a) + ((float(params.value) * float(b)) * float(c))" in text  # self + value * t1 * t2
    assert any(n.startswith("behaviour change (addcmul_order)") for n in port.notes)
    assert any("is the kernel's own" in n for n in port.notes)


def test_addcdiv_divides_after_scaling(tmp_path):
    _, text = _port(copy_tree(tmp_path), "addcdiv")
    assert "float(a) + ((float(params.value) * float(b)) / float(c))" in text


@pytest.mark.parametrize(
    "promoted",
    [
        "c10::promoteTypes(t1.scalar_type(), t2.scalar_type())",  # self left out: not every input's dtype
        "c10::promoteTypes(t1.scalar_type(), c10::promoteTypes(self.scalar_type(), out.scalar_type()))",
    ],
)
def test_a_cast_to_another_run_time_dtype_stays_refused(tmp_path, promoted):
    root = copy_tree(tmp_path)
    path = root / MM
    path.write_text(path.read_text().replace(PROMOTED, promoted))
    with pytest.raises(PortBlocked, match="cast to a run-time dtype"):
        _port(root, "addcmul")


def test_port_all_verifies_these_ports_through_the_host_path(tmp_path):
    """The emulated verify launches neither a ternary graph's parameter struct nor two-output kernels."""
    from migrate.batch_verify import host_verified
    from migrate.port.batch import Row

    root = copy_tree(tmp_path)
    for family in ("addcmul", "_prelu_kernel_backward"):
        port = plan_port(Index(load_tree(root)), family, torch_dtypes=False, cleanup=False)
        assert host_verified(Row(family, convention=port.convention, port=port)), family
    port = plan_port(Index(load_tree(root)), "atan2", torch_dtypes=False, cleanup=False)
    assert not host_verified(Row("atan2", convention=port.convention, port=port))
