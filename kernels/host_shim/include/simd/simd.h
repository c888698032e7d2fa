// mps-migrate host shim: the <simd/simd.h> vector types (clang ext_vector types, as on Apple: a 3-vector has the
// size and alignment of a 4-vector). Types only; no simd functions.
#pragma once
#include <stdint.h>

#define MPS_SHIM_SIMD_TYPES(NAME, T)                                                    \
  typedef T simd_##NAME##1;                                                             \
  typedef __attribute__((__ext_vector_type__(2))) T simd_##NAME##2;                     \
  typedef __attribute__((__ext_vector_type__(3))) T simd_##NAME##3;                     \
  typedef __attribute__((__ext_vector_type__(4))) T simd_##NAME##4;                     \
  typedef __attribute__((__ext_vector_type__(8))) T simd_##NAME##8;                     \
  typedef __attribute__((__ext_vector_type__(16))) T simd_##NAME##16;                   \
  typedef simd_##NAME##2 vector_##NAME##2;                                              \
  typedef simd_##NAME##3 vector_##NAME##3;                                              \
  typedef simd_##NAME##4 vector_##NAME##4;                                              \
  typedef simd_##NAME##8 vector_##NAME##8;                                              \
  typedef simd_##NAME##16 vector_##NAME##16;

MPS_SHIM_SIMD_TYPES(char, char)
MPS_SHIM_SIMD_TYPES(uchar, unsigned char)
MPS_SHIM_SIMD_TYPES(short, short)
MPS_SHIM_SIMD_TYPES(ushort, unsigned short)
MPS_SHIM_SIMD_TYPES(int, int)
MPS_SHIM_SIMD_TYPES(uint, unsigned int)
MPS_SHIM_SIMD_TYPES(long, long)
MPS_SHIM_SIMD_TYPES(ulong, unsigned long)
MPS_SHIM_SIMD_TYPES(float, float)
MPS_SHIM_SIMD_TYPES(double, double)
#undef MPS_SHIM_SIMD_TYPES

typedef struct { simd_float2 columns[2]; } simd_float2x2;
typedef struct { simd_float3 columns[3]; } simd_float3x3;
typedef struct { simd_float4 columns[4]; } simd_float4x4;
