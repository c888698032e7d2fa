// mps-migrate CPU backend runtime, part 2: execution of a dispatch.
// Plain kernels run as loops; kernels with barriers or SIMD functions run each
// threadgroup as cooperative fibers (hand-written context switch). Threadgroups
// are spread over a few OS threads. Written for mps-migrate.
#pragma once
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

// An allocation of this library (the runtime's, or a kernel's own) that fails says so on the
// worker's log, so verify reports "out of memory" rather than the null store that follows.
// Hidden (-fvisibility=hidden): only this library's calls come here.
extern "C" void* __libc_malloc(size_t);
extern "C" void* malloc(size_t n) noexcept {
  void* p = __libc_malloc(n);
  if (!p && n) {
    static const char said[] = "mps-migrate runtime: malloc failed: cannot allocate memory\n";
    if (write(2, said, sizeof said - 1) < 0) p = nullptr;
  }
  return p;
}

extern "C" {
// Mirrors migrate/device/cpu/library.py:_Dispatch
struct __msl_dispatch {
  uint32_t threads[3];
  uint32_t group[3];
  uint32_t ngroups[3];
  int32_t nworkers;
  int32_t checked;
  const uint64_t* guards;  // [lo, hi) pairs of protected ranges (checked mode)
  int32_t nguards;
  int32_t status;  // 0 ok, 1 guard fault, 2 runtime error, 3 other fault (checked mode)
  uint64_t fault_addr;
  uint32_t fault_tpig[3];
  uint32_t fault_tgpig[3];
  uint32_t fault_lid[3];
  char message[256];
  int32_t fault_signal;  // signal of a checked-mode fault
};
}

struct __msl_tctx {
  uint3 tpig, lid, tgpig, tptg, tgpg, tpg, dtptg;
  uint tiitg, lane, sgitg, sgptg;
};

enum { __MSL_RUN = 0, __MSL_BARRIER = 1, __MSL_SIMD = 2, __MSL_DONE = 3 };
enum { __MSL_SLOT = 32 };  // bytes per lane in a SIMD exchange

struct __msl_sched;
struct __msl_fiber {
  void* sp;
  int state;
  int simd_buf;
  __msl_tctx t;
  __msl_sched* s;
};
struct __msl_simdgroup {
  unsigned round;
  uint32_t mask[2];
  alignas(16) unsigned char slots[2][32][__MSL_SLOT];
};
typedef void (*__msl_body_fn)(void*, const __msl_tctx&);
struct __msl_sched {
  void* sp;
  __msl_fiber* fibers;
  __msl_simdgroup* sgs;
  int nfibers;
  __msl_body_fn body;
  void* env;
};

static thread_local __msl_fiber* __msl_cur_fiber = nullptr;
static thread_local const __msl_tctx* __msl_cur_t = nullptr;
static thread_local __msl_dispatch* __msl_cur_d = nullptr;
static thread_local sigjmp_buf* __msl_jb = nullptr;

static inline void __msl_fail(const char* msg) {
  __msl_dispatch* d = __msl_cur_d;
  if (!d) return;
  if (__atomic_exchange_n(&d->status, 2, __ATOMIC_SEQ_CST) == 0) {
    int i = 0;
    for (; msg[i] && i < 255; ++i) d->message[i] = msg[i];
    d->message[i] = 0;
  }
}

