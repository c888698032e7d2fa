// Binary MPSGraph code in the shapes PyTorch's BinaryOps.mm / Activation.mm used in the 2.x era
// (hand-written for mps-migrate's port tests).
#include <ATen/native/mps/OperationUtils.h>

namespace at::native {
namespace mps {

struct BinaryOpCachedGraph : public MPSCachedGraph {
  BinaryOpCachedGraph(MPSGraph* graph) : MPSCachedGraph(graph) {}
  MPSGraphTensor *primaryTensor = nil, *secondaryTensor = nil;
  MPSGraphTensor* outputTensor = nil;
};

typedef MPSGraphTensor* (^BinaryOpBlock)(BinaryOpCachedGraph*, MPSGraphTensor*, MPSGraphTensor*);
#define BinaryOpFn(graph, primary, secondary) \
  MPSGraphTensor*(mps::BinaryOpCachedGraph * graph, MPSGraphTensor * primary, MPSGraphTensor * secondary)

static void binaryOpTensor(const Tensor& self,
                           const Tensor& other,
                           const Scalar& alpha,
                           const Tensor& output,
                           std::string op_name,
                           BinaryOpBlock binaryBlock) {
  @autoreleasepool {
    std::string key = op_name + getTensorsStringKey({self, other, output});
    auto cachedGraph = LookUpOrCreateCachedGraph<BinaryOpCachedGraph>(key, [&](auto mpsGraph, auto newCachedGraph) {
      newCachedGraph->primaryTensor = mpsGraphRankedPlaceHolder(mpsGraph, self);
      newCachedGraph->secondaryTensor = mpsGraphRankedPlaceHolder(mpsGraph, other);
      newCachedGraph->outputTensor =
          binaryBlock(newCachedGraph, newCachedGraph->primaryTensor, newCachedGraph->secondaryTensor);
    });
    Placeholder selfPlaceholder = Placeholder(cachedGraph->primaryTensor, self);
    Placeholder otherPlaceholder = Placeholder(cachedGraph->secondaryTensor, other);
    Placeholder outputPlaceholder = Placeholder(cachedGraph->outputTensor, output);
    runMPSGraph(getCurrentMPSStream(), cachedGraph->graph(), dictionaryFromPlaceholders(selfPlaceholder, otherPlaceholder),
                outputPlaceholder);
  }
}

} // namespace mps

// the selector fragment is pasted across a line continuation
#define CREATE_MPS_BINARY_COMPARISON_OP_FUNC(func_out, func_stub, other_type)                       \
  Tensor& func_out(const Tensor& self, const other_type& other, Tensor& output) {                   \
    mps::binaryOp##other_type(                                                                      \
        self,                                                                                       \
        other,                                                                                      \
        Scalar(1.0),                                                                                \
        output,                                                                                     \
        #func_stub,                                                                                 \
        ^BinaryOpFn(cachedGraph, primaryCastTensor, secondaryCastTensor) {                          \
          MPSGraph* mpsGraph = cachedGraph->graph();                                                \
          return [mpsGraph func_stub##                                                              \
              WithPrimaryTensor:mps::castMPSTensor(mpsGraph, primaryCastTensor, ScalarType::Bool)   \
                secondaryTensor:mps::castMPSTensor(mpsGraph, secondaryCastTensor, ScalarType::Bool) \
                           name:nil];                                                               \
        });                                                                                         \
    return output;                                                                                  \
  }

CREATE_MPS_BINARY_COMPARISON_OP_FUNC(logical_xor_out_mps, logicalXOR, Tensor);

