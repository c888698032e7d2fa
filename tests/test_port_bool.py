"""Bool registrations follow what torch CPU computes in bool: maximum and minimum take bool (the old graph did, and
`port --all --host` measured the ported kernels refusing it), clamp_max's Scalar stub does not (CPU refuses it; an
int scalar would only pass the probe by promoting the call to int64)."""

from __future__ import annotations

import io
import contextlib

from migrate.cli import main
from migrate.index import Index
from migrate.port.patch import plan_port
from migrate.port.write import cpu_takes
from migrate.tree import load_tree
from tests.corpus import pytorch_270a0_root


def test_the_dtype_probe_passes_scalars_of_the_probed_dtype():
    assert cpu_takes("maximum", 2, "bool") is True
    assert cpu_takes("clamp_max", 1, "bool", 1) is False  # clamp_max(bool, 2) works only promoted to int64
    assert cpu_takes("clamp_max", 1, "int32", 1) is True


def test_ported_maximum_registers_bool_and_verifies_it(tmp_path):
    root = pytorch_270a0_root()
    port = plan_port(Index(load_tree(root)), "maximum")
    metal = "".join(e.replacement for e in port.edits if e.path.endswith(".metal"))
    assert "REGISTER_BINARY_INDEXING_OP(maximum, bool);" in metal
    patch = tmp_path / "maximum.diff"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["port", "maximum", "--root", str(root)]) == 0
    patch.write_text(out.getvalue())
    with contextlib.redirect_stdout(io.StringIO()) as report:
        rc = main(["verify", "maximum", "--root", str(root), "--patch", str(patch)])
    lines = [x for x in report.getvalue().splitlines() if x.startswith("bool ")]
    passed = [x for x in lines if " pass " in x]
    assert rc == 0 and len(passed) >= 5 and not any(" fail" in x.lower() for x in lines), report.getvalue()[-3000:]
