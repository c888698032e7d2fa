// mps-migrate MSL runtime: the SIMD functions' per-type overload sets, shared by the
// CPU (msl_runtime_exec.h) and CUDA (cuda_exec.h) backends; each defines the __simd_*
// templates first. Included inside namespace metal. Written for mps-migrate.
// Metal declares the SIMD functions as overloads per type (not templates), so
// c10's templated wrappers of the same names are never ambiguous with them.
#define __MSL_SIMD_ARITH(T)                                                              \
  __MSL_INLINE T simd_sum(T v) { return __simd_sum(v); }                                 \
  __MSL_INLINE T simd_product(T v) { return __simd_product(v); }                         \
  __MSL_INLINE T simd_max(T v) { return __simd_max(v); }                                 \
  __MSL_INLINE T simd_min(T v) { return __simd_min(v); }                                 \
  __MSL_INLINE T simd_prefix_inclusive_sum(T v) { return __simd_prefix_inclusive_sum(v); } \
  __MSL_INLINE T simd_prefix_exclusive_sum(T v) { return __simd_prefix_exclusive_sum(v); } \
  __MSL_INLINE T simd_prefix_inclusive_product(T v) { return __simd_prefix_inclusive_product(v); } \
  __MSL_INLINE T simd_prefix_exclusive_product(T v) { return __simd_prefix_exclusive_product(v); }
#define __MSL_SIMD_BITS(T)                                     \
  __MSL_INLINE T simd_and(T v) { return __simd_and(v); }       \
  __MSL_INLINE T simd_or(T v) { return __simd_or(v); }         \
  __MSL_INLINE T simd_xor(T v) { return __simd_xor(v); }
#define __MSL_SIMD_MOVE(T)                                                                          \
  __MSL_INLINE T simd_shuffle(T v, ushort l) { return __simd_shuffle(v, l); }                       \
  __MSL_INLINE T simd_broadcast(T v, ushort l) { return __simd_broadcast(v, l); }                   \
  __MSL_INLINE T simd_broadcast_first(T v) { return __simd_broadcast_first(v); }                    \
  __MSL_INLINE T simd_shuffle_down(T v, ushort d) { return __simd_shuffle_down(v, d); }             \
  __MSL_INLINE T simd_shuffle_up(T v, ushort d) { return __simd_shuffle_up(v, d); }                 \
  __MSL_INLINE T simd_shuffle_xor(T v, ushort m) { return __simd_shuffle_xor(v, m); }               \
  __MSL_INLINE T simd_shuffle_rotate_down(T v, ushort d) { return __simd_shuffle_rotate_down(v, d); } \
  __MSL_INLINE T simd_shuffle_rotate_up(T v, ushort d) { return __simd_shuffle_rotate_up(v, d); }   \
  __MSL_INLINE T simd_shuffle_and_fill_down(T v, T f, ushort d) { return __simd_shuffle_and_fill_down(v, f, d); } \
  __MSL_INLINE T simd_shuffle_and_fill_up(T v, T f, ushort d) { return __simd_shuffle_and_fill_up(v, f, d); }
#define __MSL_SIMD_ALL4(M, T) M(T) M(T##2) M(T##3) M(T##4)
__MSL_SIMD_ALL4(__MSL_SIMD_ARITH, float) __MSL_SIMD_ALL4(__MSL_SIMD_ARITH, half)
__MSL_SIMD_ALL4(__MSL_SIMD_ARITH, int) __MSL_SIMD_ALL4(__MSL_SIMD_ARITH, uint)
__MSL_SIMD_ALL4(__MSL_SIMD_ARITH, short) __MSL_SIMD_ALL4(__MSL_SIMD_ARITH, ushort)
__MSL_SIMD_ALL4(__MSL_SIMD_ARITH, char) __MSL_SIMD_ALL4(__MSL_SIMD_ARITH, uchar)
__MSL_SIMD_ALL4(__MSL_SIMD_BITS, int) __MSL_SIMD_ALL4(__MSL_SIMD_BITS, uint)
__MSL_SIMD_ALL4(__MSL_SIMD_BITS, short) __MSL_SIMD_ALL4(__MSL_SIMD_BITS, ushort)
__MSL_SIMD_ALL4(__MSL_SIMD_BITS, char) __MSL_SIMD_ALL4(__MSL_SIMD_BITS, uchar)
__MSL_SIMD_ALL4(__MSL_SIMD_MOVE, float) __MSL_SIMD_ALL4(__MSL_SIMD_MOVE, half)
__MSL_SIMD_ALL4(__MSL_SIMD_MOVE, int) __MSL_SIMD_ALL4(__MSL_SIMD_MOVE, uint)
__MSL_SIMD_ALL4(__MSL_SIMD_MOVE, short) __MSL_SIMD_ALL4(__MSL_SIMD_MOVE, ushort)
__MSL_SIMD_ALL4(__MSL_SIMD_MOVE, char) __MSL_SIMD_ALL4(__MSL_SIMD_MOVE, uchar)
__MSL_SIMD_MOVE(bool) __MSL_SIMD_MOVE(bfloat)
