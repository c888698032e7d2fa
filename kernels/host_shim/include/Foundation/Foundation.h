// mps-migrate host shim: GNUstep's Foundation, plus what Apple's SDK has and GNUstep lacks.
#pragma once
#include_next <Foundation/Foundation.h>
#include <stdint.h>

// Apple's nil is nullptr in C++, so `SomeCppClass* p = nil;` compiles; GNUstep's is ((id)0).
#ifdef __cplusplus
#undef nil
#define nil nullptr
#undef Nil
#define Nil nullptr
#endif

// GNUstep's localisation macros _() and __() (Apple has none) break C++ code naming a variable _.
#undef _
#undef __

// What Apple's Foundation brings in from MacTypes.h and <mach/vm_param.h>.
#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif
#ifndef PAGE_SIZE
#include <unistd.h>
#define PAGE_SIZE ((uintptr_t)sysconf(_SC_PAGESIZE))
#endif

#ifndef NS_ENUM
#define NS_ENUM(T, N) enum N : T N; enum N : T
#endif
#ifndef NS_OPTIONS
#define NS_OPTIONS(T, N) NS_ENUM(T, N)
#endif
#ifndef API_AVAILABLE
#define API_AVAILABLE(...)
#endif
#ifndef API_UNAVAILABLE
#define API_UNAVAILABLE(...)
#endif
#ifndef MPS_SWIFT_NAME
#define MPS_SWIFT_NAME(...)
#endif
#ifndef NS_REFINED_FOR_SWIFT
#define NS_REFINED_FOR_SWIFT
#endif
#ifndef NS_DESIGNATED_INITIALIZER
#define NS_DESIGNATED_INITIALIZER
#endif

// The SDK the shim models: macOS 15 (the tree's own fallbacks for older SDKs stay out).
#define __MAC_13_0 130000
#define __MAC_13_2 130200
#define __MAC_14_0 140000
#define __MAC_15_0 150000
#define MAC_OS_X_VERSION_13_0 130000
#define MAC_OS_X_VERSION_13_2 130200
#define MAC_OS_X_VERSION_14_0 140000
#define MAC_OS_X_VERSION_15_0 150000
#define MAC_OS_X_VERSION_MIN_REQUIRED 150000
#define MAC_OS_X_VERSION_MAX_ALLOWED 150000
