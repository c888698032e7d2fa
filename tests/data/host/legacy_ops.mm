// Fixture for tests/test_host_reader.py: a legacy (MPSGraph) host file.
#define TORCH_ASSERT_ONLY_METHOD_OPERATORS
#include <ATen/native/mps/OperationUtils.h>
#ifndef AT_PER_OPERATOR_HEADERS
#include <ATen/Functions.h>
#else
#include <ATen/ops/frobnicate_native.h>
#include <ATen/ops/twiddle_native.h>  // trailing comment stays on the line
#include <ATen/ops/twiddle.h>
#endif

namespace at::native {
namespace mps {

typedef MPSGraphTensor* (^TwiddleBlock)(MPSGraph*, MPSGraphTensor*);

static void graph_unary(const Tensor& self, const Tensor& out, const std::string& key, TwiddleBlock block) {
  @autoreleasepool {
    MPSStream* stream = getCurrentMPSStream();
    auto cachedGraph = LookUpOrCreateCachedGraph<MPSUnaryCachedGraph>(key, [&](auto mpsGraph, auto newCachedGraph) {
      newCachedGraph->inputTensor_ = mpsGraphRankedPlaceHolder(mpsGraph, self);
      newCachedGraph->outputTensor_ = block(mpsGraph, newCachedGraph->inputTensor_);
    });
    Placeholder selfPlaceholder = Placeholder(cachedGraph->inputTensor_, self);
    Placeholder outPlaceholder = Placeholder(cachedGraph->outputTensor_, out);
    NSDictionary<MPSGraphTensor*, MPSGraphTensorData*>* feeds = @{
      selfPlaceholder.getMPSGraphTensor() : selfPlaceholder.getMPSGraphTensorData(),
    };
    runMPSGraph(stream, cachedGraph->graph(), feeds, outPlaceholder);
  }
}

} // namespace mps

#define MAKE_GRAPH_UNARY_IMPL(func_out, selector)                                   \
  TORCH_IMPL_FUNC(func_out)(const Tensor& self, const Tensor& output) {            \
    mps::graph_unary(self, output, #func_out, ^MPSGraphTensor*(MPSGraph * mpsGraph, \
                                                               MPSGraphTensor * t) { \
      return [mpsGraph selector##WithTensor:t name:nil];                            \
    });                                                                             \
  }

MAKE_GRAPH_UNARY_IMPL(frobnicate_out_mps, frobnicate)
MAKE_GRAPH_UNARY_IMPL(twiddle_out_mps, twiddle)

#define MAKE_COMPARE(func_out, selector, other_type)                      \
  Tensor& func_out(const Tensor& self, const other_type& other, Tensor& out) { \
    mps::compare_##other_type(self, other, out, #selector);              \
    return out;                                                           \
  }

MAKE_COMPARE(wobble_out_mps, wobble, Scalar);
MAKE_COMPARE(wibble_out_mps, wibble, Tensor);

static Tensor& compare_Scalar(const Tensor& self, const Scalar& other, Tensor& out, const char* name) {
  return out;
}

TORCH_IMPL_FUNC(jiggle_out_mps)(const Tensor& self, const Tensor& output) { // mps-migrate: ignore[MPS011,MPS013]
  using namespace mps;
  if (self.numel() == 0) {
    return;
  }
  uint32_t n = output.numel();
  auto limit = self.max().item<int64_t>();
  @autoreleasepool {
    MPSGraph* g = make_mps_graph();
    MPSGraphTensor* a = [g constantWithScalar:1.0 dataType:MPSDataTypeFloat32];
    MPSGraphTensor* b = [[g additionWithPrimaryTensor:a secondaryTensor:a name:nil] retain];
    dispatch_sync(getCurrentMPSStream()->queue(), ^() {
      id<MTLComputeCommandEncoder> enc = [commandBuffer computeCommandEncoder];
      [enc setBytes:&n length:sizeof(n) atIndex:0];
      [enc endEncoding];
    });
    NSArray<NSNumber*>* axes = @[ @0, @1 ];
    for (NSNumber* axis in axes) {
      [g reductionSumWithTensor:b axis:axis.integerValue name:@"sum"];
    }
    if (@available(macOS 14.0, *)) {
      [g identityWithTensor:b name:nil];
    }
  }
}

Tensor never_called_mps(const Tensor& self) {
  return self;
}

TORCH_IMPL_FUNC(after_objc_out_mps)(const Tensor& self, const Tensor& output) {
  output.copy_(self);
}

} // namespace at::native
