// mps-migrate host shim: included before every host file (-include). What macOS's toolchain gives host code and
// Linux's does not.
#pragma once
// A macOS build of libtorch compiles its host files with per-operator headers (ATen/ops/<op>.h): with the
// all-in-one ATen/Functions.h and NativeFunctions.h instead, at::pow/at::ceil hide ::pow/::ceil and at::slice
// meets at::native::slice.
#ifndef AT_PER_OPERATOR_HEADERS
#define AT_PER_OPERATOR_HEADERS
#endif
#ifdef __cplusplus
#include <algorithm>
#include <cstdint>
// On macOS int64_t is long long; on Linux it is long. Host code written for macOS mixes them in std::min/max
// (std::max(1LL, t.ndimension())), which resolves there and is ambiguous here.
namespace std {
constexpr long max(long long a, long b) { return a < b ? b : static_cast<long>(a); }
constexpr long max(long a, long long b) { return a < b ? static_cast<long>(b) : a; }
constexpr long min(long long a, long b) { return b < a ? b : static_cast<long>(a); }
constexpr long min(long a, long long b) { return b < a ? static_cast<long>(b) : a; }
} // namespace std
#endif
