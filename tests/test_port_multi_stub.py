"""A family whose shared CPU kernel picks one of several stubs by its arguments: div.out_mode calls
div_true_stub, div_trunc_stub or div_floor_stub by rounding_mode. Port writes one kernel per stub, each
translated from the MPS function specialised for the arguments that reach it, and verify checks each one
against torch CPU called with those arguments."""

from __future__ import annotations


import pytest
import torch

from migrate.index import Index
from migrate.conventions.cpu_iter import definition
from migrate.port.patch import plan_port
from migrate.port.text_edits import apply_edits
from migrate.conventions.specialise import PRESENT
from migrate.conventions.stub_choice import stub_choices
from migrate.tree import load_tree
from tests.corpus import pytorch_270a0_root
from tests.helpers import FIXTURES

PORT = FIXTURES / "port"
DIV_STUBS = {"div_true_stub", "div_trunc_stub", "div_floor_stub"}


def _choices(body: str, params, stubs):
    return {c.stub: c.describe() for c in stub_choices(params, body, 1, set(stubs))}


def test_a_string_argument_picks_the_stub():
    params, body, line = definition(PORT, "div_out_mode")  # the fixture's if/else-if chain on rounding_mode
    assert {c.stub: c.describe() for c in stub_choices(params, body, line, DIV_STUBS)} == {
        "div_true_stub": "rounding_mode empty",
        "div_trunc_stub": 'rounding_mode="trunc"',
        "div_floor_stub": 'rounding_mode="floor"',
    }


def test_optional_bounds_pick_the_stub_and_a_data_test_takes_both_arms():
    params, body, line = definition(PORT, "clamp_out")  # a NaN test of the bounds before clamp_scalar_stub
    got = stub_choices(params, body, line, {"clamp_scalar_stub", "clamp_max_scalar_stub", "clamp_min_scalar_stub"})
    assert {c.stub: c.values for c in got} == {
        "clamp_max_scalar_stub": {"min": _k(None), "max": _k(PRESENT)},
        "clamp_min_scalar_stub": {"min": _k(PRESENT), "max": _k(None)},
        "clamp_scalar_stub": {"min": _k(PRESENT), "max": _k(PRESENT)},
    }


def _k(v):
    from migrate.conventions.specialise import Known

    return Known(v)


def test_a_stub_after_a_return_is_not_reached():
    body = 'if (mode == "a") { a_stub(device_type(), *this); return; }\nb_stub(device_type(), *this);'
    params = [("c10::string_view", "mode")]
    # b_stub is reached only by a mode no literal names: after a_stub, the "a" path has returned
    assert _choices(body, params, {"a_stub", "b_stub"}) == {"a_stub": 'mode="a"', "b_stub": "mode another string"}


@pytest.fixture(scope="module")
def div_port():
    ix = Index(load_tree(PORT))
    return ix, plan_port(ix, "div")


def test_one_kernel_per_stub_each_from_its_specialised_graph(div_port):
    _, port = div_port
    assert [(p.name, p.stub, repr(p.dag.output)) for p in port.parts] == [
        ("div_true", "div_true_stub", "div(primaryCastTensor, secondaryCastTensor)"),
        ("div_trunc", "div_trunc_stub", INT_FLOAT.format(op="trunc")),
        ("div_floor", "div_floor_stub", INT_FLOAT.format(op="floor")),
    ]


# the helper divides integers in float32 when it rounds them (its FloatBit test), floats as they are
INT_FLOAT = (
    "if_dtype<bool,char,int,long,short,uchar>(primaryCastTensor, "
    "{op}(div(cast<float>(primaryCastTensor), cast<float>(secondaryCastTensor))), "
    "{op}(div(primaryCastTensor, secondaryCastTensor)))"
)


def test_every_stub_is_registered_and_both_overloads_rerouted(div_port):
    ix, port = div_port
    new = apply_edits(ix.tree.sources, port.edits)
    host = new["aten/src/ATen/native/mps/operations/BinaryKernel.mm"].decode()
    for stub in sorted(DIV_STUBS):
        kernel = stub.removesuffix("_stub")
        assert f"REGISTER_DISPATCH({stub}, &{kernel}_mps_kernel)" in host
        assert f'lib.exec_binary_kernel(iter, "{kernel}")' in host
    yaml = new["aten/src/ATen/native/native_functions.yaml"].decode()
    assert "CPU, CUDA, MPS: div_out\n" in yaml and "CPU, CUDA, MPS: div_out_mode\n" in yaml
    ops = new["aten/src/ATen/native/mps/operations/BinaryOps.mm"].decode()
    assert "div_out_mps" not in ops and "div_out_mode_mps" not in ops
    assert "remainder_out_mps" in ops and "div_mode_template" in ops  # remainder still uses the helper


