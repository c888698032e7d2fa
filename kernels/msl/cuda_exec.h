// mps-migrate CUDA backend runtime: the execution model (the CPU backend's is
// msl_runtime_exec.h). A threadgroup is a block, threadgroup memory is __shared__,
// a simdgroup is a warp (32 lanes, as Apple's), barriers are bar.sync. SIMD
// functions shuffle every lane's value in lane order, so reductions add in the
// same order as the CPU backend's fibers. Written for mps-migrate.
#pragma once

struct __msl_tctx {
  uint3 tpig, lid, tgpig, tptg, tgpg, tpg, dtptg;
  uint tiitg, lane, sgitg, sgptg;
};

// Metal's dispatchThreads: the last group of each dimension may be partial; threads
// of a CUDA block past the grid return before the kernel runs.
__MSL_INLINE bool __msl_cuda_tctx(__msl_tctx& t, uint n0, uint n1, uint n2) {
  const uint3 lid = uint3{(uint)__nvvm_read_ptx_sreg_tid_x(), (uint)__nvvm_read_ptx_sreg_tid_y(), (uint)__nvvm_read_ptx_sreg_tid_z()};
  const uint3 dim = uint3{(uint)__nvvm_read_ptx_sreg_ntid_x(), (uint)__nvvm_read_ptx_sreg_ntid_y(), (uint)__nvvm_read_ptx_sreg_ntid_z()};
  const uint3 tg = uint3{(uint)__nvvm_read_ptx_sreg_ctaid_x(), (uint)__nvvm_read_ptx_sreg_ctaid_y(), (uint)__nvvm_read_ptx_sreg_ctaid_z()};
  const uint3 n = uint3{n0, n1, n2};
  t.tgpig = tg;
  t.lid = lid;
  t.tpig = tg * dim + lid;
  if (t.tpig.x >= n.x || t.tpig.y >= n.y || t.tpig.z >= n.z) return false;
  for (int i = 0; i < 3; ++i) {
    const uint left = n[i] - tg[i] * dim[i];
    t.tptg[i] = left < dim[i] ? left : dim[i];
  }
  t.tgpg = uint3{(uint)__nvvm_read_ptx_sreg_nctaid_x(), (uint)__nvvm_read_ptx_sreg_nctaid_y(), (uint)__nvvm_read_ptx_sreg_nctaid_z()};
  t.tpg = n;
  t.dtptg = dim;
  t.tiitg = (lid.z * t.tptg.y + lid.y) * t.tptg.x + lid.x;
  t.lane = t.tiitg & 31;
  t.sgitg = t.tiitg >> 5;
  t.sgptg = (t.tptg.x * t.tptg.y * t.tptg.z + 31) >> 5;
  return true;
}

// [[threadgroup(N)]] parameters: slices of the block's dynamic shared memory.
enum { __MSL_TGMEM_SLICE = 16384 };
extern __shared__ __attribute__((aligned(16))) unsigned char __msl_dyn_smem[];
template <int N> __MSL_INLINE void* __msl_tgmem() { return __msl_dyn_smem + N * __MSL_TGMEM_SLICE; }

