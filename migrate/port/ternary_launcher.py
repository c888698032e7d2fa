"""2.7-era ternary ports (clamp_stub over the iterator (self, min, max)).

The 2.7 tree launches binary kernels with ``binary_mps_impl`` (generateKernelDataOffsets, fixed at three
tensors) and has no ternary launch at all.  The port adds one in the tree's style, once per host file,
after ``binary_mps_impl``: ``ternary_mps_impl(iter, name)`` (rules/launch_conventions.yaml
``ternary_offsets``, which verify emulates):

- inputs of another dtype than the common one (or CPU scalars) are cast to it on MPS first, and an output
  of another dtype gets a temporary in the common dtype copied back, as TensorIterator does only on CPU;
- a contiguous iterator runs ``{name}_dense_{T}`` over (input, other1, other2, out); any other (broadcast,
  strided, transposed) runs ``{name}_{T}``, which finds each operand's element from the iterator's shape
  and byte strides itself -- positions and offsets in 64-bit ``long``, as the era's strided kernels
  (UnfoldBackward.metal, c10/metal/indexing.h's ``offset_from_thread_index``) compute them;
- the thread count is ``c10::checked_convert<uint32_t>(iter.numel())``: a grid of 2^32 threads or more
  cannot be indexed by ``thread_position_in_grid``, so such a launch raises instead of wrapping.

The kernel file gets the two templates and their ``[[host_name]]`` instantiation macro once, then the
functor and one macro invocation per dtype (bfloat under the file's ``__METAL_VERSION__`` guard).
"""

from __future__ import annotations

from migrate.model import Edit
from migrate.port.emit import Plan
from migrate.port.launcher_edits import host_file_edits, kernel_file_edits, namespace
from migrate.port.launcher_edits import kernel_templates as launcher_templates
from migrate.port.stub_types import iterator_param
from migrate.conventions.target import Target
from migrate.port.translate import PortBlocked
from migrate.conventions.launch import conventions


def launcher_name() -> str:
    return conventions()["ternary_offsets"]["calls"][0]


def register_macro() -> str:
    return conventions()["ternary_offsets"]["register_macro"]


def kernel_templates() -> str:
    """Once per kernel file: the strided and dense kernels and the macro exporting ternary_mps_impl's names."""
    return launcher_templates("ternary_launch.metal", register_macro())


def kernel_edits(target: Target, data: bytes, name: str, dag, plan: Plan) -> list[Edit]:
    """The templates (once, their own edit: ports combined share one copy), then the functor and its
    registrations, at the end of the kernel file."""
    if plan.float_out != "same" or plan.int_mode not in (None, "same"):
        raise PortBlocked(
            f"{name}: the 2.7 ternary launch writes the inputs' dtype; this graph returns another "
            f"({'bool' if plan.float_out == 'bool' else plan.int_mode})",
            "ternary result dtype",
            dag.source,
        )
    return kernel_file_edits(target, data, name, dag, plan, register_macro(), kernel_templates())


def launcher_text() -> str:
    fn = launcher_name()
    return f"""
// mps-migrate: the ternary counterpart of binary_mps_impl, one thread per element of the iterator
static void {fn}(TensorIteratorBase& iter, const std::string& func_name) {{
  TORCH_CHECK(iter.common_dtype() != at::kDouble, "float64 is not supported on MPS");
  if (iter.numel() == 0) {{
    return;
  }}
  // the kernels read every input and write the output in the common dtype: cast what differs (on MPS),
  // as TensorIterator does only when the common device is CPU
  const auto common_dtype = iter.common_dtype();
  const Tensor& output = iter.output();
  bool cast_needed = output.scalar_type() != common_dtype;
  for (int i = 0; i < 3; ++i) {{
    cast_needed |= iter.input(i).scalar_type() != common_dtype || !iter.input(i).is_mps();
  }}
  if (cast_needed) {{
    Tensor result = output.scalar_type() == common_dtype ? output : at::empty_like(output, common_dtype);
    // TensorIteratorConfig borrows its inputs (add_const_input of a temporary is deleted): keep the casts here
    const Tensor input0 = iter.input(0).to(kMPS, common_dtype);
    const Tensor input1 = iter.input(1).to(kMPS, common_dtype);
    const Tensor input2 = iter.input(2).to(kMPS, common_dtype);
    auto cast_iter = TensorIteratorConfig()
                         .add_output(result)
                         .add_const_input(input0)
                         .add_const_input(input1)
                         .add_const_input(input2)
                         .check_all_same_dtype(false)
                         .build();
    {fn}(cast_iter, func_name);
    if (!result.is_same(output)) {{
      const_cast<Tensor&>(output).copy_(result);
    }}
    return;
  }}
  Tensor input = iter.input(0);
  Tensor other1 = iter.input(1);
  Tensor other2 = iter.input(2);
  Tensor out = iter.output();
  // a grid of 2^32 threads cannot be indexed (thread_position_in_grid is a uint): raise, never wrap
  const auto numThreads = c10::checked_convert<uint32_t>(iter.numel(), "uint32_t");
  const uint32_t nDim = iter.ndim();
  std::vector<int64_t> shape(iter.shape().begin(), iter.shape().end());
  std::vector<int64_t> strides(4 * nDim);  // per dimension the byte strides of (out, input, other1, other2)
  for (uint32_t d = 0; d < nDim; ++d) {{
    for (int k = 0; k < 4; ++k) {{
      strides[4 * d + k] = iter.strides(k)[d];
    }}
  }}
  MPSStream* mpsStream = getCurrentMPSStream();
  dispatch_sync_with_rethrow(mpsStream->queue(), ^() {{
    @autoreleasepool {{
      auto computeEncoder = mpsStream->commandEncoder();
      if (iter.is_contiguous()) {{
        auto ternaryPSO =
            lib.getPipelineStateForFunc(fmt::format("{{}}_dense_{{}}", func_name, scalarToMetalTypeString(input)));
        [computeEncoder setComputePipelineState:ternaryPSO];
        mtl_setArgs(computeEncoder, input, other1, other2, out);
        mtl_dispatch1DJob(computeEncoder, ternaryPSO, numThreads);
        return;
      }}
      auto ternaryPSO = lib.getPipelineStateForFunc(func_name + "_" + scalarToMetalTypeString(input));
      getMPSProfiler().beginProfileKernel(ternaryPSO, func_name, {{input, other1, other2}});
      [computeEncoder setComputePipelineState:ternaryPSO];
      mtl_setArgs(computeEncoder, input, other1, other2, out, shape, strides, nDim);
      mtl_dispatch1DJob(computeEncoder, ternaryPSO, numThreads);
      getMPSProfiler().endProfileKernel(ternaryPSO);
    }}
  }});
}}
"""


def host_edits(ix, target: Target, name: str, stub: str) -> list[Edit]:
    """The launcher (once, after binary_mps_impl, in its namespace), the stub calling it before the file's
    REGISTER_DISPATCH block and its registration after the block's last line."""
    fn = f"{name}_mps_kernel"
    it = iterator_param(ix, stub)
    text = f'\nstatic void {fn}({it} iter) {{\n  {namespace(target)}{launcher_name()}(iter, "{name}");\n}}\n'
    return host_file_edits(ix, target, launcher_name(), launcher_text(), stub, fn, text)
