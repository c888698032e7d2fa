"""Ternary ports: clamp_stub's kernel over the iterator (self, min, max) in both eras, clamp's other stubs
(clamp_scalar_stub's parameter struct, the one-bound stubs its owners register), the batch planning clamp
after the chain of ports it waits for, and verify's emulation of both ternary launches.

Modern (fixtures/port): ``REGISTER_TERNARY_OP(clamp, T, T)`` launched by ``lib.exec_ternary_kernel``.  2.7
(fixtures/port27 and the real 2.7.0a0 tree): the port-written ``ternary_mps_impl`` and its kernels
(migrate/port/ternary_launcher.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from migrate.cli import main
from migrate.index import Index
from migrate.batch_verify import verify_all
from migrate.port.batch import plan_all
from migrate.port.patch import plan_port
from migrate.port.text_edits import apply_edits
from migrate.port.style import detect
from migrate.port.translate import PortBlocked
from migrate.tree import load_tree
from migrate.conventions.launch import Site
from migrate.verify.iterator import Operand, build_iter
from migrate.verify.template_host import TemplateHost
from migrate.verify.run import Options, verify
from tests.corpus import pytorch_270a0_root
from tests.helpers import FIXTURES, KERNELS, OPS
from tests.test_port_era27 import build_tree

PORT = FIXTURES / "port"
OWNERS = ("clamp_min", "clamp_max")  # clamp.out's one-bound stubs: their families' ports come first


def modern(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(PORT, root, ignore=shutil.ignore_patterns("golden"))
    return root


def with_owners(root: Path, capsys) -> Path:
    for family in OWNERS:
        assert main(["port", family, "--root", str(root), "--write"]) == 0
    capsys.readouterr()
    return root


def _parts(root: Path):
    ix = Index(load_tree(root))
    port = plan_port(ix, "clamp")
    new = apply_edits(ix.tree.sources, port.edits)
    return ix, port, {p: new[p].decode() for p in new}


def _verify_each_part(root: Path, capsys, dtypes, layouts):
    """port clamp's patch, each kernel verified against calls whose arguments reach its stub (batch's way)."""
    assert main(["port", "clamp", "--root", str(root)]) == 0
    patch = capsys.readouterr().out
    _, port, _ = _parts(root)
    reports = {}
    for part in port.parts:
        opts = Options(stub=part.stub, known=part.choice.values, dtypes=dtypes, layouts=layouts)
        reports[part.stub] = verify(root, "clamp", (patch, "<port clamp>"), opts)
    return reports


# ------------------------------------------------------------------ modern
def test_clamp_waits_for_the_owners_of_its_one_bound_stubs(tmp_path, capsys):
    root = modern(tmp_path)
    assert main(["port", "clamp", "--root", str(root)]) == 0  # alone, it ports its owners first
    err = capsys.readouterr().err
    assert "clamp waits for clamp_max, ported first" in err and "the stub of clamp_max: port clamp_max first" in err


def test_modern_ternary_port_registers_the_functor_and_launches_it(tmp_path, capsys):
    root = with_owners(modern(tmp_path), capsys)
    ix, port, new = _parts(root)
    by_stub = {p.stub: p for p in port.parts}
    assert set(by_stub) == {"clamp_scalar_stub", "clamp_stub"}  # the one-bound stubs only reroute
    tern = by_stub["clamp_stub"]
    assert (tern.arity, tern.kind, tern.convention) == (3, "ternary", "functor_registry")
    assert [n.name for n in tern.dag.inputs] == ["self", "low", "high"]  # the iterator's order, not the graph's
    kernels = new[f"{KERNELS}/BinaryKernel.metal"]
    assert "inline T operator()(const T a, const T b, const T c)" in kernels
    for t in ("float", "half", "bfloat", "long", "int", "short", "uchar", "char"):
        assert f"REGISTER_TERNARY_OP(clamp, {t}, {t});" in kernels
    host = new[f"{OPS}/BinaryKernel.mm"]
    assert 'lib.exec_ternary_kernel(iter, "clamp");' in host
    assert "REGISTER_DISPATCH(clamp_stub, &clamp_mps_kernel)" in host
    assert "#include <ATen/native/TensorCompare.h>" in host  # clamp_stub's header, in its part's host file
    assert "REGISTER_DISPATCH(clamp_scalar_stub, &clamp_scalar_mps_kernel)" in new[f"{OPS}/UnaryKernel.mm"]


def test_a_tree_whose_indexing_header_has_no_ternary_macro_is_refused(tmp_path, capsys):
    root = with_owners(modern(tmp_path), capsys)
    header = root / "c10/metal/indexing.h"
    header.parent.mkdir(parents=True)
    header.write_text("#pragma once\n#define REGISTER_BINARY_OP(NAME, DTYPEI, DTYPEO)\n")
    with pytest.raises(PortBlocked, match="defines no REGISTER_TERNARY_OP"):
        detect(Index(load_tree(root)), 3)


@pytest.mark.parametrize("era", ["modern", "2.7"])
def test_clamp_verifies_each_stub_against_torch_cpu(tmp_path, capsys, era):
    """Broadcast and strided bounds, mixed dtypes, NaN in the input and in the bounds (the special values):
    each of clamp's kernels matches torch CPU and the old graph."""
    root = modern(tmp_path) if era == "modern" else build_tree(tmp_path / "t27")
    with_owners(root, capsys)
    dtypes = [torch.float32, torch.float16, torch.int64, torch.int32]
    layouts = ["contiguous", "strided", "transposed", "broadcast", "broadcast_stride0", "mixed_dtype", "zero_dim"]
    reports = _verify_each_part(root, capsys, dtypes, layouts)
    for stub, rep in reports.items():
        fails = [(c.dtype, c.layout, c.failures or c.stats.first) for c in rep.cells if c.status == "FAIL"]
        assert rep.ran and not fails, (stub, fails)
        assert rep.references == ["torch-cpu", "old-mpsgraph"]
    ternary = reports["clamp_stub"]
    ran = {k for c in ternary.cells for k in c.kernels}
    if era == "modern":
        assert {"clamp_dense_float_float", "clamp_strided_float_float"} <= ran
    else:
        assert {"clamp_dense_float", "clamp_float", "clamp_long"} <= ran  # dense and strided launches
    assert {c.layout for c in ternary.cells if c.status == "pass"} >= {"broadcast", "transposed", "mixed_dtype"}