// ------------------------------------------------------------ context switch
extern "C" void __msl_swap(void** save_sp, void* new_sp);
extern "C" void __msl_fiber_entry();
#if defined(__x86_64__)
asm(R"(
  .text
  .p2align 4
  .hidden __msl_swap
  .globl __msl_swap
  .type __msl_swap,@function
__msl_swap:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  retq
  .size __msl_swap, .-__msl_swap
  .hidden __msl_fiber_entry
  .globl __msl_fiber_entry
  .type __msl_fiber_entry,@function
__msl_fiber_entry:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size __msl_fiber_entry, .-__msl_fiber_entry
)");
// initial frame: r15 r14 r13 r12 rbx rbp ret
static inline void* __msl_init_stack(char* top, void (*fn)(void*), void* arg) {
  uintptr_t t = (uintptr_t)top & ~(uintptr_t)15;
  void** sp = (void**)(t - 72);
  sp[0] = 0; sp[1] = 0; sp[2] = (void*)fn; sp[3] = arg; sp[4] = 0; sp[5] = 0;
  sp[6] = (void*)&__msl_fiber_entry;
  return sp;
}
#elif defined(__aarch64__)
asm(R"(
  .text
  .p2align 4
  .hidden __msl_swap
  .globl __msl_swap
  .type __msl_swap,%function
__msl_swap:
  sub sp, sp, #160
  stp x19, x20, [sp, #0]
  stp x21, x22, [sp, #16]
  stp x23, x24, [sp, #32]
  stp x25, x26, [sp, #48]
  stp x27, x28, [sp, #64]
  stp x29, x30, [sp, #80]
  stp d8, d9, [sp, #96]
  stp d10, d11, [sp, #112]
  stp d12, d13, [sp, #128]
  stp d14, d15, [sp, #144]
  mov x2, sp
  str x2, [x0]
  mov sp, x1
  ldp x19, x20, [sp, #0]
  ldp x21, x22, [sp, #16]
  ldp x23, x24, [sp, #32]
  ldp x25, x26, [sp, #48]
  ldp x27, x28, [sp, #64]
  ldp x29, x30, [sp, #80]
  ldp d8, d9, [sp, #96]
  ldp d10, d11, [sp, #112]
  ldp d12, d13, [sp, #128]
  ldp d14, d15, [sp, #144]
  add sp, sp, #160
  ret
  .size __msl_swap, .-__msl_swap
  .hidden __msl_fiber_entry
  .globl __msl_fiber_entry
  .type __msl_fiber_entry,%function
__msl_fiber_entry:
  mov x0, x19
  blr x20
  brk #0
  .size __msl_fiber_entry, .-__msl_fiber_entry
)");
static inline void* __msl_init_stack(char* top, void (*fn)(void*), void* arg) {
  uintptr_t t = (uintptr_t)top & ~(uintptr_t)15;
  void** sp = (void**)(t - 160);
  for (int i = 0; i < 20; ++i) sp[i] = 0;
  sp[0] = arg;                          // x19
  sp[1] = (void*)fn;                    // x20
  sp[11] = (void*)&__msl_fiber_entry;   // x30
  return sp;
}
#else
#error "mps-migrate CPU backend: fibers need x86-64 or aarch64"
#endif

static inline void __msl_yield(__msl_fiber* f, int state) {
  f->state = state;
  __msl_swap(&f->sp, f->s->sp);
}

static void __msl_fiber_main(void* arg) {
  __msl_fiber* f = (__msl_fiber*)arg;
  for (;;) {
    f->s->body(f->s->env, f->t);
    __msl_yield(f, __MSL_DONE);
  }
}

// ------------------------------------------------------------ barriers, SIMD
namespace metal {
__MSL_INLINE void threadgroup_barrier(mem_flags = mem_flags::mem_none) {
  __msl_fiber* f = __msl_cur_fiber;
  if (f) __msl_yield(f, __MSL_BARRIER);
  else if (__msl_cur_t && __msl_cur_t->tptg.x * __msl_cur_t->tptg.y * __msl_cur_t->tptg.z > 1)
    __msl_fail("threadgroup_barrier reached in a kernel run without fibers");
}

// Deposit `v` for this lane, wait until the simdgroup's active lanes have
// deposited theirs, return the lane slots and the active mask.
template <class T>
static inline const unsigned char* __msl_simd_xchg(const T& v, uint32_t& mask) {
  static_assert(sizeof(T) <= __MSL_SLOT, "SIMD value too large");
  __msl_fiber* f = __msl_cur_fiber;
  if (!f) {
    static thread_local unsigned char one[32][__MSL_SLOT];
    const uint lane = __msl_cur_t ? __msl_cur_t->lane : 0;
    __builtin_memcpy(one[lane], &v, sizeof(T));
    mask = 1u << lane;
    if (__msl_cur_t && __msl_cur_t->tptg.x * __msl_cur_t->tptg.y * __msl_cur_t->tptg.z > 1)
      __msl_fail("SIMD function reached in a kernel run without fibers");
    return &one[0][0];
  }
  __msl_simdgroup* sg = &f->s->sgs[f->t.sgitg];
  const int b = sg->round & 1;
  __builtin_memcpy(sg->slots[b][f->t.lane], &v, sizeof(T));
  f->simd_buf = b;
  __msl_yield(f, __MSL_SIMD);
  mask = sg->mask[b];
  return &sg->slots[b][0][0];
}
template <class T> static inline T __msl_lane(const unsigned char* s, uint32_t mask, uint l) {
  T r{};
  if (l < 32 && (mask >> l & 1)) __builtin_memcpy(&r, s + l * __MSL_SLOT, sizeof(T));
  return r;
}
static inline uint __msl_my_lane() { return __msl_cur_t ? __msl_cur_t->lane : 0; }

template <class T, class F> static inline T __msl_simd_fold(T v, F op, bool prefix, bool inclusive, T ident) {
  uint32_t m;
  const unsigned char* s = __msl_simd_xchg(v, m);
  const uint me = __msl_my_lane();
  T acc = ident;
  for (uint l = 0; l < 32; ++l) {
    if (!(m >> l & 1)) continue;
    if (prefix && (l > me || (l == me && !inclusive))) break;
    acc = op(acc, __msl_lane<T>(s, m, l));
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
template <class T> __MSL_INLINE T __simd_max(T v) {
  uint32_t m; const unsigned char* s = __msl_simd_xchg(v, m); T acc = v;
  for (uint l = 0; l < 32; ++l) if (m >> l & 1) acc = max(acc, __msl_lane<T>(s, m, l));
  return acc;
}
template <class T> __MSL_INLINE T __simd_min(T v) {
  uint32_t m; const unsigned char* s = __msl_simd_xchg(v, m); T acc = v;
  for (uint l = 0; l < 32; ++l) if (m >> l & 1) acc = min(acc, __msl_lane<T>(s, m, l));
  return acc;
}
template <class T, class L> __MSL_INLINE T __simd_shuffle(T v, L lane) {
  uint32_t m; const unsigned char* s = __msl_simd_xchg(v, m); return __msl_lane<T>(s, m, uint(lane));
}
template <class T, class L> __MSL_INLINE T __simd_broadcast(T v, L lane) { return __simd_shuffle(v, lane); }
template <class T> __MSL_INLINE T __simd_broadcast_first(T v) {
  uint32_t m; const unsigned char* s = __msl_simd_xchg(v, m); return __msl_lane<T>(s, m, m ? __builtin_ctz(m) : 0);
}
template <class T, class D> __MSL_INLINE T __simd_shuffle_down(T v, D d) {
  uint32_t m; const unsigned char* s = __msl_simd_xchg(v, m); const uint t = __msl_my_lane() + uint(d);
  return t < 32 ? __msl_lane<T>(s, m, t) : v;
}
template <class T, class D> __MSL_INLINE T __simd_shuffle_up(T v, D d) {
  uint32_t m; const unsigned char* s = __msl_simd_xchg(v, m); const uint me = __msl_my_lane();
  return me >= uint(d) ? __msl_lane<T>(s, m, me - uint(d)) : v;
}
template <class T, class D> __MSL_INLINE T __simd_shuffle_xor(T v, D x) {
  uint32_t m; const unsigned char* s = __msl_simd_xchg(v, m); return __msl_lane<T>(s, m, (__msl_my_lane() ^ uint(x)) & 31);
}
template <class T, class D> __MSL_INLINE T __simd_shuffle_rotate_down(T v, D d) {
  uint32_t m; const unsigned char* s = __msl_simd_xchg(v, m); return __msl_lane<T>(s, m, (__msl_my_lane() + uint(d)) & 31);
}
template <class T, class D> __MSL_INLINE T __simd_shuffle_rotate_up(T v, D d) {
  uint32_t m; const unsigned char* s = __msl_simd_xchg(v, m); return __msl_lane<T>(s, m, (__msl_my_lane() - uint(d)) & 31);
}
template <class T, class D> __MSL_INLINE T __simd_shuffle_and_fill_down(T v, T fill, D d) {
  uint32_t m; const unsigned char* s = __msl_simd_xchg(v, m); const uint t = __msl_my_lane() + uint(d);
  return t < 32 ? __msl_lane<T>(s, m, t) : fill;
}
template <class T, class D> __MSL_INLINE T __simd_shuffle_and_fill_up(T v, T fill, D d) {
  uint32_t m; const unsigned char* s = __msl_simd_xchg(v, m); const uint me = __msl_my_lane();
  return me >= uint(d) ? __msl_lane<T>(s, m, me - uint(d)) : fill;
}

#include "msl_simd_overloads.h"
struct simd_vote {
  using vote_t = ulong;
  ulong v;
  explicit constexpr operator ulong() const { return v; }
  bool all() const { return v == 0xffffffffull; }
  bool any() const { return v != 0; }
};
__MSL_INLINE simd_vote simd_ballot(bool b) {
  uint32_t m; const unsigned char* s = __msl_simd_xchg(b, m); ulong r = 0;
  for (uint l = 0; l < 32; ++l) if ((m >> l & 1) && s[l * __MSL_SLOT]) r |= 1ull << l;
  return simd_vote{r};
}
__MSL_INLINE simd_vote simd_active_threads_mask() { uint32_t m; __msl_simd_xchg(true, m); return simd_vote{m}; }
__MSL_INLINE bool simd_any(bool b) { return simd_ballot(b).v != 0; }
__MSL_INLINE bool simd_all(bool b) {
  uint32_t m; const unsigned char* s = __msl_simd_xchg(b, m);
  for (uint l = 0; l < 32; ++l) if ((m >> l & 1) && !s[l * __MSL_SLOT]) return false;
  return true;
}
__MSL_INLINE bool simd_is_first() {
  uint32_t m; __msl_simd_xchg(true, m); return m && __msl_my_lane() == uint(__builtin_ctz(m));
}
__MSL_INLINE void simdgroup_barrier(mem_flags = mem_flags::mem_none) { uint32_t m; __msl_simd_xchg(true, m); }
}  // namespace metal

// ------------------------------------------------------------- scheduling
static inline void __msl_fill_tctx(__msl_tctx& t, const __msl_dispatch* d, const uint3& tg, const uint3& sz,
                                   uint x, uint y, uint z) {
  t.tgpig = tg;
  t.tptg = sz;
  t.lid = uint3{x, y, z};
  t.tpig = uint3{tg.x * d->group[0] + x, tg.y * d->group[1] + y, tg.z * d->group[2] + z};
  t.tgpg = uint3{d->ngroups[0], d->ngroups[1], d->ngroups[2]};
  t.tpg = uint3{d->threads[0], d->threads[1], d->threads[2]};
  t.dtptg = uint3{d->group[0], d->group[1], d->group[2]};
  t.tiitg = (z * sz.y + y) * sz.x + x;
  t.lane = t.tiitg & 31;
  t.sgitg = t.tiitg >> 5;
  t.sgptg = (sz.x * sz.y * sz.z + 31) >> 5;
}

static inline bool __msl_group_of(const __msl_dispatch* d, uint64_t g, uint3& tg, uint3& sz) {
  tg = uint3{uint(g % d->ngroups[0]), uint(g / d->ngroups[0] % d->ngroups[1]),
             uint(g / d->ngroups[0] / d->ngroups[1])};
  for (int i = 0; i < 3; ++i) {
    const uint start = tg[i] * d->group[i];
    const uint left = d->threads[i] - start;
    sz[i] = left < d->group[i] ? left : d->group[i];
  }
  return sz.x && sz.y && sz.z;
}

struct __msl_fiberpool {
  char* mem = nullptr;
  size_t bytes = 0;
  char* meta = nullptr;
  size_t meta_bytes = 0;
  __msl_fiber* fibers = nullptr;
  __msl_simdgroup* sgs = nullptr;
  int n = 0;
};
enum : size_t { __MSL_STACK = 256 * 1024, __MSL_PAGE = 4096 };

static bool __msl_pool_init(__msl_fiberpool& p, __msl_sched& s, int n) {
  p.n = n;
  p.bytes = (size_t)n * __MSL_STACK;
  void* m = mmap(nullptr, p.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return false;
  p.mem = (char*)m;
  p.meta_bytes = sizeof(__msl_fiber) * n + sizeof(__msl_simdgroup) * ((n + 31) / 32) + 64;
  void* mm = mmap(nullptr, p.meta_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mm == MAP_FAILED) return false;
  p.meta = (char*)mm;
  p.fibers = (__msl_fiber*)p.meta;
  p.sgs = (__msl_simdgroup*)(((uintptr_t)(p.fibers + n) + 63) & ~(uintptr_t)63);
  s.fibers = p.fibers;
  s.sgs = p.sgs;
  for (int i = 0; i < n; ++i) {
    char* base = p.mem + (size_t)i * __MSL_STACK;
    mprotect(base, __MSL_PAGE, PROT_NONE);  // stack overflow guard
    p.fibers[i].s = &s;
    p.fibers[i].state = __MSL_DONE;
    p.fibers[i].sp = __msl_init_stack(base + __MSL_STACK, __msl_fiber_main, &p.fibers[i]);
  }
  return true;
}
static void __msl_pool_free(__msl_fiberpool& p) {
  if (p.mem) munmap(p.mem, p.bytes);
  if (p.meta) munmap(p.meta, p.meta_bytes);
  p.mem = p.meta = nullptr;
}

// Runs one threadgroup as fibers; false on deadlock.
static bool __msl_run_group_fibers(__msl_sched& s, const __msl_dispatch* d, const uint3& tg, const uint3& sz) {
  const int n = int(sz.x * sz.y * sz.z);
  s.nfibers = n;
  for (int i = 0; i < n; ++i) {
    const uint x = i % sz.x, y = i / sz.x % sz.y, z = i / sz.x / sz.y;
    __msl_fill_tctx(s.fibers[i].t, d, tg, sz, x, y, z);
    s.fibers[i].state = __MSL_RUN;
  }
  const int nsg = (n + 31) / 32;
  for (int g = 0; g < nsg; ++g) s.sgs[g].round = 0;
  for (;;) {
    int done = 0, simd = 0, barrier = 0;
    for (int i = 0; i < n; ++i) {
      __msl_fiber* f = &s.fibers[i];
      if (f->state == __MSL_RUN) {
        __msl_cur_fiber = f;
        __msl_cur_t = &f->t;
        __msl_swap(&s.sp, f->sp);
        __msl_cur_fiber = nullptr;
      }
      done += f->state == __MSL_DONE;
      simd += f->state == __MSL_SIMD;
      barrier += f->state == __MSL_BARRIER;
    }
    if (done == n) return true;
    if (simd) {
      for (int g = 0; g < nsg; ++g) {
        uint32_t m = 0;
        for (int l = 0; l < 32 && g * 32 + l < n; ++l)
          if (s.fibers[g * 32 + l].state == __MSL_SIMD) m |= 1u << l;
        if (!m) continue;
        __msl_simdgroup& sg = s.sgs[g];
        sg.mask[sg.round & 1] = m;
        sg.round++;
        for (int l = 0; l < 32; ++l)
          if (m >> l & 1) s.fibers[g * 32 + l].state = __MSL_RUN;
      }
      continue;
    }
    if (barrier && done) {  // Metal: if one thread executes a barrier, every thread of the group must
      char msg[200];
      int k = 0;
      auto put = [&](const char* t) { while (*t && k < 190) msg[k++] = *t++; };
      auto num = [&](uint v) {
        char r[12];
        int m = 0;
        do r[m++] = char('0' + v % 10); while (v /= 10);
        while (m && k < 190) msg[k++] = r[--m];
      };
      put("deadlock: threadgroup_barrier reached by "); num(barrier); put(" of "); num(n);
      put(" threads of threadgroup ["); num(tg.x); put(", "); num(tg.y); put(", "); num(tg.z);
      put("]; the others returned without reaching it");
      msg[k] = 0;
      __msl_fail(msg);
      return true;
    }
    if (barrier) {
      for (int i = 0; i < n; ++i)
        if (s.fibers[i].state == __MSL_BARRIER) s.fibers[i].state = __MSL_RUN;
      continue;
    }
    return false;
  }
}

struct __msl_job {
  __msl_dispatch* d;
  __msl_body_fn body;
  void* env;
  bool fibers;
  void (*plain)(__msl_job*, const uint3&, const uint3&);
  uint64_t total;
  uint64_t next;
  int abort;
};

// checked mode: guard-page faults turn into a report
static struct sigaction __msl_old_segv, __msl_old_bus, __msl_old_fpe;
static void __msl_restore_handlers() {
  sigaction(SIGSEGV, &__msl_old_segv, nullptr);
  sigaction(SIGBUS, &__msl_old_bus, nullptr);
  sigaction(SIGFPE, &__msl_old_fpe, nullptr);
}
static __msl_job* volatile __msl_checked_job = nullptr;
static void __msl_on_fault(int sig, siginfo_t* si, void* uc) {
  __msl_job* j = __msl_checked_job;
  const uint64_t a = (uint64_t)si->si_addr;
  if (!j || !__msl_jb) {  // not in kernel code: hand back to the previous handler
    __msl_restore_handlers();
    return;
  }
  int32_t status = 3;  // any fault of kernel code is reported; a guard page names the buffer
  for (int i = 0; i < j->d->nguards; ++i)
    if (sig != SIGFPE && a >= j->d->guards[2 * i] && a < j->d->guards[2 * i + 1]) status = 1;
  int32_t zero = 0;
  if (__atomic_compare_exchange_n(&j->d->status, &zero, status, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    j->d->fault_addr = a;
    j->d->fault_signal = sig;
    if (const __msl_tctx* t = __msl_cur_t) {
      for (int i = 0; i < 3; ++i) {
        j->d->fault_tpig[i] = t->tpig[i];
        j->d->fault_tgpig[i] = t->tgpig[i];
        j->d->fault_lid[i] = t->lid[i];
      }
    }
  }
  __atomic_store_n(&j->abort, 1, __ATOMIC_SEQ_CST);
  siglongjmp(*__msl_jb, 1);
}

static void* __msl_worker(void* arg) {
  __msl_job* j = (__msl_job*)arg;
  __msl_cur_d = j->d;
  __msl_fiberpool pool;
  __msl_sched s{};
  s.body = j->body;
  s.env = j->env;
  if (j->fibers) {
    const int n = int(j->d->group[0] * j->d->group[1] * j->d->group[2]);
    if (!__msl_pool_init(pool, s, n)) {
      __msl_fail("could not allocate fiber stacks");
      __msl_pool_free(pool);
      return nullptr;
    }
  }
  sigjmp_buf jb;
  stack_t alt{}, old_alt{};
  if (j->d->checked) {
    alt.ss_size = 256 * 1024;
    alt.ss_sp = mmap(nullptr, alt.ss_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    sigaltstack(&alt, &old_alt);
    if (sigsetjmp(jb, 1)) {
      __msl_jb = nullptr;
      __msl_cur_fiber = nullptr;
      __msl_cur_t = nullptr;
      sigaltstack(&old_alt, nullptr);
      munmap(alt.ss_sp, alt.ss_size);
      __msl_pool_free(pool);
      return nullptr;
    }
    __msl_jb = &jb;
  }
  for (;;) {
    if (__atomic_load_n(&j->abort, __ATOMIC_RELAXED) || __atomic_load_n(&j->d->status, __ATOMIC_RELAXED)) break;
    const uint64_t g = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
    if (g >= j->total) break;
    uint3 tg, sz;
    if (!__msl_group_of(j->d, g, tg, sz)) continue;
    if (j->fibers) {
      if (!__msl_run_group_fibers(s, j->d, tg, sz)) {
        __msl_fail("deadlock: threads of a threadgroup wait on different barriers/SIMD calls");
        break;
      }
    } else {
      j->plain(j, tg, sz);
    }
  }
  __msl_jb = nullptr;
  __msl_cur_t = nullptr;
  if (j->d->checked) {
    sigaltstack(&old_alt, nullptr);
    munmap(alt.ss_sp, alt.ss_size);
  }
  __msl_pool_free(pool);
  return nullptr;
}

typedef bool (*__msl_cond_fn)(void*, const __msl_tctx&);
template <void (*Body)(void*, const __msl_tctx&), bool Checked, int NSlots, __msl_cond_fn Cond = nullptr,
          __msl_body_fn Fast = nullptr>
static void __msl_plain_loop(__msl_job* j, const uint3& tg, const uint3& sz) {
  __msl_tctx t;
  const __msl_dispatch* d = j->d;
  void* bufs[NSlots ? NSlots : 1];  // a local copy: stores through buffers cannot alias it
  for (int i = 0; i < NSlots; ++i) bufs[i] = ((void**)j->env)[i];
  void* env = NSlots ? (void*)bufs : j->env;
  if (!Checked) {
    // A tight loop over the threads of a row: the inlined body of an element-wise
    // kernel vectorises (math calls through -fveclib), one iteration per thread.
    // Local copies of the geometry: stores through buffers cannot alias them, so
    // positions stay loop-invariant plus the thread index.
    const __msl_dispatch dl = *d;
    const uint3 tgl = tg, szl = sz;
    for (uint z = 0; z < szl.z; ++z)
      for (uint y = 0; y < szl.y; ++y) {
        if constexpr (Cond != nullptr) {
          // The kernel is `P; if (C) A else B` with a side-effect-free P (the pre-pass
          // checked): when C holds for every thread of the row, the row runs `P; A`, a
          // body without B's loop, which vectorises across threads.
          bool all = true;
#pragma clang loop vectorize(enable) interleave(enable)
          for (uint x = 0; x < szl.x; ++x) {
            __msl_tctx tx;
            __msl_fill_tctx(tx, &dl, tgl, szl, x, y, z);
            __MSL_CALL_INLINE all &= Cond(env, tx);
          }
          if (all) {
#pragma clang loop vectorize(enable) interleave(enable)
            for (uint x = 0; x < szl.x; ++x) {
              __msl_tctx tx;
              __msl_fill_tctx(tx, &dl, tgl, szl, x, y, z);
              __MSL_CALL_INLINE Fast(env, tx);
            }
            continue;
          }
        }
#pragma clang loop vectorize(enable) interleave(enable)
        for (uint x = 0; x < szl.x; ++x) {
          __msl_tctx tx;
          __msl_fill_tctx(tx, &dl, tgl, szl, x, y, z);
          __MSL_CALL_INLINE Body(env, tx);
        }
      }
    return;
  }
  for (uint z = 0; z < sz.z; ++z)
    for (uint y = 0; y < sz.y; ++y)
      for (uint x = 0; x < sz.x; ++x) {
        __msl_fill_tctx(t, d, tg, sz, x, y, z);
        // the fault handler reads `t`: make it complete before the body runs
        __msl_cur_t = &t;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        Body(env, t);
      }
  __msl_cur_t = nullptr;
}
// Unchecked loops keep `t` and the buffer table local, so fields the kernel
// does not read are never computed and buffer pointers stay in registers.
template <void (*Body)(void*, const __msl_tctx&), int NSlots, __msl_cond_fn Cond = nullptr, __msl_body_fn Fast = nullptr>
static void __msl_plain_group(__msl_job* j, const uint3& tg, const uint3& sz) {
  if (j->d->checked) __msl_plain_loop<Body, true, NSlots>(j, tg, sz);
  else __msl_plain_loop<Body, false, NSlots, Cond, Fast>(j, tg, sz);
}

static pthread_mutex_t __msl_checked_lock = PTHREAD_MUTEX_INITIALIZER;

// NSlots: env is void*[NSlots]; Cond/Fast: the row-uniform fast path of `P; if (C) A else B`
template <void (*Body)(void*, const __msl_tctx&), int NSlots = 0, __msl_cond_fn Cond = nullptr,
          __msl_body_fn Fast = nullptr>
static int __msl_run(__msl_dispatch* d, void* env, bool fibers) {
  __msl_job j{d, Body, env, fibers, &__msl_plain_group<Body, NSlots, Cond, Fast>, 0, 0, 0};
  j.total = (uint64_t)d->ngroups[0] * d->ngroups[1] * d->ngroups[2];
  if (j.total == 0) return 0;
  if (d->checked) {
    pthread_mutex_lock(&__msl_checked_lock);
    struct sigaction sa = {};
    sa.sa_sigaction = __msl_on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    __msl_checked_job = &j;
    sigaction(SIGSEGV, &sa, &__msl_old_segv);
    sigaction(SIGBUS, &sa, &__msl_old_bus);
    sigaction(SIGFPE, &sa, &__msl_old_fpe);
  }
  int nw = d->nworkers < 1 ? 1 : d->nworkers;
  if ((uint64_t)nw > j.total) nw = (int)j.total;
  pthread_t th[256];
  int started = 0;
  for (int i = 1; i < nw && i < 256; ++i) {
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 8u << 20);
    if (pthread_create(&th[started], &at, __msl_worker, &j) == 0) started++;
    pthread_attr_destroy(&at);
  }
  __msl_worker(&j);
  for (int i = 0; i < started; ++i) pthread_join(th[i], nullptr);
  __msl_cur_d = nullptr;
  if (d->checked) {
    __msl_restore_handlers();
    __msl_checked_job = nullptr;
    pthread_mutex_unlock(&__msl_checked_lock);
  }
  return d->status;
}

// ------------------------------------------------------ argument adapters
#include "msl_args.h"
