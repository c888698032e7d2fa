"""The kernel review rules MPS016-MPS021: the planted fixture, per-rule must/must-not cases, the real tree."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from migrate.config import Config
from migrate.lint import lint_tree
from migrate.tree import load_tree
from tests.corpus import pytorch_260_root, pytorch_270a0_root
from tests.helpers import FIXTURES, KERNELS, OPS, YAML, lint_json, run_cli, triples

REVIEW = FIXTURES / "review"
CODES = ("MPS016", "MPS017", "MPS018", "MPS019", "MPS020", "MPS021")
METAL = f"{KERNELS}/Review.metal"

EXPECTED = {
    (
        "MPS016",
        METAL,
        10,
    ),  # max(a, b) in review_max_functor (not its c10::metal twin, not fmax_functor, not clamp_index)
    (
        "MPS017",
        METAL,
        41,
    ),  # simd_sum under `if (first == 0)`, first <- lane (not lane_sum_good's simd_max under sg == 0)
    ("MPS017", METAL, 64),  # barrier after `if (tid >= n) return;` (not barrier_then_return)
    ("MPS018", METAL, 79),  # fast::exp (not precise::exp)
    ("MPS019", f"{OPS}/Review.mm", 10),  # review_max_mps: graph beside Metal (not review_sum_mps)
    ("MPS020", METAL, 94),  # stride-halving loop over threadgroup `shared`
    ("MPS021", METAL, 109),  # uint offset = pos.y * rows * cols (not the long twin)
}


def test_fixture_findings_exact():
    found = lint_json(REVIEW, "--select", ",".join(CODES))
    assert triples(found) == EXPECTED
    by_code = {f["code"]: f for f in found}
    assert "gated by if (self.is_contiguous())" in by_code["MPS019"]["message"]
    assert "from lane [[thread_index_in_simdgroup]]" in [f for f in found if f["line"] == 41][0]["message"]
    assert by_code["MPS016"]["fix"]["safe"] is False


def test_fixture_unsafe_fix_names_c10_metal(tmp_path):
    root = tmp_path / "review"
    shutil.copytree(REVIEW, root)
    proc = run_cli("lint", str(root), "--select", "MPS016", "--fix", "--unsafe-fixes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (root / METAL).read_text()
    assert "return c10::metal::max(a, b);" in text
    assert "return max(a, b);" not in text
    assert text.count("#include <c10/metal/utils.h>") == 1  # already included: nothing added


# ------------------------------------------------------------ per-rule cases on tiny trees
def _tree(tmp_path: Path, metal: str = "", mm: str = "", c10: bool = True) -> Path:
    root = tmp_path / "t"
    (root / KERNELS).mkdir(parents=True)
    (root / OPS).mkdir(parents=True)
    (root / YAML).write_text("- func: foo(Tensor self) -> Tensor\n  dispatch:\n    MPS: foo_mps\n")
    if metal:
        (root / KERNELS / "K.metal").write_text(metal)
    if mm:
        (root / OPS / "Foo.mm").write_text(mm)
    if c10:
        shutil.copytree(REVIEW / "c10", root / "c10")
    return root


def _codes(root: Path, code: str) -> list[tuple[int, str]]:
    res = lint_tree(load_tree(root), Config(select=[code]))
    return [(f.line, f.message) for f in res.findings]


FUNCTOR = "struct {name}_functor {{\n  template <typename T>\n  T operator()(const T a, const T b) {{\n    return {call};\n  }}\n}};\n"


@pytest.mark.parametrize(
    "call,name,reported",
    [
        ("max(a, b)", "maximum", True),
        ("::metal::min(a, b)", "minimum", True),
        ("metal::fmax(a, b)", "maximum", True),
        ("c10::metal::max(a, b)", "maximum", False),
        ("fmax(a, b)", "fmax", False),  # the fmax operator itself
    ],
)
def test_mps016_functor_cases(tmp_path, call, name, reported):
    root = _tree(
        tmp_path,
        "#include <c10/metal/utils.h>\n"
        + FUNCTOR.format(name=name, call=call)
        + f"#define INSTANTIATE(T) template [[host_name(#T)]] T {name}_functor::operator()(const T, const T);\n"
        + "INSTANTIATE(float)\n",
    )
    assert bool(_codes(root, "MPS016")) is reported


def test_mps016_not_on_indices_or_scalar_arguments(tmp_path):
    root = _tree(
        tmp_path,
        """
kernel void k(device float* out, constant float2& scales, constant int& n, uint tid [[thread_position_in_grid]]) {
  int i = max(int(tid) - 1, 0);
  float2 s = max(1.0, scales);
  out[min(i, n)] = s.x;
}
""",
    )
    assert _codes(root, "MPS016") == []


def test_mps016_on_kernel_data_without_fix_when_tree_lacks_c10_metal(tmp_path):
    root = _tree(
        tmp_path,
        """
kernel void k(constant float* x, device float* out, uint tid [[thread_position_in_grid]]) {
  float v = x[tid];
  out[tid] = min(v, 0.0f);
}
""",
        c10=False,
    )
    got = _codes(root, "MPS016")
    assert [line for line, _ in got] == [4] and "this tree has no c10::metal::min/max to use" in got[0][1]


KERNEL = (
    "kernel void k(device float* x, uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],\n"
    "              uint g [[threadgroup_position_in_grid]], constant uint& n) {{\n{body}\n}}\n"
)


@pytest.mark.parametrize(
    "body,reported",
    [
        ("  if (lane < 16) { x[0] = simd_sum(x[lane]); }", True),
        ("  uint l2 = lane * 2;\n  while (l2 < n) { l2 = simd_shuffle_down(l2, 1); }", True),
        ("  if (sg == 0) { threadgroup_barrier(mem_flags::mem_threadgroup); }", True),
        ("  if (lane == 0) { } else { quad_sum(x[0]); }", True),
        ("  if (sg == 0) { x[0] = simd_sum(x[lane]); }", False),  # uniform within the SIMD group
        (
            "  for (uint i = lane; i < n; i += 32) { x[i] = 0; }\n  for (uint i = 0; i < n; ++i) { x[i] = simd_sum(x[i]); }",
            False,
        ),  # the second loop's i is another variable
        (
            "  for (uint i = 0; i < n; ++i) { x[i] = 0; }\n  for (uint i = lane; i < n; i += 32) { x[i] = simd_sum(x[i]); }",
            True,
        ),
        ("  if (g < n) { threadgroup_barrier(mem_flags::mem_threadgroup); }", False),  # uniform in the threadgroup
        ("  float s = simd_sum(x[lane]);\n  if (lane == 0) { x[g] = s; }", False),
        ("  if (x[0] > 0) { x[1] = simd_active_threads_mask() ? 1 : 0; }", False),
    ],
)
def test_mps017_cases(tmp_path, body, reported):
    root = _tree(tmp_path, KERNEL.format(body=body))
    assert bool(_codes(root, "MPS017")) is reported


def test_mps017_judges_the_collective_a_return_statement_calls(tmp_path):
    """A return's own calls run before it returns: a collective there is judged by the return's conditions and by
    the returns before it, never by the return itself."""
    body = (
        "  if (lane < 16) return simd_sum(x[lane]);\n"  # line 3: under a lane condition
        "  if (n > 4) return simd_max(x[0]);\n"  # line 4: uniform condition, after line 3's divergent return
        "  return simd_min(x[1]);"
    )
    root = _tree(tmp_path, KERNEL.format(body=body))
    assert _codes(root, "MPS017") == [
        (
            3,
            "simd_sum in k is reached by part of its SIMD group only: `if (lane < 16)`, on lane [[thread_index_in_simdgroup]]",
        ),
        (
            4,
            "simd_max in k is reached by part of its SIMD group only: after the `return` at line 3 under `(lane < 16)`,"
            " on lane [[thread_index_in_simdgroup]]",
        ),
        (
            5,
            "simd_min in k is reached by part of its SIMD group only: after the `return` at line 3 under `(lane < 16)`,"
            " on lane [[thread_index_in_simdgroup]]",
        ),
    ]
    uniform = _tree(tmp_path / "u", KERNEL.format(body="  if (n > 4) return simd_sum(x[lane]);\n  x[0] = 1;"))
    assert _codes(uniform, "MPS017") == []


def test_mps017_suppressed_by_comment_on_the_line_above(tmp_path):
    body = "  if (lane < 8) {\n    // mps-migrate: ignore[MPS017] the first 8 lanes reduce on purpose\n    x[0] = simd_sum(x[lane]);\n  }"
    root = _tree(tmp_path, KERNEL.format(body=body))
    assert _codes(root, "MPS017") == []


def test_mps017_follows_positions_into_helpers(tmp_path):
    root = _tree(
        tmp_path,
        """
