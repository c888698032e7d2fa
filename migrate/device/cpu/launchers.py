"""Generated `extern "C"` launchers, one per host_name (called via ctypes)."""

from __future__ import annotations

from .prepass_kernels import POSITION_ATTRS, Kernel
from .prepass_split import split_name


def _quote(path: str) -> str:
    return path.replace("\\", "\\\\").replace('"', '\\"')


def call_args(k: Kernel) -> list[str]:
    """The kernel's arguments, from buffer table ``__b``, threadgroup memory and position attributes
    (the same in every execution model: msl_args.h adapts them)."""
    args = []
    for i, p in enumerate(k.params):
        kind, value = p.attr
        if kind == "buffer":
            args.append(f"__msl_buf<__A::arg<{i}>>(__b[{value}])")
        elif kind == "tgmem":
            args.append(f"(__A::arg<{i}>)__msl_tgmem<{value}>()")
        else:
            args.append(f"__msl_pos<__A::arg<{i}>>({POSITION_ATTRS[value]})")
    return args


def launcher(idx: int, k: Kernel) -> str:
    params = ", ".join(p.text for p in k.params)
    args = call_args(k)
    nslots = max(k.slots) + 1 if k.slots else 0
    info = "\n".join(f"  out[{slot}] = __msl_info<__A::arg<{pi}>>();" for slot, pi in sorted(k.slots.items()))
    fibers = "true" if k.uses_sync else "false"
    run = f"__msl_run<__msl_k{idx}::body, {nslots}>(d, bufs, {fibers})"
    split = ""
    if k.split:  # row-uniform fast path (prepass_split._split); only optimised builds vectorise it
        split = f"""static bool cond(void* __e, const __msl_tctx& __t) {{
  constexpr bool (*__fn)({params}) = &{split_name(k.callee, "__msl_cond")};
  void** __b = (void**)__e;
  (void)__b;
  bool __r;
  __MSL_CALL_INLINE __r = __fn({", ".join(args)});
  return __r;
}}
static void fast(void* __e, const __msl_tctx& __t) {{
  constexpr __F* __fn = &{split_name(k.callee, "__msl_fast")};
  void** __b = (void**)__e;
  (void)__b;
  __MSL_CALL_INLINE __fn({", ".join(args)});
}}
"""
        run = f"""
#if defined(__OPTIMIZE__)
  __msl_run<__msl_k{idx}::body, {nslots}, __msl_k{idx}::cond, __msl_k{idx}::fast>(d, bufs, {fibers})
#else
  {run}
#endif
  """
    return f"""
#line {k.origin.line} "{_quote(k.origin.file)}"
namespace __msl_k{idx} {{
using __F = void({params});
using __A = __msl_fn<__F>;
static void body(void* __e, const __msl_tctx& __t) {{
  constexpr __F* __fn = &{k.callee};
  void** __b = (void**)__e;
  (void)__b;
  __MSL_CALL_INLINE __fn({", ".join(args)});
}}
{split}}}
extern "C" __attribute__((visibility("default"))) int __msl_launch_{idx}(void** bufs, __msl_dispatch* d) {{
  return {run};
}}
extern "C" __attribute__((visibility("default"))) int __msl_info_{idx}(__msl_arginfo* out) {{
  using __A = __msl_k{idx}::__A;
  for (int i = 0; i < {nslots}; ++i) out[i] = __msl_arginfo{{-1, 0, 0, 0, 0, 0}};
{info}
  return {nslots};
}}
"""


def launchers(kernels: list[Kernel]) -> str:
    return "\n".join(launcher(i, k) for i, k in enumerate(kernels))
