"""verify's torch reference without a table (the aten operator itself), and OpInfos found by what they call
(aten_name, aliases, the special./linalg./nn.functional. namespaces), on the real 2.7.0a0 tree (issue 40)."""

from __future__ import annotations

import pytest
import torch

from migrate.index import Index
from migrate.opinfo import aten_names, calls_of, family_entries
from migrate.read.opinfo_reader import find_entries
from migrate.tables import load_table
from migrate.tree import load_tree
from migrate.verify.references import TorchCpuReference, torch_callable
from migrate.verify.report import to_json, to_text
from migrate.verify.run import Options, verify
from tests.corpus import pytorch_270a0_root

# families of 2.7.0a0 whose launch names no native function: their natives are special_* / reached by stubs
NOT_NATIVE = {
    "i1": "special_i1",
    "spherical_bessel_j0": "special_spherical_bessel_j0",
    "entr": "special_entr",
    "zeta": "special_zeta",
    "xlog1py": "special_xlog1py",
}


@pytest.fixture(scope="module")
def ix27():
    return Index(load_tree(pytorch_270a0_root()))


def test_verify_yaml_has_no_per_operator_reference_table():
    table = load_table("verify.yaml")
    assert "torch_reference" not in table
    for family, exc in (table.get("reference_exceptions") or {}).items():
        assert set(exc) == {"call", "reason"} and exc["reason"].strip(), family


@pytest.mark.parametrize("family", sorted(NOT_NATIVE))
def test_aten_names_follow_the_stub_the_launch_is_registered_for(ix27, family):
    assert aten_names(ix27, family) == [NOT_NATIVE[family]]
    assert torch_callable(family, ix27) is getattr(torch.ops.aten, NOT_NATIVE[family])


def test_a_native_family_is_its_own_operator(ix27):
    # add_stub is also sub's (sub_out calls it with -alpha): a native family never takes another's name
    assert aten_names(ix27, "add") == ["add"] and aten_names(ix27, "copysign") == ["copysign"]
    assert torch_callable("copysign", ix27) is torch.ops.aten.copysign


def test_without_a_tree_the_namespaced_operator_is_found():
    assert torch_callable("entr") is torch.ops.aten.special_entr
    assert torch_callable("exp") is torch.ops.aten.exp
    with pytest.raises(LookupError, match="no torch reference for 'no_such_op'"):
        torch_callable("no_such_op")


def test_the_operator_picks_the_overload_the_arguments_call():
    ref = TorchCpuReference("xlog1py")
    x = torch.tensor([0.0, 1.0, 2.0])
    from migrate.verify.cases import Case, PyScalar

    got = ref.compute(Case(torch.float32, "probe", (x, PyScalar(2.0))))  # special_xlog1py.other_scalar
    torch.testing.assert_close(got, torch.special.xlog1py(x, 2.0))
    out = torch.empty(3, dtype=torch.float16)
    case = Case(torch.float32, "probe", (x, x.clone()), out=out)  # special_xlog1py.out, casting
    assert ref.compute(case).dtype == torch.float16


@pytest.mark.parametrize(
    ("family", "opinfo"),
    [("i1", "special.i1"), ("entr", "special.entr"), ("zeta", "special.zeta"), ("i0", "i0"), ("exp", "exp")],
)
def test_opinfos_found_by_what_they_call(ix27, family, opinfo):
    assert opinfo in {e.name for e in family_entries(ix27, family)}


def test_aliases_are_read_and_matched():
    # a database of our own: an entry testing xlogy under the alias special.xlogy, one under aten_name
    data = (
        b"op_db = [\n"
        b"    BinaryUfuncInfo('xlogy',\n        aliases=('special.xlogy',),\n        dtypes=all_types()),\n"
        b"    UnaryUfuncInfo('special.i1', aten_name='special_i1', ref=None),\n"
        b"    OpInfo('nn.functional.relu', aten_name='relu'),\n"
        b"]\n"
    )
    by_name = {e.name: e for e in find_entries(data, "db.py")}
    assert by_name["xlogy"].aliases == ("special.xlogy",)
    assert "special_xlogy" in calls_of("xlogy", None, by_name["xlogy"].aliases)
    assert calls_of("special.i1", "special_i1") == {"special_i1"}
    assert calls_of("nn.functional.relu", "relu") == {"relu"}


def test_entr_runs_its_opinfo_samples_on_the_real_tree():
    # was: exit 2, "no torch reference for 'entr': add it to rules/verify.yaml torch_reference"
    r = verify(pytorch_270a0_root(), "entr", opts=Options(layouts=["contiguous", "opinfo"]))
    assert r.opinfo_names == ["special_entr"], to_text(r)
    ran, ok = r.totals(opinfo=True)
    assert ran >= 10 and ok == ran, to_text(r)
    # every cell agrees with torch CPU; the tree expects bool to fail ("entr does not support boolean types")
    assert {(c.dtype, c.layout) for c in r.cells if c.status != "pass"} == {("bool", "opinfo:special_entr")}
    assert r.cells[-1].status == "XPASS" and r.exit_code == 1
    assert '"opinfos": [\n        "special_entr"' in to_json(r)


def test_i1_runs_the_samples_of_special_i1():
    # was: no OpInfo sample ran for i1 (op_db names it special.i1)
    r = verify(pytorch_270a0_root(), "i1", opts=Options(layouts=["opinfo"]))
    assert r.opinfo_names == ["special_i1"], to_text(r)
    assert r.totals(opinfo=True)[0] >= 10