float reduce(float v, uint who) {
  if (who < 8) {
    v = simd_sum(v);
  }
  return v;
}
kernel void k(device float* x, uint tid [[thread_position_in_threadgroup]], uint g [[threadgroup_position_in_grid]]) {
  x[0] = reduce(x[tid], tid);
  x[1] = reduce(x[g], g);
}
""",
    )
    got = _codes(root, "MPS017")
    assert [line for line, _ in got] == [4]
    assert "who (from tid [[thread_position_in_threadgroup]], passed at line 9)" in got[0][1]


@pytest.mark.parametrize(
    "src,reported",
    [
        ("  x[0] = metal::fast::sin(x[0]);", True),
        ("#pragma METAL fp math_mode(fast)\n  x[0] = sin(x[0]);", True),
        ("  x[0] = metal::precise::sin(x[0]) + sin(x[1]);", False),
        ("  // fast::exp would be quicker\n  x[0] = exp(x[0]);", False),
    ],
)
def test_mps018_cases(tmp_path, src, reported):
    root = _tree(tmp_path, f"kernel void k(device float* x) {{\n{src}\n}}\n")
    assert bool(_codes(root, "MPS018")) is reported


@pytest.mark.parametrize(
    "src,reported",
    [
        ("  [options setFastMathEnabled:YES];", True),
        ("  options.mathMode = MTLMathModeFast;", True),
        ("  options.mathMode = fast_math ? MTLMathModeFast : MTLMathModeSafe;", False),  # the user's opt-in
        ("  // [options setFastMathEnabled:YES];", False),
    ],
)
def test_mps018_host_compile_options(tmp_path, src, reported):
    root = _tree(tmp_path, mm=f"void compile(MTLCompileOptions* options) {{\n{src}\n}}\n")
    assert bool(_codes(root, "MPS018")) is reported


MM = """
namespace at::native {{
static MetalShaderLibrary lib("");
static Tensor graph_path(const Tensor& self) {{
  auto g = LookUpOrCreateCachedGraph<CachedGraph>(key, f);
  return self;
}}
Tensor foo_mps(const Tensor& self) {{
{body}
}}
}}
"""


@pytest.mark.parametrize(
    "body,gate",
    [
        (
            '  if (use_metal(self)) {\n    lib.exec_unary_kernel(self, out, "foo");\n  } else {\n'
            "    auto g = LookUpOrCreateCachedGraph<CachedGraph>(key, f);\n  }",
            "if (use_metal(self))",
        ),
        (
            '#if 1\n  lib.exec_unary_kernel(self, out, "foo");\n#else\n  runMPSGraph(stream, g, feeds, results);\n#endif',
            "#if 1",
        ),
        (
            '  if (self.dim() == 0) {\n    return graph_path(self);\n  }\n  lib.exec_unary_kernel(self, out, "foo");',
            "if (self.dim() == 0)",
        ),  # through a same-file helper that builds the graph
        ('  lib.exec_unary_kernel(self, out, "foo");', None),
        (
            "  auto g = LookUpOrCreateCachedGraph<CachedGraph>(key, f);\n  mtl_setArgs(enc, self);",
            None,
        ),  # no gate between them
        (  # an Objective-C block's statements are statements: the gate inside dispatch_sync is found
            "  dispatch_sync(stream->queue(), ^() {\n    @autoreleasepool {\n      if (self.is_contiguous()) {\n"
            "        mtl_setArgs(enc, self, out);\n      } else {\n        MPSGraph* g = make_graph();\n      }\n"
            "    }\n  });",
            "if (self.is_contiguous())",
        ),
        (  # a head that closes its parameters once in each #if/#else branch
            "  if (self.is_contiguous()) { mtl_setArgs(enc, self); }\n  else { MPSGraph* g = nullptr; }",
            "SPLIT if (self.is_contiguous())",
        ),
        (  # a typed block, and "@ autoreleasepool" spelled apart
            "  run(^BOOL(id x) {\n    @ autoreleasepool {\n      if (x) { mtl_setArgs(enc, self); }\n"
            "      else { MPSGraph* g = nullptr; }\n    }\n    return YES;\n  });",
            "if (x)",
        ),
    ],
)
def test_mps019_cases(tmp_path, body, gate):
    mm = MM.format(body=body)
    if gate and gate.startswith("SPLIT "):
        gate = gate[len("SPLIT ") :]
        mm = mm.replace(
            "Tensor foo_mps(const Tensor& self) {",
            "Tensor foo_mps(const Tensor& self\n#if A\n  , int x)\n#else\n  )\n#endif\n{",
        )
        assert "#else" in mm
    root = _tree(tmp_path, mm=mm)
    got = _codes(root, "MPS019")
    assert (got[0][1].split("gated by ")[1].split(" (graph")[0] if got else None) == gate


REDUCE = """
kernel void k(device float* x, uint lid [[thread_position_in_threadgroup]], uint n [[threads_per_threadgroup]]) {{
  threadgroup float buf[64];
  buf[lid] = x[lid];
  for (uint s = n / 2; s > 0; {step}) {{
    if (lid < s) buf[lid] += buf[lid + s];
    {barrier}
  }}
  x[0] = buf[0];
}}
"""


@pytest.mark.parametrize(
    "step,barrier,c10,reported",
    [
        ("s >>= 1", "threadgroup_barrier(mem_flags::mem_threadgroup);", True, True),
        ("s /= 2", "threadgroup_barrier(mem_flags::mem_threadgroup);", True, True),
        ("s >>= 1", "threadgroup_barrier(mem_flags::mem_threadgroup);", False, False),  # tree has no helper
        ("s -= 1", "threadgroup_barrier(mem_flags::mem_threadgroup);", True, False),  # not halving
        ("s >>= 1", "", True, False),  # no barrier: not a threadgroup reduction
    ],
)
def test_mps020_cases(tmp_path, step, barrier, c10, reported):
    root = _tree(tmp_path, REDUCE.format(step=step, barrier=barrier), c10=c10)
    assert bool(_codes(root, "MPS020")) is reported


OFFSET = """
kernel void k(constant float* x, device float* out, constant uint& n, constant array<long, 4>& strides, constant uint& nb,
              uint3 pos [[thread_position_in_grid]], uint lid [[thread_position_in_threadgroup]]) {{
  {decl}
  out[{use}] = x[0];
}}
"""


@pytest.mark.parametrize(
    "decl,use,reported",
    [
        ("uint off = pos.z * n * n;", "off + pos.x", True),
        ("int off = pos.y * strides[1];", "off", True),
        ("long off = pos.z * n * n;", "off + pos.x", False),  # 64-bit
        ("uint off = uint(size_t(pos.z) * n * n);", "off", False),  # 64-bit arithmetic
        ("uint row = pos.y * nb;", "(row + 1) * n", False),  # a block's row index, multiplied again
        ("uint off = lid * n * n;", "off", False),  # a threadgroup position is small
        ("uint off = pos.z * n * n;", "0", False),  # never indexes a buffer
    ],
)
def test_mps021_cases(tmp_path, decl, use, reported):
    root = _tree(tmp_path, OFFSET.format(decl=decl, use=use))
    assert bool(_codes(root, "MPS021")) is reported


def test_real_260_tree_findings():
    """Hand-reviewed (see the README): every one a true finding."""
    res = lint_tree(load_tree(pytorch_260_root()), Config(select=list(CODES)))
    got = sorted((f.code, f.path.rsplit("/", 1)[-1], f.line) for f in res.findings)
    assert got == [
        ("MPS016", "FusedOptimizerOps.metal", 108),  # amsgrad max(max_exp_avg_sq, exp_avg_sq)
        ("MPS019", "BinaryOps.mm", 386),  # mul: complex_mul_out Metal path beside the graph
        ("MPS019", "BitwiseOps.mm", 263),  # bitwise_not: Bool goes to the graph
        ("MPS019", "LinearAlgebra.mm", 199),  # mm: use_metal_mm
        ("MPS019", "Quantized.mm", 127),  # int8 mm: graph kept under #if 1 / #else
    ]


def test_real_270a0_tree_findings():
    """Hand-reviewed (see the README): every one a true finding."""
    res = lint_tree(load_tree(pytorch_270a0_root()), Config(select=list(CODES)))
    got = sorted((f.code, f.path.rsplit("/", 1)[-1], f.line) for f in res.findings)
    assert got == [
        ("MPS016", "FusedOptimizerOps.metal", 108),
        ("MPS017", "LinearAlgebra.metal", 128),  # simd_sum under `if (linear_tid < 8)` in blockReduceSum
        ("MPS017", "LinearAlgebra.metal", 201),  # barriers after thread 0's `return` in factorDiagonalBlock
        ("MPS017", "LinearAlgebra.metal", 228),
        ("MPS019", "BinaryOps.mm", 387),
        ("MPS019", "BitwiseOps.mm", 219),
        ("MPS019", "LinearAlgebra.mm", 437),
        ("MPS019", "LinearAlgebra.mm", 836),  # bmm: integral dtypes go to the Metal kernel
        ("MPS019", "Quantized.mm", 127),
        ("MPS021", "LinearAlgebra.metal", 77),  # naive_bmm batch offsets
        ("MPS021", "LinearAlgebra.metal", 78),
        ("MPS021", "LinearAlgebra.metal", 150),  # Cholesky batch offsets bid.x * N * N
        ("MPS021", "LinearAlgebra.metal", 260),
        ("MPS021", "LinearAlgebra.metal", 355),
    ]
    fix = next(f for f in res.findings if f.code == "MPS016").fix
    assert fix is not None and [e.replacement for e in fix.edits] == [
        "c10::metal::max",
        "#include <c10/metal/utils.h>\n",
    ]


def test_status_graph_cache_inventory_and_compare(tmp_path):
    import json

    p = run_cli("status", "--root", str(REVIEW), "--graph-cache", "--format", "json")
    assert p.returncode == 0, p.stderr
    assert run_cli("status", "--root", str(REVIEW), "--graph-cache", "--format", "html").returncode == 2
    assert json.loads(p.stdout) == [
        {"function": "review_max_mps", "where": f"{OPS}/Review.mm:10", "overloads": ["review_max"]}
    ]
    after = tmp_path / "after"
    shutil.copytree(REVIEW, after)
    mm = after / OPS / "Review.mm"
    mm.write_text(mm.read_text().replace("LookUpOrCreateCachedGraph", "lookup_gone"))
    p = run_cli("status", "--root", str(after), "--graph-cache", "--compare", str(REVIEW))
    assert p.stdout.splitlines()[:2] == [
        "graph-cache sites: 1 -> 0",
        f"  removed  review_max_mps  ({OPS}/Review.mm:10, 1 overloads)",
    ]


def test_graph_cache_inventory_on_270a0():
    from migrate.index import Index
    from migrate.status.graph_cache import inventory

    sites = {s.function: s for s in inventory(Index(load_tree(pytorch_270a0_root())))}
    assert len(sites) == 122
    assert sites["mm_out_mps_impl"].overloads == ("mm", "mm.out")
    assert sites["mm_out_mps_impl"].where == "aten/src/ATen/native/mps/operations/LinearAlgebra.mm:437"
    assert {"add.Tensor", "atan2.out"} <= set(sites["binaryOpTensor"].overloads)
    assert "LookUpOrCreateCachedGraph" not in sites  # the cache itself is no site


def test_mps016_fix_adds_the_include_once(tmp_path):
    src = (
        "#include <metal_stdlib>\nusing namespace metal;\n"
        "kernel void k(device float* x, constant float* y, uint i [[thread_position_in_grid]]) {\n"
        "  x[i] = max(x[i], 0.0f);\n  x[i] = min(x[i], y[i]);\n}\n"
    )
    root = _tree(tmp_path, src)
    proc = run_cli("lint", str(root), "--select", "MPS016", "--fix", "--unsafe-fixes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (root / KERNELS / "K.metal").read_text()
    assert text.startswith("#include <c10/metal/utils.h>\n#include <metal_stdlib>\n")
    assert text.count("c10/metal/utils.h") == 1
    assert "x[i] = c10::metal::max(x[i], 0.0f);" in text and "x[i] = c10::metal::min(x[i], y[i]);" in text


# ---------------------------------------------------------------- exact findings, in process
# (bench/mutation.py's review group runs its mutants against these: every field of a finding is pinned)


def exact(root: Path, *codes: str, only: list[str] | None = None) -> list[tuple]:
    """(code, file name, line, column, end line, end column, kernel, message, fix) of every finding of ``codes``
    (in the files ``only`` names, when given); a fix as (safe, description, its edits as (file name, start, end,
    replacement))."""
    res = lint_tree(load_tree(root), Config(select=[*codes, "MPS900"]), only)
    return [
        (
            f.code,
            Path(f.path).name,
            f.line,
            f.column,
            f.end_line,
            f.end_column,
            f.kernel,
            f.message,
            None
            if f.fix is None
            else (
                f.fix.safe,
                f.fix.description,
                tuple((Path(e.path).name, e.start, e.end, e.replacement) for e in f.fix.edits),
            ),
        )
        for f in res.findings
    ]


def test_fixture_findings_in_process():
    assert exact(REVIEW, *CODES) == [
        (
            "MPS016",
            "Review.metal",
            10,
            12,
            10,
            21,
            "review_max_functor::operator()",
            "max(a, b) in review_max_functor::operator() drops NaN on floating-point data (use c10::metal::max)",
            (False, "use c10::metal::max", (("Review.metal", 320, 323, "c10::metal::max"),)),
        ),
        (
            "MPS017",
            "Review.metal",
            41,
            16,
            41,
            24,
            "lane_sum_bad",
            "simd_sum in lane_sum_bad is reached by part of its SIMD group only: `if (first == 0)`, on first (from lane"
            " [[thread_index_in_simdgroup]])",
            None,
        ),
        (
            "MPS017",
            "Review.metal",
            64,
            3,
            64,
            22,
            "barrier_after_return",
            "threadgroup_barrier in barrier_after_return is reached by part of its threadgroup only: after the `return`"
            " at line 62 under `(tid >= n)`, on tid [[thread_position_in_threadgroup]]",
            None,
        ),
        ("MPS018", "Review.metal", 79, 12, 79, 21, None, "fast::exp: " + FAST, None),
        (
            "MPS020",
            "Review.metal",
            94,
            3,
            94,
            6,
            "review_sum_by_hand",
            "review_sum_by_hand reduces threadgroup array shared by hand (stride s halves each step);"
            " c10/metal/reduction_utils.h of this tree provides threadgroup_sum",
            None,
        ),
        (
            "MPS021",
            "Review.metal",
            109,
            3,
            109,
            36,
            "copy_rows_narrow",
            "uint offset = pos.y * rows * cols: 32-bit element offset offset in copy_rows_narrow (pos.y * rows * cols)"
            " indexes a buffer at line 110; it wraps past 2^32 elements",
            None,
        ),
        (
            "MPS019",
            "Review.mm",
            10,
            1,
            19,
            2,
            "review_max_mps",
            "review_max_mps keeps an MPSGraph path beside its Metal kernel, gated by if (self.is_contiguous()) (graph"
            " at line 16: LookUpOrCreateCachedGraph)",
            None,
        ),
    ]


FAST = "fast math in a kernel (error compounds in training)"
NAN = "drops NaN on floating-point data"
UTILS_EDIT = "#include <c10/metal/utils.h>\n"


def test_mps016_qualified_calls_and_where_the_include_goes(tmp_path):
    src = (
        "// no c10/metal include here\n#include <metal_stdlib>\nusing namespace metal;\n\n"
        "kernel void k1(device float* out [[buffer(0)]], constant float* a [[buffer(1)]],\n"
        "               uint tid [[thread_position_in_grid]]) {\n"
        "  out[tid] = ::metal::fmin(a[tid], out[tid]);\n"
        "  out[tid] = metal::max(out[tid], a[tid + 1]);\n}\n"
    )
    include = ("K.metal", 29, 29, UTILS_EDIT)  # before the first #include, after the comment
    assert exact(_tree(tmp_path, src), "MPS016") == [
        (
            "MPS016",
            "K.metal",
            7,
            14,
            7,
            45,
            "k1",
            f"::metal::fmin(a[tid], out[tid]) in k1 {NAN} (use c10::metal::min)",
            (False, "use c10::metal::min", (("K.metal", 226, 239, "c10::metal::min"), include)),
        ),
        (
            "MPS016",
            "K.metal",
            8,
            14,
            8,
            46,
            "k1",
            f"metal::max(out[tid], a[tid + 1]) in k1 {NAN} (use c10::metal::max)",
            (False, "use c10::metal::max", (("K.metal", 272, 282, "c10::metal::max"), include)),
        ),
    ]


def test_mps016_no_include_when_a_c10_metal_header_brings_utils(tmp_path):
    src = (
        "kernel void k2(device half* out, uint tid [[thread_position_in_grid]]) {\n"
        "  out[tid] = fmax(out[tid], out[tid + 1]);\n}\n#include <c10/metal/special.h>\n"
    )
    root = _tree(tmp_path, src)
    (root / "c10/metal/special.h").write_text("#pragma once\n#include <c10/metal/utils.h>\n")
    expected = [
        (
            "MPS016",
            "K.metal",
            2,
            14,
            2,
            42,
            "k2",
            f"fmax(out[tid], out[tid + 1]) in k2 {NAN} (use c10::metal::max)",
            (False, "use c10::metal::max", (("K.metal", 86, 90, "c10::metal::max"),)),
        )
    ]
    assert exact(root, "MPS016") == expected
    (root / "c10/metal/special.h").write_text("#pragma once\n")  # no longer: it goes before the first #include
    assert exact(root, "MPS016") == [
        expected[0][:8] + ((False, "use c10::metal::max", expected[0][8][2] + (("K.metal", 118, 118, UTILS_EDIT),)),)
    ]


INT_FUNCTOR = (
    "struct int_max_functor {\n  template <typename T>\n  T operator()(const T a, const T b) {\n    return max(a, b);\n"
    "  }\n};\nREGISTER_BINARY_OP(int_max, int, int);\nREGISTER_BINARY_OP(int_max, DTYPE, DTYPE);\n"
    'template [[host_name("g_float")]] kernel void g<float>(device float*);\n'
)


@pytest.mark.parametrize("dtype, reported", [("long", False), ("float", True)])
def test_mps016_functor_dtypes_are_its_registrations(tmp_path, dtype, reported):
    """A functor registered for integer dtypes only is not floating, though the file instantiates a float template."""
    found = exact(_tree(tmp_path, INT_FUNCTOR.replace("DTYPE", dtype)), "MPS016")
    assert [f[:8] for f in found] == (
        [
            (
                "MPS016",
                "K.metal",
                4,
                12,
                4,
                21,
                "int_max_functor::operator()",
                f"max(a, b) in int_max_functor::operator() {NAN} (use c10::metal::max)",
            )
        ]
        if reported
        else []
    )


MPS017_SRC = """kernel void else_branch(constant float* x [[buffer(0)]], device float* out [[buffer(1)]],
                        uint lane [[thread_index_in_simdgroup]]) {
  float v = x[lane];
  if (lane == 0) {
    out[0] = v;
  } else {
    out[1] = simd_max(v);
  }
}

