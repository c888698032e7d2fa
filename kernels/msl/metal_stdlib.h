// mps-migrate CPU backend runtime: what <metal_stdlib> provides, for clang on a CPU.
// Written for mps-migrate; compiled (with -include) in front of every
// pre-passed shader. Part 1: types, traits, math, atomics. Part 2: SIMD and
// barriers (fiber collectives). Part 3: the dispatcher (msl_runtime_exec.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#define __msl_kernel
#define __msl_threadgroup
#define __MSL_INLINE static inline __attribute__((always_inline))
// on a call: inline the callee whatever its cost (kernel -> launcher body -> thread loop), so
// element-wise kernels vectorise; not at -O0 (big TUs), where nothing vectorises anyway
#ifdef __OPTIMIZE__
#define __MSL_CALL_INLINE [[clang::always_inline]]
#else
#define __MSL_CALL_INLINE
#endif

// ---------------------------------------------------------------- scalars
typedef _Float16 half;
typedef __bf16 bfloat;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;

// float -> bfloat: round to nearest even on the bits (c10::BFloat16's rounding; subnormals kept,
// not flushed), NaN made quiet (sign and high payload kept). Branch-free integer code: both
// results are computed and one selected, so unrolled and vectorised loops keep it in registers
// (clang's own float -> __bf16 is a __truncsfbf2 libcall per element, never vectorised).
__MSL_INLINE constexpr __bf16 __msl_f2bf(float f) {
  const uint32_t b = __builtin_bit_cast(uint32_t, f);
  const uint32_t rne = (b + 0x7fffu + ((b >> 16) & 1u)) >> 16, quiet = (b >> 16) | 0x40u;
  return __builtin_bit_cast(__bf16, uint16_t((b & 0x7fffffffu) > 0x7f800000u ? quiet : rne));
}
#ifndef __MPS_MIGRATE_CUDA__  // on the GPU these conversions are instructions
// what clang still emits for implicit conversions and bfloat arithmetic; zig's compiler_rt lacks it
extern "C" __attribute__((visibility("hidden"), used)) __bf16 __truncsfbf2(float f) { return __msl_f2bf(f); }
#endif
// double -> float rounded to odd: a second rounding (to half or bfloat) then rounds only once
__MSL_INLINE constexpr float __msl_to_float_odd(double d) {
  float f = (float)d;
  if (d == d && (double)f != d) {
    uint32_t b = __builtin_bit_cast(uint32_t, f);
    if ((double)f > d ? f > 0 : f < 0) b -= 1;
    b |= 1u;
    f = __builtin_bit_cast(float, b);
  }
  return f;
}
#ifndef __MPS_MIGRATE_CUDA__
extern "C" __attribute__((visibility("hidden"), used)) __bf16 __truncdfbf2(double d) {
  return __msl_f2bf(__msl_to_float_odd(d));
}

