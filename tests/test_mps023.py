"""MPS023 on the real 2.7.0a0 tree: RMSNorm's launch, whose inner threadgroup size never reaches the dispatch."""

from migrate.lint import lint_root
from migrate.tree import find_root
from tests.corpus import pytorch_270a0_root


def test_the_2_7_tree_rms_norm_launch_is_the_one_finding():
    findings = [f for f in lint_root(find_root(pytorch_270a0_root())).findings if f.code == "MPS023"]
    assert [(f.span.path, f.span.line) for f in findings] == [("aten/src/ATen/native/mps/operations/RMSNorm.mm", 54)]
    assert "the dispatch on line 59 reads the threadgroup_size of line 50" in findings[0].message
