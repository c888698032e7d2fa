"""2.7-era unary ports with one run-time scalar (leaky_relu's negative_slope, softshrink's lambd).

2.7's ``exec_unary_kernel`` carries only an optional int64, so the port adds, once per host file,
a launcher in the tree's own style: ``mtl_setArgs(encoder, out, in)``, then the scalar by ``mtl_setBytes``
in the input's dtype (``scalar.to<scalar_t>()`` under an ``AT_DISPATCH``: exact for int64, as the old graph's
placeholder in self's dtype was; a float would round past 2^24).  rules/launch_conventions.yaml
``unary_1d_scalar`` describes it and verify emulates it from that description.  The kernel takes the scalar
as ``constant T1& SCALAR [[buffer(2)]]``.
"""

from __future__ import annotations

import re

from migrate.fixes import FixBuilder
from migrate.model import Edit
from migrate.port.emit import Plan, alpha_name, functor
from migrate.port.host_name_kernels import unary_edits
from migrate.port.launcher_edits import host_file_edits, kernel_file_edits, kernel_templates, namespace
from migrate.conventions.target import Target
from migrate.conventions.launch import conventions

_line_end = FixBuilder.line_end


def helper_name() -> str:
    return conventions()["unary_1d_scalar"]["calls"][0]


def helper_text() -> str:
    """The launcher: exec_unary_kernel's steps (contiguous input, contiguous output copied back,
    ``{name}_{out}_{in}``), plus the scalar in the input's dtype after the two buffers."""
    return f"""
// mps-migrate: exec_unary_kernel with one run-time scalar, bound in the input's dtype after the tensors
static void {helper_name()}(TensorIteratorBase& iter, const std::string& name, const Scalar& scalar) {{
  using namespace mps;
  auto inputTensor = iter.input(0).contiguous();
  auto outputTensor = iter.output(0);
  const auto length = c10::checked_convert<uint32_t>(outputTensor.numel(), "uint32_t");
  if (length == 0) {{
    return;
  }}
  bool needs_output_copy = !outputTensor.is_contiguous();
  if (needs_output_copy) {{
    outputTensor = outputTensor.contiguous();
  }}
  auto cplState = lib.getPipelineStateForFunc(
      fmt::format("{{}}_{{}}_{{}}", name, scalarToMetalTypeString(outputTensor), scalarToMetalTypeString(inputTensor)));
  MPSStream* mpsStream = getCurrentMPSStream();
  dispatch_sync(mpsStream->queue(), ^() {{
    id<MTLComputeCommandEncoder> computeEncoder = mpsStream->commandEncoder();
    getMPSProfiler().beginProfileKernel(cplState, name, {{inputTensor}});
    [computeEncoder setComputePipelineState:cplState];
    mtl_setArgs(computeEncoder, outputTensor, inputTensor);
    // mtl_setBytes takes integers, float and trivially copyable classes: the dispatch leaves out double
    AT_DISPATCH_V2(inputTensor.scalar_type(), "mps_scalar", AT_WRAP([&]() {{
      mtl_setBytes(computeEncoder, scalar.to<scalar_t>(), 2);
    }}), AT_EXPAND(AT_INTEGRAL_TYPES), kFloat, kHalf, kBFloat16, kBool);
    mtl_dispatch1DJob(computeEncoder, cplState, length);
    getMPSProfiler().endProfileKernel(cplState);
  }});
  if (needs_output_copy) {{
    iter.output(0).copy_(outputTensor);
  }}
}}
"""


def helper_edits(ix, target: Target) -> list[Edit]:
    """The launcher, after the file's ``lib`` definition block, unless the file already defines it."""
    data = ix.tree.sources[target.hpath]
    if re.search(rb"\b" + helper_name().encode() + rb"\s*\(\s*TensorIteratorBase", data):
        return []
    m = re.search(rb"\bstatic\s+auto\s*&\s*lib\s*=.*?\n(#endif[^\n]*\n)?", data, re.S)
    pos = m.end() if m else _line_end(data, data.find(b"namespace at::native"))
    return [Edit(target.hpath, pos, pos, helper_text())]


def stub_body(name: str, scalar: str) -> str:
    return f'  {helper_name()}(iter, "{name}", {scalar});\n'


def unary_scalar_edits(target: Target, data: bytes, name: str, dag, plan: Plan) -> list[Edit]:
    """Functor (input, scalar), template kernel with ``constant T1& SCALAR [[buffer(2)]]``, the
    instantiation macro of the file's ``[[host_name]]`` kind, one invocation per (out, in) pair."""
    body = functor(name, dag, plan, dag.source, target.traits)
    return unary_edits(target, data, name, body, plan, scalar=alpha_name(dag), pairs=plan.pairs())


# ------------------------------------------------------------------ binary
def binary_helper_name() -> str:
    return conventions()["binary_offsets_scalar"]["calls"][0]