// half <-> float libcalls (x86-64 without F16C). Defined here so that the
// link does not pull in zig's compiler_rt, whose math functions would then
// shadow libm's (its expf is several times slower). Bit-exact IEEE RNE.
extern "C" __attribute__((visibility("hidden"), used)) float __extendhfsf2(_Float16 h) {
  const uint32_t b = __builtin_bit_cast(uint16_t, h);
  const uint32_t sign = (b & 0x8000u) << 16, e = (b >> 10) & 0x1fu, m = b & 0x3ffu;
  if (e == 0x1f) return __builtin_bit_cast(float, sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u));  // NaN: quiet
  if (e == 0) {  // zero or subnormal: m * 2^-24 is exact in float
    const float v = (float)(int)m * 5.9604644775390625e-8f;
    return __builtin_bit_cast(float, sign | __builtin_bit_cast(uint32_t, v));
  }
  return __builtin_bit_cast(float, sign | ((e + 112u) << 23) | (m << 13));
}
extern "C" __attribute__((visibility("hidden"), used)) _Float16 __truncsfhf2(float f) {
  uint32_t x = __builtin_bit_cast(uint32_t, f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  uint32_t o;
  if (x >= 0x47800000u) {  // >= 65536: inf, NaN (quiet, payload kept) or overflow
    o = x > 0x7f800000u ? 0x7e00u | ((x >> 13) & 0x3ffu) : 0x7c00u;
  } else if (x < 0x38800000u) {  // half subnormal or zero: the float add rounds (RNE)
    const float magic = __builtin_bit_cast(float, 126u << 23);  // 0.5
    o = __builtin_bit_cast(uint32_t, __builtin_bit_cast(float, x) + magic) - (126u << 23);
  } else {
    o = (x + 0xc8000fffu + ((x >> 13) & 1u)) >> 13;  // rebias exponent, round to nearest even
  }
  return __builtin_bit_cast(_Float16, (uint16_t)(o | sign));
}
extern "C" __attribute__((visibility("hidden"), used)) _Float16 __truncdfhf2(double d) {
  return __truncsfhf2(__msl_to_float_odd(d));
}

#endif  // !__MPS_MIGRATE_CUDA__

// ---------------------------------------------------------------- vectors
#define __MSL_VEC(T, N) typedef T T##N __attribute__((ext_vector_type(N)));
#define __MSL_VECS(T) __MSL_VEC(T, 2) __MSL_VEC(T, 3) __MSL_VEC(T, 4)
__MSL_VECS(float) __MSL_VECS(half) __MSL_VECS(bfloat) __MSL_VECS(int)
__MSL_VECS(uint) __MSL_VECS(short) __MSL_VECS(ushort) __MSL_VECS(char)
__MSL_VECS(uchar) __MSL_VECS(long) __MSL_VECS(ulong)
#undef __MSL_VECS
#undef __MSL_VEC

#define INFINITY __builtin_inff()
#define NAN __builtin_nanf("")
#define HUGE_VALF __builtin_huge_valf()
#define MAXFLOAT 3.40282347e+38f
#define FLT_MAX 3.40282347e+38f
#define FLT_MIN 1.17549435e-38f
#define FLT_EPSILON 1.1920929e-7f
#define HALF_MAX 65504.0f
#define M_E_F 2.71828182845904523536f
#define M_LOG2E_F 1.44269504088896340736f
#define M_LOG10E_F 0.434294481903251827651f
#define M_LN2_F 0.693147180559945309417f
#define M_LN10_F 2.30258509299404568402f
#define M_PI_F 3.14159265358979323846f
#define M_PI_2_F 1.57079632679489661923f
#define M_PI_4_F 0.785398163397448309616f
#define M_1_PI_F 0.318309886183790671538f
#define M_2_PI_F 0.636619772367581343076f
#define M_2_SQRTPI_F 1.12837916709551257390f
#define M_SQRT2_F 1.41421356237309504880f
#define M_SQRT1_2_F 0.707106781186547524401f

// ----------------------------------------------------- conversion helpers
template <class T> struct __msl_vinfo { static constexpr int n = 0; using elem = T; };
template <class E, int N> struct __msl_vinfo<E __attribute__((ext_vector_type(N)))> {
  static constexpr int n = N; using elem = E;
};
template <class T> constexpr bool __msl_is_vec = __msl_vinfo<T>::n != 0;
template <class T> using __msl_elem_t = typename __msl_vinfo<T>::elem;

// Struct vectors with named components: bool vectors (one byte per lane, as
// in Metal; clang's bool ext-vectors are bit-packed without .x/.y) and
// packed_* vectors (element alignment, no padding). They convert to and from
// the ext-vector types.
template <class T, int N> struct __msl_smem;
template <class T> struct __msl_smem<T, 2> { T x, y; };
template <class T> struct __msl_smem<T, 3> { T x, y, z; };
template <class T> struct __msl_smem<T, 4> { T x, y, z, w; };
template <class T, int N, int Align> struct alignas(Align) __msl_svec : __msl_smem<T, N> {
  using __vec = std::conditional_t<std::is_same<T, bool>::value, int, T> __attribute__((ext_vector_type(N)));
  __msl_svec() = default;
  template <class... A, std::enable_if_t<sizeof...(A) == N, int> = 0>
  constexpr __msl_svec(A... a) : __msl_smem<T, N>{T(a)...} {}
  template <class V, std::enable_if_t<__msl_vinfo<V>::n == N, int> = 0>
  constexpr __msl_svec(const V& v) : __msl_smem<T, N>{} { for (int i = 0; i < N; ++i) (*this)[i] = T(v[i]); }
  constexpr T& operator[](int i) { return (&this->x)[i]; }
  constexpr const T& operator[](int i) const { return (&this->x)[i]; }
  operator __vec() const { __vec v; for (int i = 0; i < N; ++i) v[i] = (*this)[i]; return v; }
};
template <class T, int N, int A> struct __msl_vinfo<__msl_svec<T, N, A>> { static constexpr int n = N; using elem = T; };
typedef __msl_svec<bool, 2, 2> bool2;
typedef __msl_svec<bool, 3, 4> bool3;
typedef __msl_svec<bool, 4, 4> bool4;
#define __MSL_PACKED(T, N) typedef __msl_svec<T, N, alignof(T)> packed_##T##N;
#define __MSL_PACKEDS(T) __MSL_PACKED(T, 2) __MSL_PACKED(T, 3) __MSL_PACKED(T, 4)
__MSL_PACKEDS(float) __MSL_PACKEDS(half) __MSL_PACKEDS(bfloat) __MSL_PACKEDS(int) __MSL_PACKEDS(uint)
__MSL_PACKEDS(short) __MSL_PACKEDS(ushort) __MSL_PACKEDS(char) __MSL_PACKEDS(uchar) __MSL_PACKEDS(long)
__MSL_PACKEDS(ulong)
#undef __MSL_PACKEDS
#undef __MSL_PACKED
template <class T> constexpr bool __msl_is_lowp =
    std::is_same<T, half>::value || std::is_same<T, bfloat>::value;
template <class T> constexpr bool __msl_is_arith = std::is_arithmetic<T>::value || __msl_is_lowp<T>;

// Value conversion (never a bit cast): element-wise for vectors, through
// float between half and bfloat.
template <class To, class From>
__MSL_INLINE constexpr To __msl_cast(const From& x) {
  if constexpr (__msl_is_vec<To> && __msl_is_vec<From>) {
    static_assert(__msl_vinfo<To>::n == __msl_vinfo<From>::n, "vector size mismatch in cast");
    using TE = __msl_elem_t<To>;
    using FE = __msl_elem_t<From>;
    To r{};
    for (int i = 0; i < __msl_vinfo<To>::n; ++i) r[i] = __msl_cast<TE, FE>(x[i]);
    return r;
  } else if constexpr (__msl_is_vec<To>) {
    To r{};
    const auto e = __msl_cast<__msl_elem_t<To>>(x);
    for (int i = 0; i < __msl_vinfo<To>::n; ++i) r[i] = e;
    return r;
  } else if constexpr (__msl_is_vec<From>) {
    return static_cast<To>(x);  // ill-formed in Metal too; let clang say so
  } else if constexpr (std::is_same<To, From>::value) {
    return x;
  } else if constexpr ((__msl_is_lowp<To> || __msl_is_lowp<From>) &&
                       __msl_is_arith<From> && __msl_is_arith<To>) {
    if constexpr (std::is_same<To, bool>::value) return x != From(0);
#ifndef __MPS_MIGRATE_CUDA__
    else if constexpr (std::is_same<To, bfloat>::value && std::is_same<From, double>::value)
      return __msl_f2bf(__msl_to_float_odd(x));
    else if constexpr (std::is_same<To, bfloat>::value)  // through float, as c10::BFloat16(x)
      return __msl_f2bf(static_cast<float>(x));
#endif
    else if constexpr (std::is_same<From, float>::value || std::is_same<To, float>::value)
      return static_cast<To>(x);
    else return static_cast<To>(static_cast<float>(x));
  } else {
    return static_cast<To>(x);
  }
}

template <class V, int I>
__MSL_INLINE constexpr void __msl_vfill(V&) {}
template <class V, int I, class A, class... R>
__MSL_INLINE constexpr void __msl_vfill(V& v, const A& a, const R&... r) {
  using E = __msl_elem_t<V>;
  if constexpr (__msl_is_vec<A>) {
    for (int j = 0; j < __msl_vinfo<A>::n; ++j) v[I + j] = __msl_cast<E>(a[j]);
    __msl_vfill<V, I + __msl_vinfo<A>::n>(v, r...);
  } else {
    v[I] = __msl_cast<E>(a);
    __msl_vfill<V, I + 1>(v, r...);
  }
}
template <class A> constexpr int __msl_width = __msl_is_vec<A> ? __msl_vinfo<A>::n : 1;

// MSL vector constructor: float4(a, b.xy, c), float2(x) (splat), float2(int2).
template <class V, class... A>
__MSL_INLINE constexpr V __msl_vec(const A&... a) {
  if constexpr (sizeof...(A) == 0) {
    return V{};
  } else if constexpr (sizeof...(A) == 1) {
    return __msl_cast<V>(a...);
  } else {
    static_assert((__msl_width<A> + ...) == __msl_vinfo<V>::n,
                  "wrong number of components in vector constructor");
    V v{};
    __msl_vfill<V, 0>(v, a...);
    return v;
  }
}

// T(args...) where T may be a vector, half or bfloat (functional casts).
template <class T, class... A>
__MSL_INLINE constexpr T __msl_ctor(const A&... a) {
  if constexpr (__msl_is_vec<T>) return __msl_vec<T>(a...);
  else if constexpr (sizeof...(A) == 0) return T{};
  else if constexpr (sizeof...(A) == 1 && __msl_is_arith<T>) return __msl_cast<T>(a...);
  else return T(a...);
}

template <class To, class From>
__MSL_INLINE constexpr To as_type(const From& x) {
  static_assert(sizeof(To) == sizeof(From), "as_type requires types of equal size");
  return __builtin_bit_cast(To, x);
}

namespace metal {
// ------------------------------------------------------------ type traits
using std::declval;
using std::enable_if;
using std::enable_if_t;
using std::conditional;
using std::conditional_t;
using std::is_same;
using std::remove_cv_t;
using std::remove_reference_t;
using std::remove_pointer_t;
using std::decay_t;
using std::integral_constant;
using std::true_type;
using std::false_type;
template <class T, class U> constexpr bool is_same_v = std::is_same<T, U>::value;
template <class T> using __scal = __msl_elem_t<std::remove_cv_t<T>>;
template <class T> struct is_floating_point
    : integral_constant<bool, std::is_floating_point<__scal<T>>::value || __msl_is_lowp<__scal<T>>> {};
template <class T> struct is_integral : integral_constant<bool, std::is_integral<__scal<T>>::value> {};
template <class T> struct is_signed
    : integral_constant<bool, std::is_signed<__scal<T>>::value || __msl_is_lowp<__scal<T>>> {};
template <class T> struct is_unsigned : integral_constant<bool, std::is_unsigned<__scal<T>>::value> {};
template <class T> struct is_vector : integral_constant<bool, __msl_is_vec<std::remove_cv_t<T>>> {};
template <class T> struct is_scalar
    : integral_constant<bool, !__msl_is_vec<std::remove_cv_t<T>> &&
                                  (std::is_arithmetic<std::remove_cv_t<T>>::value ||
                                   __msl_is_lowp<std::remove_cv_t<T>>)> {};
template <class T> struct is_arithmetic
    : integral_constant<bool, is_floating_point<T>::value || is_integral<T>::value> {};
template <class T> constexpr bool is_floating_point_v = is_floating_point<T>::value;
template <class T> constexpr bool is_integral_v = is_integral<T>::value;
template <class T> constexpr bool is_signed_v = is_signed<T>::value;
template <class T> constexpr bool is_unsigned_v = is_unsigned<T>::value;
template <class T> constexpr bool is_scalar_v = is_scalar<T>::value;
template <class T> constexpr bool is_vector_v = is_vector<T>::value;
template <class T> constexpr bool is_arithmetic_v = is_arithmetic<T>::value;
template <class T> constexpr bool is_pointer_v = std::is_pointer<T>::value;
template <class T> constexpr bool is_const_v = std::is_const<T>::value;
template <class T> struct vec_elements : integral_constant<int, __msl_is_vec<T> ? __msl_vinfo<T>::n : 1> {};
template <class T> struct make_scalar { using type = __scal<T>; };
template <class T> using make_scalar_t = typename make_scalar<T>::type;

template <class T, size_t N>
struct array {
  T __e[N ? N : 1];
  constexpr T& operator[](size_t i) { return __e[i]; }
  constexpr const T& operator[](size_t i) const { return __e[i]; }
  constexpr size_t size() const { return N; }
  T* begin() { return __e; }
  T* end() { return __e + N; }
  const T* begin() const { return __e; }
  const T* end() const { return __e + N; }
  T* data() { return __e; }
};

// ---------------------------------------------------------- numeric_limits
template <class T> struct numeric_limits : std::numeric_limits<T> {};
template <> struct numeric_limits<half> {
  static constexpr bool is_specialized = true, is_signed = true, is_integer = false,
                        has_infinity = true, has_quiet_NaN = true;
  static constexpr int digits = 11;
  static constexpr half min() { return __builtin_bit_cast(half, (ushort)0x0400); }
  static constexpr half max() { return __builtin_bit_cast(half, (ushort)0x7bff); }
  static constexpr half lowest() { return __builtin_bit_cast(half, (ushort)0xfbff); }
  static constexpr half epsilon() { return __builtin_bit_cast(half, (ushort)0x1400); }
  static constexpr half infinity() { return __builtin_bit_cast(half, (ushort)0x7c00); }
  static constexpr half quiet_NaN() { return __builtin_bit_cast(half, (ushort)0x7e00); }
  static constexpr half denorm_min() { return __builtin_bit_cast(half, (ushort)0x0001); }
};
template <> struct numeric_limits<bfloat> {
  static constexpr bool is_specialized = true, is_signed = true, is_integer = false,
                        has_infinity = true, has_quiet_NaN = true;
  static constexpr int digits = 8;
  static constexpr bfloat min() { return __builtin_bit_cast(bfloat, (ushort)0x0080); }
  static constexpr bfloat max() { return __builtin_bit_cast(bfloat, (ushort)0x7f7f); }
  static constexpr bfloat lowest() { return __builtin_bit_cast(bfloat, (ushort)0xff7f); }
  static constexpr bfloat epsilon() { return __builtin_bit_cast(bfloat, (ushort)0x3c00); }
  static constexpr bfloat infinity() { return __builtin_bit_cast(bfloat, (ushort)0x7f80); }
  static constexpr bfloat quiet_NaN() { return __builtin_bit_cast(bfloat, (ushort)0x7fc0); }
  static constexpr bfloat denorm_min() { return __builtin_bit_cast(bfloat, (ushort)0x0001); }
};

// ------------------------------------------------------------------- math
// Scalar overloads for float/half/bfloat (half/bfloat computed in float and
// rounded once); vectors element-wise.
#define __MSL_VMAP1(NAME)                                                     \
  template <class V, enable_if_t<__msl_is_vec<V>, int> = 0>                   \
  __MSL_INLINE V NAME(V x) {                                                  \
    V r;                                                                      \
    for (int i = 0; i < __msl_vinfo<V>::n; ++i) r[i] = NAME(__scal<V>(x[i])); \
    return r;                                                                 \
  }
#define __MSL_VMAP2(NAME)                                                       \
  template <class V, enable_if_t<__msl_is_vec<V>, int> = 0>                     \
  __MSL_INLINE V NAME(V x, V y) {                                               \
    V r;                                                                        \
    for (int i = 0; i < __msl_vinfo<V>::n; ++i)                                 \
      r[i] = NAME(__scal<V>(x[i]), __scal<V>(y[i]));                            \
    return r;                                                                   \
  }
// Integer arguments to float functions compute in float (`precise::log(4)`).
template <class... A> constexpr bool __msl_all_int = (std::is_integral<A>::value && ...);
#define __MSL_INT1(NAME)                                                               \
  template <class I, enable_if_t<__msl_all_int<I>, int> = 0>                           \
  __MSL_INLINE float NAME(I x) { return NAME(float(x)); }
#define __MSL_INT2(NAME)                                                               \
  template <class I, class J, enable_if_t<__msl_all_int<I, J>, int> = 0>               \
  __MSL_INLINE float NAME(I x, J y) { return NAME(float(x), float(y)); }
// vector with a scalar (splatted): max(float2, 1.0f), max(1.0f, float2)
#define __MSL_VSCAL2(NAME)                                                         \
  template <class V, enable_if_t<__msl_is_vec<V>, int> = 0>                        \
  __MSL_INLINE V NAME(V x, __scal<V> y) { return NAME(x, __msl_cast<V>(y)); }      \
  template <class V, enable_if_t<__msl_is_vec<V>, int> = 0>                        \
  __MSL_INLINE V NAME(__scal<V> x, V y) { return NAME(__msl_cast<V>(x), y); }
#define __MSL_F1(NAME, IMPL)                                               \
  __MSL_INLINE float NAME(float x) { return IMPL; }                         \
  __MSL_INLINE half NAME(half h) { return (half)NAME((float)h); }           \
  __MSL_INLINE bfloat NAME(bfloat h) { return __msl_f2bf(NAME((float)h)); } \
  __MSL_INT1(NAME) __MSL_VMAP1(NAME)
#define __MSL_F2(NAME, IMPL)                                                         \
  __MSL_INLINE float NAME(float x, float y) { return IMPL; }                          \
  __MSL_INLINE half NAME(half a, half b) { return (half)NAME((float)a, (float)b); }   \
  __MSL_INLINE bfloat NAME(bfloat a, bfloat b) { return __msl_f2bf(NAME((float)a, (float)b)); } \
  __MSL_INT2(NAME) __MSL_VMAP2(NAME)

__MSL_F1(sin, __builtin_sinf(x)) __MSL_F1(cos, __builtin_cosf(x)) __MSL_F1(tan, __builtin_tanf(x))
__MSL_F1(asin, __builtin_asinf(x)) __MSL_F1(acos, __builtin_acosf(x)) __MSL_F1(atan, __builtin_atanf(x))
__MSL_F1(sinh, __builtin_sinhf(x)) __MSL_F1(cosh, __builtin_coshf(x)) __MSL_F1(tanh, __builtin_tanhf(x))
__MSL_F1(asinh, __builtin_asinhf(x)) __MSL_F1(acosh, __builtin_acoshf(x)) __MSL_F1(atanh, __builtin_atanhf(x))
__MSL_F1(exp, __builtin_expf(x)) __MSL_F1(exp2, __builtin_exp2f(x)) __MSL_F1(exp10, __builtin_powf(10.0f, x))
__MSL_F1(log, __builtin_logf(x)) __MSL_F1(log2, __builtin_log2f(x)) __MSL_F1(log10, __builtin_log10f(x))
__MSL_F1(sqrt, __builtin_sqrtf(x)) __MSL_F1(rsqrt, 1.0f / __builtin_sqrtf(x)) __MSL_F1(cbrt, __builtin_cbrtf(x))
__MSL_F1(ceil, __builtin_ceilf(x)) __MSL_F1(floor, __builtin_floorf(x)) __MSL_F1(trunc, __builtin_truncf(x))
__MSL_F1(round, __builtin_roundf(x)) __MSL_F1(rint, __builtin_rintf(x)) __MSL_F1(fabs, __builtin_fabsf(x))
__MSL_F1(fract, __builtin_fminf(x - __builtin_floorf(x), 0x1.fffffep-1f))
// sinpi/cospi/tanpi reduce the argument exactly (fmod by 2) and are exact at integers and half-integers, as Metal's
// are (log_gamma's reflection divides by sinpi at the poles: an inexact 0 there gives a finite value, not inf).
__MSL_INLINE float __msl_sinpi(float x) {
  float r = __builtin_fmodf(x, 2.0f);  // exact; every step below is exact too (Sterbenz), in float (CUDA: no double)
  if (r == 0.0f || __builtin_fabsf(r) == 1.0f) return __builtin_copysignf(0.0f, x);
  r = r > 1.0f ? r - 2.0f : r < -1.0f ? r + 2.0f : r;
  r = r > 0.5f ? 1.0f - r : r < -0.5f ? -1.0f - r : r;  // |r| <= 0.5: pi * r loses no relative accuracy
  return __builtin_sinf(M_PI_F * r);
}
__MSL_INLINE float __msl_cospi(float x) {
  float r = __builtin_fabsf(__builtin_fmodf(x, 2.0f));
  r = r > 1.0f ? 2.0f - r : r;  // [0, 1]
  if (r == 0.5f) return 0.0f;
  if (r < 0.25f) return __builtin_cosf(M_PI_F * r);
  if (r <= 0.75f) return __builtin_sinf(M_PI_F * (0.5f - r));
  return -__builtin_cosf(M_PI_F * (1.0f - r));
}
__MSL_F1(sinpi, __msl_sinpi(x)) __MSL_F1(cospi, __msl_cospi(x))
__MSL_F1(tanpi, __msl_sinpi(x) / __msl_cospi(x))
__MSL_F1(saturate, __builtin_fminf(__builtin_fmaxf(x, 0.0f), 1.0f))
__MSL_F2(atan2, __builtin_atan2f(x, y)) __MSL_F2(pow, __builtin_powf(x, y)) __MSL_F2(powr, __builtin_powf(x, y))
__MSL_F2(fmod, __builtin_fmodf(x, y)) __MSL_F2(fmin, __builtin_fminf(x, y)) __MSL_F2(fmax, __builtin_fmaxf(x, y))
__MSL_F2(copysign, __builtin_copysignf(x, y)) __MSL_F2(fdim, __builtin_fdimf(x, y))
__MSL_F2(step, y < x ? 0.0f : 1.0f)
// nextafter steps one representable value of the argument's own type: 16-bit types
// work on their bits (stepping in float and rounding would lose the step).
__MSL_INLINE float nextafter(float x, float y) { return __builtin_nextafterf(x, y); }
template <class T>
__MSL_INLINE T __msl_nextafter16(T x, T y) {
  if (x != x || y != y) return (T)((float)x + (float)y);
  if (x == y) return y;
  unsigned short b = __builtin_bit_cast(unsigned short, x);
  if ((b & 0x7fff) == 0) b = (unsigned short)((y > x ? 0 : 0x8000) | 1);  // smallest subnormal
  else if ((x < y) == ((b & 0x8000) == 0)) b = (unsigned short)(b + 1);  // away from zero
  else b = (unsigned short)(b - 1);
  return __builtin_bit_cast(T, b);
}
__MSL_INLINE half nextafter(half x, half y) { return __msl_nextafter16(x, y); }
__MSL_INLINE bfloat nextafter(bfloat x, bfloat y) { return __msl_nextafter16(x, y); }
__MSL_VMAP2(nextafter)
__MSL_F2(divide, x / y)

__MSL_INLINE float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
__MSL_INLINE half fma(half a, half b, half c) { return (half)__builtin_fmaf(a, b, c); }
__MSL_INLINE bfloat fma(bfloat a, bfloat b, bfloat c) { return (bfloat)__builtin_fmaf(a, b, c); }
template <class V, enable_if_t<__msl_is_vec<V>, int> = 0>
__MSL_INLINE V fma(V a, V b, V c) {
  V r;
  for (int i = 0; i < __msl_vinfo<V>::n; ++i) r[i] = fma(__scal<V>(a[i]), __scal<V>(b[i]), __scal<V>(c[i]));
  return r;
}
template <class T> __MSL_INLINE T mad(T a, T b, T c) { return a * b + c; }
__MSL_INLINE float ldexp(float x, int e) { return __builtin_ldexpf(x, e); }
__MSL_INLINE half ldexp(half x, int e) { return (half)__builtin_ldexpf(x, e); }
__MSL_INLINE float frexp(float x, int& e) { return __builtin_frexpf(x, &e); }
__MSL_INLINE float modf(float x, float& i) { return __builtin_modff(x, &i); }
__MSL_INLINE int ilogb(float x) { return __builtin_ilogbf(x); }
__MSL_INLINE float sincos(float x, float& c) { c = __builtin_cosf(x); return __builtin_sinf(x); }
__MSL_INLINE half sincos(half x, half& c) { c = cos(x); return sin(x); }
template <class V, enable_if_t<__msl_is_vec<V>, int> = 0>
__MSL_INLINE V sincos(V x, V& c) { c = cos(x); return sin(x); }

// classification: bool for scalars, bool vectors for vectors
#define __MSL_CLS(NAME, EXPR)                                               \
  template <class T, enable_if_t<!__msl_is_vec<T>, int> = 0>                \
  __MSL_INLINE bool NAME(T v) { float x = (float)v; return EXPR; }          \
  template <class V, enable_if_t<__msl_is_vec<V>, int> = 0>                 \
  __MSL_INLINE auto NAME(V v) {                                             \
    bool __attribute__((ext_vector_type(__msl_vinfo<V>::n))) r;             \
    for (int i = 0; i < __msl_vinfo<V>::n; ++i) r[i] = NAME(v[i]);          \
    return r;                                                               \
  }
__MSL_CLS(isnan, __builtin_isnan(x)) __MSL_CLS(isinf, __builtin_isinf(x))
__MSL_CLS(isfinite, __builtin_isfinite(x)) __MSL_CLS(isnormal, __builtin_isnormal(x))
__MSL_CLS(signbit, __builtin_signbit(x))
template <class A, class B> __MSL_INLINE bool isunordered(A a, B b) { return isnan(a) || isnan(b); }
template <class A, class B> __MSL_INLINE bool isordered(A a, B b) { return !isunordered(a, b); }

// min/max/clamp/abs: non-template overloads per scalar type, as Apple's (so
// they win over generic templates such as c10::metal::max; no bfloat min/max,
// which FusedOptimizerOps.metal defines itself), vectors element-wise.
#define __MSL_MINMAX(NAME, FB, OP)                                                              \
  __MSL_INLINE float NAME(float a, float b) { return FB(a, b); }                                \
  __MSL_INLINE half NAME(half a, half b) { return (half)FB((float)a, (float)b); }                \
  __MSL_IMINMAX(NAME, OP, char) __MSL_IMINMAX(NAME, OP, signed char) __MSL_IMINMAX(NAME, OP, uchar)  \
  __MSL_IMINMAX(NAME, OP, short) __MSL_IMINMAX(NAME, OP, ushort) __MSL_IMINMAX(NAME, OP, int)        \
  __MSL_IMINMAX(NAME, OP, uint) __MSL_IMINMAX(NAME, OP, long) __MSL_IMINMAX(NAME, OP, ulong)         \
  __MSL_VMAP2(NAME) __MSL_VSCAL2(NAME)
#define __MSL_IMINMAX(NAME, OP, T) \
  __MSL_INLINE T NAME(T a, T b) { return a OP b ? a : b; }
__MSL_MINMAX(max, __builtin_fmaxf, >)
__MSL_MINMAX(min, __builtin_fminf, <)
#undef __MSL_MINMAX
#undef __MSL_IMINMAX
__MSL_INLINE float clamp(float x, float lo, float hi) { return min(max(x, lo), hi); }
__MSL_INLINE half clamp(half x, half lo, half hi) { return min(max(x, lo), hi); }
#define __MSL_ICLAMP(T) __MSL_INLINE T clamp(T x, T lo, T hi) { return min(max(x, lo), hi); }
__MSL_ICLAMP(char) __MSL_ICLAMP(signed char) __MSL_ICLAMP(uchar) __MSL_ICLAMP(short) __MSL_ICLAMP(ushort)
__MSL_ICLAMP(int) __MSL_ICLAMP(uint) __MSL_ICLAMP(long) __MSL_ICLAMP(ulong)
#undef __MSL_ICLAMP
template <class V, enable_if_t<__msl_is_vec<V>, int> = 0>
__MSL_INLINE V clamp(V x, V lo, V hi) { return min(max(x, lo), hi); }
template <class V, enable_if_t<__msl_is_vec<V>, int> = 0>
__MSL_INLINE V clamp(V x, __scal<V> lo, __scal<V> hi) { return min(max(x, lo), hi); }
__MSL_INLINE float abs(float x) { return __builtin_fabsf(x); }
__MSL_INLINE half abs(half x) { return (half)__builtin_fabsf((float)x); }
__MSL_INLINE bfloat abs(bfloat x) { return (bfloat)__builtin_fabsf((float)x); }
template <class I, enable_if_t<__msl_all_int<I>, int> = 0>
__MSL_INLINE I abs(I x) {
  if constexpr (std::is_signed<I>::value) return x < 0 ? I(-x) : x;
  else return x;
}
__MSL_VMAP1(abs)
template <class T> __MSL_INLINE T max3(T a, T b, T c) { return max(max(a, b), c); }
template <class T> __MSL_INLINE T min3(T a, T b, T c) { return min(min(a, b), c); }
template <class T> __MSL_INLINE T fmax3(T a, T b, T c) { return max(max(a, b), c); }
template <class T> __MSL_INLINE T fmin3(T a, T b, T c) { return min(min(a, b), c); }
template <class T> __MSL_INLINE T median3(T a, T b, T c) { return max(min(a, b), min(max(a, b), c)); }
template <class T, class S> __MSL_INLINE T mix(T x, T y, S a) { return x + (y - x) * a; }
template <class T> __MSL_INLINE T sign(T x) {
  if constexpr (__msl_is_vec<T>) { T r; for (int i = 0; i < __msl_vinfo<T>::n; ++i) r[i] = sign<__scal<T>>(x[i]); return r; }
  else { float f = (float)x; return (T)(f > 0 ? 1.0f : f < 0 ? -1.0f : f); }
}
template <class T, class C> __MSL_INLINE T select(T a, T b, C c) {
  if constexpr (__msl_is_vec<T>) { T r; for (int i = 0; i < __msl_vinfo<T>::n; ++i) r[i] = c[i] ? b[i] : a[i]; return r; }
  else return c ? b : a;
}
template <class V> __MSL_INLINE bool all(V v) {
  if constexpr (__msl_is_vec<V>) { for (int i = 0; i < __msl_vinfo<V>::n; ++i) if (!v[i]) return false; return true; }
  else return bool(v);
}
template <class V> __MSL_INLINE bool any(V v) {
  if constexpr (__msl_is_vec<V>) { for (int i = 0; i < __msl_vinfo<V>::n; ++i) if (v[i]) return true; return false; }
  else return bool(v);
}
template <class V> __MSL_INLINE __scal<V> dot(V a, V b) {
  __scal<V> s = 0;
  for (int i = 0; i < __msl_vinfo<V>::n; ++i) s += a[i] * b[i];
  return s;
}
template <class V> __MSL_INLINE __scal<V> length(V a) { return sqrt(dot(a, a)); }
template <class V> __MSL_INLINE __scal<V> length_squared(V a) { return dot(a, a); }
template <class V> __MSL_INLINE __scal<V> distance(V a, V b) { return length(a - b); }
template <class V> __MSL_INLINE V normalize(V a) { return a / length(a); }
template <class V> __MSL_INLINE V cross(V a, V b) { return a.yzx * b.zxy - a.zxy * b.yzx; }

// integer functions
template <class T> __MSL_INLINE T popcount(T x) { return (T)__builtin_popcountll((unsigned long long)(std::make_unsigned_t<T>)x); }
template <class T> __MSL_INLINE T ctz(T x) {
  using U = std::make_unsigned_t<T>;
  return x == 0 ? T(sizeof(T) * 8) : T(__builtin_ctzll((unsigned long long)(U)x));
}
template <class T> __MSL_INLINE T clz(T x) {
  using U = std::make_unsigned_t<T>;
  return x == 0 ? T(sizeof(T) * 8) : T(__builtin_clzll((unsigned long long)(U)x) - (64 - 8 * sizeof(T)));
}
template <class T> __MSL_INLINE T absdiff(T a, T b) { return a > b ? T(a - b) : T(b - a); }
template <class T> __MSL_INLINE T hadd(T a, T b) { return T((a >> 1) + (b >> 1) + (a & b & 1)); }
template <class T> __MSL_INLINE T mul_hi(T a, T b) { return T(((__int128)a * (__int128)b) >> (8 * sizeof(T))); }
template <class T> __MSL_INLINE T rotate(T v, T n) {
  using U = std::make_unsigned_t<T>;
  const unsigned b = 8 * sizeof(T), s = unsigned(n) % b;
  return s ? T((U(v) << s) | (U(v) >> (b - s))) : v;
}
template <class T> __MSL_INLINE T reverse_bits(T v) {
  using U = std::make_unsigned_t<T>;
  U x = U(v), r = 0;
  for (unsigned i = 0; i < 8 * sizeof(T); ++i) { r = U((r << 1) | (x & 1)); x >>= 1; }
  return T(r);
}
template <class T> __MSL_INLINE T extract_bits(T x, uint off, uint bits) {
  using U = std::make_unsigned_t<T>;
  if (bits == 0) return 0;
  U m = bits >= 8 * sizeof(T) ? U(~U(0)) : U((U(1) << bits) - 1);
  return T((U(x) >> off) & m);
}

// precise:: and fast:: declare float overloads only (scalars and float vectors), as Apple's do (fast and precise
// are the two FP32 variants): a half or bfloat argument converts to float and the result is float, so
// `precise::atan2(h, 1.0 + h)` (half, float) and `precise::abs(bf)` resolve where metal::'s per-type sets are ambiguous.
template <class T> constexpr bool __msl_is_fvec = __msl_is_vec<T> && std::is_same<__msl_elem_t<T>, float>::value;
#define __MSL_P1(NAME)                                                                              \
  __MSL_INLINE float NAME(float x) { return metal::NAME(x); }                                       \
  template <class V, enable_if_t<__msl_is_fvec<V>, int> = 0> __MSL_INLINE V NAME(V x) { return metal::NAME(x); } \
  __MSL_INT1(NAME)
#define __MSL_P2(NAME)                                                                                  \
  __MSL_INLINE float NAME(float x, float y) { return metal::NAME(x, y); }                               \
  template <class V, enable_if_t<__msl_is_fvec<V>, int> = 0> __MSL_INLINE V NAME(V x, V y) { return metal::NAME(x, y); } \
  __MSL_INT2(NAME)
#define __MSL_P2S(NAME) __MSL_P2(NAME)                                                                          \
  template <class V, enable_if_t<__msl_is_fvec<V>, int> = 0> __MSL_INLINE V NAME(V x, float y) { return metal::NAME(x, V(y)); } \
  template <class V, enable_if_t<__msl_is_fvec<V>, int> = 0> __MSL_INLINE V NAME(float x, V y) { return metal::NAME(V(x), y); }
namespace precise {
__MSL_P1(sin) __MSL_P1(cos) __MSL_P1(tan) __MSL_P1(asin) __MSL_P1(acos) __MSL_P1(atan) __MSL_P1(sinh)
__MSL_P1(cosh) __MSL_P1(tanh) __MSL_P1(asinh) __MSL_P1(acosh) __MSL_P1(atanh) __MSL_P1(exp) __MSL_P1(exp2)
__MSL_P1(exp10) __MSL_P1(log) __MSL_P1(log2) __MSL_P1(log10) __MSL_P1(sqrt) __MSL_P1(rsqrt) __MSL_P1(sinpi)
__MSL_P1(cospi) __MSL_P1(tanpi) __MSL_P1(fabs) __MSL_P1(floor) __MSL_P1(ceil) __MSL_P1(trunc) __MSL_P1(round)
__MSL_P1(fract) __MSL_P1(cbrt) __MSL_P1(abs)
__MSL_P2(atan2) __MSL_P2(pow) __MSL_P2(powr) __MSL_P2(fmod) __MSL_P2(divide) __MSL_P2(copysign)
__MSL_P2S(fmin) __MSL_P2S(fmax) __MSL_P2S(min) __MSL_P2S(max)
__MSL_INLINE float clamp(float x, float lo, float hi) { return metal::clamp(x, lo, hi); }
template <class V, enable_if_t<__msl_is_fvec<V>, int> = 0> __MSL_INLINE V clamp(V x, V lo, V hi) { return metal::clamp(x, lo, hi); }
template <class V, enable_if_t<__msl_is_fvec<V>, int> = 0> __MSL_INLINE V clamp(V x, float lo, float hi) { return metal::clamp(x, lo, hi); }
__MSL_INLINE float sincos(float x, float& c) { return metal::sincos(x, c); }
template <class V, enable_if_t<__msl_is_fvec<V>, int> = 0> __MSL_INLINE V sincos(V x, V& c) { return metal::sincos(x, c); }
template <class V, enable_if_t<__msl_is_fvec<V>, int> = 0> __MSL_INLINE V normalize(V a) { return metal::normalize(a); }
template <class V, enable_if_t<__msl_is_fvec<V>, int> = 0> __MSL_INLINE float length(V a) { return metal::length(a); }
template <class V, enable_if_t<__msl_is_fvec<V>, int> = 0> __MSL_INLINE float distance(V a, V b) { return metal::distance(a, b); }
}  // namespace precise
#undef __MSL_P1
#undef __MSL_P2
#undef __MSL_P2S
namespace fast { using namespace precise; }

// ----------------------------------------------------------------- atomics
enum memory_order { memory_order_relaxed = 0, memory_order_acquire = 2, memory_order_release = 3,
                    memory_order_acq_rel = 4, memory_order_seq_cst = 5 };
enum class mem_flags : int { mem_none = 0, mem_device = 1, mem_threadgroup = 2, mem_texture = 4,
                             mem_threadgroup_imageblock = 8, mem_object_data = 16 };
__MSL_INLINE constexpr mem_flags operator|(mem_flags a, mem_flags b) { return mem_flags(int(a) | int(b)); }

template <class T> struct alignas(sizeof(T)) atomic { T __v; };
typedef atomic<int> atomic_int;
typedef atomic<uint> atomic_uint;
typedef atomic<bool> atomic_bool;
typedef atomic<float> atomic_float;
typedef atomic<ulong> atomic_ulong;
typedef atomic<long> atomic_long;

template <class T> using __abits = conditional_t<sizeof(T) == 8, uint64_t, conditional_t<sizeof(T) == 4, uint32_t,
                                  conditional_t<sizeof(T) == 2, uint16_t, uint8_t>>>;
template <class T> __MSL_INLINE __abits<T>* __ab(const atomic<T>* p) { return (__abits<T>*)(void*)&p->__v; }

template <class T> __MSL_INLINE T atomic_load_explicit(const atomic<T>* p, memory_order) {
  return __builtin_bit_cast(T, __atomic_load_n(__ab(p), __ATOMIC_SEQ_CST));
}
template <class T, class U> __MSL_INLINE void atomic_store_explicit(atomic<T>* p, U v, memory_order) {
  __atomic_store_n(__ab(p), __builtin_bit_cast(__abits<T>, T(v)), __ATOMIC_SEQ_CST);
}
template <class T, class U> __MSL_INLINE T atomic_exchange_explicit(atomic<T>* p, U v, memory_order) {
  return __builtin_bit_cast(T, __atomic_exchange_n(__ab(p), __builtin_bit_cast(__abits<T>, T(v)), __ATOMIC_SEQ_CST));
}
template <class T, class U>
__MSL_INLINE bool atomic_compare_exchange_weak_explicit(atomic<T>* p, T* expected, U desired, memory_order, memory_order) {
  __abits<T> e = __builtin_bit_cast(__abits<T>, *expected);
  bool ok = __atomic_compare_exchange_n(__ab(p), &e, __builtin_bit_cast(__abits<T>, T(desired)), false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  if (!ok) *expected = __builtin_bit_cast(T, e);
  return ok;
}
template <class T, class U>
__MSL_INLINE bool atomic_compare_exchange_strong_explicit(atomic<T>* p, T* e, U d, memory_order a, memory_order b) {
  return atomic_compare_exchange_weak_explicit(p, e, d, a, b);
}
template <class T, class F> __MSL_INLINE T __atomic_rmw(atomic<T>* p, F f) {
  T old = atomic_load_explicit(p, memory_order_relaxed);
  while (!atomic_compare_exchange_weak_explicit(p, &old, f(old), memory_order_relaxed, memory_order_relaxed)) {}
  return old;
}
#define __MSL_ATOMIC_OP(NAME, EXPR, INT_BUILTIN)                                    \
  template <class T, class U> __MSL_INLINE T NAME(atomic<T>* p, U v_, memory_order) { \
    const T v = T(v_);                                                               \
    if constexpr (std::is_integral<T>::value && !std::is_same<T, bool>::value)       \
      return INT_BUILTIN(&p->__v, v, __ATOMIC_SEQ_CST);                              \
    else return __atomic_rmw(p, [&](T o) { return T(EXPR); });                       \
  }
__MSL_ATOMIC_OP(atomic_fetch_add_explicit, o + v, __atomic_fetch_add)
__MSL_ATOMIC_OP(atomic_fetch_sub_explicit, o - v, __atomic_fetch_sub)
__MSL_ATOMIC_OP(atomic_fetch_and_explicit, o & v, __atomic_fetch_and)
__MSL_ATOMIC_OP(atomic_fetch_or_explicit, o | v, __atomic_fetch_or)
__MSL_ATOMIC_OP(atomic_fetch_xor_explicit, o ^ v, __atomic_fetch_xor)
template <class T, class U> __MSL_INLINE T atomic_fetch_max_explicit(atomic<T>* p, U v, memory_order) {
  return __atomic_rmw(p, [&](T o) { return o > T(v) ? o : T(v); });
}
template <class T, class U> __MSL_INLINE T atomic_fetch_min_explicit(atomic<T>* p, U v, memory_order) {
  return __atomic_rmw(p, [&](T o) { return o < T(v) ? o : T(v); });
}

// ---------------------------------------------------------------- matrices
// floatCxR: C columns of R-vectors; `v * m` is a row vector times m.
template <class T, int C, int R>
struct __msl_matrix {
  typedef T col __attribute__((ext_vector_type(R)));
  typedef T row __attribute__((ext_vector_type(C)));
  col __c[C];
  __msl_matrix() = default;
  explicit __msl_matrix(T d) {  // diagonal, as Metal's scalar constructor
    for (int i = 0; i < C; ++i)
      for (int j = 0; j < R; ++j) __c[i][j] = i == j ? d : T(0);
  }
  template <class... V, enable_if_t<sizeof...(V) == C && (__msl_is_vec<V> && ...), int> = 0>
  __msl_matrix(const V&... v) : __c{__msl_cast<col>(v)...} {}
  col& operator[](int i) { return __c[i]; }
  const col& operator[](int i) const { return __c[i]; }
  __msl_matrix& operator+=(const __msl_matrix& o) { for (int i = 0; i < C; ++i) __c[i] += o.__c[i]; return *this; }
};
template <class T, int C, int R>
__MSL_INLINE typename __msl_matrix<T, C, R>::row operator*(typename __msl_matrix<T, C, R>::col v,
                                                           const __msl_matrix<T, C, R>& m) {
  typename __msl_matrix<T, C, R>::row r;
  for (int i = 0; i < C; ++i) r[i] = dot(v, m.__c[i]);
  return r;
}
template <class T, int C, int R>
__MSL_INLINE typename __msl_matrix<T, C, R>::col operator*(const __msl_matrix<T, C, R>& m,
                                                           typename __msl_matrix<T, C, R>::row v) {
  typename __msl_matrix<T, C, R>::col r = T(0);
  for (int i = 0; i < C; ++i) r += m.__c[i] * v[i];
  return r;
}
template <class T, int C, int K, int R>
__MSL_INLINE __msl_matrix<T, C, R> operator*(const __msl_matrix<T, K, R>& a, const __msl_matrix<T, C, K>& b) {
  __msl_matrix<T, C, R> r;
  for (int i = 0; i < C; ++i) r.__c[i] = a * b.__c[i];
  return r;
}
template <class T, int C, int R>
__MSL_INLINE __msl_matrix<T, C, R> operator+(__msl_matrix<T, C, R> a, const __msl_matrix<T, C, R>& b) { return a += b; }
template <class T, int C, int R>
__MSL_INLINE __msl_matrix<T, C, R> operator*(T s, __msl_matrix<T, C, R> m) {
  for (int i = 0; i < C; ++i) m.__c[i] *= s;
  return m;
}
template <class T, int C, int R>
__MSL_INLINE __msl_matrix<T, C, R> operator*(const __msl_matrix<T, C, R>& m, T s) { return s * m; }
template <class T, int C, int R>
__MSL_INLINE __msl_matrix<T, R, C> transpose(const __msl_matrix<T, C, R>& m) {
  __msl_matrix<T, R, C> r;
  for (int i = 0; i < C; ++i)
    for (int j = 0; j < R; ++j) r.__c[j][i] = m.__c[i][j];
  return r;
}
#define __MSL_MAT(T, C, R) typedef __msl_matrix<T, C, R> T##C##x##R;
#define __MSL_MATS(T) __MSL_MAT(T, 2, 2) __MSL_MAT(T, 2, 3) __MSL_MAT(T, 2, 4) __MSL_MAT(T, 3, 2) \
  __MSL_MAT(T, 3, 3) __MSL_MAT(T, 3, 4) __MSL_MAT(T, 4, 2) __MSL_MAT(T, 4, 3) __MSL_MAT(T, 4, 4)
__MSL_MATS(float) __MSL_MATS(half)
#undef __MSL_MATS
#undef __MSL_MAT

}  // namespace metal

// [[threadgroup(N)]] kernel parameters: one block per OS worker thread; a
// threadgroup runs on one worker, so its threads share it (32 KiB, Apple's limit).
#ifdef __MPS_MIGRATE_CUDA__
#include "cuda_exec.h"  // blocks, shared memory, warp shuffles (CUDA backend)
#else
template <int N> __MSL_INLINE void* __msl_tgmem() {
  alignas(64) static thread_local unsigned char m[32768];
  return m;
}

#include "msl_runtime_exec.h"
#endif

namespace metal {
// --------------------------------------------------------- simdgroup_matrix
// Every lane holds the whole 8x8 matrix: simdgroup_matrix operations are
// uniform across the simdgroup, so each lane computing the full result gives
// what the hardware's distributed fragments give. Loads and stores are
// simdgroup collectives (no lane stores before all have loaded); the first
// active lane stores.
template <class T, int Cols, int Rows>
struct simdgroup_matrix {
  T __e[Rows][Cols];
  simdgroup_matrix() = default;
  explicit simdgroup_matrix(T diag) {  // diagonal matrix, as Metal's constructor
    for (int r = 0; r < Rows; ++r)
      for (int c = 0; c < Cols; ++c) __e[r][c] = r == c ? diag : T(0);
  }
};
typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;
typedef simdgroup_matrix<bfloat, 8, 8> simdgroup_bfloat8x8;
template <class T, int Cols, int Rows = Cols>
__MSL_INLINE simdgroup_matrix<T, Cols, Rows> make_filled_simdgroup_matrix(T v) {
  simdgroup_matrix<T, Cols, Rows> m;
  for (int r = 0; r < Rows; ++r)
    for (int c = 0; c < Cols; ++c) m.__e[r][c] = v;
  return m;
}
template <class T, int Cols, int Rows, class U>
__MSL_INLINE void simdgroup_load(simdgroup_matrix<T, Cols, Rows>& d, const U* src, ulong elements_per_row = Cols,
                                 ulong2 origin = ulong2{0, 0}, bool transpose = false) {
  simdgroup_barrier(mem_flags::mem_none);
  for (int r = 0; r < Rows; ++r)
    for (int c = 0; c < Cols; ++c) {
      const ulong row = origin.y + (transpose ? c : r), col = origin.x + (transpose ? r : c);
      d.__e[r][c] = __msl_cast<T>(src[row * elements_per_row + col]);
    }
}
template <class T, int Cols, int Rows, class U>
__MSL_INLINE void simdgroup_store(const simdgroup_matrix<T, Cols, Rows>& a, U* dst, ulong elements_per_row = Cols,
                                  ulong2 origin = ulong2{0, 0}, bool transpose = false) {
  simdgroup_barrier(mem_flags::mem_none);
  for (int r = 0; r < Rows; ++r)
    for (int c = 0; c < Cols; ++c) {
      const ulong row = origin.y + (transpose ? c : r), col = origin.x + (transpose ? r : c);
      dst[row * elements_per_row + col] = __msl_cast<U>(a.__e[r][c]);
    }
}
// d = a * b (+ c), accumulated in float
template <class T, int C, int R, class A, int K, class B, class E>
__MSL_INLINE void simdgroup_multiply_accumulate(simdgroup_matrix<T, C, R>& d, const simdgroup_matrix<A, K, R>& a,
                                                const simdgroup_matrix<B, C, K>& b,
                                                const simdgroup_matrix<E, C, R>& c) {
  simdgroup_matrix<T, C, R> out;
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) acc += float(a.__e[r][k]) * float(b.__e[k][j]);
      out.__e[r][j] = __msl_cast<T>(acc + float(c.__e[r][j]));
    }
  d = out;
}
template <class T, int C, int R, class A, int K, class B>
__MSL_INLINE void simdgroup_multiply(simdgroup_matrix<T, C, R>& d, const simdgroup_matrix<A, K, R>& a,
                                     const simdgroup_matrix<B, C, K>& b) {
  simdgroup_multiply_accumulate(d, a, b, make_filled_simdgroup_matrix<T, C, R>(T(0)));
}
}  // namespace metal

