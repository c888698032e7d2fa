"""port on the real PyTorch 2.6.0 tree: --list, and ports of real MPSGraph code into modern target files; on the
real 2.7.0a0 tree: div_mode_template's families port and verify."""

from __future__ import annotations

import shutil
from collections import Counter

import pytest
import torch

from migrate.cli import main
from migrate.index import Index
from migrate.lint import lint_tree
from migrate.port.listing import list_families, summary
from migrate.port.idioms import apply as apply_idioms
from migrate.port.locate import family_impls, graph_dag
from migrate.port.patch import plan_port
from migrate.tree import load_tree
from migrate.verify.run import Options, verify
from tests.corpus import pytorch_260_root, pytorch_270a0_root
from tests.helpers import FIXTURES, KERNELS, OPS, YAML, compile_kernel_files, new_after_port
from tests.test_port_device import check_functor

NATIVE = "aten/src/ATen/native"
# real families whose graph code ports (their kernel/host target files come from fixtures/port)
REAL_PORTS = (
    "logaddexp",
    "logaddexp2",
    "hypot",
    "atan2",
    "floor",
    "lt",
    "hardsigmoid",
    "hardswish",
    "mish",
    "silu",
    "frac",
    "expm1",
    "log1p",
    "sigmoid_backward",
)


@pytest.fixture(scope="module")
def real_ix() -> Index:
    return Index(load_tree(pytorch_260_root()))


def test_list_on_the_real_tree(real_ix):
    verdicts = {v.family: v for v in list_families(real_ix)}
    n = Counter(v.status for v in verdicts.values())
    composite = {f for f, v in verdicts.items() if v.detail.startswith("composite: ")}  # no kernel written
    assert composite == {"pixel_shuffle", "pixel_unshuffle"}
    assert len(verdicts) >= 200 and n["portable"] == len(composite)  # 2.6.0's kernel files predate c10/metal
    assert verdicts["sum"].status == "translatable" and verdicts["sum"].construct == "pre-c10/metal kernel file"
    assert n["translatable"] >= 100 and n["blocked"] >= 100  # reductions, padding, resize translate (recipes)
    for fam in REAL_PORTS:
        assert verdicts[fam].status == "translatable", verdicts[fam]
    # 2.6.0's BinaryKernel.metal has neither c10/metal functors nor a macro exporting binary_mps_impl's names
    assert (
        "BinaryKernel.metal defines no (NAME, DTYPE) macro registering the kernels binary_mps_impl launches"
        in verdicts["logaddexp"].detail
    )
    assert "does not exist" in verdicts["floor"].detail  # no kernels/UnaryKernel.metal in 2.6.0
    assert verdicts["cumsum"].status == "blocked"
    assert any(v.construct.endswith("(reduction)") for v in verdicts.values())
    assert verdicts["rsqrt"].status == "translatable"  # the newest macOS's branch of its #ifdef
    # div_mode_template's `([t dataType] & MPSDataTypeFloatBit) != 0` is decided per dtype: an integer arm
    assert verdicts["remainder"].status == "translatable" and "if_dtype<" in verdicts["remainder"].detail
    # one Scalar argument read into the graph is an alpha kernel's alpha; two are not
    assert (
        verdicts["leaky_relu"].status == "translatable" and "mul(self, negative_slope)" in verdicts["leaky_relu"].detail
    )
    assert verdicts["softshrink"].status == "translatable" and "lambd" in verdicts["softshrink"].detail
    assert verdicts["threshold"].construct == "no kernel file"  # its two scalars translate to a struct
    # a non-elementwise graph names every blocking selector, in order
    assert verdicts["cumsum"].detail.startswith(
        "selectors cumulativeSumWithTensor:axis:name: (scan (cumulative op)), cumulativeProductWithTensor:axis:name:"
    )
    text = summary(list(verdicts.values()))
    assert text.startswith(
        f"{len(verdicts)} MPSGraph-routed families: {n['portable']} portable, {n['translatable']} translatable"
    )
    flat = " ".join(text.split())  # the summary wraps its lines
    assert "top blockers: " in flat and "control flow (if) (" in flat  # string switches decided per caller: fewer


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory):
    """The real 2.6.0 yaml and MPSGraph .mm files with modern target files (fixtures/port), ported."""
    real = pytorch_260_root()
    root = tmp_path_factory.mktemp("hybrid") / "tree"
    (root / OPS).mkdir(parents=True)
    (root / KERNELS).mkdir(parents=True)
    shutil.copy(real / YAML, root / YAML)
    for f in ("BinaryOps", "UnaryOps", "Activation"):
        shutil.copy(real / OPS / f"{f}.mm", root / OPS)
    port = FIXTURES / "port"
    for f in ("BinaryKernel", "UnaryKernel"):
        shutil.copy(port / KERNELS / f"{f}.metal", root / KERNELS)
        shutil.copy(port / OPS / f"{f}.mm", root / OPS)
    for f in ("BinaryOps.h", "BinaryOps.cpp", "UnaryOps.h", "UnaryOps.cpp"):
        shutil.copy(port / NATIVE / f, root / NATIVE)
    ix = Index(load_tree(root))
    before = lint_tree(ix.tree).findings
    info = {}
    for fam in REAL_PORTS:
        dag = apply_idioms(graph_dag(ix, family_impls(ix, fam)[0].function), fam, root)[0]  # what port emits
        info[fam] = (dag, plan_port(ix, fam).plan.pairs())
    for fam in REAL_PORTS:
        assert main(["port", fam, "--root", str(root), "--write"]) == 0, fam
    return root, before, info


