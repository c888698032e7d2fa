"""port on fixtures/port: golden patches (reviewed unified diffs, compared exactly), --skeleton, alpha kernels,
and the generated kernels checked against the old MPSGraph graphs through verify."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch

from migrate.cli import main
from migrate.device import get_backend
from migrate.index import Index
from migrate.lint import lint_tree
from migrate.port.dag import evaluate_with_torch
from migrate.port.idioms import apply as apply_idioms
from migrate.port.locate import family_impls, graph_dag
from migrate.tree import load_tree
from tests.device.indexing_host import METAL
from tests.helpers import FIXTURES, KERNELS, OPS, YAML, compile_kernel_files

PORT = FIXTURES / "port"
GOLDEN = PORT / "golden"
# family -> what the golden shows (unary, binary, alpha, comparison, logical, multi-node graph)
PORT_GOLDENS = {
    "add": "binary alpha (scalar placeholder in a cached-graph lambda)",
    "clamp_min": "optional bounds: the shared clamp helper specialised for a present min and an absent max; "
    "its Tensor overload rides maximum_stub; the stub's header included",
    "atan2": "binary, block passed to the binary helper",
    "clamp": "ternary: clamp_stub's REGISTER_TERNARY_OP kernel over (self, min, max), clamp_scalar_stub's parameter "
    "struct, the one-bound stubs rerouted onto their owners' registrations (ported first: PREPARED)",
    "div": "one kernel per stub: rounding_mode picks div_true/div_trunc/div_floor_stub; trunc_divide idiom",
    "copysign": "reroute only: functor and stub exist",
    "exp2": "unary, file-local macro pasting a selector fragment",
    "floor": "unary rounding macro, identity on integers",
    "ge": "comparison, Scalar and Tensor overloads from one macro",
    "hardsigmoid": "multi-node graph in a cached-graph lambda (clamp)",
    "hardtanh_backward": "two run-time scalars: a parameter struct through REGISTER_BINARY_ALPHA_OP (idiom: bounds)",
    "hypot": "multi-node binary block (constants)",
    "leaky_relu": "unary alpha (constant from a Scalar argument)",
    "leaky_relu_backward": "binary alpha; operands in the order of the structured meta function's iterator",
    "logaddexp": "multi-node binary block",
    "logical_and": "logical, operands cast to bool, selector pasted across a line break",
    "lt": "comparison macro",
    "nan_to_num": "three optional doubles: struct fields the host computes from them (dtype defaults), "
    "an inline stub type; idiom: infinities replaced once",
    "neg": "unary arithmetic, integers stay integers",
    "sign": "dtype branch: [t dataType] == MPSDataTypeInt64 becomes a per-dtype specialisation",
    "silu": "multi-node graph spelled out step by step",
    "softshrink": "unary alpha (scalar placeholder), nested selects",
    "sqrt": "unary math, integers computed in float",
}
SKELETON_GOLDENS = ("cumsum", "mm")
PREPARED = {"clamp": ("clamp_min", "clamp_max")}  # families a golden's port waits for: ported (--write) first


def copy_tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(PORT, root, ignore=shutil.ignore_patterns("golden"))
    return root


def port(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["port", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_goldens_cover_the_kinds_of_op():
    assert len(PORT_GOLDENS) >= 12
    assert sorted(p.name for p in GOLDEN.iterdir()) == sorted(
        [f"{f}.diff" for f in PORT_GOLDENS] + [f"{f}.skeleton.diff" for f in SKELETON_GOLDENS]
    )


@pytest.mark.parametrize("family", sorted(PORT_GOLDENS))
def test_port_prints_the_golden_patch(tmp_path, capsys, family):
    root = copy_tree(tmp_path)
    for first in PREPARED.get(family, ()):
        assert port(capsys, first, "--root", str(root), "--write")[0] == 0
    rc, out, _ = port(capsys, family, "--root", str(root))
    assert rc == 0
    assert out == (GOLDEN / f"{family}.diff").read_text()


@pytest.mark.parametrize("family", SKELETON_GOLDENS)
def test_skeleton_prints_the_golden_patch(tmp_path, capsys, family):
    root = copy_tree(tmp_path)
    rc, out, _ = port(capsys, family, "--root", str(root), "--skeleton")
    assert rc == 0
    assert out == (GOLDEN / f"{family}.skeleton.diff").read_text()


# ------------------------------------------------------------------ skeleton
@pytest.mark.parametrize(
    "family, selectors, registered",
    [
        ("cumsum", ["cumulativeSumWithTensor:axis:name:"], False),  # cumsum_stub takes no TensorIterator
        ("mm", ["matrixMultiplicationWithPrimaryTensor:secondaryTensor:name:"], False),  # no CPU stub to share
        (
            "softshrink",
            ["mpsGraphScalarPlaceHolder"]
            and ["constantWithScalar:dataType:", "greaterThanWithPrimaryTensor:secondaryTensor:name:"],
            True,
        ),
        ("neg", ["negativeWithTensor:name:"], True),
    ],
)
def test_skeleton_compiles_keeps_the_route_and_breaks_nothing(tmp_path, capsys, family, selectors, registered):
    root = copy_tree(tmp_path)
    before = lint_tree(load_tree(root)).findings
    rc, _, err = port(capsys, family, "--root", str(root), "--skeleton", "--write")
    assert rc == 0 and f"wrote a skeleton for {family}" in err
    assert (root / YAML).read_bytes() == (PORT / YAML).read_bytes()  # no dispatch change
    after = lint_tree(load_tree(root)).findings
    assert any(f.code == "MPS002" and f.overload.startswith(family + ".") for f in after)
    key = lambda f: (f.code, f.message)  # noqa: E731
    assert not Counter(map(key, after)) - Counter(map(key, before))  # no MPS006/MPS007/MPS900 or anything new
    kernel = (
        root / KERNELS / ("UnaryKernel.metal" if family in ("cumsum", "neg", "softshrink") else "BinaryKernel.metal")
    ).read_text()
    todo = kernel[kernel.index(f"struct {family}_functor") :]
    todo = todo[: todo.index("};")]
    assert "TODO(mps-migrate)" in todo and "return T(0); // placeholder" in todo
    positions = [todo.index(s) for s in selectors]
    assert positions == sorted(positions)  # the old graph's selectors, in order
    host = "".join(p.read_text() for p in (root / OPS).glob("*Kernel.mm"))
    assert (f"_stub, &{family}_mps_kernel)" in host or f"REGISTER_UNARY_TI_DISPATCH({family})" in host) == registered
    # the skeleton is valid Metal: the CPU backend compiles it, and its kernels exist
    lib = get_backend("cpu").compile_shader(kernel, opt=0)
    assert hasattr(lib, f"{family}_dense_float_float") or hasattr(lib, f"{family}_dense_scalar_float_float")
    # a port refuses to reroute onto the placeholder
    rc, out, err = port(capsys, family, "--root", str(root))
    assert rc == 2 and out == ""
    if registered:
        assert "still holds the skeleton's TODO(mps-migrate) placeholder" in err


def test_completed_skeleton_is_rerouted(tmp_path, capsys):
    """After the TODO is replaced by a kernel, port reroutes the family without translating its graph."""
    root = copy_tree(tmp_path)
    assert port(capsys, "neg", "--root", str(root), "--skeleton", "--write")[0] == 0
    k = root / KERNELS / "UnaryKernel.metal"
    text = k.read_text()
    start = text.index("struct neg_functor")
    body = text[start : text.index("};", start)]
    k.write_text(
        text.replace(
            body,
            "struct neg_functor {\n  template <typename T>\n  inline T operator()(const T x) {\n    return -x;\n  }\n",
        )
    )
    rc, diff, err = port(capsys, "neg", "--root", str(root), "--write")
    assert rc == 0 and "only rerouting" in err
    assert "CPU, CUDA, MPS: neg_out" in (root / YAML).read_text()
    assert "neg_out_mps" not in (root / OPS / "UnaryOps.mm").read_text()


# ------------------------------------------------------------- alpha kernels
ALPHA = {"leaky_relu": (1, 0.2), "softshrink": (1, 0.5), "add": (2, -1.5)}


@pytest.fixture(scope="module")
def alpha_ports(tmp_path_factory):
    root = tmp_path_factory.mktemp("alpha") / "tree"
    shutil.copytree(PORT, root, ignore=shutil.ignore_patterns("golden"))
    ix = Index(load_tree(root))
    dags = {f: graph_dag(ix, family_impls(ix, f)[0].function) for f in ALPHA}
    for f in ALPHA:
        assert main(["port", f, "--root", str(root), "--write"]) == 0
    libs = compile_kernel_files(root, tmp_path_factory.mktemp("cache"))
    return dags, libs, root


@pytest.mark.parametrize("family", sorted(ALPHA))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=lambda d: METAL[d])
def test_alpha_kernel_matches_the_mpsgraph_reference(alpha_ports, family, dtype):
    dags, libs, _ = alpha_ports
    dag = dags[family]
    arity, alpha = ALPHA[family]
    assert dag.alpha is not None and len(dag.inputs) == arity
    g = torch.Generator().manual_seed(3)
    n = 257
    xs = [(torch.randn(n, generator=g) * 3).to(dtype) for _ in range(arity)]
    xs[0][0] = float("nan")
    t = METAL[dtype]
    out = torch.empty(n, dtype=dtype)
    a = torch.tensor([alpha], dtype=dtype)  # the host passes alpha in the iterator's common dtype
    lib = libs["UnaryKernel" if arity == 1 else "BinaryKernel"]
    getattr(lib, f"{family}_dense_{t}_{t}_{t}")(out, *xs, a, threads=[n], group_size=[64])
    named = {node.name: x for node, x in zip(dag.inputs, xs)}
    named[dag.alpha.name] = alpha
    ref = evaluate_with_torch(dag, named, out_dtype=dtype, opmath=True)  # computed in float, rounded once
    tol = {torch.float32: (1e-6, 1e-6), torch.float16: (1e-3, 1e-3), torch.bfloat16: (8e-3, 8e-3)}[dtype]
    torch.testing.assert_close(out, ref, rtol=tol[0], atol=tol[1], equal_nan=True)
    # and the old graph (op by op in the input dtype) within the dtype's rounding
    old = evaluate_with_torch(dag, named, out_dtype=dtype)
    torch.testing.assert_close(out, old, rtol=4 * tol[0], atol=4 * tol[1] * 3, equal_nan=True)
    cpu = {
        "leaky_relu": lambda x: torch.nn.functional.leaky_relu(x, alpha),
        "softshrink": lambda x: torch.nn.functional.softshrink(x, alpha),
        "add": lambda x, y: torch.add(x, y, alpha=alpha),
    }[family](*xs)
    torch.testing.assert_close(out, cpu, rtol=4 * tol[0], atol=4 * tol[1] * 3, equal_nan=True)


def test_alpha_host_stub_takes_the_scalar(alpha_ports):
    root = alpha_ports[2]
    unary = (root / OPS / "UnaryKernel.mm").read_text()
    assert "static void leaky_relu_mps_kernel(TensorIteratorBase& iter, const Scalar& negative_slope) {" in unary
    assert 'lib.exec_unary_kernel(iter, "leaky_relu", negative_slope);' in unary
    binary = (root / OPS / "BinaryKernel.mm").read_text()
    assert (
        'lib.exec_binary_kernel(iter, "add", alpha);' in binary
        and "REGISTER_DISPATCH(add_stub, &add_mps_kernel)" in binary
    )
    assert "REGISTER_BINARY_ALPHA_OP(add, half, half, half);" in (root / KERNELS / "BinaryKernel.metal").read_text()


# ---------------------------------------------------------- through verify
VERIFIED = ("logaddexp", "neg", "ge", "silu")


def _pipe(tmp_path, family):
    """Exactly the documented pipe: mps-migrate port X --root R | mps-migrate verify X --root R --patch -"""
    root = copy_tree(tmp_path)
    exe = [sys.executable, "-m", "migrate"]
    ported = subprocess.run([*exe, "port", family, "--root", str(root)], capture_output=True, text=True, check=True)
    return subprocess.run(
        [*exe, "verify", family, "--root", str(root), "--patch", "-", "--dtypes", "float32,float16", "--no-opinfo"],
        input=ported.stdout,
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize("family", ["neg", "ge"])
def test_port_piped_into_verify(tmp_path, family):
    p = _pipe(tmp_path, family)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "old-mpsgraph" in p.stdout


def test_port_piped_into_verify_passes_against_cpu_where_the_old_formula_overflowed(tmp_path):
    # the old graph's log(exp(a) + exp(b)) overflows where torch CPU does not; port emits the stable
    # form of rules/port_idioms.yaml, so verify against torch CPU passes (and the old path differed)
    p = _pipe(tmp_path, "logaddexp")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "the old MPSGraph path differed from CPU here" in p.stdout and "got inf" in p.stdout


@pytest.mark.parametrize("family", VERIFIED)
def test_ported_kernel_passes_verify_against_cpu_and_the_old_graph(tmp_path, family):
    """verify (every layout: dense, strided, broadcast, scalars, mixed dtypes) on the ported tree, against the old
    MPSGraph DAG read before the port, rewritten by the idiom table as port emits it (logaddexp's stable form:
    the legacy graph log(exp(a) + exp(b)) overflows where CPU's does not)."""
    from migrate.verify.references import PortReference
    from migrate.verify.run import Options, verify

    root = copy_tree(tmp_path)
    ix = Index(load_tree(root))
    old = apply_idioms(graph_dag(ix, family_impls(ix, family)[0].function), family, root)[0]
    assert main(["port", family, "--root", str(root), "--write"]) == 0
    # the old graph's formula; half is computed in float and rounded once, as the functor (and CPU torch) do --
    # MPSGraph rounded every node to half (tests/test_port_device.py bounds that difference)
    # (computed in the inputs' dtype, then stored in the output dtype, as the castout kernels do)
    opmath = lambda dag, inputs, out: evaluate_with_torch(dag, inputs, None, opmath=True).to(out)  # noqa: E731
    refs = [PortReference(old, opmath, "before the port")]
    opts = Options(dtypes=[torch.float32, torch.float16], opinfo=False)
    report = verify(root, family, None, opts, references=refs)
    ran = sum(c.cases for c in report.cells)
    assert ran > 0 and report.ok, [(c.dtype, c.layout, c.failures, c.stats) for c in report.cells if c.status == "FAIL"]
