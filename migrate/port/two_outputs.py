"""Ports of operators returning two tensors (``_prelu_kernel_backward -> (Tensor, Tensor)``).

The old graph stores each result into a cached-graph member, and the host binds each member to a returned
tensor (``Placeholder(cachedGraph->outputTensor_, grad_input)``); the schema's return order is the order of
the shared CPU kernel's iterator outputs, which the stub receives.  The port writes one functor per output
(``NAME_functor``, ``NAME_out1_functor``) and, in 2.7-era trees (``binary_mps_impl``'s file), kernels that
write both outputs in one thread and their launcher, once per arity, beside ``binary_mps_impl``
(rules/launch_conventions.yaml ``two_outputs``):

- inputs of another dtype than the common one (or CPU scalars) are cast to it on MPS first, and an output of
  another dtype gets a temporary in the common dtype copied back, as TensorIterator does only on CPU;
- a contiguous iterator runs ``{name}_dense_{T}``; any other runs ``{name}_{T}``, which finds each operand's
  element from the iterator's shape and byte strides (64-bit ``long`` positions and offsets);
- the thread count is ``c10::checked_convert<uint32_t>(iter.numel())``: 2^32 threads or more raise.
"""

from __future__ import annotations

import re

from migrate.fixes import FixBuilder
from migrate.model import Edit
from migrate.port.dag import Dag, Node
from migrate.port.emit import Plan, functor
from migrate.port.host_edits import dispatch_line
from migrate.port.host_name_kernels import _guarded
from migrate.port.locate import Impl, function_text
from migrate.port.launcher_edits import continued as _continued
from migrate.conventions.target import KIND, Target
from migrate.port.stub_types import iterator_param
from migrate.port.translate import PortBlocked
from migrate.tables import load_table

_line_end = FixBuilder.line_end
_RETURN = re.compile(r"\breturn\s+(?:std::(?:make_tuple|tuple\s*<[^;{]*?>)\s*)?[({]\s*(\w+)\s*,\s*(\w+)\s*[)}]\s*;")
_BINDING = re.compile(r"\bPlaceholder\s*(?:\w+\s*)?[({]\s*(?:\w+\s*(?:->|\.)\s*)?(\w+)\s*,\s*(\w+)\s*[,)}]")


def graph_outputs(ix, impls: list[Impl], dag: Dag) -> list[Node] | None:
    """The graph node of each returned tensor, in the schema's return order; None for one output."""
    returns = {len(re.findall(r"\bTensor\b", im.entry.func.rsplit("->", 1)[-1])) for im in impls}
    if returns <= {0, 1}:
        return None
    what = f"{impls[0].entry.overload_name or impls[0].entry.name} returns {impls[0].entry.func.rsplit('->', 1)[-1].strip()}"
    if returns != {2}:
        raise PortBlocked(f"{what}: ports write kernels with one or two outputs", "several outputs", dag.source)
    found = None
    for im in impls:
        text, _ = function_text(ix, im.function)
        ret = _RETURN.findall(text)
        bound = {tensor: member for member, tensor in _BINDING.findall(text) if member in dag.members}
        names = ret[-1] if ret else ()
        nodes = [dag.members[bound[n]] for n in names if n in bound]
        if len(nodes) != 2 or (found is not None and [id(n) for n in nodes] != [id(n) for n in found]):
            raise PortBlocked(
                f"{what}: which graph output each returned tensor receives is not written as "
                f"Placeholder(cachedGraph->member, tensor) in {im.function.name}",
                "several outputs",
                dag.source,
            )
        found = nodes
    used = {id(n) for n in dag.inputs}
    for node in found:
        if {id(n) for n in Dag(dag.inputs, node).nodes() if n.op == "input"} - used:
            raise PortBlocked(f"{what}: its outputs read different inputs", "several outputs", dag.source)
    if dag.alpha is not None or dag.params:
        raise PortBlocked(f"{what}: two-output kernels take no run-time scalar", "several outputs", dag.source)
    return found


def _names(arity: int) -> dict[str, str]:
    table = load_table("launch_conventions.yaml")["two_outputs"]
    kind = KIND[arity]
    return {
        "launcher": table["calls"][0].format(kind=kind),
        "macro": table["register_macro"].format(KIND=kind.upper()),
        "kernel": f"{kind}_two_outputs",
    }


