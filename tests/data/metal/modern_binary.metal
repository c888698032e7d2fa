// Hand-written fixture in the shape of a modern (2.10+) kernels/*.metal file.
#include <c10/metal/indexing.h>
#include <c10/metal/utils.h>
#include <metal_stdlib>
using namespace metal;

struct widget_functor {
  template <typename T>
  inline T operator()(const T a, const T b) {
    return static_cast<T>(a * b + a);
  }
};

/* a block comment mentioning struct fake_functor { and REGISTER_BINARY_OP(nope, a, b) */
struct gadget_functor {
  template <typename T, enable_if_t<is_floating_point_v<T>, bool> = true>
  inline T operator()(const T a, const T b) {
    return a;
  }
  template <typename T, enable_if_t<is_integral_v<T>, bool> = true>
  inline float operator()(const T a, const T b) {
    return float(a);
  }
};

struct blend_alpha_functor {
  template <typename T>
  inline T operator()(const T a, const T b, const T alpha) {
    return a + alpha * b;
  }
};

struct fma3_functor {
  template <typename T>
  inline T operator()(const T a, const T b, const T c) {
    return a * b + c;
  }
};

DEFINE_BINARY_COMPARISON_FUNCTOR(below, <);

// Convenience macros, one defined in terms of another.
#define MY_INTEGER_OP_NO_BOOL(NAME)  \
  REGISTER_BINARY_OP(NAME, long, long); \
  REGISTER_BINARY_OP(NAME, int, int);   \
  REGISTER_BINARY_OP(NAME, short, short)

#define MY_INTEGER_OP(NAME)        \
  MY_INTEGER_OP_NO_BOOL(NAME); /* keep bool last */ \
  REGISTER_BINARY_OP(NAME, bool, bool)

#define MY_INT2FLOAT_OP(NAME)             \
  REGISTER_BINARY_OP(NAME, long, float); \
  REGISTER_BINARY_OP(NAME, bool, float)

#define MY_FLOAT_OP(NAME)                 \
  REGISTER_BINARY_OP(NAME, float, float); \
  REGISTER_BINARY_OP(NAME, half, half);   \
  REGISTER_BINARY_OP(NAME, bfloat, bfloat)

#define MY_OPMATH_FLOAT_OP(NAME)                 \
  REGISTER_OPMATH_BINARY_OP(NAME, float, float); \
  REGISTER_OPMATH_BINARY_OP(NAME, half, half)

// Token pasting builds the vector dtype.
#define MY_VEC2_OP(NAME, SCALAR) REGISTER_BINARY_OP(NAME, SCALAR##2, SCALAR##2)

MY_FLOAT_OP(widget);
MY_INTEGER_OP(widget);
MY_FLOAT_OP(gadget);
MY_INT2FLOAT_OP(gadget);
MY_OPMATH_FLOAT_OP(widget);
MY_VEC2_OP(widget, float);
REGISTER_BINARY_ALPHA_OP(blend_alpha, float, float, float);
REGISTER_OPMATH_TERNARY_OP(fma3, half, half);
REGISTER_UNARY_OP(
    gadget,
    int,
    float);

// A kernel template instantiated through a local macro with a pasted host name.
template <typename T>
kernel void scale_by_two(
    device T* out [[buffer(0)]],
    constant T* in [[buffer(1)]],
    uint tid [[thread_position_in_grid]]) {
  out[tid] = in[tid] * 2;
}

#define NAME_OF(KIND, DTYPE) #KIND "_by_two_" #DTYPE
#define INSTANTIATE_SCALE(DTYPE)                                       \
  template [[host_name(NAME_OF(scale, DTYPE))]] kernel void scale_by_two<DTYPE>( \
      device DTYPE*, constant DTYPE*, uint)

INSTANTIATE_SCALE(float);
INSTANTIATE_SCALE(half);
