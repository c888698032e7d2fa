// mps-migrate host shim: the named-tensor calls of 2.6/2.7 host code. Torch 2.13 removed named tensors (its
// headers declare no Dimname), so no tensor has names: the guard does nothing and every list of names is empty.
#pragma once
#include <ATen/core/TensorBase.h>
#include <vector>

namespace at {

struct NoNamesGuard {
  NoNamesGuard() {}
  void reset() {}
};

namespace namedinference {

struct NoName {};
using OutNames = std::vector<NoName>;

inline OutNames compute_broadcast_outnames(const TensorBase&, const TensorBase&) {
  return {};
}
inline OutNames broadcast_to_outnames(const TensorBase&, const TensorBase&, const char*) {
  return {};
}
template <typename T>
inline const T& propagate_names_if_nonempty(const T& result, const OutNames&, bool = false) {
  return result;
}

} // namespace namedinference
} // namespace at