float lane_total(float v) {
  return simd_sum(v);
}

kernel void through_helper(constant float* x [[buffer(0)]], device float* out [[buffer(1)]],
                           uint lane [[thread_index_in_simdgroup]]) {
  while (lane < 4) {
    out[lane] = lane_total(x[lane]);
  }
}

kernel void helper_everywhere(constant float* x [[buffer(0)]], device float* out [[buffer(1)]],
                              uint lane [[thread_index_in_simdgroup]]) {
  out[lane] = lane_total(x[lane]);
}

kernel void exit_then_barrier(device float* x [[buffer(0)]], uint tid [[thread_position_in_threadgroup]]) {
  if (tid > 3) return;
  threadgroup_barrier(mem_flags::mem_threadgroup);
}
"""


def test_mps017_else_branches_helpers_and_early_exits(tmp_path):
    lane = "on lane [[thread_index_in_simdgroup]]"
    assert exact(_tree(tmp_path, MPS017_SRC), "MPS017") == [
        (
            "MPS017",
            "K.metal",
            7,
            14,
            7,
            22,
            "else_branch",
            f"simd_max in else_branch is reached by part of its SIMD group only: else of `if (lane == 0)`, {lane}",
            None,
        ),
        (
            "MPS017",
            "K.metal",
            18,
            17,
            18,
            27,
            "through_helper",
            "lane_total (which reaches simd_sum) in through_helper is reached by part of its SIMD group only:"
            f" `while (lane < 4)`, {lane}",
            None,
        ),
        (
            "MPS017",
            "K.metal",
            29,
            3,
            29,
            22,
            "exit_then_barrier",
            "threadgroup_barrier in exit_then_barrier is reached by part of its threadgroup only: after the `return` at"
            " line 28 under `(tid > 3)`, on tid [[thread_position_in_threadgroup]]",
            None,
        ),
    ]


MPS018_SRC = """#pragma METAL fp math_mode(fast)
kernel void maths(device float* x [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  x[tid] = metal::fast::exp(x[tid]) + ::metal::fast::sin(x[tid]);
  x[tid] += ::fast::cos(x[tid]) + fast::tan(x[tid]) + precise::exp(x[tid]);
}
#pragma METAL fp fast_math
"""


def test_mps018_every_spelling_after_a_source_without_any(tmp_path):
    root = _tree(tmp_path, MPS018_SRC)
    (root / KERNELS / "A.metal").write_text("kernel void plain(device float* x [[buffer(0)]]) {\n  x[0] = 1;\n}\n")
    assert exact(root, "MPS018") == [
        ("MPS018", "K.metal", 1, 1, 1, 33, None, f"#pragma METAL fp math_mode(fast): {FAST}", None),
        ("MPS018", "K.metal", 3, 12, 3, 28, None, f"metal::fast::exp: {FAST}", None),
        ("MPS018", "K.metal", 3, 39, 3, 57, None, f"::metal::fast::sin: {FAST}", None),
        ("MPS018", "K.metal", 4, 13, 4, 24, None, f"::fast::cos: {FAST}", None),
        ("MPS018", "K.metal", 4, 35, 4, 44, None, f"fast::tan: {FAST}", None),
        ("MPS018", "K.metal", 6, 1, 6, 27, None, f"#pragma METAL fp fast_math: {FAST}", None),
    ]


MPS020_SRC = """kernel void halves(constant float* x [[buffer(0)]], device float* out [[buffer(1)]],
                   threadgroup float* shared [[threadgroup(0)]],
                   uint lid [[thread_position_in_threadgroup]], uint n [[threads_per_threadgroup]]) {
  for (uint a = n / 2; a > 0; a /= 2) {
    shared[lid] = max(shared[lid], shared[lid + a]);
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  uint b = n;
  while (b > 1) {
    b = b >> 1;
    shared[lid] += shared[b + lid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  for (uint c = n; c > 1; c = c / 2) {
    shared[lid] += shared[lid + c];
  }
  for (uint d = n; d > 1; d -= 1) {
    shared[lid] += shared[lid + d];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  for (uint e = n; e > 1; e >>= 1) {
    out[lid] += shared[lid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
}
"""


def test_mps020_halving_strides_only_with_a_barrier_and_the_array_indexed_by_them(tmp_path):
    """a /= 2 and b = b >> 1 are reported; c has no barrier, d does not halve, e indexes no array."""
    helper = "c10/metal/reduction_utils.h of this tree provides threadgroup_sum"
    assert exact(_tree(tmp_path, MPS020_SRC), "MPS020") == [
        (
            "MPS020",
            "K.metal",
            4,
            3,
            4,
            6,
            "halves",
            f"halves reduces threadgroup array shared by hand (stride a halves each step); {helper}",
            None,
        ),
        (
            "MPS020",
            "K.metal",
            9,
            3,
            9,
            8,
            "halves",
            f"halves reduces threadgroup array shared by hand (stride b halves each step); {helper}",
            None,
        ),
    ]


MPS021_SRC = """kernel void offsets(constant float* x [[buffer(0)]], device float* out [[buffer(1)]],
                    constant packed_uint3& strides [[buffer(2)]], constant uint& rows [[buffer(3)]],
                    constant uint& cols [[buffer(4)]], uint3 pos [[thread_position_in_grid]]) {
  int a = pos.z * strides[0] + pos.y;
  out[a] = x[0];
  uint b = (pos.x + 1) * rows * cols;
  out += b;
  uint c = rows * pos.y * cols;
  device float* p = out + c;
  uint d = pos.y * rows;
  out[d] = x[0];
  uint e = long(pos.y) * rows * cols;
  out[e] = x[0];
  uint f = pos.y * rows * cols;
  float g = f;
}
"""


def test_mps021_offsets_of_a_position_and_two_sizes_or_a_stride_element(tmp_path):
    """a, b, c are reported (a subscript, +=, a pointer sum); d has one size, e a 64-bit cast, f indexes nothing."""
    wraps = "it wraps past 2^32 elements"
    assert exact(_tree(tmp_path, MPS021_SRC), "MPS021") == [
        (
            "MPS021",
            "K.metal",
            4,
            3,
            4,
            37,
            "offsets",
            f"int a = pos.z * strides[0] + pos.y: 32-bit element offset a in offsets (pos.z * strides[0]) indexes a buffer at line 5; {wraps}",
            None,
        ),
        (
            "MPS021",
            "K.metal",
            6,
            3,
            6,
            37,
            "offsets",
            f"uint b = (pos.x + 1) * rows * cols: 32-bit element offset b in offsets (( pos.x + 1 ) * rows * cols) indexes a buffer at line 7; {wraps}",
            None,
        ),
        (
            "MPS021",
            "K.metal",
            8,
            3,
            8,
            31,
            "offsets",
            f"uint c = rows * pos.y * cols: 32-bit element offset c in offsets (rows * pos.y * cols) indexes a buffer at line 9; {wraps}",
            None,
        ),
    ]


MPS019_SRC = """#include <ATen/native/mps/OperationUtils.h>

namespace at::native {
static void graph_path(const Tensor& self) {
  runMPSGraph(getCurrentMPSStream(), nil, nil, nil);
}

Tensor by_macro_mps(const Tensor& self) {
#if USE_METAL_KERNELS
  mtl_setArgs(nil, self);
#else
  runMPSGraph(getCurrentMPSStream(), nil, nil, nil);
#endif
  return self;
}

Tensor by_ifdef_mps(const Tensor& self) {
  mtl_setArgs(nil, self);
#ifdef KEEP_GRAPH
  auto cachedGraph = LookUpOrCreateCachedGraph<MPSUnaryCachedGraph>("k", [&](auto mpsGraph, auto graph) {});
#endif
  return self;
}

Tensor by_else_mps(const Tensor& self, bool fast) {
  if (fast) {
    graph_path(self);
  } else {
    mtl_setArgs(nil, self);
  }
  return self;
}

Tensor by_elif_mps(const Tensor& self) {
#if A
  graph_path(self);
#elif B
  mtl_setArgs(nil, self);
#endif
  return self;
}

Tensor in_a_loop_mps(const Tensor& self, int n) {
  for (int i = 0; i < n; i++) {
    mtl_setArgs(nil, self);
  }
  graph_path(self);
  return self;
}

Tensor both_in_one_statement_mps(const Tensor& self) {
  mtl_setArgs(runMPSGraph, self);
  return self;
}
} // namespace at::native
"""


def test_mps019_names_the_first_condition_that_parts_the_two_paths(tmp_path):
    """#if/#else, #ifdef, else, #elif and loop gates; a helper with only graph markers counts as graph; a statement
    with both kinds of markers and a function with one kind are not reported."""
    root = _tree(tmp_path, c10=False)
    (root / OPS / "Gates.mm").write_text(MPS019_SRC)
    beside = "keeps an MPSGraph path beside its Metal kernel, gated by"
    assert exact(root, "MPS019") == [
        (
            "MPS019",
            "Gates.mm",
            8,
            1,
            15,
            2,
            "by_macro_mps",
            f"by_macro_mps {beside} #if USE_METAL_KERNELS (graph at line 12: runMPSGraph)",
            None,
        ),
        (
            "MPS019",
            "Gates.mm",
            17,
            1,
            23,
            2,
            "by_ifdef_mps",
            f"by_ifdef_mps {beside} #ifdef KEEP_GRAPH (graph at line 20: LookUpOrCreateCachedGraph)",
            None,
        ),
        (
            "MPS019",
            "Gates.mm",
            25,
            1,
            32,
            2,
            "by_else_mps",
            f"by_else_mps {beside} else of if (fast) (graph at line 27: graph_path)",
            None,
        ),
        (
            "MPS019",
            "Gates.mm",
            34,
            1,
            41,
            2,
            "by_elif_mps",
            f"by_elif_mps {beside} #elif of #if A (graph at line 36: graph_path)",
            None,
        ),
        (
            "MPS019",
            "Gates.mm",
            43,
            1,
            49,
            2,
            "in_a_loop_mps",
            f"in_a_loop_mps {beside} for (i < n) (graph at line 47: graph_path)",
            None,
        ),
    ]


KERNEL_MAX = (
    "kernel void k3(device float* out, uint tid [[thread_position_in_grid]]) {\n  out[tid] = max(out[tid], 0.0f);\n}\n"
)


@pytest.mark.parametrize(
    "head, include_at",
    [
        ('#include "c10/metal/utils.h"\n', None),  # quoted: included all the same
        ("#include <c10/metal/missing.h>\n#include <c10/metal/special.h>\n", None),  # an unreadable one is skipped
        ("#define N 4\n#include <metal_stdlib>\n", 12),  # before the first #include, not the first directive
        ("// a comment, then code\n", 24),  # no #include: before the first token
    ],
)
def test_mps016_include_edit_of_each_head(tmp_path, head, include_at):
    root = _tree(tmp_path, head + KERNEL_MAX)
    (root / "c10/metal/special.h").write_text("#pragma once\n#include <c10/metal/utils.h>\n")
    (fix,) = [f[8] for f in exact(root, "MPS016")]
    start = len(head) + KERNEL_MAX.index("max(out")
    edits = (("K.metal", start, start + 3, "c10::metal::max"),)
    assert fix == (
        False,
        "use c10::metal::max",
        edits + ((("K.metal", include_at, include_at, UTILS_EDIT),) if include_at is not None else ()),
    )


MPS017_HELPERS_SRC = """float inner(float v);
float sync_all(float v);

float outer(float v) {
  return inner(v);
}

float inner(float v) {
  return simd_sum(v);
}

float both(float v) {
  float s = simd_max(v);
  return s + sync_all(v);
}

float sync_all(float v) {
  threadgroup_barrier(mem_flags::mem_threadgroup);
  return v;
}

float self_call(float v) {
  return v > 0 ? self_call(v - 1) : v;
}

kernel void callers(constant float* x [[buffer(0)]], device float* out [[buffer(1)]],
                    constant uint& n [[buffer(2)]], uint lane [[thread_index_in_simdgroup]],
                    uint tid [[thread_position_in_threadgroup]]) {
  if (n == 0) {
    return;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lane == 0) {
    out[0] = outer(x[0]);
    out[1] = self_call(x[1]);
  }
  if (tid == 0) {
    out[2] = both(x[2]);
  }
}
"""


def test_mps017_helpers_reach_collectives_through_helpers_and_a_barrier_wins(tmp_path):
    """outer reaches simd_sum through inner (defined after it), both reaches a SIMD collective and, through
    sync_all, a barrier: the barrier's class is named; a self call and a return under a size are not divergent."""
    assert exact(_tree(tmp_path, MPS017_HELPERS_SRC), "MPS017") == [
        (
            "MPS017",
            "K.metal",
            34,
            14,
            34,
            19,
            "callers",
            "outer (which reaches simd_sum) in callers is reached by part of its SIMD group only: `if (lane == 0)`,"
            " on lane [[thread_index_in_simdgroup]]",
            None,
        ),
        (
            "MPS017",
            "K.metal",
            38,
            14,
            38,
            18,
            "callers",
            "both (which reaches threadgroup_barrier) in callers is reached by part of its threadgroup only:"
            " `if (tid == 0)`, on tid [[thread_position_in_threadgroup]]",
            None,
        ),
    ]


MPS019_MORE_SRC = """
#include <ATen/native/mps/OperationUtils.h>

namespace at::native {
static void metal_path(const Tensor& self) {
  mtl_setArgs(nil, self);
}

static void mixed_path(const Tensor& self) {
  mtl_setArgs(nil, self);
  runMPSGraph(getCurrentMPSStream(), nil, nil, nil);
}

Tensor nested_mps(const Tensor& self, bool a, bool b, int n = int{4}) {
  if (a) {
    mtl_setArgs(nil, self);
    runMPSGraph(getCurrentMPSStream(), nil, nil, nil);
    if (b) {
      metal_path(self);
    } else {
      runMPSGraph(getCurrentMPSStream(), nil, nil, nil);
    }
  }
  return self;
}

Tensor ifndef_mps(const Tensor& self) {
#ifndef NO_METAL
  metal_path(self);
#endif
  runMPSGraph(getCurrentMPSStream(), nil, nil, nil);
  return self;
}

Tensor spaced_mps(const Tensor& self) {
#  if   defined(A)  &&   B
  runMPSGraph(getCurrentMPSStream(), nil, nil, nil);
#  endif
  metal_path(self);
  return self;
}

Tensor mixed_helper_mps(const Tensor& self, bool a) {
  if (a) {
    mixed_path(self);
  }
  mtl_setArgs(nil, self);
  return self;
}
} // namespace at::native
"""


def test_mps019_common_conditions_ifndef_spaced_directives_and_helpers(tmp_path):
    """The first condition that parts the paths after a shared one; #ifndef; a directive's spacing normalised;
    a helper with both kinds of markers is neither path (the file starts with a blank line: lines count from 1)."""
    root = _tree(tmp_path, c10=False)
    (root / OPS / "Gates2.mm").write_text(MPS019_MORE_SRC)
    beside = "keeps an MPSGraph path beside its Metal kernel, gated by"
    assert exact(root, "MPS019") == [
        (
            "MPS019",
            "Gates2.mm",
            14,
            1,
            25,
            2,
            "nested_mps",
            f"nested_mps {beside} else of if (b) (graph at line 21: runMPSGraph)",
            None,
        ),
        (
            "MPS019",
            "Gates2.mm",
            27,
            1,
            33,
            2,
            "ifndef_mps",
            f"ifndef_mps {beside} #ifndef NO_METAL (graph at line 31: runMPSGraph)",
            None,
        ),
        (
            "MPS019",
            "Gates2.mm",
            35,
            1,
            41,
            2,
            "spaced_mps",
            f"spaced_mps {beside} #if defined(A) && B (graph at line 37: runMPSGraph)",
            None,
        ),
    ]


def test_mps018_a_word_in_the_first_or_last_token_only_and_host_options_in_scope(tmp_path):
    """The fast-math words of First.metal and Last.metal are in their first and last tokens only (no fast:: call
    to let the source through); a -ffast-math inside a #define; host options in two files, then in one file's scope."""
    root = _tree(tmp_path, c10=False)
    (root / KERNELS / "First.metal").write_text(
        "#pragma METAL fp fast_math\nkernel void a(device float* x [[buffer(0)]]) {\n  x[0] = 1;\n}\n"
    )
    (root / KERNELS / "Last.metal").write_text(
        'kernel void b(device float* x [[buffer(0)]]) {\n  x[0] = 1;\n}\n#define OPTS "-ffast-math"\n'
    )
    (root / OPS / "B.mm").write_text(
        "void compile_b(MTLCompileOptions* options) {\n  options.mathMode = MTLMathModeFast;\n}\n"
    )
    (root / OPS / "A.mm").write_text(
        "void compile_a(MTLCompileOptions* options) {\n  [options setFastMathEnabled:YES];\n  options.mathMode = MTLMathModeFast;\n}\n"
    )
    b = ("MPS018", "B.mm", 2, 11, 2, 37, None, f"mathMode = MTLMathModeFast: {FAST}", None)
    assert exact(root, "MPS018") == [
        ("MPS018", "First.metal", 1, 1, 1, 27, None, f"#pragma METAL fp fast_math: {FAST}", None),
        ("MPS018", "Last.metal", 4, 15, 4, 26, None, f"-ffast-math: {FAST}", None),
        ("MPS018", "A.mm", 2, 12, 2, 34, None, f"setFastMathEnabled:YES: {FAST}", None),
        ("MPS018", "A.mm", 3, 11, 3, 37, None, f"mathMode = MTLMathModeFast: {FAST}", None),
        b,
    ]
    assert exact(root, "MPS018", only=[f"{OPS}/B.mm"]) == [b]


MPS021_TERMS_SRC = """kernel void terms(constant float* x [[buffer(0)]], device float* out [[buffer(1)]],
                  constant uint& rows [[buffer(2)]], constant uint& cols [[buffer(3)]],
                  constant uint* idx [[buffer(4)]], uint2 pos [[thread_position_in_grid]]) {
  uint a = pos.y * rows * cols;
  out[a * 2] = x[0];
  uint b = pos.y * rows * cols;
  out[2 * b] = x[0];
  uint c = pos.y * rows * cols;
  out[idx[c]] = x[0];
  uint d = pos.y * rows * cols;
  out[(d)] = x[0];
  uint e = pos.y * rows * cols;
  out[pos.x + e] = x[0];
  uint f = pos.y * (rows + 1) * cols;
  out[f] = x[0];
  uint g = pos[1] * rows * cols;
  out[g - 1] = x[0];
  uint h = rows * cols;
  out[h] = x[0];
  unsigned i2 = pos.y * rows * cols;
  out[i2, 0] = x[0];
  uint j = pos.y * rows * cols;
  out[(j) * 2] = x[0];
  uint k = pos.y * rows * cols;
  out[min(k, 4u)] = x[0];
  uint m = pos.y * rows * cols;
  out[(pos.x + (m))] = x[0];
  uint n = pos.y * rows * cols;
  out[(uint)(n) - 1] = x[0];
  uint p2 = pos.y * rows * cols;
  out[(p2 / 2)] = x[0];
}
"""


def test_mps021_an_offset_must_be_a_term_of_the_subscript(tmp_path):
    """Reported: c (a term of another buffer's subscript), d, m and n (in parentheses that are terms themselves:
    a group, nested groups, a cast's operand), e, f (a parenthesised size), g (a subscripted position), i2
    (unsigned); not: a and b (multiplied), j (a group multiplied), k (a call's argument), p2 (divided inside a
    group), h (no position)."""

    def finding(line: int, end: int, decl: str, var: str, product: str) -> tuple:
        return (
            "MPS021",
            "K.metal",
            line,
            3,
            line,
            end,
            "terms",
            f"{decl}: 32-bit element offset {var} in terms ({product}) indexes a buffer at line {line + 1};"
            " it wraps past 2^32 elements",
            None,
        )

    assert exact(_tree(tmp_path, MPS021_TERMS_SRC), "MPS021") == [
        finding(8, 31, "uint c = pos.y * rows * cols", "c", "pos.y * rows * cols"),
        finding(10, 31, "uint d = pos.y * rows * cols", "d", "pos.y * rows * cols"),
        finding(12, 31, "uint e = pos.y * rows * cols", "e", "pos.y * rows * cols"),
        finding(14, 37, "uint f = pos.y * (rows + 1) * cols", "f", "pos.y * ( rows + 1 ) * cols"),
        finding(16, 32, "uint g = pos[1] * rows * cols", "g", "pos[1] * rows * cols"),
        finding(20, 36, "unsigned i2 = pos.y * rows * cols", "i2", "pos.y * rows * cols"),
        finding(26, 31, "uint m = pos.y * rows * cols", "m", "pos.y * rows * cols"),
        finding(28, 31, "uint n = pos.y * rows * cols", "n", "pos.y * rows * cols"),
    ]


MPS021_MORE_SRC = """kernel void more_terms(constant float* x [[buffer(0)]], device float* out [[buffer(1)]],
                       constant uint& rows [[buffer(2)]], constant uint& cols [[buffer(3)]],
                       constant uint* idx [[buffer(4)]], uint2 pos [[thread_position_in_grid]]) {
  uint w = long(pos.y) * rows * cols;
  out[w] = x[0];
  uint a = pos.y * rows * cols;
  out[(pos.x) + a] = x[0];
  uint b = pos.y * rows * cols;
  out[idx[0] + b] = x[0];
  uint c = pos.y * rows * cols;
  out[rows / c] = x[0];
  uint d = pos.y * rows * cols;
  out[rows % d] = x[0];
  uint e = pos.y * rows * cols;
  out[e / 2] = x[0];
  uint f = pos.y * rows * cols;
  out[f % 4] = x[0];
  float tmp[4];
  uint g = pos.y * rows * cols;
  tmp[g] = 1;
  uint h = pos.y * rows * cols;
  foo(out + 1, h);
  uint i = pos.y * rows * cols;
  device float* p = (out + 1) + i;
  uint j = 2 * pos.y * rows * cols;
  out[j] = x[0];
  uint k = pos.y * rows * cols * 2;
  out[k] = x[0];
  thread uint& m = pos.y * rows * cols;
  out[m] = x[0];
  threadgroup uint n = pos.y * rows * cols;
  out[n] = x[0];
  constexpr uint q = pos.y * rows * cols;
  out[q] = x[0];
}
"""


def test_mps021_terms_after_groups_and_what_is_no_offset(tmp_path):
    """Reported: a and b (terms after a parenthesised group and a subscript), j and k (a number among the factors);
    not: w (a 64-bit cast, before the others), c to f (divided or a remainder), g (a local array), h (after a
    comma), i (after a closing parenthesis), m, n, q (a reference, threadgroup, constexpr)."""

    def finding(line: int, end: int, var: str, product: str) -> tuple:
        return (
            "MPS021",
            "K.metal",
            line,
            3,
            line,
            end,
            "more_terms",
            f"uint {var} = {product}: 32-bit element offset {var} in more_terms ({product}) indexes a buffer at line"
            f" {line + 1}; it wraps past 2^32 elements",
            None,
        )

    assert exact(_tree(tmp_path, MPS021_MORE_SRC), "MPS021") == [
        finding(6, 31, "a", "pos.y * rows * cols"),
        finding(8, 31, "b", "pos.y * rows * cols"),
        finding(25, 35, "j", "2 * pos.y * rows * cols"),
        finding(27, 35, "k", "pos.y * rows * cols * 2"),
    ]


MPS020_LATE_SRC = """kernel void late(constant float* x [[buffer(0)]], device float* buf [[buffer(1)]],
                 threadgroup float* shared [[threadgroup(0)]],
                 uint lid [[thread_position_in_threadgroup]], uint n [[threads_per_threadgroup]]) {
  for (uint a = n; a > 1; a -= 1) {
    shared[lid] += shared[lid + a];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  for (uint b = n; b > 1; b >>= 1) {
    shared[lid] += shared[lid + b];
  }
  for (uint c = n; c > 1; c >>= 2) {
    shared[lid] += shared[lid + c];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  for (uint d = n; d > 1; d = d / 2) {
    shared[lid] += shared[lid + d];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  uint s = n;
  while (s > 1) {
    shared[lid] += shared[lid + s];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    shared[0] += 0, s >>= 1;
  }
}

kernel void device_only(device float* buf [[buffer(0)]], uint lid [[thread_position_in_threadgroup]],
                        uint n [[threads_per_threadgroup]]) {
  for (uint s = n / 2; s > 0; s >>= 1) {
    buf[lid] += buf[lid + s];
    threadgroup_barrier(mem_flags::mem_device);
  }
}
"""
REDUCTION_TWO_HELPERS = """#pragma once
namespace c10 {
namespace metal {
template <typename T>
T threadgroup_sum(threadgroup T* data, unsigned size) {
  return data[0];
}
template <typename T>
T threadgroup_max(threadgroup T* data, unsigned size) {
  return data[0];
}
} // namespace metal
} // namespace c10
"""


def test_mps020_qualifying_loops_after_others_and_every_helper_named(tmp_path):
    """a does not halve, b has no barrier, c shifts by 2: not reported, and d (d = d / 2) and s (halved after a comma,
    in a while loop) after them are; device_only's array is no threadgroup array.  The header's two helpers are named."""
    root = _tree(tmp_path, MPS020_LATE_SRC)
    (root / "c10/metal/reduction_utils.h").write_text(REDUCTION_TWO_HELPERS)
    helpers = "c10/metal/reduction_utils.h of this tree provides threadgroup_max, threadgroup_sum"
    assert exact(root, "MPS020") == [
        (
            "MPS020",
            "K.metal",
            15,
            3,
            15,
            6,
            "late",
            f"late reduces threadgroup array shared by hand (stride d halves each step); {helpers}",
            None,
        ),
        (
            "MPS020",
            "K.metal",
            20,
            3,
            20,
            8,
            "late",
            f"late reduces threadgroup array shared by hand (stride s halves each step); {helpers}",
            None,
        ),
    ]


def test_mps018_relaxed_alone_member_names_and_sources_cut_short(tmp_path):
    """Relaxed.metal has no "fast" anywhere; Members.metal names fast:: after ``.``, ``->`` and after a variable
    called metal; Empty.metal has no token, Cut.metal ends in ``fast ::``, Tail.metal starts with metal::fast:: and
    ends with a call's last token, Start.metal starts with fast:: at its first byte."""
    root = _tree(tmp_path, c10=False)
    files = {
        "Relaxed.metal": "#pragma METAL fp math_mode(relaxed)\nkernel void a(device float* x) {\n  x[0] = 1;\n}\n",
        "Members.metal": "kernel void m(device float* x, device S* p, S s, float metal) {\n"
        "  x[0] = s.fast::exp(x[1]) + p->fast::exp(x[2]) + max(metal, fast::exp(x[3]));\n}\n",
        "Empty.metal": "",
        "Cut.metal": "// cut\nfast::",
        "Tail.metal": "metal::fast::sin(x[0]) + fast::exp",
        "Start.metal": "fast::cos(x)",
    }
    for name, text in files.items():
        (root / KERNELS / name).write_text(text)
    assert exact(root, "MPS018") == [
        ("MPS018", "Members.metal", 2, 62, 2, 71, None, f"fast::exp: {FAST}", None),
        ("MPS018", "Relaxed.metal", 1, 1, 1, 36, None, f"#pragma METAL fp math_mode(relaxed): {FAST}", None),
        ("MPS018", "Start.metal", 1, 1, 1, 10, None, f"fast::cos: {FAST}", None),
        ("MPS018", "Tail.metal", 1, 1, 1, 17, None, f"metal::fast::sin: {FAST}", None),
        ("MPS018", "Tail.metal", 1, 26, 1, 35, None, f"fast::exp: {FAST}", None),
    ]


MPS020_OUTSIDE_SRC = """kernel void outside(constant float* x [[buffer(0)]], threadgroup float* shared [[threadgroup(0)]],
                    uint lid [[thread_position_in_threadgroup]], uint n [[threads_per_threadgroup]]) {
  for (uint s = n / 2; s > 0; s >>= 1) {
    shared[lid] = x[lid + s] + shared[lid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
}
"""


def test_mps020_a_stride_outside_the_threadgroup_arrays_subscripts_is_no_reduction(tmp_path):
    """The halving stride indexes a device buffer only: the threadgroup array is written per thread, not reduced."""
    assert exact(_tree(tmp_path, MPS020_OUTSIDE_SRC), "MPS020") == []


def test_statements_of_an_objective_c_block_and_an_exclusive_or_before_braces():
    """walk: a block literal's body is walked as statements (the call around it split at the block); ``^`` before
    ``T{...}`` or a parenthesised operand is an exclusive or, and its statement stays whole."""
    from migrate.read.metal_body import Function, lex, match_close, walk

    def statements(body: str) -> list[str]:
        text = "void f() {\n" + body + "\n}\n"
        toks = lex(text, 0, len(text))
        fn = Function("f", None, (), False, frozenset(), (), (5, match_close(toks, 4)), 0)
        return [" ".join(t.text for t in toks[st.lo : st.hi]) for st in walk(toks, fn)]

    assert statements("q(s, ^{ a = 1; b = 2; }); c = 3;") == ["q ( s ,", "a = 1", "b = 2", ")", "c = 3"]
    assert statements("q(^(int i) { a = i; }, 2);") == ["q (", "a = i", ", 2 )"]
    assert statements("uint x = y ^ uint{3}; z = w ^ (v) + 1;") == ["uint x = y ^ uint { 3 }", "z = w ^ ( v ) + 1"]
