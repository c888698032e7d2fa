// mps-migrate host shim: MPSGraph's random and dropout ops (declarations only; MPSGraphRandomOpDescriptor is in
// MPSGraphCore.h). The stateTensor variants return {result, updated state}.
#pragma once
#include <MetalPerformanceShadersGraph/MPSGraphCore.h>

@interface MPSGraph (MPSGraphRandomOps)
- (MPSGraphTensor*)randomPhiloxStateTensorWithSeed:(NSUInteger)seed name:(NSString*)name;
- (MPSGraphTensor*)randomPhiloxStateTensorWithCounterLow:(NSUInteger)counterLow
                                             counterHigh:(NSUInteger)counterHigh
                                                     key:(NSUInteger)key
                                                    name:(NSString*)name;
- (MPSGraphTensor*)randomTensorWithShape:(MPSShape*)shape
                              descriptor:(MPSGraphRandomOpDescriptor*)descriptor
                                    name:(NSString*)name;
- (MPSGraphTensor*)randomTensorWithShapeTensor:(MPSGraphTensor*)shapeTensor
                                    descriptor:(MPSGraphRandomOpDescriptor*)descriptor
                                          name:(NSString*)name;
- (MPSGraphTensor*)randomTensorWithShape:(MPSShape*)shape
                              descriptor:(MPSGraphRandomOpDescriptor*)descriptor
                                    seed:(NSUInteger)seed
                                    name:(NSString*)name;
- (MPSGraphTensor*)randomTensorWithShapeTensor:(MPSGraphTensor*)shapeTensor
                                    descriptor:(MPSGraphRandomOpDescriptor*)descriptor
                                          seed:(NSUInteger)seed
                                          name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)randomTensorWithShape:(MPSShape*)shape
                                        descriptor:(MPSGraphRandomOpDescriptor*)descriptor
                                       stateTensor:(MPSGraphTensor*)state
                                              name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)randomTensorWithShapeTensor:(MPSGraphTensor*)shapeTensor
                                              descriptor:(MPSGraphRandomOpDescriptor*)descriptor
                                             stateTensor:(MPSGraphTensor*)state
                                                    name:(NSString*)name;
- (MPSGraphTensor*)randomUniformTensorWithShape:(MPSShape*)shape name:(NSString*)name;
- (MPSGraphTensor*)randomUniformTensorWithShape:(MPSShape*)shape seed:(NSUInteger)seed name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)randomUniformTensorWithShape:(MPSShape*)shape
                                              stateTensor:(MPSGraphTensor*)state
                                                     name:(NSString*)name;
- (MPSGraphTensor*)dropoutTensor:(MPSGraphTensor*)tensor rate:(double)rate name:(NSString*)name;
- (MPSGraphTensor*)dropoutTensor:(MPSGraphTensor*)tensor rateTensor:(MPSGraphTensor*)rate name:(NSString*)name;
@end
