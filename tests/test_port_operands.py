"""Port on the real 2.7.0a0 tree: the CPU iterator's operands, scalar placeholders named by their feeds,
shared kernel-file blocks in a batch, and verify of the scalar-taking binary ports (promotion, NaN)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from migrate.index import Index
from migrate.port.batch import combined_kernels, plan_all
from migrate.conventions.cpu_iter import calls_stub_on_its_iterator, iterator_inputs, negated_scalars, positions
from migrate.port.listing import verdict
from migrate.port.locate import scalar_feeds
from migrate.port.patch import plan_port, translate_family
from migrate.port.text_edits import apply_edits
from migrate.port.translate import PortBlocked
from migrate.tree import load_tree
from migrate.verify.run import Options, verify
from tests.corpus import pytorch_270a0_root

NATIVE = "aten/src/ATen/native"


@pytest.fixture(scope="module")
def real_ix():
    return Index(load_tree(pytorch_270a0_root()))


# ------------------------------------------------------------ the CPU kernel's iterator
def _native(tmp_path: Path, text: str) -> Path:
    (tmp_path / NATIVE).mkdir(parents=True)
    (tmp_path / NATIVE / "Ops.cpp").write_text(text)
    return tmp_path


def test_iterator_inputs_in_the_order_the_kernel_adds_them(tmp_path):
    root = _native(
        tmp_path,
        """
// a_out(x) in a comment is not the definition
Tensor& a_out(const Tensor& grad, const Tensor& input, const Tensor& buffer, Tensor& out) {
  auto iter = TensorIteratorConfig().add_output(out).add_const_input(input)
      .add_input(buffer).add_owned_const_input(grad).build();
  a_stub(kCPU, iter);
  return out;
}
Tensor& b_out(const Tensor& grad, const Tensor& self, const Scalar& lo, Tensor& out) {
  auto iter = TensorIterator::borrowing_binary_op(out, grad, self);
  b_stub(iter.device_type(), iter, lo);
  return out;
}
Tensor& c_out(const Tensor& self, Tensor& out) { return at::c_outf(self, out); }
""",
    )
    assert iterator_inputs(root, "a_out") == ["input", "buffer", "grad"]
    assert positions(root, "a_out") == [1, 2, 0]
    assert iterator_inputs(root, "b_out") == ["grad", "self"] and positions(root, "b_out") == [0, 1]
    assert iterator_inputs(root, "c_out") is None and iterator_inputs(root, "missing_out") is None


def test_a_definition_is_read_at_a_word_start_only(tmp_path):
    root = _native(
        tmp_path,
        """z_out(const Tensor& a, const Tensor& b, Tensor& out) {
  auto iter = TensorIterator::borrowing_binary_op(out, b, a);
  return out;
}
Tensor& pre_k_out(const Tensor& x, const Tensor& y, Tensor& out) {
  auto iter = TensorIterator::borrowing_binary_op(out, x, y);
  return out;
}
Tensor& k_out(const Tensor& b, const Tensor& a, Tensor& out) {
  auto iter = TensorIterator::borrowing_binary_op(out, a, b);
  return out;
}
""",
    )
    assert positions(root, "z_out") == [1, 0]  # a name at the file's first byte
    assert positions(root, "k_out") == [1, 0]  # not pre_k_out's, which ends in "k_out("
    assert iterator_inputs(root, "e_k_out") is None  # only inside pre_k_out


def test_a_cpu_iterator_over_other_operands_blocks_the_port(real_ix):
    """log_sigmoid_backward's CPU kernel iterates (input, buffer, grad_output): a binary kernel registered for
    its stub would read the input as the gradient."""
    v = verdict(real_ix, "log_sigmoid_backward")
    assert v.status != "portable"
    assert "builds its iterator over (input, buffer, grad_output)" in v.detail, v
    assert verdict(real_ix, "hardtanh_backward").status == "portable"  # (grad_output, self): the graph's order


def test_a_structured_meta_function_builds_the_iterator(tmp_path):
    root = _native(
        tmp_path,
        """
