// mps-migrate host shim: MPSGraph's reductions, cumulative ops, sort and top-k, normalization, losses, matrix
// multiplication and linear algebra (declarations only).
#pragma once
#include <MetalPerformanceShadersGraph/MPSGraphCore.h>

typedef NS_ENUM(uint64_t, MPSGraphLossReductionType){MPSGraphLossReductionTypeNone = 0,
                                                     MPSGraphLossReductionTypeAxis = 0,
                                                     MPSGraphLossReductionTypeSum = 1,
                                                     MPSGraphLossReductionTypeMean = 2};

@interface MPSGraph (MPSGraphReductionOps)
- (MPSGraphTensor*)reductionSumWithTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)reductionSumWithTensor:(MPSGraphTensor*)tensor axes:(NSArray<NSNumber*>*)axes name:(NSString*)name;
- (MPSGraphTensor*)reductionProductWithTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)reductionProductWithTensor:(MPSGraphTensor*)tensor
                                         axes:(NSArray<NSNumber*>*)axes
                                         name:(NSString*)name;
- (MPSGraphTensor*)reductionMaximumWithTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)reductionMaximumWithTensor:(MPSGraphTensor*)tensor
                                         axes:(NSArray<NSNumber*>*)axes
                                         name:(NSString*)name;
- (MPSGraphTensor*)reductionMinimumWithTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)reductionMinimumWithTensor:(MPSGraphTensor*)tensor
                                         axes:(NSArray<NSNumber*>*)axes
                                         name:(NSString*)name;
- (MPSGraphTensor*)reductionMaximumPropagateNaNWithTensor:(MPSGraphTensor*)tensor
                                                     axis:(NSInteger)axis
                                                     name:(NSString*)name;
- (MPSGraphTensor*)reductionMaximumPropagateNaNWithTensor:(MPSGraphTensor*)tensor
                                                     axes:(NSArray<NSNumber*>*)axes
                                                     name:(NSString*)name;
- (MPSGraphTensor*)reductionMinimumPropagateNaNWithTensor:(MPSGraphTensor*)tensor
                                                     axis:(NSInteger)axis
                                                     name:(NSString*)name;
- (MPSGraphTensor*)reductionMinimumPropagateNaNWithTensor:(MPSGraphTensor*)tensor
                                                     axes:(NSArray<NSNumber*>*)axes
                                                     name:(NSString*)name;
- (MPSGraphTensor*)reductionArgMaximumWithTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)reductionArgMinimumWithTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)reductionAndWithTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)reductionAndWithTensor:(MPSGraphTensor*)tensor axes:(NSArray<NSNumber*>*)axes name:(NSString*)name;
- (MPSGraphTensor*)reductionOrWithTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)reductionOrWithTensor:(MPSGraphTensor*)tensor axes:(NSArray<NSNumber*>*)axes name:(NSString*)name;
@end

@interface MPSGraph (MPSGraphCumulativeOps)
- (MPSGraphTensor*)cumulativeSumWithTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)cumulativeSumWithTensor:(MPSGraphTensor*)tensor
                                      axis:(NSInteger)axis
                                 exclusive:(BOOL)exclusive
                                   reverse:(BOOL)reverse
                                      name:(NSString*)name;
- (MPSGraphTensor*)cumulativeProductWithTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)cumulativeProductWithTensor:(MPSGraphTensor*)tensor
                                          axis:(NSInteger)axis
                                     exclusive:(BOOL)exclusive
                                       reverse:(BOOL)reverse
                                          name:(NSString*)name;
- (MPSGraphTensor*)cumulativeMinimumWithTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)cumulativeMaximumWithTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
@end

@interface MPSGraph (MPSGraphSortOps)
- (MPSGraphTensor*)sortWithTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)sortWithTensor:(MPSGraphTensor*)tensor
                             axis:(NSInteger)axis
                       descending:(BOOL)descending
                             name:(NSString*)name;