def binary_macro() -> str:
    return conventions()["binary_offsets_scalar"]["register_macro"]


def binary_templates() -> str:
    """Once per kernel file: binary_indexing/binary_dense with the scalar after their buffers, and the
    registration macro exporting the names binary_mps_impl builds."""
    return kernel_templates("binary_scalar_launch.metal", binary_macro())


def binary_kernel_edits(target: Target, data: bytes, name: str, dag, plan: Plan) -> list[Edit]:
    """The templates (once), the functor (a, b, scalar) and its registrations, at the end of the file."""
    return kernel_file_edits(target, data, name, dag, plan, binary_macro(), binary_templates())


def binary_helper_text(impl_call: str) -> str:
    """binary_mps_impl's launch (dense kernel for a contiguous iterator, else per-thread offsets),
    plus the scalar in the inputs' (common) dtype after the buffers."""
    pad = " " * len(f"static void {binary_helper_name()}(")
    return f"""
// mps-migrate: binary_mps_impl with one run-time scalar, bound in the inputs' dtype after the buffers
static void {binary_helper_name()}(TensorIteratorBase& iter,
{pad}const std::string& func_name,
{pad}const Scalar& scalar) {{
  TORCH_CHECK(iter.common_dtype() != at::kDouble, "float64 is not supported on MPS");
  // the kernel reads both inputs as input(0)'s dtype: cast them (on MPS) to the common dtype first,
  // as the MPSGraph op did (TensorIterator casts inputs only when the common device is CPU)
  const auto common_dtype = iter.common_dtype();
  if (iter.input(0).scalar_type() != common_dtype || iter.input(1).scalar_type() != common_dtype ||
      !iter.input(0).is_mps() || !iter.input(1).is_mps()) {{
    // TensorIteratorConfig borrows its inputs (add_input of a temporary is deleted): keep the casts alive here
    const auto input_cast = iter.input(0).to(kMPS, common_dtype);
    const auto other_cast = iter.input(1).to(kMPS, common_dtype);
    auto cast_iter = TensorIteratorConfig()
                         .add_output(iter.output())
                         .add_input(input_cast)
                         .add_input(other_cast)
                         .check_all_same_dtype(false)
                         .build();
    {binary_helper_name()}(cast_iter, func_name, scalar);
    return;
  }}
  Tensor input = iter.input(0);
  Tensor other = iter.input(1);
  Tensor out = iter.output();
  MPSStream* mpsStream = getCurrentMPSStream();
  const auto numThreads = c10::checked_convert<uint32_t>(iter.numel(), "uint32_t");
  dispatch_sync_with_rethrow(mpsStream->queue(), ^() {{
    @autoreleasepool {{
      auto computeEncoder = mpsStream->commandEncoder();
      const auto bind_scalar = [&](unsigned index) {{
        AT_DISPATCH_V2(input.scalar_type(), "mps_scalar", AT_WRAP([&]() {{
          mtl_setBytes(computeEncoder, scalar.to<scalar_t>(), index);
        }}), AT_EXPAND(AT_INTEGRAL_TYPES), kFloat, kHalf, kBFloat16, kBool);
      }};
      if (iter.is_contiguous()) {{
        auto binaryPSO =
            lib.getPipelineStateForFunc(fmt::format("{{}}_dense_{{}}", func_name, scalarToMetalTypeString(input)));
        [computeEncoder setComputePipelineState:binaryPSO];
        mtl_setArgs(computeEncoder, input, other, out);
        bind_scalar(3);
        mtl_dispatch1DJob(computeEncoder, binaryPSO, numThreads);
        return;
      }}
      auto kernelDataOffsets = generateKernelDataOffsets(computeEncoder, iter);
      auto binaryPSO = lib.getPipelineStateForFunc(func_name + "_" + scalarToMetalTypeString(input));
      [computeEncoder setComputePipelineState:binaryPSO];
      mtl_setArgs(computeEncoder, input, other, out);
      [computeEncoder setBuffer:kernelDataOffsets offset:0 atIndex:3];
      bind_scalar(4);
      mtl_dispatch1DJob(computeEncoder, binaryPSO, numThreads);
    }}
  }});
}}
"""


def binary_host_edits(ix, target: Target, name: str, stub: str, scalar: str) -> list[Edit]:
    """The launcher (once, inside the namespace binary_mps_impl lives in, after it), the stub calling it
    and its REGISTER_DISPATCH after the file's last."""
    from migrate.port.stub_types import scalar_param

    fn = f"{name}_mps_kernel"
    text = (
        f"static void {fn}(TensorIteratorBase& iter, {scalar_param(ix, stub, scalar)}) {{\n"
        f'  {namespace(target)}{binary_helper_name()}(iter, "{name}", {scalar});\n}}\n\n'
    )
    helper = binary_helper_text(target.impl_call)
    return host_file_edits(ix, target, binary_helper_name(), helper, stub, fn, text)
