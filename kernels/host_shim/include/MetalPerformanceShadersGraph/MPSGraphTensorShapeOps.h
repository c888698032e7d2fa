// mps-migrate host shim: MPSGraph's shape and memory-layout ops, gather/scatter, non-zero and one-hot
// (declarations only).
#pragma once
#include <MetalPerformanceShadersGraph/MPSGraphCore.h>

@interface MPSGraph (MPSGraphTensorShapeOps)
- (MPSGraphTensor*)transposeTensor:(MPSGraphTensor*)tensor
                         dimension:(NSUInteger)dimensionIndex
                     withDimension:(NSUInteger)dimensionIndex2
                              name:(NSString*)name;
- (MPSGraphTensor*)transposeTensor:(MPSGraphTensor*)tensor
                       permutation:(NSArray<NSNumber*>*)permutation
                              name:(NSString*)name;
- (MPSGraphTensor*)sliceTensor:(MPSGraphTensor*)tensor
                        starts:(NSArray<NSNumber*>*)starts
                          ends:(NSArray<NSNumber*>*)ends
                       strides:(NSArray<NSNumber*>*)strides
                          name:(NSString*)name;
- (MPSGraphTensor*)sliceTensor:(MPSGraphTensor*)tensor
                        starts:(NSArray<NSNumber*>*)starts
                          ends:(NSArray<NSNumber*>*)ends
                       strides:(NSArray<NSNumber*>*)strides
                     startMask:(uint32_t)startMask
                       endMask:(uint32_t)endMask
                   squeezeMask:(uint32_t)squeezeMask
                          name:(NSString*)name;
- (MPSGraphTensor*)sliceTensor:(MPSGraphTensor*)tensor
                   startTensor:(MPSGraphTensor*)startTensor
                     endTensor:(MPSGraphTensor*)endTensor
                  strideTensor:(MPSGraphTensor*)strideTensor
                     startMask:(uint32_t)startMask
                       endMask:(uint32_t)endMask
                   squeezeMask:(uint32_t)squeezeMask
                          name:(NSString*)name;
- (MPSGraphTensor*)sliceTensor:(MPSGraphTensor*)tensor
                   startTensor:(MPSGraphTensor*)startTensor
                    sizeTensor:(MPSGraphTensor*)sizeTensor
                   squeezeMask:(uint32_t)squeezeMask
                          name:(NSString*)name;
- (MPSGraphTensor*)sliceGradientTensor:(MPSGraphTensor*)inputGradientTensor
                      fwdInShapeTensor:(MPSGraphTensor*)fwdInShapeTensor
                                starts:(NSArray<NSNumber*>*)starts
                                  ends:(NSArray<NSNumber*>*)ends
                               strides:(NSArray<NSNumber*>*)strides
                                  name:(NSString*)name;
- (MPSGraphTensor*)sliceGradientTensor:(MPSGraphTensor*)inputGradientTensor
                      fwdInShapeTensor:(MPSGraphTensor*)fwdInShapeTensor
                                starts:(NSArray<NSNumber*>*)starts
                                  ends:(NSArray<NSNumber*>*)ends
                               strides:(NSArray<NSNumber*>*)strides
                             startMask:(uint32_t)startMask
                               endMask:(uint32_t)endMask
                           squeezeMask:(uint32_t)squeezeMask
                                  name:(NSString*)name;
- (MPSGraphTensor*)concatTensor:(MPSGraphTensor*)tensor
                     withTensor:(MPSGraphTensor*)tensor2
                      dimension:(NSInteger)dimensionIndex
                           name:(NSString*)name;
- (MPSGraphTensor*)concatTensors:(NSArray<MPSGraphTensor*>*)tensors
                       dimension:(NSInteger)dimensionIndex
                            name:(NSString*)name;
- (MPSGraphTensor*)concatTensors:(NSArray<MPSGraphTensor*>*)tensors
                       dimension:(NSInteger)dimensionIndex
                      interleave:(BOOL)interleave
                            name:(NSString*)name;
- (MPSGraphTensor*)stackTensors:(NSArray<MPSGraphTensor*>*)inputTensors axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)tileTensor:(MPSGraphTensor*)tensor withMultiplier:(MPSShape*)multiplier name:(NSString*)name;
- (MPSGraphTensor*)tileGradientWithIncomingGradientTensor:(MPSGraphTensor*)incomingGradientTensor
                                             sourceTensor:(MPSGraphTensor*)sourceTensor
                                           withMultiplier:(MPSShape*)multiplier
                                                     name:(NSString*)name;
- (MPSGraphTensor*)padTensor:(MPSGraphTensor*)tensor
             withPaddingMode:(MPSGraphPaddingMode)paddingMode
                 leftPadding:(MPSShape*)leftPadding
                rightPadding:(MPSShape*)rightPadding
               constantValue:(double)constantValue
                        name:(NSString*)name;
