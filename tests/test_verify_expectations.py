"""The tree's own expectations (issue 40): test_mps's xfail/skip tables, read (never imported) from
common_mps.py or, in the shared 2.6.0 and 2.7.0a0 trees that predate it, test/test_mps.py; an OpInfo cell the
tree expects to fail is XFAIL with the tree's reason, one that passes anyway XPASS (stale: exit 1)."""

from __future__ import annotations

import difflib
import json

import pytest
import torch

from migrate.verify.expectations import load, read
from migrate.verify.report import to_json, to_text
from migrate.verify.run import Options, verify
from tests.corpus import pytorch_260_root, pytorch_270a0_root

TEST_MPS = "test/test_mps.py"


@pytest.fixture(scope="module")
def ex27():
    return load(pytorch_270a0_root())


@pytest.fixture(scope="module")
def ex26():
    return load(pytorch_260_root())


def _line_text(root, exp) -> str:
    return (root / exp.path).read_text().splitlines()[exp.line - 1]


def test_both_shared_trees_read_from_test_mps(ex26, ex27):
    # neither tree has torch/testing/_internal/common_mps.py: their tables live in test/test_mps.py
    for root, ex in ((pytorch_260_root(), ex26), (pytorch_270a0_root(), ex27)):
        assert not (root / "torch/testing/_internal/common_mps.py").exists()
        assert ex.path == TEST_MPS and len(ex.entries) > 150


def test_an_entry_with_its_dtypes_and_the_trees_comment(ex27):
    e = ex27.lookup("special.entr", "bool")
    assert e.kind == "xfail" and e.table == "UNIMPLEMENTED_XFAILLIST"
    assert e.reason == "entr does not support boolean types"
    assert "'special.entr'" in _line_text(pytorch_270a0_root(), e)
    assert ex27.lookup("special.entr", "float32") is None  # only bool is listed
    z = ex27.lookup("special.zeta", "int32")
    assert z.reason == "Operations not supported for integral types"  # the group's comment, lines above
    assert ex27.lookup("special.zeta", "float32") is None


def test_as_the_newest_macos_sees_them(ex26, ex27):
    # `'dot': [torch.int64] if MACOS_VERSION < 14.0 else []` in 2.7.0a0; plain [torch.int64] in 2.6.0
    assert ex27.lookup("dot", "int64") is None and ex26.lookup("dot", "int64").kind == "xfail"
    # `[torch.int32, torch.int64] if MACOS_VERSION < 15.0 else [torch.int64]`
    assert ex27.lookup("scatter_reduceamax", "int32") is None
    assert ex27.lookup("scatter_reduceamax", "int64") is not None
    # `if MACOS_VERSION < 15.0: UNIMPLEMENTED_XFAILLIST.update({'quantile': None, ...})`
    assert ex27.lookup("quantile", "float32") is None


def test_only_test_output_matchs_tables(ex27):
    # special.i1 float16 is in XFAILLIST_GRAD (mps_ops_grad_modifier): another test
    assert ex27.lookup("special.i1", "float16") is None
    skip = ex27.lookup("new_empty", "float32")
    assert skip.kind == "skip" and "uninitialized data" in skip.reason


def test_complex_support_comes_from_the_supported_table(ex26, ex27):
    assert ex27.lookup("exp", "complex64") is None and ex27.lookup("sqrt", "complex64") is None
    i0 = ex27.lookup("i0", "complex64")
    assert i0.kind == "xfail" and "SUPPORTED_COMPLEX_OPS" in i0.reason
    assert ex26.lookup("i0", "complex64").kind == "xfail"
    # flip is only in AFTER_MACOS_14_0_SUPPORTED_COMPLEX_OPS (as 2.6.0's sqrt): supported on the Macs test_mps targets
    assert ex27.lookup("flip", "complex64") is None and ex26.lookup("sqrt", "complex64") is None


def test_a_file_of_our_own_shapes():
    data = b"""import torch
MACOS_VERSION = 15.0
def mps_ops_modifier(ops):
    SUPPORTED_COMPLEX_OPS = {'abs'}
    UNIMPLEMENTED_XFAILLIST = {
        # group comment
        'a': None,
        'b': [torch.float16, torch.bfloat16],  # trailing reason
        'c': [torch.int64] if MACOS_VERSION < 14.0 else [torch.int32],
        'd': [torch.int64] + [torch.int8],
    }
    if MACOS_VERSION < 14.0:
        UNIMPLEMENTED_XFAILLIST.update({'old': None})
    else:
        UNIMPLEMENTED_XFAILLIST.update({'new': None})
    SKIPLIST = {'s': [torch.float32]}
    return ops
def mps_ops_grad_modifier(ops):
    UNIMPLEMENTED_XFAILLIST = {'g': None}
    return ops
"""
    ex = read(data, "common_mps.py")
    assert ex.lookup("a", "int8").reason == "group comment"
    assert ex.lookup("b", "float16").reason == "trailing reason" and ex.lookup("b", "float32") is None
    assert ex.lookup("c", "int32") is not None and ex.lookup("c", "int64") is None
    assert ex.lookup("d", "int8") is not None and ex.lookup("d", "int64") is not None
    assert ex.lookup("old", "float32") is None and ex.lookup("new", "float32") is not None
    assert ex.lookup("s", "float32").kind == "skip" and ex.lookup("g", "float32") is None
    assert ex.lookup("abs", "complex64") is None and ex.lookup("a2", "complex64").kind == "xfail"


