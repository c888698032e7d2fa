// mps-migrate CUDA backend: the MSL runtime compiled as CUDA device code (clang,
// -x cuda --cuda-device-only, no CUDA headers). Included with -include in front of
// every pre-passed shader. Everything between the pragmas is __host__ __device__,
// so the shared runtime (metal_stdlib.h) and the shader's functions need no
// annotations. Math maps to libdevice (__nv_*), linked as bitcode. Written for mps-migrate.
#pragma once
#define __MPS_MIGRATE_CUDA__ 1
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))

// libdevice's float math (CUDA's own sinf etc. are these); the shared runtime calls
// the __builtin_* names, which on the GPU would become unresolved libm calls.
#define __MSL_NV1(F) extern "C" __device__ float __nv_##F(float);
#define __MSL_NV2(F) extern "C" __device__ float __nv_##F(float, float);
__MSL_NV1(sinf) __MSL_NV1(cosf) __MSL_NV1(tanf) __MSL_NV1(asinf) __MSL_NV1(acosf) __MSL_NV1(atanf)
__MSL_NV1(sinhf) __MSL_NV1(coshf) __MSL_NV1(tanhf) __MSL_NV1(asinhf) __MSL_NV1(acoshf) __MSL_NV1(atanhf)
__MSL_NV1(expf) __MSL_NV1(exp2f) __MSL_NV1(logf) __MSL_NV1(log2f) __MSL_NV1(log10f) __MSL_NV1(sqrtf)
__MSL_NV1(cbrtf) __MSL_NV1(ceilf) __MSL_NV1(floorf) __MSL_NV1(truncf) __MSL_NV1(roundf) __MSL_NV1(rintf)
__MSL_NV1(fabsf) __MSL_NV2(atan2f) __MSL_NV2(powf) __MSL_NV2(fmodf) __MSL_NV2(fminf) __MSL_NV2(fmaxf)
__MSL_NV2(copysignf) __MSL_NV2(fdimf) __MSL_NV2(nextafterf)
extern "C" __device__ float __nv_fmaf(float, float, float);
extern "C" __device__ float __nv_ldexpf(float, int);
extern "C" __device__ float __nv_frexpf(float, int*);
extern "C" __device__ float __nv_modff(float, float*);
extern "C" __device__ int __nv_ilogbf(float);
#undef __MSL_NV1
#undef __MSL_NV2
#define __builtin_sinf __nv_sinf
#define __builtin_cosf __nv_cosf
#define __builtin_tanf __nv_tanf
#define __builtin_asinf __nv_asinf
#define __builtin_acosf __nv_acosf
#define __builtin_atanf __nv_atanf
#define __builtin_sinhf __nv_sinhf
#define __builtin_coshf __nv_coshf
#define __builtin_tanhf __nv_tanhf
#define __builtin_asinhf __nv_asinhf
#define __builtin_acoshf __nv_acoshf
#define __builtin_atanhf __nv_atanhf
#define __builtin_expf __nv_expf
#define __builtin_exp2f __nv_exp2f
#define __builtin_logf __nv_logf
#define __builtin_log2f __nv_log2f
#define __builtin_log10f __nv_log10f
#define __builtin_sqrtf __nv_sqrtf
#define __builtin_cbrtf __nv_cbrtf
#define __builtin_ceilf __nv_ceilf
#define __builtin_floorf __nv_floorf
#define __builtin_truncf __nv_truncf
#define __builtin_roundf __nv_roundf
#define __builtin_rintf __nv_rintf
#define __builtin_fabsf __nv_fabsf
#define __builtin_atan2f __nv_atan2f
#define __builtin_powf __nv_powf
#define __builtin_fmodf __nv_fmodf
#define __builtin_fminf __nv_fminf
#define __builtin_fmaxf __nv_fmaxf
#define __builtin_copysignf __nv_copysignf
#define __builtin_fdimf __nv_fdimf
#define __builtin_nextafterf __nv_nextafterf
#define __builtin_fmaf __nv_fmaf
#define __builtin_ldexpf __nv_ldexpf
#define __builtin_frexpf __nv_frexpf
#define __builtin_modff __nv_modff
#define __builtin_ilogbf __nv_ilogbf

#pragma clang force_cuda_host_device begin
#include "metal_stdlib.h"