TORCH_META_FUNC(d_backward) (const Tensor& grad_output, const Tensor& self_or_result, const Scalar& s, bool r) {
  build_borrowing_binary_op(maybe_get_output(), self_or_result, grad_output);
}
TORCH_META_FUNC2(e, Tensor) (const Tensor& self, const Tensor& other) {
  build_borrowing_binary_op(maybe_get_output(), self, other);
}
TORCH_IMPL_FUNC(d_backward_out) (const Tensor& g, const Tensor& x, const Scalar& s, bool r, const Tensor& out) {
  d_backward_stub(device_type(), *this, s);
}
""",
    )
    assert iterator_inputs(root, "d_backward_out") is None  # the structured kernel builds no iterator itself
    assert iterator_inputs(root, "d_backward_out", ("d_backward", "")) == ["self_or_result", "grad_output"]
    assert positions(root, "d_backward_out", ("d_backward", "")) == [1, 0]
    assert positions(root, "e_out", ("e", "Tensor")) == [0, 1]
    assert positions(root, "e_out", ("e", "Scalar")) is None


def test_operands_follow_the_meta_functions_iterator(real_ix):
    """leaky_relu_backward's meta builds (self_or_result, grad_output): the kernel's a is self, and verify hands
    the kernel its inputs in that order (the schema-order functor of the previous port fails verify)."""
    from migrate.verify.kernel_source import operand_order

    port = plan_port(real_ix, "leaky_relu_backward")
    assert any("the kernel's a is self" in n for n in port.notes), port.notes
    assert [n.name for n in port.dag.inputs] == ["self", "grad_output"]
    metal = next(
        e.replacement
        for e in port.edits
        if e.path.endswith(".metal") and "leaky_relu_backward_functor" in e.replacement
    )
    assert "(float(a) > 0.0f) ? float(b)" in metal
    after = Index(load_tree(pytorch_270a0_root(), overlay=apply_edits(real_ix.tree.sources, port.edits)))
    assert operand_order(after, "leaky_relu_backward") == [1, 0]
    assert operand_order(after, "hardtanh_backward") is None


# ------------------------------------------------------------ scalar placeholders
def test_scalar_feeds_name_the_host_scalars():
    text = """
  MPSScalar beta_scalar = getMPSScalar(beta, self.scalar_type());
  MPSScalar threshold_scalar = getMPSScalar(threshold, self.scalar_type());
  feeds = @{ cachedGraph->betaTensor_ : getMPSGraphTensorFromScalar(stream, beta_scalar),
             cachedGraph->thresholdTensor_ : getMPSGraphTensorFromScalar(stream, threshold_scalar) };"""
    assert scalar_feeds(text) == {"betaTensor_": "beta", "thresholdTensor_": "threshold"}
    assert scalar_feeds(text.replace("getMPSScalar(beta", "makeScalar(beta")) == {"thresholdTensor_": "threshold"}


@pytest.mark.parametrize("family", ["softplus", "softplus_backward"])
def test_two_scalar_placeholders_become_a_parameter_struct(real_ix, family):
    dag = translate_family(real_ix, family)[1]
    assert [n.name for n in dag.params] == ["beta", "threshold"]
    assert verdict(real_ix, family).status == "portable"


def test_softplus_port_is_torchs_formula(real_ix):
    port = plan_port(real_ix, "softplus")
    notes = " ".join(port.notes)
    assert "behaviour change (softplus_linear)" in notes and "behaviour change (log1p)" in notes
    text = " ".join("".join(e.replacement for e in port.edits if e.path.endswith(".metal")).split())
    assert "/ float(params.beta)" in text and "< 0.0f ? 0.0f" not in text  # x itself above the threshold, no relu


# ------------------------------------------------------------ the batch
def test_a_batch_adds_shared_kernel_templates_once(real_ix):
    rows = plan_all(real_ix, ["leaky_relu_backward", "softshrink_backward"])
    assert all(r.port is not None for r in rows), [r.detail for r in rows]
    kernels = combined_kernels(real_ix, rows)
    text = b"".join(kernels.values()).decode()
    assert text.count("kernel void binary_indexing_scalar(") == 1
    assert "struct leaky_relu_backward_functor" in text and "struct softshrink_backward_functor" in text


# ------------------------------------------------------------ verify of the ports
def _verify(real_ix, family: str, layouts: list[str]):
    from migrate.apply import unified_diff

    port = plan_port(real_ix, family)
    new = apply_edits(real_ix.tree.sources, port.edits)
    patch = "".join(unified_diff(p, real_ix.tree.sources[p], new[p]) for p in sorted(new))
    return verify(
        pytorch_270a0_root(),
        family,
        (patch, f"<port {family}>"),
        Options(opinfo=False, dtypes=[torch.float32], layouts=layouts),
    )


def test_the_scalar_binary_launcher_casts_mixed_dtypes(real_ix):
    """other is int32: the launcher casts both inputs to the common dtype on MPS, as the graph did."""
    rep = _verify(real_ix, "leaky_relu_backward", ["mixed_dtype", "contiguous"])
    assert rep.ran and rep.ok, [c.failures or c.stats.first for c in rep.cells if c.status == "FAIL"]
    assert {c.layout for c in rep.cells if c.status == "pass"} == {"mixed_dtype", "contiguous"}


def test_torch_cpus_other_loop_gets_the_struct_scalars(real_ix):
    """hardtanh_backward at self = NaN: torch CPU's vectorised loop gives 0, its scalar loop grad; the kernel's
    answer is the scalar loop's, excused only when the alternative call carries min_val and max_val."""
    rep = _verify(real_ix, "hardtanh_backward", ["contiguous"])
    assert rep.ran and rep.ok, [c.failures or c.stats.first for c in rep.cells if c.status == "FAIL"]
    assert sum(c.stats.excused for c in rep.cells) > 0  # the NaN elements: torch's scalar loop agrees


