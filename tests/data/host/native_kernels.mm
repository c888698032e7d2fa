// Fixture for tests/test_host_reader.py: a native-Metal host file (modern shape).
#define TORCH_ASSERT_ONLY_METHOD_OPERATORS
#include <ATen/native/mps/OperationUtils.h>
#include <ATen/native/UnaryOps.h>

namespace at::native {
static auto& lib = mps::MetalShaderLibrary::getBundledLibrary();

#define REGISTER_SPIN_DISPATCH(NAME)                    \
  static void NAME##_kernel_mps(TensorIteratorBase& iter) { \
    lib.exec_unary_kernel(iter, #NAME);                 \
  }                                                     \
  REGISTER_DISPATCH(NAME##_stub, NAME##_kernel_mps)

REGISTER_SPIN_DISPATCH(spin);
REGISTER_SPIN_DISPATCH(twirl);

static void wobble_mps_kernel(TensorIteratorBase& iter) {
  lib.exec_binary_kernel(iter, "wobble");
}

static void scaled_kernel(TensorIteratorBase& iter, const Scalar& alpha) {
  const std::string kernel_name = alpha.isFloatingPoint() ? "scaled_float" : "scaled_int";
  lib.exec_binary_kernel(iter, kernel_name, alpha);
}

static void fill_kernel(TensorIteratorBase& iter) {
  if (!iter.can_use_32bit_indexing()) {
    for (auto&& sub : iter.with_32bit_indexing()) {
      auto whole = sub.tensor(0);
      mtl_setArgs(enc, whole);
      const auto dtype = sub.tensor(0).scalar_type();
      uint32_t n = static_cast<uint32_t>(sub.tensor(1).numel());
      fill_kernel(sub);
    }
    return;
  }
  auto out = iter.tensor(0);
  const auto numel = c10::checked_convert<uint32_t>(iter.numel(), "uint32_t");
  auto stream = getCurrentMPSStream();
  dispatch_sync_with_rethrow(stream->queue(), ^() {
    @autoreleasepool {
      auto enc = stream->commandEncoder();
      mtl_setBuffer(enc, out, 0);
      mtl_setBytes(enc, numel, 1);
      mtl_setBytes(enc, iter.ndim(), 2);
      mtl_setBytes<int32_t>(enc, 7, 3);
      mtl_dispatch1DJob(enc, pso, numel);
      mtl_setBytes(enc, numel, 4);
    }
  });
}

static void checked_kernel(TensorIteratorBase& iter) {
  if (!iter.can_use_32bit_indexing()) {
    for (auto&& sub_iter : iter.with_32bit_indexing()) {
      checked_kernel(sub_iter);
    }
    return;
  }
  auto dtype = iter.tensor(0).scalar_type();
  mtl_setArgs(enc, iter, c10::checked_convert<uint32_t>(iter.numel(), "uint32_t"));
}

REGISTER_DISPATCH(wobble_stub, &wobble_mps_kernel)
REGISTER_DISPATCH(scaled_stub, &scaled_kernel);
REGISTER_MPS_DISPATCH(fill_stub, &mps::fill_kernel)
} // namespace at::native