- (MPSGraphTensor*)padGradientWithIncomingGradientTensor:(MPSGraphTensor*)incomingGradientTensor
                                            sourceTensor:(MPSGraphTensor*)sourceTensor
                                             paddingMode:(MPSGraphPaddingMode)paddingMode
                                             leftPadding:(MPSShape*)leftPadding
                                            rightPadding:(MPSShape*)rightPadding
                                                    name:(NSString*)name;
- (MPSGraphTensor*)spaceToDepth2DTensor:(MPSGraphTensor*)tensor
                              widthAxis:(NSUInteger)widthAxis
                             heightAxis:(NSUInteger)heightAxis
                              depthAxis:(NSUInteger)depthAxis
                              blockSize:(NSUInteger)blockSize
                   usePixelShuffleOrder:(BOOL)usePixelShuffleOrder
                                   name:(NSString*)name;
- (MPSGraphTensor*)depthToSpace2DTensor:(MPSGraphTensor*)tensor
                              widthAxis:(NSUInteger)widthAxis
                             heightAxis:(NSUInteger)heightAxis
                              depthAxis:(NSUInteger)depthAxis
                              blockSize:(NSUInteger)blockSize
                   usePixelShuffleOrder:(BOOL)usePixelShuffleOrder
                                   name:(NSString*)name;
- (MPSGraphTensor*)reverseTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)reverseTensor:(MPSGraphTensor*)tensor axes:(NSArray<NSNumber*>*)axes name:(NSString*)name;
- (MPSGraphTensor*)reverseTensor:(MPSGraphTensor*)tensor axesTensor:(MPSGraphTensor*)axesTensor name:(NSString*)name;
- (MPSGraphTensor*)flatten2DTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)flatten2DTensor:(MPSGraphTensor*)tensor axisTensor:(MPSGraphTensor*)axisTensor name:(NSString*)name;
- (MPSGraphTensor*)broadcastTensor:(MPSGraphTensor*)tensor toShape:(MPSShape*)shape name:(NSString*)name;
- (MPSGraphTensor*)broadcastTensor:(MPSGraphTensor*)tensor
                     toShapeTensor:(MPSGraphTensor*)shapeTensor
                              name:(NSString*)name;
- (MPSGraphTensor*)reinterpretCastTensor:(MPSGraphTensor*)tensor toType:(MPSDataType)type name:(NSString*)name;
- (MPSGraphTensor*)squeezeTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
- (MPSGraphTensor*)squeezeTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)squeezeTensor:(MPSGraphTensor*)tensor axes:(NSArray<NSNumber*>*)axes name:(NSString*)name;
- (MPSGraphTensor*)squeezeTensor:(MPSGraphTensor*)tensor axesTensor:(MPSGraphTensor*)axesTensor name:(NSString*)name;
- (MPSGraphTensor*)expandDimsOfTensor:(MPSGraphTensor*)tensor axis:(NSInteger)axis name:(NSString*)name;
- (MPSGraphTensor*)expandDimsOfTensor:(MPSGraphTensor*)tensor axes:(NSArray<NSNumber*>*)axes name:(NSString*)name;
- (MPSGraphTensor*)expandDimsOfTensor:(MPSGraphTensor*)tensor
                           axesTensor:(MPSGraphTensor*)axesTensor
                                 name:(NSString*)name;
- (MPSGraphTensor*)coordinateAlongAxis:(NSInteger)axis withShape:(MPSShape*)shape name:(NSString*)name;
- (MPSGraphTensor*)coordinateAlongAxisTensor:(MPSGraphTensor*)axisTensor
                                   withShape:(MPSShape*)shape
                                        name:(NSString*)name;
- (MPSGraphTensor*)coordinateAlongAxis:(NSInteger)axis
                       withShapeTensor:(MPSGraphTensor*)shapeTensor
                                  name:(NSString*)name;
- (MPSGraphTensor*)coordinateAlongAxisTensor:(MPSGraphTensor*)axisTensor
                             withShapeTensor:(MPSGraphTensor*)shapeTensor
                                        name:(NSString*)name;
@end

@interface MPSGraph (MPSGraphGatherOps)
- (MPSGraphTensor*)gatherNDWithUpdatesTensor:(MPSGraphTensor*)updatesTensor
                               indicesTensor:(MPSGraphTensor*)indicesTensor
                             batchDimensions:(NSUInteger)batchDimensions
                                        name:(NSString*)name;
- (MPSGraphTensor*)gatherWithUpdatesTensor:(MPSGraphTensor*)updatesTensor
                             indicesTensor:(MPSGraphTensor*)indicesTensor
                                      axis:(NSUInteger)axis
                           batchDimensions:(NSUInteger)batchDimensions
                                      name:(NSString*)name;
- (MPSGraphTensor*)gatherAlongAxis:(NSInteger)axis
                 withUpdatesTensor:(MPSGraphTensor*)updatesTensor
                     indicesTensor:(MPSGraphTensor*)indicesTensor
                              name:(NSString*)name;