# ------------------------------------------------------------ a ufunc op (add.out: codegen's CPU kernel)
def test_a_ufunc_op_keeps_its_mps_line_and_calls_the_stub(real_ix):
    """add.out has no CPU line to share (ufunc codegen writes ufunc_add_CPU): the MPS structured kernel's body
    becomes add_stub's call, as the generated CPU kernel's is; its complex branch is a behaviour change."""
    port = plan_port(real_ix, "add")
    host = [e for e in port.edits if e.path.endswith("BinaryOps.mm")]
    assert [e.replacement for e in host] == ["{\n  add_stub(device_type(), *this, alpha);\n}"]
    old = real_ix.tree.sources[host[0].path][host[0].start : host[0].end].decode()
    assert old.startswith("{\n  if ((isComplexType(") and old.endswith('output, "add");\n}')
    assert not any(e.path.endswith("native_functions.yaml") for e in port.edits)
    assert any(n.startswith("behaviour change (fused_alpha)") for n in port.notes)
    assert any(n.startswith("behaviour change (complex): add_out_mps") for n in port.notes)


def test_dropping_an_old_complex_path_is_a_behaviour_change(real_ix):
    notes = [n for n in plan_port(real_ix, "mul").notes if n.startswith("behaviour change (complex)")]
    assert len(notes) == 1 and "mul_out_mps handles complex inputs (supportsComplex" in notes[0], notes
    assert not [n for n in plan_port(real_ix, "atan2").notes if "(complex)" in n]


def test_a_scalar_launch_runs_opinfo_samples_with_their_alpha(real_ix):
    """add's launch binds alpha = 2 for verify's own cases; each OpInfo sample's case binds the sample's alpha."""
    from migrate.apply import unified_diff

    port = plan_port(real_ix, "add")
    new = apply_edits(real_ix.tree.sources, port.edits)
    patch = "".join(unified_diff(p, real_ix.tree.sources[p], new[p]) for p in sorted(new))
    rep = verify(
        pytorch_270a0_root(),
        "add",
        (patch, "<port add>"),
        Options(dtypes=[torch.float32], layouts=["contiguous", "opinfo"]),
    )
    assert rep.ran and rep.ok, [c.failures or c.stats.first for c in rep.cells if c.status == "FAIL"]
    assert [c.status for c in rep.cells if c.layout.startswith("opinfo:")] == ["pass"]
    assert any("binds the sample's own alpha" in n for n in rep.notes)


@pytest.mark.parametrize("family", ["leaky_relu", "leaky_relu_backward", "_prelu_kernel", "signbit", "add"])
def test_a_port_adds_no_finding_to_the_tree(real_ix, family):
    """Lint after the port reports nothing the tree did not have: the generated launchers check their numel
    narrowing (MPS013), _prelu_kernel's old function prelu_mps goes (MPS004), signbit's out= casts are not an
    int-to-float family missing bool (MPS008)."""
    from migrate.lint import lint_tree

    def findings(tree):
        return {(f.code, f.path, f.message) for f in lint_tree(tree).findings}

    before = findings(real_ix.tree)
    new = apply_edits(real_ix.tree.sources, plan_port(real_ix, family).edits)
    after = findings(load_tree(pytorch_270a0_root(), {**real_ix.tree.sources, **new}))
    assert sorted(after - before) == []


@pytest.mark.parametrize("family", ["where", "scatter_reduce"])
def test_a_stub_registered_only_by_the_familys_own_graph_is_no_reroute(real_ix, family):
    """where_kernel's only MPS registration is where's own MPSGraph code (where_kernel_mps): "rerouting" onto it
    would delete MPS's where. Only another family's registration (sub onto add's) is something to ride on."""
    with pytest.raises(PortBlocked):
        plan_port(real_ix, family)


def test_sub_waits_for_add_on_the_real_tree(real_ix):
    with pytest.raises(PortBlocked, match=r"port add first \(mps-migrate port add\)") as e:
        plan_port(real_ix, "sub")
    assert e.value.after == "add"


def test_only_a_structured_kernel_running_the_stub_on_its_own_iterator_rides_on_it(tmp_path, real_ix):
    root = _native(
        tmp_path,
        """
TORCH_IMPL_FUNC(s_out) (const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& result) {
  add_stub(device_type(), *this, -alpha);
}
TORCH_IMPL_FUNC(i_out) (const Tensor& self, int64_t dim, const Tensor& index, const Tensor& result) {
  for (const auto i : c10::irange(numel)) {
    auto iter = TensorIterator::binary_op(selfSlice, selfSlice, sourceSlice);
    add_stub(iter.device_type(), iter, alpha);
  }
}
""",
    )
    assert calls_stub_on_its_iterator(root, "s_out", "add_stub") and negated_scalars(root, "s_out", "add_stub") == [
        "alpha"
    ]
    assert not calls_stub_on_its_iterator(root, "i_out", "add_stub") and not calls_stub_on_its_iterator(
        root, "s_out", "mul_stub"
    )
    # in a batch, only sub is planned after add's port: index_add and embedding_dense_backward reach add_stub
    # through a slice loop or helpers, which is not add's computation
    rows = plan_all(real_ix, ["add", "sub", "index_add", "embedding_dense_backward"])
    assert {r.family: r.after for r in rows} == {
        "add": "",
        "sub": "add",
        "index_add": "",
        "embedding_dense_backward": "",
    }