def test_real_graph_code_ports_and_lints_clean(hybrid):
    root, before, _ = hybrid
    after = lint_tree(load_tree(root)).findings
    assert new_after_port(before, after, REAL_PORTS) == []
    key = lambda f: (f.code, f.message)  # noqa: E731
    gone = Counter(map(key, before)) - Counter(map(key, after))
    rerouted = {m.split()[0] for c, m in gone if c == "MPS002"}
    assert {o.split(".")[0].rstrip("_") for o in rerouted} == set(REAL_PORTS)
    assert not [f for f in after if f.code == "MPS002" and (f.overload or "").split(".")[0].rstrip("_") in REAL_PORTS]
    yaml = (root / YAML).read_text()
    assert "CPU, CUDA, MPS: logaddexp_out" in yaml and "logaddexp_out_mps" not in yaml
    assert "hardswish_mps" not in (root / OPS / "Activation.mm").read_text()  # all three overloads' code went


def test_real_ports_compile_and_match(hybrid, tmp_path_factory):
    root, _, info = hybrid
    libs = compile_kernel_files(root, tmp_path_factory.mktemp("cache"))
    for fam, (dag, pairs) in info.items():
        lib = libs["UnaryKernel" if len(dag.inputs) == 1 else "BinaryKernel"]
        for dtype in (torch.float32, torch.float16, torch.bfloat16):
            check_functor(lib, fam, dag, pairs, dtype)


@pytest.mark.parametrize(
    "family, missing",
    [
        (
            "logaddexp",
            "aten/src/ATen/native/mps/kernels/BinaryKernel.metal defines no (NAME, DTYPE) macro registering "
            "the kernels binary_mps_impl launches",
        ),
        (
            "floor",
            "aten/src/ATen/native/mps/kernels/UnaryKernel.metal does not exist (a tree older than native Metal kernels",
        ),
    ],
)
def test_pre_c10_metal_tree_names_what_is_missing(capsys, family, missing):
    """PyTorch 2.6.0 predates c10/metal and native kernel files for unary ops: one line, exit 2, naming the
    file, or what of the era's conventions the file lacks."""
    root = pytorch_260_root()
    for extra in ((), ("--skeleton",)):
        rc = main(["port", family, "--root", str(root), *extra])
        out, err = capsys.readouterr()
        assert rc == 2 and out == "" and err.count("\n") == 1 and missing in err, err


# ------------------------------------------------------------------ 2.7.0a0: div_mode_template
@pytest.mark.parametrize(
    "family, changes",
    [
        (
            "fmod",
            {
                "fmod_int": "a=16777217, b=10: old graph 6, port 7",
                "fmod_float": "a=5, b=inf: old graph nan, port 5",
            },
        ),
        (
            "remainder",
            {
                "remainder_int": "a=-16777217, b=10: old graph 4, port 3",
                "remainder_fmod": "a=3.4028235e+38, b=-0.5: old graph -inf, port 0",
            },
        ),
    ],
)
def test_div_mode_families_port_and_verify(capsys, family, changes):
    """remainder and fmod pass div_mode_template "floor" / "trunc": its float-bit test of the input is decided per
    dtype, and the port computes as torch CPU does (integers exactly, above 2^24 too), which verify checks
    against torch CPU and the old graph."""
    root = pytorch_270a0_root()
    assert main(["port", family, "--root", str(root)]) == 0
    patch, err = capsys.readouterr()
    for idiom, example in changes.items():
        line = next(x for x in err.splitlines() if f"behaviour change ({idiom})" in x)
        assert line.endswith(example), line
    functor = patch.split(f"struct {family}_functor")[1].split("};")[0]
    assert "is_same_v" not in functor  # each overload keeps only the arm its T takes
    assert "% b" in functor.split("is_integral_v")[1] and "::metal::fmod(" in functor.split("is_integral_v")[0]
    dtypes = [torch.float32, torch.float16, torch.int64, torch.int32, torch.int8, torch.uint8]
    layouts = ["contiguous", "strided", "broadcast", "python_scalar", "cpu_scalar_offset", "mixed_dtype"]
    rep = verify(root, family, (patch, f"<port {family}>"), Options(opinfo=False, dtypes=dtypes, layouts=layouts))
    assert rep.references == ["torch-cpu", "old-mpsgraph"]
    assert [c for c in rep.cells if c.status == "FAIL"] == [], [(c.dtype, c.layout, c.failures) for c in rep.cells]
    ran = {(c.dtype, c.layout) for c in rep.cells if c.cases}
    assert {("int64", "contiguous"), ("int32", "contiguous"), ("float16", "contiguous")} <= ran
    # the integer cases keep INT_MIN % -1 and values above 2^24, where the old graph's float32 differs from CPU
    old_differs = {(c.dtype, c.layout) for c in rep.cells if c.old_vs_cpu is not None and not c.old_vs_cpu.ok}
    assert {("int64", "contiguous"), ("int32", "contiguous")} <= old_differs