def test_integer_division_is_exact_and_keeps_the_dtype(div_port):
    """The helper divides integers in float32 when it rounds (its FloatBit branch); torch divides them
    exactly: the integer arm becomes trunc_divide / floor_divide_int, and integer overloads return T."""
    _, port = div_port
    trunc, floor = (next(p for p in port.parts if p.name == n) for n in ("div_trunc", "div_floor"))
    assert repr(trunc.emitted.output.args[1]) == "trunc_divide(primaryCastTensor, secondaryCastTensor)"
    assert repr(floor.emitted.output.args[1]) == "floor_divide_int(primaryCastTensor, secondaryCastTensor)"
    assert any("(trunc_divide_int)" in n and "old graph 16777216, port 16777217" in n for n in port.notes)
    assert any("(floor_divide_int)" in n and "old graph -16777216, port -16777217" in n for n in port.notes)
    assert trunc.plan.int_mode == floor.plan.int_mode == "same" and "long" in floor.plan.int_dtypes
    assert port.parts[0].plan.int_mode == "float"  # true division of integers is float


def test_float_floor_division_is_pythons(div_port):
    """1 // 0.1 is 9 in torch (fmod-based), floor(1 / 0.1) is 10."""
    _, port = div_port
    assert any("(floor_divide_float)" in n and "a=1, b=0.1: old graph 10, port 9" in n for n in port.notes)


def test_verify_checks_each_stub_against_calls_that_reach_it(div_port):
    """The trunc kernel passes against torch.div(..., rounding_mode="trunc"); swapping the kernels of two
    stubs fails: each part is judged against its own arguments."""
    from migrate.apply import unified_diff
    from migrate.verify.run import Options, verify

    ix, port = div_port
    new = apply_edits(ix.tree.sources, port.edits)
    text = "".join(unified_diff(p, ix.tree.sources[p], new[p]) for p in sorted(new))
    trunc = next(p for p in port.parts if p.name == "div_trunc")
    # float32: integer cases draw zero divisors, which torch CPU refuses (the old graph then judges alone)
    opts = Options(stub="div_trunc_stub", known=trunc.choice.values, dtypes=[torch.float32])
    rep = verify(PORT, "div", (text, "<port div>"), opts)
    assert rep.ran and not [c for c in rep.cells if c.status == "FAIL"]
    # OpInfo samples of true division (no rounding_mode) call div_true_stub, not this one
    reasons = {r for c in rep.cells if c.layout.startswith("opinfo:") for r in c.skip_reasons}
    assert "no kwargs: another stub than the one verified" in reasons, reasons
    assert any("torch CPU called with rounding_mode='trunc'" in n for n in rep.notes)
    floor = next(p for p in port.parts if p.name == "div_floor")
    for dtype in (torch.float32, torch.int64):  # NaN/inf operands, negative divisors, large integers
        opts = Options(stub="div_floor_stub", known=floor.choice.values, dtypes=[dtype], opinfo=False)
        rep = verify(PORT, "div", (text, "<port div>"), opts)
        assert rep.ran and not [c for c in rep.cells if c.status == "FAIL"], dtype
    swapped = text.replace('lib.exec_binary_kernel(iter, "div_trunc")', 'lib.exec_binary_kernel(iter, "div_true")')
    opts = Options(stub="div_trunc_stub", known=trunc.choice.values, dtypes=[torch.float32], opinfo=False)
    rep = verify(PORT, "div", (swapped, "<port div>"), opts)
    assert [c for c in rep.cells if c.status == "FAIL"]


def test_clamp_on_the_real_tree_names_the_stub_it_waits_for():
    root = pytorch_270a0_root()
    from migrate.port.translate import PortBlocked

    with pytest.raises(PortBlocked) as exc:
        plan_port(Index(load_tree(root)), "clamp", torch_dtypes=False, cleanup=False)
    assert "clamp_max_scalar_stub (min empty, max given), the stub of clamp_max" in exc.value.reason
    assert exc.value.after == "clamp_max"


def test_integer_trunc_division_cases_keep_int_min_out_of_the_dividend():
    """torch CPU traps (SIGFPE: the verifying process dies) on INT_MIN / -1 in trunc division."""
    from migrate.verify.cases import Case, nonzero_divisors

    low = torch.iinfo(torch.int32).min
    a, b = torch.tensor([low, 5, -1], dtype=torch.int32), torch.tensor([-1, 0, -1], dtype=torch.int32)
    (c,) = nonzero_divisors([Case(torch.int32, "contiguous", (a, b))], "div")
    assert c.args[0].tolist() == [low + 1, 5, -1] and c.args[1].tolist() == [-1, 1, -1]
    x = torch.tensor([low], dtype=torch.int32)
    assert nonzero_divisors([Case(torch.int32, "contiguous", (x, b))], "fmod")[0].args[0].tolist() == [low]