- (MPSGraphTensor*)gatherAlongAxisTensor:(MPSGraphTensor*)axisTensor
                       withUpdatesTensor:(MPSGraphTensor*)updatesTensor
                           indicesTensor:(MPSGraphTensor*)indicesTensor
                                    name:(NSString*)name;
@end

@interface MPSGraph (MPSGraphScatterOps)
- (MPSGraphTensor*)scatterNDWithUpdatesTensor:(MPSGraphTensor*)updatesTensor
                                indicesTensor:(MPSGraphTensor*)indicesTensor
                                        shape:(MPSShape*)shape
                              batchDimensions:(NSUInteger)batchDimensions
                                         mode:(MPSGraphScatterMode)mode
                                         name:(NSString*)name;
- (MPSGraphTensor*)scatterNDWithUpdatesTensor:(MPSGraphTensor*)updatesTensor
                                indicesTensor:(MPSGraphTensor*)indicesTensor
                                        shape:(MPSShape*)shape
                              batchDimensions:(NSUInteger)batchDimensions
                                         name:(NSString*)name;
- (MPSGraphTensor*)scatterNDWithDataTensor:(MPSGraphTensor*)dataTensor
                             updatesTensor:(MPSGraphTensor*)updatesTensor
                             indicesTensor:(MPSGraphTensor*)indicesTensor
                           batchDimensions:(NSUInteger)batchDimensions
                                      mode:(MPSGraphScatterMode)mode
                                      name:(NSString*)name;
- (MPSGraphTensor*)scatterWithUpdatesTensor:(MPSGraphTensor*)updatesTensor
                              indicesTensor:(MPSGraphTensor*)indicesTensor
                                      shape:(MPSShape*)shape
                                       axis:(NSInteger)axis
                                       mode:(MPSGraphScatterMode)mode
                                       name:(NSString*)name;
- (MPSGraphTensor*)scatterWithDataTensor:(MPSGraphTensor*)dataTensor
                           updatesTensor:(MPSGraphTensor*)updatesTensor
                           indicesTensor:(MPSGraphTensor*)indicesTensor
                                    axis:(NSInteger)axis
                                    mode:(MPSGraphScatterMode)mode
                                    name:(NSString*)name;
- (MPSGraphTensor*)scatterAlongAxis:(NSInteger)axis
                     withDataTensor:(MPSGraphTensor*)dataTensor
                      updatesTensor:(MPSGraphTensor*)updatesTensor
                      indicesTensor:(MPSGraphTensor*)indicesTensor
                               mode:(MPSGraphScatterMode)mode
                               name:(NSString*)name;
- (MPSGraphTensor*)scatterAlongAxis:(NSInteger)axis
                  withUpdatesTensor:(MPSGraphTensor*)updatesTensor
                      indicesTensor:(MPSGraphTensor*)indicesTensor
                              shape:(MPSShape*)shape
                               mode:(MPSGraphScatterMode)mode
                               name:(NSString*)name;
- (MPSGraphTensor*)scatterAlongAxisTensor:(MPSGraphTensor*)axisTensor
                           withDataTensor:(MPSGraphTensor*)dataTensor
                            updatesTensor:(MPSGraphTensor*)updatesTensor
                            indicesTensor:(MPSGraphTensor*)indicesTensor
                                     mode:(MPSGraphScatterMode)mode
                                     name:(NSString*)name;
@end

@interface MPSGraph (MPSGraphNonZeroOps)
- (MPSGraphTensor*)nonZeroIndicesOfTensor:(MPSGraphTensor*)tensor name:(NSString*)name;
@end

@interface MPSGraph (MPSGraphOneHotOps)
- (MPSGraphTensor*)oneHotWithIndicesTensor:(MPSGraphTensor*)indicesTensor
                                     depth:(NSUInteger)depth
                                      name:(NSString*)name;
- (MPSGraphTensor*)oneHotWithIndicesTensor:(MPSGraphTensor*)indicesTensor
                                     depth:(NSUInteger)depth
                                  dataType:(MPSDataType)dataType
                                      name:(NSString*)name;
- (MPSGraphTensor*)oneHotWithIndicesTensor:(MPSGraphTensor*)indicesTensor
                                     depth:(NSUInteger)depth
                                      axis:(NSUInteger)axis
                                      name:(NSString*)name;
- (MPSGraphTensor*)oneHotWithIndicesTensor:(MPSGraphTensor*)indicesTensor
                                     depth:(NSUInteger)depth
                                      axis:(NSUInteger)axis
                                  dataType:(MPSDataType)dataType
                                      name:(NSString*)name;
- (MPSGraphTensor*)oneHotWithIndicesTensor:(MPSGraphTensor*)indicesTensor
                                     depth:(NSUInteger)depth
                                      axis:(NSUInteger)axis
                                  dataType:(MPSDataType)dataType
                                   onValue:(double)onValue
                                  offValue:(double)offValue
                                      name:(NSString*)name;
@end
