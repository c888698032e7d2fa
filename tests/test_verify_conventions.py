"""verify under each launch convention of rules/launch_conventions.yaml, detected from the tree:
own small host + kernel files on a copy of fixtures/mini, and the real 2.6.0 / 2.7.0a0 trees."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from tests.corpus import pytorch_260_root, pytorch_270a0_root
from migrate.cli import main
from migrate.index import Index
from migrate.tree import load_tree
from migrate.conventions.launch import HandWritten, name_pattern
from migrate.verify.conventions import find_site, fmt_format
from migrate.verify.iterator import Operand, build_iter
from migrate.verify.template_host import kernel_offsets
from migrate.verify.report import to_text
from migrate.verify.run import Options, verify

MINI = Path(__file__).resolve().parent.parent / "fixtures" / "mini"
MPS = "aten/src/ATen/native/mps"
YAML = "aten/src/ATen/native/native_functions.yaml"
F = [torch.float32, torch.float16]

SQRT_YAML = """
- func: sqrt.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIteratorBase
  dispatch:
    CPU, CUDA, MPS: sqrt_out
"""

# bundled library: binary_mps_impl (offsets + dense) for fmax, 2.7-style exec_unary_kernel for sqrt,
# a hand-written launch for nextafter
LEGACY_MM = r"""
#include <ATen/native/mps/OperationUtils.h>
namespace at::native {
namespace mps {
static auto& lib = MetalShaderLibrary::getBundledLibrary();

static void binary_mps_impl(TensorIteratorBase& iter, const std::string func_name, bool supports_dense = true) {
  auto enc = getCurrentMPSStream()->commandEncoder();
  if (supports_dense && iter.is_contiguous()) {
    auto pso = lib.getPipelineStateForFunc(fmt::format("{}_dense_{}", func_name, scalarToMetalTypeString(iter.input(0))));
    mtl_setArgs(enc, iter.input(0), iter.input(1), iter.output());
    mtl_dispatch1DJob(enc, pso, iter.numel());
    return;
  }
  auto offsets = generateKernelDataOffsets(enc, iter);
  auto pso = lib.getPipelineStateForFunc(func_name + "_" + scalarToMetalTypeString(iter.input(0)));
  mtl_setArgs(enc, iter.input(0), iter.input(1), iter.output(), offsets);
  mtl_dispatch1DJob(enc, pso, iter.numel());
}
} // namespace mps

static void fmax_legacy(TensorIteratorBase& iter) {
  mps::binary_mps_impl(iter, "fmax");
}
static void sqrt_legacy(TensorIteratorBase& iter) {
  mps::lib.exec_unary_kernel(iter, "sqrt");
}
static void nextafter_by_hand(TensorIteratorBase& iter) {
  auto enc = mps::getCurrentMPSStream()->commandEncoder();
  auto pso = mps::lib.getPipelineStateForFunc("nextafter_float");
  mtl_setArgs(enc, iter.input(0), iter.input(1), iter.output());
  [enc dispatchThreads:MTLSizeMake(iter.numel(), 1, 1) threadsPerThreadgroup:MTLSizeMake(64, 1, 1)];
}
REGISTER_DISPATCH(fmax_stub, &fmax_legacy)
REGISTER_DISPATCH(sqrt_stub, &sqrt_legacy)
REGISTER_DISPATCH(nextafter_stub, &nextafter_by_hand)
} // namespace at::native
"""

LEGACY_METAL = r"""
#include <metal_stdlib>
using namespace metal;

template <typename T>
kernel void fmax_offsets(constant void* a_ [[buffer(0)]], constant void* b_ [[buffer(1)]],
                         device void* out_ [[buffer(2)]], constant uint3* offsets [[buffer(3)]],
                         uint tid [[thread_position_in_grid]]) {
  auto out = (device T*)((device uint8_t*)out_ + offsets[tid].x);
  auto a = (constant T*)((constant uint8_t*)a_ + offsets[tid].y);
  auto b = (constant T*)((constant uint8_t*)b_ + offsets[tid].z);
  *out = static_cast<T>(::metal::fmax(float(*a), float(*b)));
}

template <typename T>
kernel void fmax_dense(constant T* a [[buffer(0)]], constant T* b [[buffer(1)]], device T* out [[buffer(2)]],
                       uint tid [[thread_position_in_grid]]) {
  out[tid] = static_cast<T>(::metal::fmax(float(a[tid]), float(b[tid])));
}

