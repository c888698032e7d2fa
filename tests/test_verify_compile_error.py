"""A kernel file that does not compile: the compiler's error with file:line once, at the top of verify's report
(text and JSON), with the cells it blocks; never "host picks X, which the library does not register" (issue 40).
The broken file is a copy of the real 2.7.0a0 UnaryKernel.metal with one call broken on purpose, applied as a
patch over the real tree."""

from __future__ import annotations

import difflib
import json

import pytest

from migrate.verify.report import to_json, to_text
from migrate.verify.run import Options, first_failure, verify
from tests.corpus import pytorch_270a0_root

KERNEL = "aten/src/ATen/native/mps/kernels/UnaryKernel.metal"
GOOD = "T0(precise::tanh(input[index]))"
BROKEN = "T0(precise::tanh(input[index], planted_undeclared))"


@pytest.fixture(scope="module")
def report():
    root = pytorch_270a0_root()
    text = (root / KERNEL).read_text()
    assert text.count(GOOD) == 1
    broken = text.replace(GOOD, BROKEN)
    line = next(i for i, ln in enumerate(broken.splitlines(), 1) if "planted_undeclared" in ln)
    patch = "".join(difflib.unified_diff(text.splitlines(True), broken.splitlines(True), f"a/{KERNEL}", f"b/{KERNEL}"))
    # exp's kernels live in the same file: the whole file fails, so exp's cells are blocked
    r = verify(root, "exp", patch=(patch, "planted.diff"), opts=Options(layouts=["contiguous", "opinfo"]))
    return r, line


def test_the_compile_error_is_at_the_top_once_with_file_and_line(report):
    r, line = report
    assert r.exit_code == 1
    text = to_text(r)
    where = f"{KERNEL}:{line}:"
    lines = text.splitlines()
    assert lines[1].startswith(f"COMPILE ERROR {where}") and "planted_undeclared" in lines[1]
    assert text.count(where) == 1, text
    assert "does not register" not in text and "FAIL " not in text
    assert "blocks" in lines[1] and "float32: contiguous, opinfo:exp" in lines[1]


def test_every_cell_is_blocked_and_named_by_the_error(report):
    r, line = report
    assert r.cells and {c.status for c in r.cells} == {"BLOCKED"}
    assert all(not c.failures for c in r.cells)  # the message is not repeated per cell
    (failure,) = r.compile_failures
    assert failure.file == KERNEL and failure.line == line
    assert sorted(failure.blocks) == sorted((c.dtype, c.layout) for c in r.cells)
    assert first_failure(r.cells[0]).startswith(f"blocked: {KERNEL}:{line}:")


def test_json_has_the_error_at_the_top(report):
    r, line = report
    doc = json.loads(to_json(r))
    assert list(doc).index("compile_errors") < list(doc).index("cells")
    (err,) = doc["compile_errors"]
    assert (err["file"], err["line"]) == (KERNEL, line) and "planted_undeclared" in err["message"]
    assert {"dtype": "float32", "layout": "contiguous"} in err["blocks"]
    assert {c["status"] for c in doc["cells"]} == {"BLOCKED"}
    assert not any("does not register" in f for c in doc["cells"] for f in c["failures"])