TORCH_IMPL_FUNC(xlogy_out_mps)(const Tensor& self, const Tensor& other, const Tensor& output) {
  mps::BinaryOpBlock xlogy_op_block = ^BinaryOpFn(cachedGraph, primaryCastTensor, secondaryCastTensor) {
    MPSGraph* mpsGraph = cachedGraph->graph();
    MPSGraphTensor* zeroTensor = [mpsGraph constantWithScalar:0.0 shape:@[ @1 ] dataType:primaryCastTensor.dataType];
    MPSGraphTensor* yIsNaNPredicateTensor = [mpsGraph isNaNWithTensor:secondaryCastTensor name:nil];
    MPSGraphTensor* logyTensor = [mpsGraph logarithmWithTensor:secondaryCastTensor name:nil];
    MPSGraphTensor* xlogyTensor = [mpsGraph multiplicationWithPrimaryTensor:primaryCastTensor
                                                            secondaryTensor:logyTensor
                                                                       name:nil];
    MPSGraphTensor* xEqualZeroPredicateTensor = [mpsGraph equalWithPrimaryTensor:primaryCastTensor
                                                                 secondaryTensor:zeroTensor
                                                                            name:nil];
    MPSGraphTensor* outputTensor = [mpsGraph selectWithPredicateTensor:xEqualZeroPredicateTensor
                                                   truePredicateTensor:zeroTensor
                                                  falsePredicateTensor:xlogyTensor
                                                                  name:nil];
    outputTensor = [mpsGraph selectWithPredicateTensor:yIsNaNPredicateTensor
                                   truePredicateTensor:secondaryCastTensor
                                  falsePredicateTensor:outputTensor
                                                  name:nil];
    return outputTensor;
  };
  mps::binaryOpTensor(self, other, Scalar(1.0), output, "xlogy_out_mps", xlogy_op_block);
}

// a graph built step by step in the cached-graph lambda, two placeholders
Tensor& fmax_like_out_mps(const Tensor& self, const Tensor& other, Tensor& output) {
  using CachedGraph = MPSBinaryCachedGraph;
  @autoreleasepool {
    std::string key = "fmax_like" + getTensorsStringKey({self, other});
    auto cachedGraph = LookUpOrCreateCachedGraph<CachedGraph>(key, [&](auto mpsGraph, auto newCachedGraph) {
      MPSGraphTensor* inputTensor = mpsGraphRankedPlaceHolder(mpsGraph, self);
      MPSGraphTensor* otherTensor = mpsGraphRankedPlaceHolder(mpsGraph, other);
      MPSGraphTensor* maxTensor = [mpsGraph maximumWithNaNPropagationWithPrimaryTensor:inputTensor
                                                                       secondaryTensor:otherTensor
                                                                                  name:nil];
      newCachedGraph->inputTensor_ = inputTensor;
      newCachedGraph->otherTensor_ = otherTensor;
      newCachedGraph->outputTensor_ = maxTensor;
    });
    Placeholder selfPlaceholder = Placeholder(cachedGraph->inputTensor_, self);
    Placeholder otherPlaceholder = Placeholder(cachedGraph->otherTensor_, other);
    Placeholder outputPlaceholder = Placeholder(cachedGraph->outputTensor_, output);
    runMPSGraph(getCurrentMPSStream(), cachedGraph->graph(), dictionaryFromPlaceholders(selfPlaceholder, otherPlaceholder),
                outputPlaceholder);
  }
  return output;
}

// a Scalar argument becomes a graph constant: needs a run-time parameter
TORCH_IMPL_FUNC(leaky_relu_out_mps)(const Tensor& self, const Scalar& negative_slope, const Tensor& output) {
  @autoreleasepool {
    std::string key = "leaky_relu" + getTensorsStringKey({self}) + ":" + std::to_string(negative_slope.to<double>());
    auto cachedGraph = LookUpOrCreateCachedGraph<MPSUnaryCachedGraph>(key, [&](auto mpsGraph, auto newCachedGraph) {
      MPSGraphTensor* inputTensor = mpsGraphRankedPlaceHolder(mpsGraph, self);
      MPSGraphTensor* negSlopeTensor = [mpsGraph constantWithScalar:negative_slope.to<double>()
                                                              shape:@[ @1 ]
                                                           dataType:getMPSDataType(self)];
      MPSGraphTensor* negSlopeMulXTensor = [mpsGraph multiplicationWithPrimaryTensor:inputTensor
                                                                     secondaryTensor:negSlopeTensor
                                                                                name:nil];
      newCachedGraph->inputTensor_ = inputTensor;
      newCachedGraph->outputTensor_ = [mpsGraph maximumWithTensor:negSlopeMulXTensor secondaryTensor:inputTensor name:nil];
    });
  }
}

} // namespace at::native
