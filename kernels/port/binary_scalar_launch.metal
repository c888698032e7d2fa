
// mps-migrate: binary kernels with one run-time scalar, in the inputs' dtype after the buffers binary_mps_impl binds
template <typename T, typename F>
kernel void binary_indexing_scalar(
    constant void* input_ [[buffer(0)]],
    constant void* other_ [[buffer(1)]],
    device void* out_ [[buffer(2)]],
    constant uint3* offsets [[buffer(3)]],
    constant T& scalar [[buffer(4)]],
    uint tid [[thread_position_in_grid]]) {
  auto out = (device T*)((device uint8_t*)out_ + offsets[tid].x);
  auto input = (constant T*)((constant uint8_t*)input_ + offsets[tid].y);
  auto other = (constant T*)((constant uint8_t*)other_ + offsets[tid].z);
  F f;
  *out = static_cast<T>(f(*input, *other, scalar));
}

template <typename T, typename F>
kernel void binary_dense_scalar(
    constant T* input [[buffer(0)]],
    constant T* other [[buffer(1)]],
    device T* out [[buffer(2)]],
    constant T& scalar [[buffer(3)]],
    uint tid [[thread_position_in_grid]]) {
  F f;
  out[tid] = static_cast<T>(f(input[tid], other[tid], scalar));
}

#define ${register_macro}(NAME, DTYPE)
  template [[host_name(#NAME "_" #DTYPE)]] kernel void
  binary_indexing_scalar<DTYPE, NAME##_functor>(
      constant void* input_,
      constant void* other_,
      device void* out_,
      constant uint3* offsets,
      constant DTYPE& scalar,
      uint tid);
  template [[host_name(#NAME "_dense_" #DTYPE)]] kernel void
  binary_dense_scalar<DTYPE, NAME##_functor>(
      constant DTYPE * input_,
      constant DTYPE * other_,
      device DTYPE * out_,
      constant DTYPE& scalar,
      uint tid)
