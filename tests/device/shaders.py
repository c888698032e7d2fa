"""Metal sources used by the device tests (written for these tests)."""

TYPES = ("float", "half", "bfloat", "int", "long", "bool", "float2")


def _each(fmt: str, types=TYPES) -> str:
    return "\n".join(fmt.format(T=t) for t in types)


INDEXING = (
    r"""
#include <c10/metal/indexing.h>
#include <c10/metal/utils.h>
using namespace metal;
using namespace c10::metal;

// unary: x*x (complex multiply for float2, identity for bool)
struct sq_functor {
  template <typename T>
  inline T operator()(const T x) { return static_cast<T>(c10::metal::mul(x, x)); }
};
DEFINE_UNARY_FLOATING_FUNCTOR(exp2);
// unary alpha: x*alpha
struct scale_functor {
  template <typename T, typename U>
  inline T operator()(const T x, const U a) { return static_cast<T>(c10::metal::mul(x, a)); }
};
// binary: a - 2b (per-op rounding in T)
struct bsub_functor {
  template <typename T>
  inline T operator()(const T a, const T b) { return static_cast<T>(a - b * 2); }
};
struct blt_functor {
  template <typename T>
  inline bool operator()(const T a, const T b) { return a < b; }
};
// binary alpha: a + alpha*b
struct badd_functor {
  template <typename T, typename U>
  inline T operator()(const T a, const T b, const U alpha) {
    return static_cast<T>(a + c10::metal::mul(b, alpha));
  }
};
// ternary: a*b + c
struct tfma_functor {
  template <typename T>
  inline T operator()(const T a, const T b, const T c) { return static_cast<T>(c10::metal::mul(a, b) + c); }
};
"""
    + _each("REGISTER_UNARY_OP(sq, {T}, {T});")
    + """
REGISTER_UNARY_OP(exp2, float, float);
REGISTER_UNARY_OP(exp2, half, half);
REGISTER_UNARY_OP(exp2, bfloat, bfloat);
REGISTER_UNARY_OP(exp2, int, float);
"""
    + _each("REGISTER_UNARY_ALPHA_OP(scale, {T}, {T}, {T});")
    + "\n"
    + _each("REGISTER_BINARY_OP(bsub, {T}, {T});")
    + """
struct bsubo_functor {
  template <typename T>
  inline T operator()(const T a, const T b) { return static_cast<T>(a - b * 2); }
};
REGISTER_OPMATH_BINARY_OP(bsubo, half, half);
"""
    + _each("REGISTER_BINARY_OP(blt, {T}, bool);", ("float", "half", "int"))
    + "\n"
    + _each("REGISTER_BINARY_CASTOUT_OP(blt, {T}, float);", ("float", "half", "int"))
    + "\n"
    + _each("REGISTER_BINARY_ALPHA_OP(badd, {T}, {T}, {T});")
    + "\n"
    + _each("REGISTER_TERNARY_OP(tfma, {T}, {T});")
    + """
struct tfmao_functor {
  template <typename T>
  inline T operator()(const T a, const T b, const T c) { return static_cast<T>(a * b + c); }
};
REGISTER_OPMATH_TERNARY_OP(tfmao, half, half);
REGISTER_OPMATH_TERNARY_OP(tfmao, bfloat, bfloat);
"""
)
