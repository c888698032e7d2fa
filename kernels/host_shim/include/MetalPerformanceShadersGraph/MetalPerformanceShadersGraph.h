// mps-migrate host shim: MetalPerformanceShadersGraph (declarations only), split as Apple's framework headers
// are: the core types and the MPSGraph class, then one header per family of op categories.
#pragma once
#include <MetalPerformanceShadersGraph/MPSGraphCore.h>
#include <MetalPerformanceShadersGraph/MPSGraphArithmeticOps.h>
#include <MetalPerformanceShadersGraph/MPSGraphConvolutionOps.h>
#include <MetalPerformanceShadersGraph/MPSGraphRNNOps.h>
#include <MetalPerformanceShadersGraph/MPSGraphRandomOps.h>
#include <MetalPerformanceShadersGraph/MPSGraphReductionOps.h>
#include <MetalPerformanceShadersGraph/MPSGraphTensorShapeOps.h>