# ------------------------------------------------------------------ 2.7
def test_27_ternary_port_adds_its_launch_once_in_the_tree_style(tmp_path, capsys):
    root = with_owners(build_tree(tmp_path / "t27"), capsys)
    ix, port, new = _parts(root)
    tern = next(p for p in port.parts if p.stub == "clamp_stub")
    assert tern.convention == "ternary_offsets" and detect(ix, 3).convention == "ternary_offsets"
    host = new[f"{OPS}/BinaryKernel.mm"]
    assert host.count("static void ternary_mps_impl(TensorIteratorBase& iter") == 1
    assert host.index("static void ternary_mps_impl(") > host.index("static void binary_mps_impl(")
    assert 'mps::ternary_mps_impl(iter, "clamp");' in host
    assert 'c10::checked_convert<uint32_t>(iter.numel(), "uint32_t")' in host  # 2^32 threads: raise
    assert "mtl_setArgs(computeEncoder, input, other1, other2, out, shape, strides, nDim);" in host
    kernels = new[f"{KERNELS}/BinaryKernel.metal"]
    assert kernels.count("#define REGISTER_TERNARY_INDEXING_OP(NAME, DTYPE)") == 1
    assert "long offs[4]" in kernels  # 64-bit byte offsets, as the era's strided kernels compute them
    assert "#if __METAL_VERSION__ >= 310\nREGISTER_TERNARY_INDEXING_OP(clamp, bfloat);\n#endif" in kernels
    from migrate.device import get_backend

    lib = get_backend("cpu", root=root).compile_shader(kernels, opt=0)
    assert {"clamp_float", "clamp_dense_float", "clamp_long", "clamp_dense_char"} <= set(lib.kernel_names)


