"""Ports of operators returning two tensors (migrate/port/two_outputs.py): _prelu_kernel_backward on the real 2.7.0a0
tree, and what is refused when the graph does not say which output each returned tensor receives."""

from __future__ import annotations

import pytest

from migrate.index import Index
from migrate.port.patch import plan_port
from migrate.port.text_edits import apply_edits
from migrate.port.translate import PortBlocked
from migrate.tree import load_tree
from tests.corpus import pytorch_270a0_root
from tests.test_port_era27 import copy_tree

MM = "aten/src/ATen/native/mps/operations/PreluBackward.mm"


def test_the_2_7_tree_prelu_backward_writes_both_outputs():
    ix = Index(load_tree(pytorch_270a0_root()))
    port = plan_port(ix, "_prelu_kernel_backward", torch_dtypes=False, cleanup=False)
    text = "".join(e.replacement for e in port.edits)
    assert port.convention == "two_outputs"
    # operands in the CPU iterator's order (self, weight, grad_out): output 0 is grad_input, output 1 grad_weight
    assert "(float(a) > 0.0f) ? float(c) : (float(b) * float(c))" in text
    assert "(float(a) > 0.0f) ? 0.0f : (float(a) * float(c))" in text
    assert "struct _prelu_kernel_backward_out1_functor" in text
    assert "*(device T*)((device uint8_t*)out1_ + offs[1])" in text  # the strided kernel writes the second output
    assert "static void _prelu_kernel_backward_mps_kernel(TensorIterator& iter)" in text  # activation_backward_fn
    assert "REGISTER_DISPATCH(prelu_backward_stub, &_prelu_kernel_backward_mps_kernel)" in text
    yaml = apply_edits(ix.tree.sources, port.edits)[ix.tree.yaml.path].decode()
    assert "    CPU, CUDA, MPS: _prelu_kernel_backward\n    MkldnnCPU: mkldnn_prelu_backward\n\n" in yaml


@pytest.mark.parametrize(
    "cut",
    [
        "    Placeholder dWeightPlaceholder = Placeholder(cachedGraph->gradWeightTensor_, d_weight);\n",
        "      newCachedGraph->gradWeightTensor_ = [mpsGraph selectWithPredicateTensor:positive\n"
        "                                                          truePredicateTensor:zero\n"
        "                                                         falsePredicateTensor:selfGrad\n"
        "                                                                         name:nil];\n",
    ],
    ids=["returned tensor bound to no graph output", "second graph output never stored"],
)
def test_an_output_the_graph_does_not_bind_is_refused(tmp_path, cut):
    root = copy_tree(tmp_path)
    path = root / MM
    text = path.read_text()
    assert cut in text
    path.write_text(text.replace(cut, ""))
    with pytest.raises(PortBlocked, match=r"which graph output each returned tensor receives"):
        plan_port(Index(load_tree(root)), "_prelu_kernel_backward", torch_dtypes=False, cleanup=False)
