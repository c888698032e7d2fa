"""The host side of a reduction port: the launch helper header written once per tree, and each overload's
new body, rendered from rules/reductions.yaml with the host function's own parameter names."""

from __future__ import annotations

import re
from string import Template

from migrate.model import NativeEntry
from migrate.port.reduce.kernel import THREADS
from migrate.port.translate import PortBlocked
from migrate.source import SourceFile
from migrate.source.literal_search import closing_brace
from migrate.source.params import definition_params

HEADER = "aten/src/ATen/native/mps/operations/ReduceLaunch.h"
INCLUDE = "ATen/native/mps/operations/ReduceLaunch.h"

HEADER_TEXT = f"""#pragma once
// Host side of the reductions ported from MPSGraph by mps-migrate: the reduced dims, the output shape, and
// the launch of a generated reduction kernel (one threadgroup per output element, 64-bit offsets).
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/mps/OperationUtils.h>

#ifndef AT_PER_OPERATOR_HEADERS
#include <ATen/Functions.h>
#else
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/ones.h>
#endif

#include <algorithm>
#include <array>
#include <cmath>

namespace at::native {{

constexpr uint32_t kReduceThreads = {THREADS}; // the kernels' REDUCE_THREADS

// The dims a reduction runs over, wrapped: every dim where none are named, none for a 0-dim tensor.
static inline std::vector<int64_t> reduce_dims(const TensorBase& t, OptionalIntArrayRef dims) {{
  std::vector<int64_t> out;
  if (t.dim() == 0) {{
    return out;
  }}
  if (!dims.has_value() || dims->empty()) {{
    for (int64_t d = 0; d < t.dim(); ++d) {{
      out.push_back(d);
    }}
    return out;
  }}
  for (const auto d : *dims) {{
    const auto wrapped = maybe_wrap_dim(d, t.dim());
    if (std::find(out.begin(), out.end(), wrapped) == out.end()) {{
      out.push_back(wrapped);
    }}
  }}
  return out;
}}

static inline DimVector reduced_shape(const TensorBase& t, IntArrayRef dims, bool keepdim) {{
  DimVector shape;
  for (int64_t d = 0; d < t.dim(); ++d) {{
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) {{
      shape.push_back(t.size(d));
    }} else if (keepdim) {{
      shape.push_back(1);
    }}
  }}
  return shape;
}}

// Encodes `kernel` on the current MPS stream; `encode` binds its arguments and dispatches it.
static inline void encode_kernel(const std::string& kernel,
                                 void (^encode)(id<MTLComputeCommandEncoder>, id<MTLComputePipelineState>)) {{
  using namespace mps;
  MPSStream* stream = getCurrentMPSStream();
  dispatch_sync_with_rethrow(stream->queue(), ^() {{
    @autoreleasepool {{
      id<MTLComputeCommandEncoder> encoder = stream->commandEncoder();
      id<MTLComputePipelineState> pso = MetalShaderLibrary::getBundledLibrary().getPipelineStateForFunc(kernel);
      [encoder setComputePipelineState:pso];
      encode(encoder, pso);
    }}
  }});
}}

// torch's vector norm special-cases these orders; the kernels do too. Negative and infinite orders have no
// identity: torch refuses them over an empty dim.
static inline std::string norm_kernel(const TensorBase& t, IntArrayRef dims, double ord) {{
  TORCH_CHECK(!t.is_complex(), "the Metal norm kernels take real inputs, got ", t.scalar_type());
  if (ord < 0 || std::isinf(ord)) {{
    for (const auto d : dims) {{
      TORCH_CHECK(t.size(d) != 0, "linalg.vector_norm cannot compute the ", ord,
                  " norm on an empty tensor because the operation does not have an identity");
    }}
    TORCH_CHECK(t.numel() != 0 || !dims.empty(), "linalg.vector_norm cannot compute the ", ord,
                " norm on an empty tensor because the operation does not have an identity");
  }}
  if (ord == 0) {{
    return "norm_zero";
  }}
  if (ord == 1) {{
    return "norm_one";
  }}
  if (ord == 2) {{
    return "norm_two";
  }}
  if (std::isinf(ord)) {{
    return ord > 0 ? "norm_inf" : "norm_neg_inf";
  }}
  return "norm_p";
}}

// Runs kernel `name`_<dtype of inputs[0]>: the kept dims of inputs[0] first (one threadgroup per element),
// then `dims`; each tensor's strides in that order. An output with the input's rank is indexed by the
// same dims (keepdim, or a softmax row); a smaller one by the kept dims in order.
static inline void launch_reduction(const std::string& name,
                                    const std::vector<Tensor>& inputs,
                                    const std::vector<Tensor>& outputs,
                                    IntArrayRef dims,
                                    bool keepdim,
                                    std::vector<float> params = {{}}) {{
  using namespace mps;
  const auto& x = inputs[0];
  for (const auto& o : outputs) {{
    if (o.numel() == 0) {{
      return;
    }}
  }}
  const int64_t ndim = x.dim();
  std::vector<int64_t> order;
  for (int64_t d = 0; d < ndim; ++d) {{
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) {{
      order.push_back(d);
    }}
  }}
  const uint32_t kept = order.size();
  order.insert(order.end(), dims.begin(), dims.end());
  std::vector<int64_t> sizes{{1}};
  int64_t groups = 1, reduce_size = 1;
  for (uint32_t k = 0; k < order.size(); ++k) {{
    const int64_t size = x.size(order[k]);
    (k < kept ? groups : reduce_size) *= size;
    if (k == 0) {{
      sizes[0] = size;
    }} else {{
      sizes.push_back(size);
    }}
  }}
  if (groups == 0) {{
    return;
  }}
  std::vector<std::vector<int64_t>> strides;
  for (const auto& t : inputs) {{
    std::vector<int64_t> s(std::max<size_t>(order.size(), 1), 0);
    for (uint32_t k = 0; k < order.size(); ++k) {{
      s[k] = t.stride(order[k]);
    }}
    strides.push_back(s);
  }}
  for (const auto& t : outputs) {{
    std::vector<int64_t> s(std::max<size_t>(order.size(), 1), 0);
    for (uint32_t k = 0; k < order.size(); ++k) {{
      if (t.dim() == ndim) {{
        s[k] = t.stride(order[k]);
      }} else if (k < kept && k < static_cast<uint32_t>(t.dim())) {{
        s[k] = t.stride(k);
      }}
    }}
    strides.push_back(s);
  }}
  if (params.empty()) {{
    params.push_back(0.0f);
  }}
  const std::array<uint32_t, 2> ndims{{kept, static_cast<uint32_t>(order.size()) - kept}};
  encode_kernel(name + "_" + scalarToMetalTypeString(x), ^(id<MTLComputeCommandEncoder> encoder, id<MTLComputePipelineState> pso) {{
    mtl_setArgs(encoder, sizes, ndims, reduce_size, params);
    unsigned idx = 4;
    for (const auto& t : inputs) {{
      mtl_setBuffer(encoder, t, idx++);
    }}
    for (const auto& t : outputs) {{
      mtl_setBuffer(encoder, t, idx++);
    }}
    for (const auto& s : strides) {{
      mtl_setBytes(encoder, s, idx++);
    }}
    uint32_t threads = 1;
    while (threads < reduce_size && threads < kReduceThreads) {{
      threads *= 2;
    }}
    threads = std::min<uint32_t>(threads, [pso maxTotalThreadsPerThreadgroup]);
    [encoder dispatchThreadgroups:MTLSizeMake(groups, 1, 1) threadsPerThreadgroup:MTLSizeMake(threads, 1, 1)];
  }});
}}

// Padding before each dim, from torch's pad list (the last dim first: before, after, then the dim before it).
static inline std::vector<int64_t> pad_before(const TensorBase& t, IntArrayRef pad) {{
  std::vector<int64_t> before(t.dim(), 0);
  for (size_t i = 0; 2 * i < pad.size(); ++i) {{
    before[t.dim() - 1 - i] = pad[2 * i];
  }}
  return before;
}}

static inline DimVector padded_shape(const TensorBase& t, IntArrayRef pad) {{
  DimVector shape(t.sizes().begin(), t.sizes().end());
  for (size_t i = 0; 2 * i + 1 < pad.size(); ++i) {{
    shape[t.dim() - 1 - i] += pad[2 * i] + pad[2 * i + 1];
  }}
  return shape;
}}

// Nearest resize: input elements per output element along each resized (last) dim, as torch computes it.
static inline std::vector<float> nearest_scales(const TensorBase& in,
                                                const TensorBase& out,
                                                const std::vector<std::optional<double>>& given) {{
  std::vector<float> scales(in.dim(), 1.0f);
  const int64_t first = in.dim() - static_cast<int64_t>(given.size());
  for (size_t i = 0; i < given.size(); ++i) {{
    const int64_t d = first + i;
    scales[d] = given[i].has_value() && *given[i] > 0 ? static_cast<float>(1.0 / *given[i])
                                                       : static_cast<float>(in.size(d)) / out.size(d);
  }}
  return scales;
}}

// Runs gather kernel `name`_<dtype>: one thread per output element reads the input element its coordinates map
// to (padding `before` each dim, resize `scales`), or `value` outside the input.
static inline void launch_gather(const std::string& name,
                                 const Tensor& input,
                                 const Tensor& output,
                                 std::vector<int64_t> before,
                                 std::vector<float> scales,
                                 float value) {{
  using namespace mps;
  if (output.numel() == 0) {{
    return;
  }}
  const size_t ndim = std::max<size_t>(input.dim(), 1);
  auto padded = [ndim](IntArrayRef values, int64_t fill) {{
    std::vector<int64_t> out(values.begin(), values.end());
    out.resize(ndim, fill);
    return out;
  }};
  const auto out_sizes = padded(output.sizes(), 1), in_sizes = padded(input.sizes(), 1);
  const auto in_strides = padded(input.strides(), 0), out_strides = padded(output.strides(), 0);
  before.resize(ndim, 0);
  scales.resize(ndim, 1.0f);
  const std::vector<float> params{{value}};
  const uint32_t dims = input.dim();
  encode_kernel(name + "_" + scalarToMetalTypeString(input), ^(id<MTLComputeCommandEncoder> encoder, id<MTLComputePipelineState> pso) {{
    mtl_setArgs(encoder, input, output, out_sizes, in_sizes, in_strides, out_strides, before, scales, params, dims);
    mtl_dispatch1DJob(encoder, pso, output.numel());
  }});
}}

}} // namespace at::native
"""


