// Hand-written fixture in the shape of a PyTorch 2.6-era kernels/*.metal file:
// no c10/metal, every file defines its own instantiation macros.
#include <metal_stdlib>
using namespace metal;

template <typename T>
kernel void hop(
    constant void* a_ [[buffer(0)]],
    device void* out_ [[buffer(1)]],
    uint tid [[thread_position_in_grid]]) {
  *(device T*)out_ = *(constant T*)a_;
}

template <typename T, typename U>
void kernel skip_kernel(
    constant T* a [[buffer(0)]],
    device U* out [[buffer(1)]],
    uint tid [[thread_position_in_grid]]) {
  out[tid] = U(a[tid]);
}

#define REGISTER_HOP_OP(DTYPE)                              \
  template [[host_name("hop_" #DTYPE)]] kernel void hop<DTYPE>( \
      constant void* a_ [[buffer(0)]],                      \
      device void* out_ [[buffer(1)]],                      \
      uint tid [[thread_position_in_grid]]);

#define REGISTER_SKIP_OP(DTI, DTO)                                         \
  template [[host_name("skip_" #DTI "_" #DTO)]] void kernel skip_kernel<DTI, DTO>( \
      constant DTI*, device DTO*, uint)

REGISTER_HOP_OP(float);
REGISTER_HOP_OP(half);
#if __METAL_VERSION__ >= 310
REGISTER_HOP_OP(bfloat);
#endif
REGISTER_SKIP_OP(int, float);
REGISTER_SKIP_OP(uchar, half);

#if 0
REGISTER_HOP_OP(dead);
#endif

template [[host_name("hop_literal_int")]] kernel void hop<int>(
    constant void*, device void*, uint);
