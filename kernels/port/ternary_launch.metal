
// mps-migrate: ternary kernels launched by ternary_mps_impl over the iterator (out, input, other1, other2)
template <typename T, typename F>
kernel void ternary_indexing(
    constant void* input_ [[buffer(0)]],
    constant void* other1_ [[buffer(1)]],
    constant void* other2_ [[buffer(2)]],
    device void* out_ [[buffer(3)]],
    constant long* sizes [[buffer(4)]],
    constant long* strides [[buffer(5)]],
    constant uint& ndim [[buffer(6)]],
    uint tid [[thread_position_in_grid]]) {
  // strides: per dimension the byte strides of (out, input, other1, other2), fastest dimension first
  long offs[4] = {0, 0, 0, 0};
  long idx = tid;
  for (uint d = 0; d < ndim; ++d) {
    const long pos = idx % sizes[d];
    idx /= sizes[d];
    for (uint k = 0; k < 4; ++k) {
      offs[k] += pos * strides[4 * d + k];
    }
  }
  auto out = (device T*)((device uint8_t*)out_ + offs[0]);
  auto input = (constant T*)((constant uint8_t*)input_ + offs[1]);
  auto other1 = (constant T*)((constant uint8_t*)other1_ + offs[2]);
  auto other2 = (constant T*)((constant uint8_t*)other2_ + offs[3]);
  F f;
  *out = static_cast<T>(f(*input, *other1, *other2));
}

template <typename T, typename F>
kernel void ternary_dense(
    constant T* input [[buffer(0)]],
    constant T* other1 [[buffer(1)]],
    constant T* other2 [[buffer(2)]],
    device T* out [[buffer(3)]],
    uint tid [[thread_position_in_grid]]) {
  F f;
  out[tid] = static_cast<T>(f(input[tid], other1[tid], other2[tid]));
}

#define ${register_macro}(NAME, DTYPE)
  template [[host_name(#NAME "_" #DTYPE)]] kernel void
  ternary_indexing<DTYPE, NAME##_functor>(
      constant void* input_,
      constant void* other1_,
      constant void* other2_,
      device void* out_,
      constant long* sizes,
      constant long* strides,
      constant uint& ndim,
      uint tid);
  template [[host_name(#NAME "_dense_" #DTYPE)]] kernel void
  ternary_dense<DTYPE, NAME##_functor>(
      constant DTYPE * input,
      constant DTYPE * other1,
      constant DTYPE * other2,
      device DTYPE * out,
      uint tid)