- (MPSGraphTensor*)sortWithTensor:(MPSGraphTensor*)tensor axisTensor:(MPSGraphTensor*)axisTensor name:(NSString*)name;
- (MPSGraphTensor*)sortWithTensor:(MPSGraphTensor*)tensor
                       axisTensor:(MPSGraphTensor*)axisTensor
                       descending:(BOOL)descending
                             name:(NSString*)name;
- (MPSGraphTensor*)argSortWithTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)argSortWithTensor:(MPSGraphTensor*)tensor
                                axis:(NSInteger)axis
                          descending:(BOOL)descending
                                name:(NSString*)name;
- (MPSGraphTensor*)argSortWithTensor:(MPSGraphTensor*)tensor
                          axisTensor:(MPSGraphTensor*)axisTensor
                                name:(NSString*)name;
- (MPSGraphTensor*)argSortWithTensor:(MPSGraphTensor*)tensor
                          axisTensor:(MPSGraphTensor*)axisTensor
                          descending:(BOOL)descending
                                name:(NSString*)name;
@end

@interface MPSGraph (MPSGraphTopKOps)
- (NSArray<MPSGraphTensor*>*)topKWithSourceTensor:(MPSGraphTensor*)source k:(NSUInteger)k name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)topKWithSourceTensor:(MPSGraphTensor*)source
                                          kTensor:(MPSGraphTensor*)kTensor
                                             name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)topKWithSourceTensor:(MPSGraphTensor*)source
                                             axis:(NSInteger)axis
                                                k:(NSUInteger)k
                                             name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)bottomKWithSourceTensor:(MPSGraphTensor*)source
                                                axis:(NSInteger)axis
                                                   k:(NSUInteger)k
                                                name:(NSString*)name;
- (MPSGraphTensor*)topKWithGradientTensor:(MPSGraphTensor*)gradient
                                   source:(MPSGraphTensor*)source
                                        k:(NSUInteger)k
                                     name:(NSString*)name;
- (MPSGraphTensor*)topKWithGradientTensor:(MPSGraphTensor*)gradient
                                   source:(MPSGraphTensor*)source
                                     axis:(NSInteger)axis
                                        k:(NSUInteger)k
                                     name:(NSString*)name;
- (MPSGraphTensor*)bottomKWithGradientTensor:(MPSGraphTensor*)gradient
                                      source:(MPSGraphTensor*)source
                                        axis:(NSInteger)axis
                                           k:(NSUInteger)k
                                        name:(NSString*)name;
@end

@interface MPSGraph (MPSGraphNormalizationOps)
- (MPSGraphTensor*)meanOfTensor:(MPSGraphTensor*)tensor axes:(NSArray<NSNumber*>*)axes name:(NSString*)name;
- (MPSGraphTensor*)varianceOfTensor:(MPSGraphTensor*)tensor axes:(NSArray<NSNumber*>*)axes name:(NSString*)name;
- (MPSGraphTensor*)varianceOfTensor:(MPSGraphTensor*)tensor
                         meanTensor:(MPSGraphTensor*)meanTensor
                               axes:(NSArray<NSNumber*>*)axes
                               name:(NSString*)name;
- (MPSGraphTensor*)normalizationWithTensor:(MPSGraphTensor*)tensor
                                meanTensor:(MPSGraphTensor*)mean
                            varianceTensor:(MPSGraphTensor*)variance
                               gammaTensor:(MPSGraphTensor*)gamma
                                betaTensor:(MPSGraphTensor*)beta
                                   epsilon:(float)epsilon
                                      name:(NSString*)name;
- (MPSGraphTensor*)normalizationGammaGradientWithIncomingGradientTensor:(MPSGraphTensor*)incomingGradientTensor
                                                           sourceTensor:(MPSGraphTensor*)sourceTensor
                                                             meanTensor:(MPSGraphTensor*)meanTensor
                                                         varianceTensor:(MPSGraphTensor*)varianceTensor
                                                          reductionAxes:(NSArray<NSNumber*>*)axes
                                                                epsilon:(float)epsilon
                                                                   name:(NSString*)name;