def kernel_templates(arity: int) -> str:
    """Once per kernel file and arity: the strided and dense kernels and the macro exporting their names."""
    n = _names(arity)
    k, ins = arity + 2, [f"in{i}" for i in range(arity)]
    strided_in = "".join(f"    constant void* {x}_ [[buffer({i + 2})]],\n" for i, x in enumerate(ins))
    dense_in = "".join(f"    constant T* {x} [[buffer({i + 2})]],\n" for i, x in enumerate(ins))
    loads = "".join(
        f"  const T {x} = *(constant T*)((constant uint8_t*){x}_ + offs[{i + 2}]);\n" for i, x in enumerate(ins)
    )
    args, dense_args = ", ".join(ins), ", ".join(f"{x}[tid]" for x in ins)
    zeros = ", ".join(["0"] * k)
    decl_in = "".join(f"      constant void* {x}_,\n" for x in ins)
    decl_dense = "".join(f"      constant DTYPE * {x},\n" for x in ins)
    return f"""
// mps-migrate: kernels writing two outputs, launched by {n["launcher"]} over the iterator (out0, out1, {args})
template <typename T, typename F0, typename F1>
kernel void {n["kernel"]}_indexing(
    device void* out0_ [[buffer(0)]],
    device void* out1_ [[buffer(1)]],
{strided_in}    constant long* sizes [[buffer({k})]],
    constant long* strides [[buffer({k + 1})]],
    constant uint& ndim [[buffer({k + 2})]],
    uint tid [[thread_position_in_grid]]) {{
  // strides: per dimension the byte strides of (out0, out1, {args}), fastest dimension first
  long offs[{k}] = {{{zeros}}};
  long idx = tid;
  for (uint d = 0; d < ndim; ++d) {{
    const long pos = idx % sizes[d];
    idx /= sizes[d];
    for (uint k = 0; k < {k}; ++k) {{
      offs[k] += pos * strides[{k} * d + k];
    }}
  }}
{loads}  F0 f0;
  F1 f1;
  *(device T*)((device uint8_t*)out0_ + offs[0]) = static_cast<T>(f0({args}));
  *(device T*)((device uint8_t*)out1_ + offs[1]) = static_cast<T>(f1({args}));
}}

template <typename T, typename F0, typename F1>
kernel void {n["kernel"]}_dense(
    device T* out0 [[buffer(0)]],
    device T* out1 [[buffer(1)]],
{dense_in}    uint tid [[thread_position_in_grid]]) {{
  F0 f0;
  F1 f1;
  out0[tid] = static_cast<T>(f0({dense_args}));
  out1[tid] = static_cast<T>(f1({dense_args}));
}}

#define {n["macro"]}(NAME, DTYPE)
  template [[host_name(#NAME "_" #DTYPE)]] kernel void
  {n["kernel"]}_indexing<DTYPE, NAME##_functor, NAME##_out1_functor>(
      device void* out0_,
      device void* out1_,
{decl_in}      constant long* sizes,
      constant long* strides,
      constant uint& ndim,
      uint tid);
  template [[host_name(#NAME "_dense_" #DTYPE)]] kernel void
  {n["kernel"]}_dense<DTYPE, NAME##_functor, NAME##_out1_functor>(
      device DTYPE * out0,
      device DTYPE * out1,
{decl_dense}      uint tid)
"""


def kernel_edits(target: Target, data: bytes, name: str, emitted: list[Dag], plans: list[Plan], origin: str):
    """The templates (once, their own edit), then one functor per output and the registrations, at the end of
    the kernel file."""
    for plan in plans:
        if plan.float_out != "same" or plan.int_mode not in (None, "same") or plan != plans[0]:
            raise PortBlocked(
                f"{name}: the two-output launch writes both outputs in the inputs' dtype; this graph returns another",
                "two-output result dtype",
                origin,
            )
    arity = len(emitted[0].inputs)
    macro = _names(arity)["macro"]
    pos = len(data)
    lead = "" if data.endswith(b"\n") else "\n"
    edits = []
    if f"#define {macro}(".encode() not in data:
        edits.append(Edit(target.kpath, pos, pos, lead + _continued(kernel_templates(arity))))
        lead = ""
    text = "".join(
        "\n" + functor(f"{name}_out{k}" if k else name, dag, plans[0], origin, target.traits)
        for k, dag in enumerate(emitted)
    )
    dtypes = list(dict.fromkeys(i for i, _ in plans[0].pairs()))
    text += "\n".join(_guarded([f"{macro}({name}, {t});" for t in dtypes], target)) + "\n"
    return edits + [Edit(target.kpath, pos, pos, lead + text)]


