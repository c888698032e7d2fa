"""MPS019 (graph fallback) edge cases: gates below shared conditions, markers inside a condition, preprocessor
directives that are not conditions (and ones in skipped groups), a function head split by #if, what counts as a
Metal or graph helper (neutral data-movement helpers, helpers without markers), bodies the rule must not cross
or crash on, and the file scope of a lint run."""

from __future__ import annotations

import signal
from contextlib import contextmanager

from tests.helpers import OPS
from tests.test_review_rules import _tree, exact

BESIDE = "keeps an MPSGraph path beside its Metal kernel, gated by"
GRAPH = "  runMPSGraph(getCurrentMPSStream(), nil, nil, nil);\n"
METAL = "  mtl_setArgs(nil, self);\n"


@contextmanager
def _deadline(seconds: float):
    """Fail (rather than hang) when the block runs longer than ``seconds``."""

    def _expired(*_):
        raise TimeoutError(f"MPS019 took longer than {seconds}s")

    old = signal.signal(signal.SIGALRM, _expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _lint(tmp_path, files: dict[str, str], only: list[str] | None = None) -> list[tuple]:
    root = _tree(tmp_path, c10=False)
    for name, text in files.items():
        (root / OPS / name).write_text(text)
    with _deadline(5):
        return exact(root, "MPS019", only=only)


CONDITIONS_SRC = (
    "Tensor deep_mps(const Tensor& self, bool a, bool b, bool c) {\n"  # 1
    "  if (a) {\n"
    "    if (b) {\n"
    "      if (c) {\n"
    "    " + METAL + "      } else {\n"  # 5, 6
    "    " + GRAPH + "      }\n"  # 7, 8
    "    }\n"
    "  }\n"
    "  return self;\n"
    "}\n"  # 12
    "Tensor marker_in_condition_mps(const Tensor& self) {\n"  # 13
    "  if (runMPSGraph(getCurrentMPSStream(), nil, nil, nil)) {\n"
    "  " + METAL + "  }\n"
    "  return self;\n"
    "}\n"  # 18
)


def test_mps019_gate_below_two_shared_conditions_and_no_path_in_a_condition(tmp_path):
    """Two shared enclosing ifs are skipped to name the third; a graph marker inside an if's condition is not a
    graph statement, so the Metal call it guards has no graph path beside it."""
    assert _lint(tmp_path, {"Cond.mm": CONDITIONS_SRC}) == [
        (
            "MPS019",
            "Cond.mm",
            1,
            1,
            12,
            2,
            "deep_mps",
            f"deep_mps {BESIDE} if (c) (graph at line 7: runMPSGraph)",
            None,
        ),
    ]


PREPROCESSOR_SRC = (
    "Tensor pragma_mps(const Tensor& self) {\n"  # 1
    "#ifdef KEEP_GRAPH\n"
    "#pragma clang diagnostic push\n"
    + GRAPH  # 4
    + "#pragma clang diagnostic pop\n"
    "#endif\n" + METAL + "  return self;\n"
    "}\n"  # 9
    "Tensor skipped_directive_mps(const Tensor& self) {\n"  # 10
     + METAL + "#if 0\n"
    "#Xif not a directive in a skipped group\n"
    "#endif\n" + GRAPH + "  return self;\n"
    "}\n"  # 17
    "Tensor bare_ifdef_mps(const Tensor& self) {\n"  # 18
    "#if 0\n" + METAL + "#ifdef\n" + GRAPH + "#endif\n"  # 19-23
    "#endif\n"
    "  return self;\n"
    "}\n"  # 26
)

HEAD_SPLIT_SRC = (
    "Tensor head_split_mps(const Tensor& self\n"  # 1
    "#if A\n"
    ") {\n" + METAL + "#else\n"
    ", int x) {\n" + GRAPH + "#endif\n"  # 6, 7
    "  return self;\n"
    "}\n"  # 10
)


def test_mps019_directives_other_than_conditions_and_a_head_split_by_if(tmp_path):
    """#pragma lines inside an #ifdef leave its condition in force; an unknown directive in a skipped group opens
    no condition; an #ifdef without a name is named as written; an #if opened in the function head (one closing
    parenthesis per branch) does not gate the body: both body paths run under the same (empty) conditions."""
    got = _lint(tmp_path, {"Pre.mm": PREPROCESSOR_SRC, "Split.mm": HEAD_SPLIT_SRC})
    assert got == [
        (
            "MPS019",
            "Pre.mm",
            1,
            1,
            9,
            2,
            "pragma_mps",
            f"pragma_mps {BESIDE} #ifdef KEEP_GRAPH (graph at line 4: runMPSGraph)",
            None,
        ),
        (
            "MPS019",
            "Pre.mm",
            18,
            1,
            26,
            2,
            "bare_ifdef_mps",
            f"bare_ifdef_mps {BESIDE} #ifdef  (graph at line 22: runMPSGraph)",
            None,
        ),
    ]


HELPERS_SRC = (
    "static void mps_copy_(const Tensor& self) {\n"  # 1: neutral data movement, Metal inside
    + METAL
    + "}\n"
    "static void noop(const Tensor& self) {\n"  # 4: no markers at all
    "}\n"
    "static void metal_path(const Tensor& self) {\n"  # 6
     + METAL + "}\n"
    "Tensor copy_beside_graph_mps(const Tensor& self, bool a) {\n"  # 9
     + GRAPH + "  if (a) {\n"
    "    mps_copy_(self);\n"
    "  }\n"
    "  return self;\n"
    "}\n"  # 15
    "Tensor noop_beside_graph_mps(const Tensor& self, bool a) {\n"  # 16
     + GRAPH + "  if (a) {\n"
    "    noop(self);\n"
    "  }\n"
    "  return self;\n"
    "}\n"  # 22
    "Tensor noop_beside_metal_mps(const Tensor& self, bool a) {\n"  # 23
     + METAL + "  if (a) {\n"
    "    noop(self);\n"
    "  }\n"
    "  return self;\n"
    "}\n"  # 29
    "Tensor metal_helper_beside_graph_mps(const Tensor& self, bool a) {\n"  # 30
     + GRAPH + "  if (a) {\n"
    "    metal_path(self);\n"
    "  }\n"
    "  return self;\n"
    "}\n"  # 36
)


def test_mps019_neutral_and_markerless_helpers_are_no_path(tmp_path):
    """A same-tree helper named like a neutral marker (mps_copy_) is not followed, even with Metal inside; a helper
    with no markers is neither Metal nor graph; a helper with only Metal markers is the Metal path."""
    assert _lint(tmp_path, {"Help.mm": HELPERS_SRC}) == [
        (
            "MPS019",
            "Help.mm",
            30,
            1,
            36,
            2,
            "metal_helper_beside_graph_mps",
            f"metal_helper_beside_graph_mps {BESIDE} if (a) (graph at line 31: runMPSGraph)",
            None,
        ),
    ]


def test_mps019_bodies_ending_in_a_bare_else_or_do_do_not_crash(tmp_path):
    """A half-written body whose last token is ``else`` or ``do`` (as in a file being edited) is read without
    error, and its one-path statements give no finding."""
    src = (
        "Tensor dangling_else_mps(const Tensor& self, bool a) {\n" + METAL + GRAPH + "  if (a) return self; else\n}\n"
        "Tensor dangling_do_mps(const Tensor& self) {\n" + METAL + GRAPH + "  do\n}\n"
    )
    assert [f for f in _lint(tmp_path, {"Half.mm": src}) if f[0] == "MPS019"] == []


OWN_BODY_SRC = (
    "Tensor split_head_mps(const Tensor& self, bool c\n"  # 1: two ')' across #if/#else
    "#if A\n"
    "  , bool x)\n"
    "#else\n"
    "  )\n"
    "#endif\n"
    "{\n" + METAL + GRAPH + "  return self;\n"
    "}\n"  # 11
    "Tensor block_mps(const Tensor& self, bool c) {\n"  # 12
    "  dispatch_sync(queue, ^{\n"
    "    if (c) {\n"
    "  " + METAL + "    }\n"
    "  " + GRAPH + "  });\n"
    "  return self;\n"
    "}\n"
)


def test_mps019_never_reads_past_the_function_it_reports(tmp_path):
    """The body of a function whose head splits its parentheses across #if/#else is looked for in that function
    only: the gated block of the next function is not taken for its body (nor reported as its gate). Its own
    Metal and graph statements share their (empty) conditions: no finding names it."""
    assert [f for f in _lint(tmp_path, {"Own.mm": OWN_BODY_SRC}) if f[6] == "split_head_mps"] == []


SCOPED_SRC = (
    "Tensor scoped_mps(const Tensor& self, bool a) {\n  if (a) {\n  " + METAL + "  }\n" + GRAPH + "  return self;\n}\n"
)


def test_mps019_a_file_out_of_scope_does_not_end_the_scan(tmp_path):
    """With the run limited to B.mm, the out-of-scope A.mm (read first) is skipped and B.mm is still checked."""
    files = {"A.mm": SCOPED_SRC.replace("scoped_mps", "other_mps"), "B.mm": SCOPED_SRC}
    assert _lint(tmp_path, files, only=[f"{OPS}/B.mm"]) == [
        (
            "MPS019",
            "B.mm",
            1,
            1,
            7,
            2,
            "scoped_mps",
            f"scoped_mps {BESIDE} if (a) (graph at line 5: runMPSGraph)",
            None,
        ),
    ]