def schema_names(e: NativeEntry) -> list[str]:
    """Argument names of a schema, out= tensors included, in order (``*`` dropped)."""
    inner = e.func[e.func.index("(") + 1 : e.func.rindex(") ->")]
    names, depth, cur = [], 0, ""
    for c in inner + ",":
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if c == "," and depth == 0:
            part = cur.strip()
            cur = ""
            if part and part != "*":
                names.append(part.split("=")[0].split()[-1])
            continue
        cur += c
    return names


def body_span(data: bytes, start: int, end: int) -> tuple[int, int]:
    """(after the body's ``{``, at its ``}``) of the function defined in data[start:end]."""
    code = SourceFile(data).code
    depth, k = 0, start
    while k < end:
        c = code[k : k + 1]
        if c == b"(":
            depth += 1
        elif c == b")":
            depth -= 1
        elif c == b"{" and depth == 0:
            close = closing_brace(code, k)
            if close is None:
                break
            return k + 1, close
        k += 1
    raise PortBlocked("cannot find the function's body", "unreadable code")


def render_body(template: str, entry: NativeEntry, fn_text: str, line: int, kernel: str, where: str) -> str:
    """The new body: the template with each $argument the host parameter at the schema argument's place."""
    params = definition_params(fn_text, line)
    names = schema_names(entry)
    if len(params) != len(names):
        raise PortBlocked(
            f"{entry.overload_name}: the host function takes {len(params)} parameters, the schema {len(names)}",
            "stub signature",
            where,
        )
    binding = {n: p.name for n, p in zip(names, params)}
    local = set(re.findall(r"\b(?:auto|float|double)\s+(\w+)\s*=", template))
    if clash := sorted(local & set(binding.values())):
        raise PortBlocked(
            f"{entry.overload_name}: the port's body declares {', '.join(clash)}, a parameter of the host function",
            "stub signature",
            where,
        )
    binding["kernel"] = kernel
    try:
        text = Template(template).substitute(binding)
    except (KeyError, ValueError) as exc:
        raise PortBlocked(
            f"{entry.overload_name}: the port's body names {exc}, which the schema does not have",
            "stub signature",
            where,
        ) from None
    return "\n" + "\n".join(("  " + ln) if ln else "" for ln in text.rstrip("\n").split("\n")) + "\n"