def test_a_stale_expectation_is_xpass_on_the_real_tree():
    # 2.7.0a0 expects round to fail in float16/bfloat16 ("round not working properly ..."); its kernel passes
    r = verify(pytorch_270a0_root(), "round", opts=Options(layouts=["opinfo"], dtypes=None))
    cells = {(c.dtype, c.layout): c for c in r.cells}
    half = cells[("float16", "opinfo:round")]
    assert half.status == "XPASS" and half.expected.table == "UNIMPLEMENTED_XFAILLIST"
    assert cells[("float32", "opinfo:round")].status == "pass"
    assert r.exit_code == 1  # an unexpected success fails test_mps too
    text = to_text(r)
    assert "XPASS float16 opinfo:round: every sample passed, but the tree expects a failure: " in text
    assert "round not working properly for float16 and bfloat16" in text
    # the entry to edit; the tree predates common_mps.py, which MPS009 lints: by hand
    assert f"stale: remove float16 from the entry at {TEST_MPS}:{half.expected.line} (MPS009's fix, by hand" in text
    doc = json.loads(to_json(r))
    cell = next(c for c in doc["cells"] if (c["dtype"], c["layout"]) == ("float16", "opinfo:round"))
    assert cell["status"] == "XPASS" and cell["expected"]["path"] == TEST_MPS
    assert doc["summary"]["cells"]["XPASS"] == 2


def test_an_expected_failure_is_xfail_with_the_trees_reason():
    # sqrt's complex64 OpInfo cell disagrees with torch CPU on 2.7.0a0; a patch of the tree's test_mps.py
    # (the file a port edits too) expects it: XFAIL, not FAIL, and the exit code does not count it
    root = pytorch_270a0_root()
    text = (root / TEST_MPS).read_text()
    head = "    UNIMPLEMENTED_XFAILLIST = {\n"
    assert text.count(head) == 1
    planted = text.replace(head, head + "        'sqrt': [torch.complex64],  # planted: complex sqrt differs\n")
    patch = "".join(
        difflib.unified_diff(text.splitlines(True), planted.splitlines(True), f"a/{TEST_MPS}", f"b/{TEST_MPS}")
    )
    opts = Options(layouts=["opinfo"], dtypes=[torch.complex64])
    before = verify(root, "sqrt", opts=opts)
    assert [c.status for c in before.cells] == ["FAIL"] and before.exit_code == 1
    r = verify(root, "sqrt", patch=(patch, "planted.diff"), opts=opts)
    (cell,) = r.cells
    assert cell.status == "XFAIL" and cell.expected.reason == "planted: complex sqrt differs"
    assert r.exit_code == 0, to_text(r)
    out = to_text(r)
    assert "XFAIL complex64 opinfo:sqrt: the tree expects it: UNIMPLEMENTED_XFAILLIST (test/test_mps.py:" in out
    assert json.loads(to_json(r))["cells"][0]["expected"]["reason"] == "planted: complex sqrt differs"


@pytest.mark.parametrize(
    "family, dtype, link, shown",
    [
        # OpInfo's copysign(t, -3.14): binary_mps_impl binds the wrapped float64 scalar's bytes as a float
        ("copysign", torch.float32, "https://github.com/pytorch/pytorch/issues/152582", "pytorch/pytorch#152582"),
        # 3.80+0.0057j: the tree's complex sqrt cancels in |z| - re, in float as on a Mac
        ("sqrt", torch.complex64, "aten/src/ATen/native/mps/kernels/UnaryKernel.metal", "sqrt_complex_kernel"),
    ],
)
def test_a_mismatch_a_mac_shares_is_labelled_upstream(family, dtype, link, shown):
    """A FAIL cell that rules/verify.yaml ``upstream`` explains keeps failing (the tree's test_mps fails the same way
    on a Mac) and says why, in text and JSON; a cell that passes carries no label."""
    r = verify(pytorch_270a0_root(), family, opts=Options(layouts=["opinfo"], dtypes=[dtype, torch.float16]))
    cells = {c["dtype"]: c for c in json.loads(to_json(r))["cells"]}
    failing = cells[str(dtype).removeprefix("torch.")]
    assert failing["status"] == "FAIL" and failing["upstream"]["link"] == link and shown in failing["upstream"]["what"]
    assert cells["float16"]["status"] == "pass" and cells["float16"]["upstream"] is None
    text = to_text(r)
    assert (
        "  upstream: " in text
        and shown in text
        and "1 failed (1 upstream behaviour: rules/verify.yaml upstream)" in text
    )
    assert r.exit_code == 1
