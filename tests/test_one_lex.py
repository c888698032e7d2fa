"""Each Metal source is tokenized once per process: the review rules' flow analysis reads the
token stream the Metal reader made (raw strings of Metal in host files included)."""

from __future__ import annotations

import pytest

from migrate import cache
from migrate.read import metal_flow
from migrate.read.metal_body import lex
from migrate.source import source_file
from migrate.source import tokens as tokens_module
from migrate.tree import load_tree
from tests.corpus import pytorch_260_root, pytorch_270a0_root
from tests.helpers import FIXTURES, OPS

INLINE = b"""#include <ATen/native/mps/OperationUtils.h>
namespace at::native {
static const char* CLAMP_SHADER = R"METAL(
#include <metal_stdlib>
using namespace metal;
kernel void clamp_low(device float* out [[buffer(0)]],
                      constant float* in [[buffer(1)]],
                      uint tid [[thread_position_in_grid]]) {
  out[tid] = max(in[tid], 0.0f);
}
)METAL";
} // namespace at::native
"""


def inline_tree(tmp_path):
    """The review fixture plus a host file holding Metal in a raw string."""
    import shutil

    root = tmp_path / "tree"
    shutil.copytree(FIXTURES / "review", root)
    (root / OPS / "Inline.mm").write_bytes(INLINE)
    return root


def facts(toks):
    return [(t.kind, t.text, t.start, t.space) for t in toks]


@pytest.mark.parametrize("root", ["inline", "2.6.0", "2.7.0a0"])
def test_inline_metal_tokens_are_the_readers_moved(root, monkeypatch, tmp_path):
    root = {"2.6.0": pytorch_260_root, "2.7.0a0": pytorch_270a0_root}.get(root, lambda: inline_tree(tmp_path))()
    monkeypatch.setenv("MPS_MIGRATE_JOBS", "1")
    with cache.disable_cache():
        tree = load_tree(root)
    inline = [(p, im) for p, hf in tree.hosts.items() for im in hf.inline_metal]
    assert inline
    calls = []
    real = tokens_module.tokenize
    monkeypatch.setattr(metal_flow, "lex", lambda *a: calls.append(a) or real(*a))
    for path, im in inline:
        sf = source_file(tree.sources[path], path)
        assert facts(metal_flow._inline_tokens(sf, im)) == facts(lex(sf.latin1, im.span.start, im.span.end))
    assert not calls  # none lexed again


def test_metal_files_are_not_lexed_again_by_the_rules(monkeypatch, tmp_path):
    monkeypatch.setenv("MPS_MIGRATE_JOBS", "1")
    with cache.disable_cache():
        tree = load_tree(inline_tree(tmp_path))
    counted = []
    real = tokens_module.tokenize
    monkeypatch.setattr("migrate.source.file._tokens.tokenize", lambda *a, **k: counted.append(1) or real(*a, **k))
    units = list(metal_flow._units(tree))
    assert units and not counted


def test_inline_metal_findings_on_two_processes(monkeypatch, tmp_path):
    from migrate import rule_pool
    from migrate.lint import lint_tree

    root = inline_tree(tmp_path)
    monkeypatch.setattr(rule_pool, "MIN_PARALLEL_BYTES", 0)
    found = []
    for jobs in ("1", "2"):
        monkeypatch.setenv("MPS_MIGRATE_JOBS", jobs)
        with cache.disable_cache():
            found.append(lint_tree(load_tree(root)).findings)
    assert found[0] == found[1]
    assert any(f.code == "MPS016" and f.path.endswith("Inline.mm") for f in found[0])