namespace metal {
__MSL_INLINE void threadgroup_barrier(mem_flags = mem_flags::mem_none) { __nvvm_barrier_sync(0); }
__MSL_INLINE uint __msl_my_lane() { return (uint)__nvvm_read_ptx_sreg_laneid(); }
__MSL_INLINE uint32_t __msl_active() { return (uint32_t)__nvvm_activemask(); }
__MSL_INLINE void simdgroup_barrier(mem_flags = mem_flags::mem_none) { __nvvm_bar_warp_sync(__msl_active()); }

// v of lane `src` (every active lane must call this with the same mask)
template <class T> __MSL_INLINE T __msl_shfl(const T& v, uint src, uint32_t mask) {
  enum { W = (sizeof(T) + 3) / 4 };
  uint32_t w[W] = {};
  __builtin_memcpy(w, &v, sizeof(T));
  for (int i = 0; i < W; ++i) w[i] = (uint32_t)__nvvm_shfl_sync_idx_i32(mask, (int)w[i], (int)(src & 31u), 31);
  T r;
  __builtin_memcpy(&r, w, sizeof(T));
  return r;
}
// value of lane l, 0 for a lane that is not active (as the CPU backend)
template <class T> __MSL_INLINE T __msl_lane_of(const T& v, uint l, uint32_t mask) {
  const T x = __msl_shfl(v, l < 32 ? l : 0u, mask);
  return l < 32 && (mask >> l & 1) ? x : T{};
}
template <class T, class F> __MSL_INLINE T __msl_simd_fold(T v, F op, bool prefix, bool inclusive, T ident) {
  const uint32_t m = __msl_active();
  const uint me = __msl_my_lane();
  T acc = ident;
  for (uint l = 0; l < 32; ++l) {
    const T x = __msl_shfl(v, l, m);
    if (!(m >> l & 1)) continue;
    if (prefix && (l > me || (l == me && !inclusive))) continue;
    acc = op(acc, x);
  }
  return acc;
}
template <class T> __MSL_INLINE T __simd_sum(T v) { return __msl_simd_fold(v, [](T a, T b) { return T(a + b); }, false, true, T(0)); }
template <class T> __MSL_INLINE T __simd_product(T v) { return __msl_simd_fold(v, [](T a, T b) { return T(a * b); }, false, true, T(1)); }
template <class T> __MSL_INLINE T __simd_prefix_inclusive_sum(T v) { return __msl_simd_fold(v, [](T a, T b) { return T(a + b); }, true, true, T(0)); }
template <class T> __MSL_INLINE T __simd_prefix_exclusive_sum(T v) { return __msl_simd_fold(v, [](T a, T b) { return T(a + b); }, true, false, T(0)); }
template <class T> __MSL_INLINE T __simd_prefix_inclusive_product(T v) { return __msl_simd_fold(v, [](T a, T b) { return T(a * b); }, true, true, T(1)); }
template <class T> __MSL_INLINE T __simd_prefix_exclusive_product(T v) { return __msl_simd_fold(v, [](T a, T b) { return T(a * b); }, true, false, T(1)); }
template <class T> __MSL_INLINE T __simd_and(T v) { return __msl_simd_fold(v, [](T a, T b) { return T(a & b); }, false, true, T(~T(0))); }
template <class T> __MSL_INLINE T __simd_or(T v) { return __msl_simd_fold(v, [](T a, T b) { return T(a | b); }, false, true, T(0)); }
template <class T> __MSL_INLINE T __simd_xor(T v) { return __msl_simd_fold(v, [](T a, T b) { return T(a ^ b); }, false, true, T(0)); }
template <class T> __MSL_INLINE T __simd_max(T v) { return __msl_simd_fold(v, [](T a, T b) { return max(a, b); }, false, true, v); }
template <class T> __MSL_INLINE T __simd_min(T v) { return __msl_simd_fold(v, [](T a, T b) { return min(a, b); }, false, true, v); }
template <class T, class L> __MSL_INLINE T __simd_shuffle(T v, L lane) { return __msl_lane_of(v, uint(lane), __msl_active()); }
template <class T, class L> __MSL_INLINE T __simd_broadcast(T v, L lane) { return __simd_shuffle(v, lane); }
template <class T> __MSL_INLINE T __simd_broadcast_first(T v) {
  const uint32_t m = __msl_active();
  return __msl_shfl(v, m ? uint(__builtin_ctz(m)) : 0u, m);
}
template <class T, class D> __MSL_INLINE T __simd_shuffle_down(T v, D d) {
  const uint32_t m = __msl_active(); const uint t = __msl_my_lane() + uint(d);
  const T x = __msl_lane_of(v, t, m);
  return t < 32 ? x : v;
}
template <class T, class D> __MSL_INLINE T __simd_shuffle_up(T v, D d) {
  const uint32_t m = __msl_active(); const uint me = __msl_my_lane();
  const T x = __msl_lane_of(v, me >= uint(d) ? me - uint(d) : 32u, m);
  return me >= uint(d) ? x : v;
}
template <class T, class D> __MSL_INLINE T __simd_shuffle_xor(T v, D x) {
  return __msl_lane_of(v, (__msl_my_lane() ^ uint(x)) & 31, __msl_active());
}
template <class T, class D> __MSL_INLINE T __simd_shuffle_rotate_down(T v, D d) {
  return __msl_lane_of(v, (__msl_my_lane() + uint(d)) & 31, __msl_active());
}
template <class T, class D> __MSL_INLINE T __simd_shuffle_rotate_up(T v, D d) {
  return __msl_lane_of(v, (__msl_my_lane() - uint(d)) & 31, __msl_active());
}
template <class T, class D> __MSL_INLINE T __simd_shuffle_and_fill_down(T v, T fill, D d) {
  const uint t = __msl_my_lane() + uint(d);
  const T x = __msl_lane_of(v, t, __msl_active());
  return t < 32 ? x : fill;
}
template <class T, class D> __MSL_INLINE T __simd_shuffle_and_fill_up(T v, T fill, D d) {
  const uint me = __msl_my_lane();
  const T x = __msl_lane_of(v, me >= uint(d) ? me - uint(d) : 32u, __msl_active());
  return me >= uint(d) ? x : fill;
}
#include "msl_simd_overloads.h"
struct simd_vote {
  using vote_t = ulong;
  ulong v;
  explicit constexpr operator ulong() const { return v; }
  bool all() const { return v == 0xffffffffull; }
  bool any() const { return v != 0; }
};
__MSL_INLINE simd_vote simd_ballot(bool b) { return simd_vote{(ulong)(uint32_t)__nvvm_vote_ballot_sync(__msl_active(), b)}; }
__MSL_INLINE simd_vote simd_active_threads_mask() { return simd_vote{(ulong)__msl_active()}; }
__MSL_INLINE bool simd_any(bool b) { return simd_ballot(b).v != 0; }
__MSL_INLINE bool simd_all(bool b) { const uint32_t m = __msl_active(); return __nvvm_vote_ballot_sync(m, b) == m; }
__MSL_INLINE bool simd_is_first() { const uint32_t m = __msl_active(); return __msl_my_lane() == uint(__builtin_ctz(m)); }
}  // namespace metal

// ------------------------------------------------------ argument adapters
#include "msl_args.h"
