"""Property tests: vary the yaml's formatting around a dispatch block; the fix's invariants hold."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from migrate.fixloop import fix_to_fixed_point
from migrate.lint import lint_tree
from migrate.tree import load_tree
from tests.helpers import MINI, YAML
from tests.test_fix import backend_index, ruamel_roundtrip
from tests.fuzzing import examples

ENTRY_HEAD = "- func: copysign.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)\n"
ORIGINAL = (
    ENTRY_HEAD
    + "  dispatch:\n    CPU, CUDA: copysign_scalar_out\n    MPS: copysign_scalar_out_mps\n  tags: pointwise\n"
)

comment = st.sampled_from(["", "    # a comment\n", "    # MPS: not_a_key\n", "\n"])


@st.composite
def entries(draw):
    keys = draw(st.sampled_from([("CPU", "CUDA"), ("CUDA", "CPU")]))
    sep = draw(st.sampled_from([", ", ",", " , "]))
    shared = f"    {sep.join(keys)}: copysign_scalar_out\n"
    trailing = draw(st.sampled_from(["", "  # legacy MPSGraph"]))
    mps = f"    MPS: copysign_scalar_out_mps{trailing}\n"
    lines = [shared, mps] if draw(st.booleans()) else [mps, shared]
    block = draw(comment) + lines[0] + draw(comment) + lines[1] + draw(comment)
    quoted = draw(st.booleans())
    head = ENTRY_HEAD if not quoted else '- func: "' + ENTRY_HEAD[len("- func: ") : -1] + '"\n'
    tags = "  tags: pointwise\n"
    body = "  dispatch:\n" + block
    body = tags + body if draw(st.booleans()) else body + tags
    blank = draw(st.sampled_from(["", "\n", "\n\n"]))
    return head + body + blank


@settings(max_examples=examples(25), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entry=entries())
def test_dispatch_rewrite_invariants(entry):
    text = (MINI / YAML).read_text()
    assert ORIGINAL in text
    new_text = text.replace(ORIGINAL, entry)
    with tempfile.TemporaryDirectory() as d:
        root = Path(d) / "t"
        shutil.copytree(MINI, root)
        (root / YAML).write_text(new_text)
        before = backend_index(root / YAML)
        roundtrip_was_noop = ruamel_roundtrip(new_text) == new_text
        outcome = fix_to_fixed_point(root, keep=lambda f, ix: f.overload == "copysign.Scalar_out")
        fixed = outcome.new[YAML].decode()
        (root / YAML).write_text(fixed)
        after = backend_index(root / YAML)
        # torchgen: the only difference is the intended MPS kernel
        changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
        assert changed == {("copysign.Scalar_out", "MPS")}
        assert after[("copysign.Scalar_out", "MPS")] == "copysign_scalar_out"
        # every line outside the rewritten dispatch lines is byte-identical
        old_lines = [line for line in new_text.splitlines(keepends=True) if "copysign_scalar_out" not in line]
        new_lines = [line for line in fixed.splitlines(keepends=True) if "copysign_scalar_out" not in line]
        assert old_lines == new_lines
        # the key order and separator style of the shared line are kept, MPS after CUDA
        shared = next(line for line in fixed.splitlines() if line.endswith(": copysign_scalar_out"))
        was = next(line for line in entry.splitlines() if line.endswith(": copysign_scalar_out")).strip()
        keys_text = was.split(":")[0]
        first, second = (k.strip() for k in keys_text.split(","))
        sep = keys_text[len(first) : len(keys_text) - len(second)]
        keys = ["CUDA", "MPS", "CPU"] if first == "CUDA" else ["CPU", "CUDA", "MPS"]
        assert shared == "    " + sep.join(keys) + ": copysign_scalar_out"
        if roundtrip_was_noop:
            assert ruamel_roundtrip(fixed) == fixed
        # idempotent
        again = fix_to_fixed_point(root, keep=lambda f, ix: f.overload == "copysign.Scalar_out")
        assert again.new == {}
        assert not [
            f
            for f in lint_tree(load_tree(root)).findings
            if f.code in ("MPS001", "MPS002") and f.overload == "copysign.Scalar_out"
        ]
