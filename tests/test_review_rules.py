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
    ],
)
def test_mps019_cases(tmp_path, body, gate):
    root = _tree(tmp_path, mm=MM.format(body=body))
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