def launcher_text(arity: int) -> str:
    fn = _names(arity)["launcher"]
    ins = [f"in{i}" for i in range(arity)]
    casts = "".join(f"    const Tensor input{i} = iter.input({i}).to(kMPS, common_dtype);\n" for i in range(arity))
    adds = "".join(f"                         .add_const_input(input{i})\n" for i in range(arity))
    binds = "".join(f"  Tensor {x} = iter.input({i});\n" for i, x in enumerate(ins))
    args = ", ".join(ins)
    k = arity + 2
    return f"""
// mps-migrate: launches a kernel writing the iterator's two outputs, one thread per element
static void {fn}(TensorIteratorBase& iter, const std::string& func_name) {{
  TORCH_CHECK(iter.common_dtype() != at::kDouble, "float64 is not supported on MPS");
  TORCH_INTERNAL_ASSERT(iter.noutputs() == 2 && iter.ninputs() == {arity});
  if (iter.numel() == 0) {{
    return;
  }}
  // the kernels read every input and write both outputs in the common dtype: cast what differs (on MPS),
  // as TensorIterator does only when the common device is CPU
  const auto common_dtype = iter.common_dtype();
  bool cast_needed = false;
  for (int i = 0; i < 2; ++i) {{
    cast_needed |= iter.output(i).scalar_type() != common_dtype;
  }}
  for (int i = 0; i < {arity}; ++i) {{
    cast_needed |= iter.input(i).scalar_type() != common_dtype || !iter.input(i).is_mps();
  }}
  if (cast_needed) {{
    const Tensor& output0 = iter.output(0);
    const Tensor& output1 = iter.output(1);
    Tensor result0 = output0.scalar_type() == common_dtype ? output0 : at::empty_like(output0, common_dtype);
    Tensor result1 = output1.scalar_type() == common_dtype ? output1 : at::empty_like(output1, common_dtype);
    // TensorIteratorConfig borrows its inputs (add_const_input of a temporary is deleted): keep the casts here
{casts}    auto cast_iter = TensorIteratorConfig()
                         .add_output(result0)
                         .add_output(result1)
{adds}                         .check_all_same_dtype(false)
                         .build();
    {fn}(cast_iter, func_name);
    if (!result0.is_same(output0)) {{
      const_cast<Tensor&>(output0).copy_(result0);
    }}
    if (!result1.is_same(output1)) {{
      const_cast<Tensor&>(output1).copy_(result1);
    }}
    return;
  }}
  Tensor out0 = iter.output(0);
  Tensor out1 = iter.output(1);
{binds}  // a grid of 2^32 threads cannot be indexed (thread_position_in_grid is a uint): raise, never wrap
  const auto numThreads = c10::checked_convert<uint32_t>(iter.numel(), "uint32_t");
  const uint32_t nDim = iter.ndim();
  std::vector<int64_t> shape(iter.shape().begin(), iter.shape().end());
  std::vector<int64_t> strides({k} * nDim);  // per dimension the byte strides of (out0, out1, {args})
  for (uint32_t d = 0; d < nDim; ++d) {{
    for (int k = 0; k < {k}; ++k) {{
      strides[{k} * d + k] = iter.strides(k)[d];
    }}
  }}
  MPSStream* mpsStream = getCurrentMPSStream();
  dispatch_sync_with_rethrow(mpsStream->queue(), ^() {{
    @autoreleasepool {{
      auto computeEncoder = mpsStream->commandEncoder();
      if (iter.is_contiguous()) {{
        auto twoOutputsPSO =
            lib.getPipelineStateForFunc(fmt::format("{{}}_dense_{{}}", func_name, scalarToMetalTypeString(in0)));
        [computeEncoder setComputePipelineState:twoOutputsPSO];
        mtl_setArgs(computeEncoder, out0, out1, {args});
        mtl_dispatch1DJob(computeEncoder, twoOutputsPSO, numThreads);
        return;
      }}
      auto twoOutputsPSO = lib.getPipelineStateForFunc(func_name + "_" + scalarToMetalTypeString(in0));
      getMPSProfiler().beginProfileKernel(twoOutputsPSO, func_name, {{{args}}});
      [computeEncoder setComputePipelineState:twoOutputsPSO];
      mtl_setArgs(computeEncoder, out0, out1, {args}, shape, strides, nDim);
      mtl_dispatch1DJob(computeEncoder, twoOutputsPSO, numThreads);
      getMPSProfiler().endProfileKernel(twoOutputsPSO);
    }}
  }});
}}
"""


def host_edits(ix, target: Target, name: str, stub: str, arity: int) -> list[Edit]:
    """The launcher (once per arity, after binary_mps_impl, in its namespace), the stub calling it before the
    file's REGISTER_DISPATCH block and its registration after the block's last line."""
    data = ix.tree.sources[target.hpath]
    launcher = _names(arity)["launcher"]
    edits = []
    ns = target.impl_call.rsplit("::", 1)[0] + "::" if target.impl_call and "::" in target.impl_call else ""
    if not re.search(rb"\b" + launcher.encode() + rb"\s*\(\s*TensorIteratorBase", data):
        impl = ix.definition("binary_mps_impl")
        if impl is None or impl.path != target.hpath:
            raise PortBlocked(
                f"{target.hpath} does not define binary_mps_impl: no place for the two-output launcher",
                "no binary launcher",
                None,
            )
        pos = _line_end(data, impl.span.end - 1)
        edits.append(Edit(target.hpath, pos, pos, launcher_text(arity)))
    regs = [r for r in target.hf.registrations if r.macro == "REGISTER_DISPATCH" and not r.via_macro]
    rpos = _line_end(data, max(r.span.end for r in regs) - 1) if regs else len(data)
    fn = f"{name}_mps_kernel"
    it = iterator_param(ix, stub)  # activation_fn takes a TensorIterator&: REGISTER_DISPATCH wants that exact type
    text = f'\nstatic void {fn}({it} iter) {{\n  {ns}{launcher}(iter, "{name}");\n}}\n'
    first = min((r.span.start for r in regs), default=rpos)
    spos = data.rfind(b"\n\n", 0, first) + 1 if regs else rpos
    edits.append(Edit(target.hpath, spos, spos, text))
    edits.append(Edit(target.hpath, rpos, rpos, dispatch_line(data, regs, stub, fn)))
    return edits
