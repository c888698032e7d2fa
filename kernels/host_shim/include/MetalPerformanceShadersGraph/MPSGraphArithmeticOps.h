// mps-migrate host shim: MPSGraph's elementwise ops (arithmetic, comparison, logic, bitwise, complex) and
// activations (declarations only).
#pragma once
#include <MetalPerformanceShadersGraph/MPSGraphCore.h>

@interface MPSGraph (MPSGraphArithmeticOps)
// unary
- (MPSGraphTensor*)exponentWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)exponentBase2WithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)exponentBase10WithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)logarithmWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)logarithmBase2WithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)logarithmBase10WithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)squareWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)squareRootWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)cubeRootWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)reverseSquareRootWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)reciprocalSquareRootWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)reciprocalWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)absoluteWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)absoluteSquareWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)negativeWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)signWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)signbitWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)ceilWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)floorWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)roundWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)rintWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)truncateWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)sinWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)cosWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)tanWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)sinhWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)coshWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)tanhWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)asinWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)acosWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)atanWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)asinhWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)acoshWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)atanhWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)erfWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)notWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)isInfiniteWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)isFiniteWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)isNaNWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)bitwiseNOTWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)bitwisePopulationCountWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)conjugateWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)realPartOfTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)imaginaryPartOfTensor:(MPSGraphTensor*)tensor name:(NSString*)name;

// binary
- (MPSGraphTensor*)additionWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                             secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                        name:(NSString*)name;
- (MPSGraphTensor*)subtractionWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                                secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                           name:(NSString*)name;
- (MPSGraphTensor*)multiplicationWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                                   secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                              name:(NSString*)name;
- (MPSGraphTensor*)divisionWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                             secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                        name:(NSString*)name;
- (MPSGraphTensor*)divisionNoNaNWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                                  secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                             name:(NSString*)name;
- (MPSGraphTensor*)moduloWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                           secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                      name:(NSString*)name;
- (MPSGraphTensor*)floorModuloWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                                secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                           name:(NSString*)name;
- (MPSGraphTensor*)powerWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                          secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                     name:(NSString*)name;
- (MPSGraphTensor*)minimumWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                            secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                       name:(NSString*)name;
- (MPSGraphTensor*)maximumWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                            secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                       name:(NSString*)name;
- (MPSGraphTensor*)minimumWithNaNPropagationWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                                              secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                                         name:(NSString*)name;
- (MPSGraphTensor*)maximumWithNaNPropagationWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                                              secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                                         name:(NSString*)name;
- (MPSGraphTensor*)equalWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                          secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                     name:(NSString*)name;
- (MPSGraphTensor*)notEqualWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                             secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                        name:(NSString*)name;
- (MPSGraphTensor*)lessThanWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                             secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                        name:(NSString*)name;
- (MPSGraphTensor*)lessThanOrEqualToWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                                      secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                                 name:(NSString*)name;
- (MPSGraphTensor*)greaterThanWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                                secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                           name:(NSString*)name;
- (MPSGraphTensor*)greaterThanOrEqualToWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                                         secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                                    name:(NSString*)name;
- (MPSGraphTensor*)logicalANDWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                               secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                          name:(NSString*)name;
- (MPSGraphTensor*)logicalORWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                              secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                         name:(NSString*)name;
- (MPSGraphTensor*)logicalNANDWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                                secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                           name:(NSString*)name;
- (MPSGraphTensor*)logicalNORWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                               secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                          name:(NSString*)name;
- (MPSGraphTensor*)logicalXORWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                               secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                          name:(NSString*)name;
- (MPSGraphTensor*)logicalXNORWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                                secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                           name:(NSString*)name;
- (MPSGraphTensor*)atan2WithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                          secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                     name:(NSString*)name;
- (MPSGraphTensor*)bitwiseANDWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                               secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                          name:(NSString*)name;
- (MPSGraphTensor*)bitwiseORWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                              secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                         name:(NSString*)name;
- (MPSGraphTensor*)bitwiseXORWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                               secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                          name:(NSString*)name;
- (MPSGraphTensor*)bitwiseLeftShiftWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                                     secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                                name:(NSString*)name;
- (MPSGraphTensor*)bitwiseRightShiftWithPrimaryTensor:(MPSGraphTensor*)primaryTensor
                                      secondaryTensor:(MPSGraphTensor*)secondaryTensor
                                                 name:(NSString*)name;
- (MPSGraphTensor*)complexTensorWithRealTensor:(MPSGraphTensor*)realTensor
                               imaginaryTensor:(MPSGraphTensor*)imaginaryTensor
                                          name:(NSString*)name;

// ternary
- (MPSGraphTensor*)selectWithPredicateTensor:(MPSGraphTensor*)predicateTensor
                         truePredicateTensor:(MPSGraphTensor*)truePredicateTensor
                        falsePredicateTensor:(MPSGraphTensor*)falseSelectTensor
                                        name:(NSString*)name;
- (MPSGraphTensor*)clampWithTensor:(MPSGraphTensor*)tensor
                    minValueTensor:(MPSGraphTensor*)minValueTensor
                    maxValueTensor:(MPSGraphTensor*)maxValueTensor
                              name:(NSString*)name;
@end

@interface MPSGraph (MPSGraphActivationOps)
- (MPSGraphTensor*)reLUWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)reLUGradientWithIncomingGradient:(MPSGraphTensor*)gradient
                                       sourceTensor:(MPSGraphTensor*)source
                                               name:(NSString*)name;
- (MPSGraphTensor*)sigmoidWithTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)sigmoidGradientWithIncomingGradient:(MPSGraphTensor*)gradient
                                          sourceTensor:(MPSGraphTensor*)source
                                                  name:(NSString*)name;
- (MPSGraphTensor*)softMaxWithTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)softMaxGradientWithIncomingGradient:(MPSGraphTensor*)gradient
                                          sourceTensor:(MPSGraphTensor*)source
                                                  axis:(NSInteger)axis
                                                  name:(NSString*)name;
- (MPSGraphTensor*)leakyReLUWithTensor:(MPSGraphTensor*)tensor alpha:(double)alpha name:(NSString*)name;
- (MPSGraphTensor*)leakyReLUWithTensor:(MPSGraphTensor*)tensor
                           alphaTensor:(MPSGraphTensor*)alphaTensor
                                  name:(NSString*)name;
- (MPSGraphTensor*)leakyReLUGradientWithIncomingGradient:(MPSGraphTensor*)gradient
                                            sourceTensor:(MPSGraphTensor*)source
                                             alphaTensor:(MPSGraphTensor*)alphaTensor
                                                    name:(NSString*)name;
@end