- (MPSGraphTensor*)normalizationBetaGradientWithIncomingGradientTensor:(MPSGraphTensor*)incomingGradientTensor
                                                          sourceTensor:(MPSGraphTensor*)sourceTensor
                                                         reductionAxes:(NSArray<NSNumber*>*)axes
                                                                  name:(NSString*)name;
- (MPSGraphTensor*)normalizationGradientWithIncomingGradientTensor:(MPSGraphTensor*)incomingGradientTensor
                                                      sourceTensor:(MPSGraphTensor*)sourceTensor
                                                        meanTensor:(MPSGraphTensor*)meanTensor
                                                    varianceTensor:(MPSGraphTensor*)varianceTensor
                                                       gammaTensor:(MPSGraphTensor*)gamma
                                               gammaGradientTensor:(MPSGraphTensor*)gammaGradient
                                                betaGradientTensor:(MPSGraphTensor*)betaGradient
                                                     reductionAxes:(NSArray<NSNumber*>*)axes
                                                           epsilon:(float)epsilon
                                                              name:(NSString*)name;
@end

@interface MPSGraph (MPSGraphLossOps)
- (MPSGraphTensor*)softMaxCrossEntropyWithSourceTensor:(MPSGraphTensor*)sourceTensor
                                          labelsTensor:(MPSGraphTensor*)labelsTensor
                                                  axis:(NSInteger)axis
                                         reductionType:(MPSGraphLossReductionType)reductionType
                                                  name:(NSString*)name;
- (MPSGraphTensor*)softMaxCrossEntropyGradientWithIncomingGradientTensor:(MPSGraphTensor*)gradientTensor
                                                            sourceTensor:(MPSGraphTensor*)sourceTensor
                                                            labelsTensor:(MPSGraphTensor*)labelsTensor
                                                                    axis:(NSInteger)axis
                                                           reductionType:(MPSGraphLossReductionType)reductionType
                                                                    name:(NSString*)name;
@end

@interface MPSGraph (MPSGraphMatrixMultiplicationOps)
- (MPSGraphTensor*)matrixMultiplicationWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                                         secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                                    name:(NSString*)name;
- (MPSGraphTensor*)HammingDistanceWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                                    secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                     resultDataType:(MPSDataType)resultDataType
                                               name:(NSString*)name;
- (MPSGraphTensor*)scaledDotProductAttentionWithQueryTensor:(MPSGraphTensor*)queryTensor
                                                  keyTensor:(MPSGraphTensor*)keyTensor
                                                valueTensor:(MPSGraphTensor*)valueTensor
                                                 maskTensor:(MPSGraphTensor*)maskTensor
                                                      scale:(float)scale
                                                       name:(NSString*)name;
- (MPSGraphTensor*)scaledDotProductAttentionWithQueryTensor:(MPSGraphTensor*)queryTensor
                                                  keyTensor:(MPSGraphTensor*)keyTensor
                                                valueTensor:(MPSGraphTensor*)valueTensor
                                                      scale:(float)scale
                                                       name:(NSString*)name;
@end

@interface MPSGraph (MPSGraphLinearAlgebraOps)
- (MPSGraphTensor*)bandPartWithTensor:(MPSGraphTensor*)inputTensor
                             numLower:(NSInteger)numLower
                             numUpper:(NSInteger)numUpper
                                 name:(NSString*)name;
- (MPSGraphTensor*)bandPartWithTensor:(MPSGraphTensor*)inputTensor
                       numLowerTensor:(MPSGraphTensor*)numLowerTensor
                       numUpperTensor:(MPSGraphTensor*)numUpperTensor
                                 name:(NSString*)name;
- (MPSGraphTensor*)inverseOfTensor:(MPSGraphTensor*)inputTensor name:(NSString*)name;
@end
