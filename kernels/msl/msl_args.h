// mps-migrate MSL runtime: argument adapters and the argument description the Python binders
// read, shared by the CPU (msl_runtime_exec.h) and CUDA (cuda_exec.h) execution models.
#pragma once
template <class F> struct __msl_fn;
template <class R, class... A> struct __msl_fn<R(A...)> {
  template <size_t I> using arg = __type_pack_element<I, A...>;
};
template <class P> __MSL_INLINE P __msl_buf(void* p) {
  if constexpr (std::is_pointer<P>::value) return (P)p;
  else if constexpr (std::is_reference<P>::value) return *(std::remove_reference_t<P>*)p;
  else return *(P*)p;
}
template <class P> __MSL_INLINE P __msl_pos(const uint3& v) {
  using Q = std::remove_cv_t<std::remove_reference_t<P>>;
  if constexpr (!__msl_is_vec<Q>) return (Q)v.x;
  else if constexpr (__msl_vinfo<Q>::n == 2) return __msl_vec<Q>(v.x, v.y);
  else return __msl_vec<Q>(v.x, v.y, v.z);
}
template <class P> __MSL_INLINE P __msl_pos(uint v) { return __msl_pos<P>(uint3{v, 0, 0}); }

// argument description for the Python binders (the CPU backend reads it through dlsym, the CUDA
// backend as a constant array in the PTX)
struct __msl_arginfo {
  int32_t kind;  // 0 opaque/void, 1 float, 2 half, 3 bfloat, 4 signed, 5 unsigned, 6 bool
  int32_t size;  // sizeof(pointee), 0 for void
  int32_t elem_size;
  int32_t lanes;  // 1 for scalars
  int32_t is_const;
  int32_t is_pointer;
};
template <class P> constexpr __msl_arginfo __msl_info() {
  using R = std::remove_reference_t<std::remove_pointer_t<std::remove_reference_t<P>>>;
  using V = std::remove_cv_t<R>;
  using E = __msl_elem_t<V>;
  __msl_arginfo a{};
  a.is_const = std::is_const<R>::value;
  a.is_pointer = std::is_pointer<std::remove_reference_t<P>>::value;
  if constexpr (std::is_void<V>::value) {
    a.kind = 0;
  } else {
    a.size = (int)sizeof(V);
    a.elem_size = (int)sizeof(E);
    a.lanes = __msl_is_vec<V> ? __msl_vinfo<V>::n : 1;
    if constexpr (std::is_same<E, bool>::value) a.kind = 6;
    else if constexpr (std::is_same<E, half>::value) a.kind = 2;
    else if constexpr (std::is_same<E, bfloat>::value) a.kind = 3;
    else if constexpr (std::is_floating_point<E>::value) a.kind = 1;
    else if constexpr (std::is_integral<E>::value && std::is_signed<E>::value) a.kind = 4;
    else if constexpr (std::is_integral<E>::value) a.kind = 5;
    else a.kind = 0;
  }
  return a;
}
