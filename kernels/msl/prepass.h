/* mps-migrate CPU backend, stage 1 (preprocessing) macros.
 *
 * Included with -include before the shader source when running `clang -E`.
 * Only macros, no std headers: the output is then rewritten by the
 * token-level pre-pass (migrate/device/cpu/prepass.py) and compiled with
 * metal_stdlib.h in front.
 */
#ifndef MPS_MIGRATE_MSL_PREPASS_H
#define MPS_MIGRATE_MSL_PREPASS_H

/* Address spaces: one flat CPU address space. `constant` keeps a const so
 * that overloads on constant/device pointers stay distinct. */
#define device
#define thread
#define constant const
#define ray_data
#define object_data

/* Markers parsed (and removed) by the pre-pass. */
#define threadgroup __msl_threadgroup
#define kernel __msl_kernel

#define METAL_FUNC inline
#define METAL_INTERNAL
#define METAL_ASM

#endif
