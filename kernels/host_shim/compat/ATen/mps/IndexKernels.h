// mps-migrate host shim: the Metal source View.mm builds its gather/scatter kernels from (an MPS build of torch
// generates its own; this one is the shim's). fmt templates: {0} source type, {1} destination type, {2} the
// conversion of `x` to {1}. Buffers: 0 source, 1 destination, 2 sizes and 3 strides (uint) of the strided side,
// 4 element count, 5 rank (kernel_n only). Gather reads a strided view into a contiguous tensor; scatter writes a
// contiguous tensor into a strided view. One thread per element.
#pragma once

namespace at::mps {

static const char* GATHER_OPS_TEMPLATE = R"MPS_SHIM_METAL(
#include <metal_stdlib>
using namespace metal;

inline {1} convert_element({0} x) {{
  return {2};
}}

// Offset of the idx-th element (row-major order) of a view with these sizes and strides.
inline uint strided_offset(uint idx, constant uint* sizes, constant uint* strides, int ndim) {{
  uint offset = 0;
  for (int d = ndim - 1; d >= 0; --d) {{
    offset += (idx % sizes[d]) * strides[d];
    idx /= sizes[d];
  }}
  return offset;
}}

inline void gather_element(uint idx, device const {0}* src, device {1}* dst, constant uint* sizes,
                           constant uint* strides, uint numel, int ndim) {{
  if (idx < numel) {{
    dst[idx] = convert_element(src[strided_offset(idx, sizes, strides, ndim)]);
  }}
}}

kernel void gather_kernel_1(uint idx [[thread_position_in_grid]], device const {0}* src [[buffer(0)]],
                            device {1}* dst [[buffer(1)]], constant uint* sizes [[buffer(2)]],
                            constant uint* strides [[buffer(3)]], constant uint& numel [[buffer(4)]]) {{
  gather_element(idx, src, dst, sizes, strides, numel, 1);
}}

kernel void gather_kernel_2(uint idx [[thread_position_in_grid]], device const {0}* src [[buffer(0)]],
                            device {1}* dst [[buffer(1)]], constant uint* sizes [[buffer(2)]],
                            constant uint* strides [[buffer(3)]], constant uint& numel [[buffer(4)]]) {{
  gather_element(idx, src, dst, sizes, strides, numel, 2);
}}

kernel void gather_kernel_3(uint idx [[thread_position_in_grid]], device const {0}* src [[buffer(0)]],
                            device {1}* dst [[buffer(1)]], constant uint* sizes [[buffer(2)]],
                            constant uint* strides [[buffer(3)]], constant uint& numel [[buffer(4)]]) {{
  gather_element(idx, src, dst, sizes, strides, numel, 3);
}}

kernel void gather_kernel_4(uint idx [[thread_position_in_grid]], device const {0}* src [[buffer(0)]],
                            device {1}* dst [[buffer(1)]], constant uint* sizes [[buffer(2)]],
                            constant uint* strides [[buffer(3)]], constant uint& numel [[buffer(4)]]) {{
  gather_element(idx, src, dst, sizes, strides, numel, 4);
}}

kernel void gather_kernel_n(uint idx [[thread_position_in_grid]], device const {0}* src [[buffer(0)]],
                            device {1}* dst [[buffer(1)]], constant uint* sizes [[buffer(2)]],
                            constant uint* strides [[buffer(3)]], constant uint& numel [[buffer(4)]],
                            constant int& ndim [[buffer(5)]]) {{
  gather_element(idx, src, dst, sizes, strides, numel, ndim);
}}
)MPS_SHIM_METAL";

static const char* SCATTER_OPS_TEMPLATE = R"MPS_SHIM_METAL(
#include <metal_stdlib>
using namespace metal;

inline {1} convert_element({0} x) {{
  return {2};
}}

// Offset of the idx-th element (row-major order) of a view with these sizes and strides.
inline uint strided_offset(uint idx, constant uint* sizes, constant uint* strides, int ndim) {{
  uint offset = 0;
  for (int d = ndim - 1; d >= 0; --d) {{
    offset += (idx % sizes[d]) * strides[d];
    idx /= sizes[d];
  }}
  return offset;
}}

inline void scatter_element(uint idx, device const {0}* src, device {1}* dst, constant uint* sizes,
                            constant uint* strides, uint numel, int ndim) {{
  if (idx < numel) {{
    dst[strided_offset(idx, sizes, strides, ndim)] = convert_element(src[idx]);
  }}
}}

kernel void scatter_kernel_1(uint idx [[thread_position_in_grid]], device const {0}* src [[buffer(0)]],
                             device {1}* dst [[buffer(1)]], constant uint* sizes [[buffer(2)]],
                             constant uint* strides [[buffer(3)]], constant uint& numel [[buffer(4)]]) {{
  scatter_element(idx, src, dst, sizes, strides, numel, 1);
}}

kernel void scatter_kernel_2(uint idx [[thread_position_in_grid]], device const {0}* src [[buffer(0)]],
                             device {1}* dst [[buffer(1)]], constant uint* sizes [[buffer(2)]],
                             constant uint* strides [[buffer(3)]], constant uint& numel [[buffer(4)]]) {{
  scatter_element(idx, src, dst, sizes, strides, numel, 2);
}}

kernel void scatter_kernel_3(uint idx [[thread_position_in_grid]], device const {0}* src [[buffer(0)]],
                             device {1}* dst [[buffer(1)]], constant uint* sizes [[buffer(2)]],
                             constant uint* strides [[buffer(3)]], constant uint& numel [[buffer(4)]]) {{
  scatter_element(idx, src, dst, sizes, strides, numel, 3);
}}

kernel void scatter_kernel_4(uint idx [[thread_position_in_grid]], device const {0}* src [[buffer(0)]],
                             device {1}* dst [[buffer(1)]], constant uint* sizes [[buffer(2)]],
                             constant uint* strides [[buffer(3)]], constant uint& numel [[buffer(4)]]) {{
  scatter_element(idx, src, dst, sizes, strides, numel, 4);
}}

kernel void scatter_kernel_n(uint idx [[thread_position_in_grid]], device const {0}* src [[buffer(0)]],
                             device {1}* dst [[buffer(1)]], constant uint* sizes [[buffer(2)]],
                             constant uint* strides [[buffer(3)]], constant uint& numel [[buffer(4)]],
                             constant int& ndim [[buffer(5)]]) {{
  scatter_element(idx, src, dst, sizes, strides, numel, ndim);
}}
)MPS_SHIM_METAL";

} // namespace at::mps
