"""Generated __global__ entry points, one per host_name, and their argument tables."""

from __future__ import annotations

from ..cpu.launchers import _quote, call_args
from ..cpu.prepass_kernels import Kernel


def launcher(idx: int, k: Kernel) -> str:
    params = ", ".join(p.text for p in k.params)
    args = call_args(k)
    nslots = max(k.slots) + 1 if k.slots else 0
    info = ", ".join(
        f"__msl_info<__msl_k{idx}::__A::arg<{k.slots[s]}>>()" if s in k.slots else "__msl_arginfo{-1, 0, 0, 0, 0, 0}"
        for s in range(nslots)
    )
    return f"""
#line {k.origin.line} "{_quote(k.origin.file)}"
namespace __msl_k{idx} {{
using __F = void({params});
using __A = __msl_fn<__F>;
}}
extern "C" __global__ void __msl_cuda_{idx}(void* const* __b, uint __n0, uint __n1, uint __n2) {{
  using __A = __msl_k{idx}::__A;
  __msl_tctx __t;
  if (!__msl_cuda_tctx(__t, __n0, __n1, __n2)) return;
  (void)__b;
  constexpr __msl_k{idx}::__F* __fn = &{k.callee};
  __fn({", ".join(args)});
}}
extern "C" __device__ const __msl_arginfo __msl_ai_{idx}[{max(1, nslots)}] = {{{info or "{-1, 0, 0, 0, 0, 0}"}}};
"""


def launchers(kernels: list[Kernel]) -> str:
    return "#pragma clang force_cuda_host_device end\n" + "\n".join(launcher(i, k) for i, k in enumerate(kernels))
