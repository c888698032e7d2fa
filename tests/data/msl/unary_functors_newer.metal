// A unary kernel file in the shape of newer PyTorch trees (functors picked by enable_if on the element kind,
// complex numbers as float2/half2), written for mps-migrate's tests.  Constructs the MSL runtime must accept as
// Apple's compiler does: unsuffixed literals mixed with half lanes inside precise:: calls, precise:: on bfloat,
// precise::sincos, integer-with-half precise::pow, literal ternaries.
#include <metal_stdlib>
using namespace metal;

template <typename T> struct is_cplx : false_type {};
template <> struct is_cplx<float2> : true_type {};
template <> struct is_cplx<half2> : true_type {};
template <typename T> constexpr bool is_cplx_v = is_cplx<T>::value;
template <typename T> constexpr bool is_real_v = is_floating_point_v<T> && !is_cplx_v<T>;

struct cexp_op {
  template <typename T, enable_if_t<is_real_v<T>, bool> = true>
  T operator()(const T v) { return T(precise::exp(v)); }
  template <typename T, enable_if_t<is_cplx_v<T>, bool> = true>
  T operator()(const T v) {
    auto mag = precise::exp(v.x);
    float c;
    float s = precise::sincos(static_cast<float>(v.y), c);
    using lane_t = decltype(v.x + v.x);
    return T(mag * static_cast<lane_t>(c), mag * static_cast<lane_t>(s));
  }
};

struct clog1p_op {
  template <typename T, enable_if_t<is_real_v<T>, bool> = true>
  T operator()(const T v) { return T(precise::log(1.0 + v)); }
  template <typename T, enable_if_t<is_cplx_v<T>, bool> = true>
  T operator()(const T v) {
    auto r = ::precise::sqrt((1.0f + v.x) * (1.0f + v.x) + v.y * v.y);
    auto ph = (v.x == -1 && v.y == 0) ? 0 : ::precise::atan2(v.y, 1.0 + v.x);
    return T(::precise::log(r), ph);
  }
};

struct csqrt_op {
  template <typename T, enable_if_t<is_cplx_v<T>, bool> = true>
  T operator()(const T v) {
    auto m = precise::sqrt(v.x * v.x + v.y * v.y);
    auto re = precise::sqrt((m + v.x) * .5);
    auto im = copysign(static_cast<decltype(v.y)>(precise::sqrt((m - v.x) * .5)), v.y);
    return T(re, im);
  }
};

struct mag_op {
  template <typename T, enable_if_t<is_real_v<T>, bool> = true>
  T operator()(const T v) { return static_cast<T>(precise::abs(v)); }
  template <typename T, enable_if_t<is_cplx_v<T>, bool> = true>
  T operator()(const T v) {
    const auto a = ::precise::abs(float2(v));
    return T(precise::sqrt(a.x * a.x + a.y * a.y), 0);
  }
};

struct pow2_op {
  template <typename T, enable_if_t<is_real_v<T>, bool> = true>
  T operator()(const T v) { return T(::precise::pow(2, v)); }
};

struct phase_op {
  template <typename T, enable_if_t<is_real_v<T>, bool> = true>
  T operator()(const T v) { return T(isnan(v) ? v : v < 0 ? M_PI_F : 0.0); }
};

template <typename T, typename F>
kernel void apply(device T* out [[buffer(0)]], constant T* in [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  F f;
  out[i] = f(in[i]);
}

#define ONE(NAME, OP, T) \
  template [[host_name(#NAME "_" #T)]] kernel void apply<T, OP>(device T*, constant T*, uint);
#define REAL(NAME, OP) ONE(NAME, OP, float) ONE(NAME, OP, half) ONE(NAME, OP, bfloat)
#define CPLX(NAME, OP) ONE(NAME, OP, float2) ONE(NAME, OP, half2)

REAL(exp, cexp_op) CPLX(exp, cexp_op)
REAL(log1p, clog1p_op) CPLX(log1p, clog1p_op)
CPLX(sqrt, csqrt_op)
REAL(abs, mag_op) CPLX(abs, mag_op)
REAL(exp2, pow2_op)
REAL(angle, phase_op)