template <typename O, typename I>
kernel void sqrt_1d(device O* out [[buffer(0)]], constant I* in [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[i] = static_cast<O>(::metal::precise::sqrt(float(in[i])));
}

#define LEGACY_FLOAT(T)                                                                          \
  template [[host_name("fmax_" #T)]] kernel void fmax_offsets<T>(                               \
      constant void*, constant void*, device void*, constant uint3*, uint);                      \
  template [[host_name("fmax_dense_" #T)]] kernel void fmax_dense<T>(                           \
      constant T*, constant T*, device T*, uint);                                                \
  template [[host_name("sqrt_" #T "_" #T)]] kernel void sqrt_1d<T, T>(device T*, constant T*, uint)

LEGACY_FLOAT(float);
LEGACY_FLOAT(half);
"""

# an inline MetalShaderLibrary whose fmt template takes (output type, input type)
INLINE_MM = r"""
#include <ATen/native/mps/OperationUtils.h>
namespace at::native {
static const char* SQRT_TEMPLATE = R"METAL(
#include <metal_stdlib>
using namespace metal;
kernel void sqrt_kernel(device {0}* output [[buffer(0)]], device {1}* input [[buffer(1)]],
                        uint index [[thread_position_in_grid]]) {{
  output[index] = {0}(precise::sqrt(float(input[index])));
}}
)METAL";
static mps::MetalShaderLibrary lib(SQRT_TEMPLATE, 2);

static void exec_unary_kernel(const Tensor& self, const Tensor& output_, const std::string& name) {
  auto pso = lib.getPipelineStateForFunc(name + "_kernel", {scalarToMetalTypeString(output_), scalarToMetalTypeString(self)});
}
TORCH_IMPL_FUNC(sqrt_out_mps)(const Tensor& self, const Tensor& output_) {
  exec_unary_kernel(self, output_, "sqrt");
}
} // namespace at::native
"""


def _tree(tmp_path: Path, name: str, files: dict[str, str], yaml_extra: str) -> Path:
    root = tmp_path / name
    shutil.copytree(MINI, root)
    for rel, text in files.items():
        (root / rel).write_text(text)
    y = root / YAML
    y.write_text(y.read_text() + yaml_extra)
    return root


@pytest.fixture(scope="module")
def legacy_tree(tmp_path_factory) -> Path:
    return _tree(
        tmp_path_factory.mktemp("conv"),
        "legacy",
        {f"{MPS}/operations/LegacyKernel.mm": LEGACY_MM, f"{MPS}/kernels/LegacyKernel.metal": LEGACY_METAL},
        SQRT_YAML,
    )


@pytest.fixture(scope="module")
def inline_tree(tmp_path_factory) -> Path:
    return _tree(
        tmp_path_factory.mktemp("conv"),
        "inline",
        {f"{MPS}/operations/InlineKernel.mm": INLINE_MM},
        SQRT_YAML.replace("CPU, CUDA, MPS: sqrt_out", "CPU, CUDA: sqrt_out\n    MPS: sqrt_out_mps"),
    )


# ------------------------------------------------------------- detection
def test_each_convention_is_detected_from_the_host_code(legacy_tree, inline_tree):
    ix = Index(load_tree(legacy_tree))
    fmax, sqrt = find_site(ix, "fmax"), find_site(ix, "sqrt")
    assert (fmax.convention, fmax.name, fmax.dense, fmax.function) == ("binary_offsets", "fmax", True, "fmax_legacy")
    assert (sqrt.convention, sqrt.name, sqrt.arity) == ("unary_1d", "sqrt", 1)
    assert find_site(ix, "atan2").convention == "functor_registry"
    inline = find_site(Index(load_tree(inline_tree)), "sqrt")
    assert (inline.convention, inline.library_var, inline.function) == (
        "unary_inline_template",
        "SQRT_TEMPLATE",
        "sqrt_out_mps",
    )


def test_binary_impl_without_a_dense_path_uses_offsets_only(legacy_tree, tmp_path):
    root = tmp_path / "nodense"
    shutil.copytree(legacy_tree, root)
    mm = root / f"{MPS}/operations/LegacyKernel.mm"
    mm.write_text(mm.read_text().replace('"{}_dense_{}"', '"{}_{}"'))
    assert find_site(Index(load_tree(root)), "fmax").dense is False


def test_hand_written_launch_is_refused_naming_the_stub(legacy_tree, capsys):
    with pytest.raises(
        HandWritten,
        match=r"nextafter_by_hand \(.*LegacyKernel\.mm:\d+\) launches its kernel by "
        r'hand: getPipelineStateForFunc\("nextafter_float"\) \+ mtl_setArgs \+ '
        r"dispatchThreads",
    ):
        find_site(Index(load_tree(legacy_tree)), "nextafter")
    assert main(["verify", "nextafter", "--root", str(legacy_tree)]) == 2
    assert "nextafter_by_hand" in capsys.readouterr().err


# ------------------------------------------------------------- emulation
def test_offsets_are_byte_offsets_of_output_input_other_per_thread():
    a = torch.arange(6, dtype=torch.float32).reshape(2, 3).t()  # (3, 2), strides (1, 3)
    b = torch.zeros(2, dtype=torch.float32)  # broadcast along dim 0: stride 0
    it = build_iter([Operand(a), Operand(b)], None, torch.float32, torch.float32)
    off = kernel_offsets(it)
    assert off.shape == (6, 4) and off[:, 3].eq(0).all()
    o = it.output()
    seen = set()
    for out_off, a_off, b_off, _ in off.tolist():
        j, i = divmod(a_off // 4, 3)  # a[i, j] sits at element 3j + i
        seen.add((i, j))
        assert b_off == 4 * j and out_off == 4 * (o.stride(0) * i + o.stride(1) * j)
    assert seen == {(i, j) for i in range(3) for j in range(2)}


def test_broadcast_shape_matches_torch():
    from migrate.verify.iterator import broadcast_shape

    for shapes in ([(0, 3), (0, 3)], [(7, 13), (13,)], [(7, 1), (7, 13)], [(), (37,)], [(1,), (0,)], [(), ()]):
        assert broadcast_shape(shapes) == tuple(torch.broadcast_shapes(*shapes))
    with pytest.raises(ValueError, match="do not broadcast"):
        broadcast_shape([(3,), (4,)])


def test_kernel_name_templates_and_fmt_format():
    m = name_pattern("{name}_{out}_{in}", "exp").match("exp_float_bool")
    assert m.groupdict() == {"out": "float", "inp": "bool"}
    assert name_pattern("{name}_complex_{real}_{real}", "exp").match("exp_complex_float_half") is None
    assert fmt_format("kernel {{ {0} x; {1} y; }}", ["half", "int"]) == "kernel { half x; int y; }"


def test_binary_offsets_and_dense_pass(legacy_tree):
    layouts = [
        "contiguous",
        "transposed",
        "strided",
        "broadcast",
        "broadcast_lhs",
        "zero_dim_offset",
        "cpu_scalar_offset",
        "empty",
    ]
    r = verify(legacy_tree, "fmax", opts=Options(dtypes=F, layouts=layouts, opinfo=False))
    assert r.exit_code == 0, to_text(r)
    kernels = set().union(*(c.kernels for c in r.cells))
    assert {"fmax_dense_float", "fmax_float", "fmax_dense_half", "fmax_half"} <= kernels
    assert r.source.convention == "binary_offsets" and r.source.path.endswith("LegacyKernel.metal")


def test_binary_offsets_reads_both_inputs_as_the_first_inputs_type(legacy_tree):
    r = verify(legacy_tree, "fmax", opts=Options(dtypes=[torch.float32], layouts=["mixed_dtype"], opinfo=False))
    text = to_text(r)
    assert r.exit_code == 1 and "FAIL float32 mixed_dtype: at [" in text
    assert (
        "via fmax_dense_float, reference torch-cpu; host: fmax_float reads other (torch.int32) as "
        "torch.float32: TensorIterator promotes inputs to the common dtype only when the common device is CPU"
        in text
        and "(inputs: " in text
    )


def test_unary_1d_copies_a_strided_output_back(legacy_tree):
    r = verify(
        legacy_tree,
        "sqrt",
        opts=Options(dtypes=F, layouts=["contiguous", "transposed", "broadcast", "odd_size", "zero_dim"], opinfo=False),
    )
    assert r.exit_code == 0, to_text(r)
    assert {"sqrt_float_float", "sqrt_half_half"} <= set().union(*(c.kernels for c in r.cells))


def test_inline_template_library_compiles_per_type_pair(inline_tree):
    r = verify(inline_tree, "sqrt", opts=Options(dtypes=F, layouts=["contiguous", "transposed"], opinfo=False))
    assert r.exit_code == 0, to_text(r)
    assert {"sqrt_kernel<float,float>", "sqrt_kernel<half,half>"} <= set().union(*(c.kernels for c in r.cells))
    assert r.source.path.endswith("InlineKernel.mm")


# ------------------------------------------------------------- report
def test_no_case_ran_exits_2(capsys):
    rc = main(["verify", "atan2", "--root", str(MINI), "--dtypes", "complex64", "--no-opinfo"])
    out = capsys.readouterr().out
    assert rc == 2 and "nothing was verified: no case ran (exit 2)" in out
    assert "complex64: no kernel registered for this input dtype; skipped" in out


def test_skipped_rows_say_why(capsys):
    main(
        [
            "verify",
            "atan2",
            "--root",
            str(MINI),
            "--dtypes",
            "float32",
            "--layouts",
            "contiguous,python_scalar_lhs",
            "--no-opinfo",
        ]
    )
    out = capsys.readouterr().out
    assert "skip float32 python_scalar_lhs: torch-cpu does not accept these arguments: atan2()" in out


# ------------------------------------------------------------- real trees
def test_real_270a0_binary_families(capsys):
    root = pytorch_270a0_root()
    same_dtype = [
        "contiguous",
        "zero_dim",
        "odd_size",
        "transposed",
        "strided",
        "broadcast",
        "broadcast_lhs",
        "broadcast_stride0",
        "zero_dim_offset",
    ]
    for family in ("fmax", "polar"):
        r = verify(root, family, opts=Options(dtypes=[torch.float32], layouts=same_dtype, opinfo=False))
        assert r.exit_code == 0 and r.source.convention == "binary_offsets", to_text(r)
        assert r.ran == len(same_dtype)


def test_real_270a0_cpu_scalar_is_read_at_its_storage_start():
    """2.7.0a0's mtl_setBuffer sends t.storage().data(): a 0-dim CPU view at offset 6 reads element 0."""
    r = verify(
        pytorch_270a0_root(), "fmax", opts=Options(dtypes=[torch.float32], layouts=["cpu_scalar_offset"], opinfo=False)
    )
    assert r.exit_code == 1 and r.source.site.scalar_at_storage_start
    assert "FAIL float32 cpu_scalar_offset: at [" in to_text(r)


def test_real_270a0_copysign_reads_a_python_double_as_float():
    """binary_mps_impl binds the wrapped double's 8 bytes; the kernel reads the low 4 as a float (0.0 for -2.0)."""
    r = verify(
        pytorch_270a0_root(), "copysign", opts=Options(dtypes=[torch.float32], layouts=["python_scalar"], opinfo=False)
    )
    text = to_text(r)
    assert (
        r.exit_code == 1
        and "-2.0) [value via copysign_float, reference torch-cpu; host: copysign_float reads "
        "other (torch.float64) as torch.float32"
        in text
        and "a CPU scalar's raw bytes" in text
    )


def test_real_270a0_hand_written_launch_is_refused(capsys):
    assert main(["verify", "linalg_cross", "--root", str(pytorch_270a0_root())]) == 2
    err = capsys.readouterr().err
    assert "cross_mps_impl" in err and "getPipelineStateForFunc" in err and "cannot emulate" in err


def test_real_260_binary_family_uses_offsets_only():
    r = verify(
        pytorch_260_root(),
        "fmax",
        opts=Options(dtypes=[torch.float32], layouts=["contiguous", "transposed"], opinfo=False),
    )
    assert r.exit_code == 0, to_text(r)
    assert set().union(*(c.kernels for c in r.cells)) == {"fmax_float"}


# ------------------------------------------------------------- old outputs after port --write
def _git(root: Path, *args: str) -> None:
    import subprocess

    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True, capture_output=True
    )


def test_old_reference_is_read_from_git_head_after_port_write(tmp_path):
    from tests.helpers import FIXTURES

    root = tmp_path / "t"
    shutil.copytree(FIXTURES / "port", root)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    opts = Options(dtypes=[torch.float32], layouts=["contiguous"], opinfo=False)
    assert main(["port", "hypot", "--root", str(root), "--write"]) == 0
    r = verify(root, "hypot", opts=opts)
    assert r.references == ["torch-cpu", "old-mpsgraph"], r.notes
    assert any("read from git HEAD (the working tree no longer has it)" in n for n in r.notes), r.notes
    assert r.ran == 1 and all(c.old_vs_cpu is not None and c.old_vs_cpu.elements for c in r.cells), to_text(r)
    # without the commit there is nothing to read the old implementation from, and verify says so
    shutil.rmtree(root / ".git")
    r = verify(root, "hypot", opts=opts)
    assert r.references == ["torch-cpu"]
    assert any("old MPSGraph reference unavailable: no overload of 'hypot'" in n for n in r.notes), r.notes


WRAPPER = """
static void cast_then_launch(TensorIteratorBase& iter, const std::string func_name) {
  const auto common_dtype = iter.common_dtype();
  auto cast_iter = TensorIteratorConfig()
                       .add_output(iter.output())
                       .add_input(iter.input(0).to(kMPS, common_dtype))
                       .add_input(iter.input(1).to(kMPS, common_dtype))
                       .check_all_same_dtype(false)
                       .build();
  binary_mps_impl(cast_iter, func_name);
}
} // namespace mps
"""


def test_a_promoting_wrapper_is_detected_by_its_body_and_emulated(tmp_path):
    """A stub calling a wrapper that casts to the common dtype on MPS (launch_conventions.yaml
    promoting_wrapper) no longer reads other as input(0)'s dtype: mixed dtypes and CPU scalars pass."""
    mm = LEGACY_MM.replace("} // namespace mps\n", WRAPPER, 1).replace(
        'mps::binary_mps_impl(iter, "fmax");', 'mps::cast_then_launch(iter, "fmax");'
    )
    root = _tree(
        tmp_path,
        "wrapped",
        {f"{MPS}/operations/LegacyKernel.mm": mm, f"{MPS}/kernels/LegacyKernel.metal": LEGACY_METAL},
        SQRT_YAML,
    )
    site = find_site(Index(load_tree(root)), "fmax")
    assert (site.convention, site.promotes, site.dense) == ("binary_offsets", "cast_then_launch", True)
    r = verify(
        root,
        "fmax",
        opts=Options(
            dtypes=[torch.float32],
            opinfo=False,
            layouts=[
                "mixed_dtype",
                "mixed_strided",
                "python_scalar",
                "python_scalar_lhs",
                "python_int_scalar",
                "cpu_scalar_offset",
            ],
        ),
    )
    assert r.exit_code == 0, to_text(r)
    # without the cast marks the same body is not a wrapper: the stub is a hand-written call nobody emulates
    plain = mm.replace(".to(kMPS, common_dtype)", "")
    root2 = _tree(
        tmp_path,
        "plain",
        {f"{MPS}/operations/LegacyKernel.mm": plain, f"{MPS}/kernels/LegacyKernel.metal": LEGACY_METAL},
        SQRT_YAML,
    )
    with pytest.raises(Exception):
        find_site(Index(load_tree(root2)), "fmax")


def test_promoting_wrapper_emulation_binds_cast_inputs():
    """TemplateHost with a promoting wrapper: other (int32) and a CPU double scalar reach the kernel as the
    common dtype, on the device; without the wrapper other is bound as is (binary_mps_impl's reading)."""
    from migrate.conventions.launch import Site
    from migrate.verify.template_host import TemplateHost

    a, b = torch.arange(6, dtype=torch.float32), torch.arange(6, dtype=torch.int32)
    site = Site("binary_offsets", "fmax", "binary_mps_impl", 2, "x.mm", 1, "fmax_legacy", dense=True, promotes="w")
    launch = TemplateHost(site).plan(
        2, build_iter([Operand(a), Operand(b)], None, torch.float32, torch.float32), "fmax"
    )
    assert launch.kernel == "fmax_dense_float" and launch.args[1].dtype == torch.float32
    assert launch.notes[0] == "w casts input 1 (torch.int32) to torch.float32 on the device, then a fresh iterator"
    scalar = Operand(torch.tensor(-2.0, dtype=torch.float64), cpu_scalar=True)
    launch = TemplateHost(site).plan(2, build_iter([scalar, Operand(a)], None, torch.float32, torch.float32), "fmax")
    assert launch.args[0].dtype == torch.float32 and launch.args[0].item() == -2.0
    site.promotes = ""
    launch = TemplateHost(site).plan(
        2, build_iter([Operand(a), Operand(b)], None, torch.float32, torch.float32), "fmax"
    )
    assert launch.args[1].dtype == torch.int32