def _site() -> Site:
    return Site("ternary_offsets", "clamp", "ternary_mps_impl", 3, "x.mm", 1, "clamp_mps_kernel", dense=True)


def test_the_27_launch_emulation_binds_shape_and_byte_strides():
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    lo = torch.zeros(4)  # broadcast over the rows: stride 0
    hi = torch.full((3, 1), 5.0)  # broadcast over the columns
    it = build_iter([Operand(x), Operand(lo), Operand(hi)], None, torch.float32, torch.float32)
    launch = TemplateHost(_site()).plan(3, it, "clamp")
    assert launch.kernel == "clamp_float" and launch.variant == "strided"
    sizes, strides, ndim = launch.args[4:]
    assert sizes.tolist() == [4, 3] and ndim.tolist() == [2]  # fastest dimension first
    # per dimension (output, input, other1, other2) in bytes
    assert strides.tolist() == [4, 4, 4, 0, 16, 16, 0, 4]
    dense = build_iter([Operand(x), Operand(x), Operand(x)], None, torch.float32, torch.float32)
    assert TemplateHost(_site()).plan(3, dense, "clamp").kernel == "clamp_dense_float"


def test_the_27_launch_emulation_casts_to_the_common_dtype():
    x = torch.arange(6, dtype=torch.int32)
    lo = torch.tensor(1.5, dtype=torch.float64)  # a CPU scalar
    hi = torch.full((6,), 4, dtype=torch.int64)
    it = build_iter([Operand(x), Operand(lo, cpu_scalar=True), Operand(hi)], None, torch.float32, torch.float32)
    launch = TemplateHost(_site()).plan(3, it, "clamp")
    assert launch.kernel.endswith("_float") and all(a.dtype == torch.float32 for a in launch.args[:4])
    assert "casts input 0 (torch.int32), input 1 (torch.float64, a CPU scalar)" in launch.notes[0]


# ------------------------------------------------------------------ batch
def test_port_all_plans_clamp_after_the_chain_of_ports_it_waits_for():
    ix = Index(load_tree(PORT))
    rows = {r.family: r for r in plan_all(ix, ["clamp", "clamp_max", "clamp_min", "minimum"])}
    clamp = rows["clamp"]
    assert clamp.port is not None and clamp.chain == ["clamp_max", "clamp_min"] and clamp.standalone
    assert "planned after the ports of clamp_max, clamp_min" in clamp.detail
    assert {p.stub for p in clamp.port.parts} == {"clamp_scalar_stub", "clamp_stub"}


def test_port_all_on_the_real_27_tree_ports_and_verifies_clamp():
    """Real 2.7.0a0: clamp waits for clamp_max (after minimum) and clamp_min (after maximum); planned on the
    tree with those four ports, both its kernels verify (the ternary one through ternary_mps_impl)."""
    root = pytorch_270a0_root()
    ix = Index(load_tree(root))
    rows = plan_all(ix, ["clamp", "clamp_max", "clamp_min", "maximum", "minimum"])
    by = {r.family: r for r in rows}
    clamp = by["clamp"]
    assert clamp.chain == ["minimum", "clamp_max", "maximum", "clamp_min"], clamp.detail
    parts = {p.stub: p for p in clamp.port.parts}
    assert set(parts) == {"clamp_scalar_stub", "clamp_stub"} and parts["clamp_stub"].convention == "ternary_offsets"
    assert any("exec_params_kernel(iter, " in e.replacement for e in parts["clamp_scalar_stub"].edits)
    verify_all(root, ix, rows)
    assert {r.family: r.verify for r in rows} == dict.fromkeys(by, "pass"), {r.family: r.detail for r in rows}
