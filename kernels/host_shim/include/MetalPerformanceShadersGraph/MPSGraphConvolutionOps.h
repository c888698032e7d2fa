// mps-migrate host shim: MPSGraph's convolutions, pooling, resize, grid sampling, im2col and Fourier transforms
// (declarations only; their descriptors are in MPSGraphCore.h).
#pragma once
#include <MetalPerformanceShadersGraph/MPSGraphCore.h>

@interface MPSGraph (MPSGraphConvolutionOps)
- (MPSGraphTensor*)convolution2DWithSourceTensor:(MPSGraphTensor*)source
                                   weightsTensor:(MPSGraphTensor*)weights
                                      descriptor:(MPSGraphConvolution2DOpDescriptor*)descriptor
                                            name:(NSString*)name;
- (MPSGraphTensor*)convolution2DDataGradientWithIncomingGradientTensor:(MPSGraphTensor*)incomingGradient
                                                         weightsTensor:(MPSGraphTensor*)weights
                                                           outputShape:(MPSShape*)outputShape
                                          forwardConvolutionDescriptor:
                                              (MPSGraphConvolution2DOpDescriptor*)forwardConvolutionDescriptor
                                                                  name:(NSString*)name;
- (MPSGraphTensor*)convolution2DWeightsGradientWithIncomingGradientTensor:(MPSGraphTensor*)incomingGradient
                                                             sourceTensor:(MPSGraphTensor*)source
                                                              outputShape:(MPSShape*)outputShape
                                             forwardConvolutionDescriptor:
                                                 (MPSGraphConvolution2DOpDescriptor*)forwardConvolutionDescriptor
                                                                     name:(NSString*)name;
- (MPSGraphTensor*)convolution3DWithSourceTensor:(MPSGraphTensor*)source
                                   weightsTensor:(MPSGraphTensor*)weights
                                      descriptor:(MPSGraphConvolution3DOpDescriptor*)descriptor
                                            name:(NSString*)name;
- (MPSGraphTensor*)convolution3DDataGradientWithIncomingGradientTensor:(MPSGraphTensor*)incomingGradient
                                                         weightsTensor:(MPSGraphTensor*)weights
                                                           outputShape:(MPSShape*)outputShape
                                          forwardConvolutionDescriptor:
                                              (MPSGraphConvolution3DOpDescriptor*)forwardConvolutionDescriptor
                                                                  name:(NSString*)name;
- (MPSGraphTensor*)convolution3DWeightsGradientWithIncomingGradientTensor:(MPSGraphTensor*)incomingGradient
                                                             sourceTensor:(MPSGraphTensor*)source
                                                              outputShape:(MPSShape*)outputShape
                                             forwardConvolutionDescriptor:
                                                 (MPSGraphConvolution3DOpDescriptor*)forwardConvolutionDescriptor
                                                                     name:(NSString*)name;
- (MPSGraphTensor*)convolutionTranspose2DWithSourceTensor:(MPSGraphTensor*)source
                                            weightsTensor:(MPSGraphTensor*)weights
                                              outputShape:(MPSShape*)outputShape
                                               descriptor:(MPSGraphConvolution2DOpDescriptor*)descriptor
                                                     name:(NSString*)name;
- (MPSGraphTensor*)convolutionTranspose2DDataGradientWithIncomingGradientTensor:(MPSGraphTensor*)incomingGradient
                                                                  weightsTensor:(MPSGraphTensor*)weights
                                                                    outputShape:(MPSShape*)outputShape
                                                   forwardConvolutionDescriptor:
                                                       (MPSGraphConvolution2DOpDescriptor*)forwardConvolutionDescriptor
                                                                           name:(NSString*)name;
- (MPSGraphTensor*)convolutionTranspose2DWeightsGradientWithIncomingGradientTensor:(MPSGraphTensor*)incomingGradient
                                                                      sourceTensor:(MPSGraphTensor*)source
                                                                       outputShape:(MPSShape*)outputShape
                                                      forwardConvolutionDescriptor:
                                                          (MPSGraphConvolution2DOpDescriptor*)forwardConvolutionDescriptor
                                                                              name:(NSString*)name;
- (MPSGraphTensor*)depthwiseConvolution2DWithSourceTensor:(MPSGraphTensor*)source
                                            weightsTensor:(MPSGraphTensor*)weights
                                               descriptor:(MPSGraphDepthwiseConvolution2DOpDescriptor*)descriptor
                                                     name:(NSString*)name;
- (MPSGraphTensor*)depthwiseConvolution2DDataGradientWithIncomingGradientTensor:(MPSGraphTensor*)incomingGradient
                                                                  weightsTensor:(MPSGraphTensor*)weights
                                                                    outputShape:(MPSShape*)outputShape
                                                                     descriptor:
                                                                         (MPSGraphDepthwiseConvolution2DOpDescriptor*)
                                                                             descriptor
                                                                           name:(NSString*)name;
- (MPSGraphTensor*)depthwiseConvolution2DWeightsGradientWithIncomingGradientTensor:(MPSGraphTensor*)incomingGradient
                                                                      sourceTensor:(MPSGraphTensor*)source
                                                                       outputShape:(MPSShape*)outputShape
                                                                        descriptor:
                                                                            (MPSGraphDepthwiseConvolution2DOpDescriptor*)
                                                                                descriptor
                                                                              name:(NSString*)name;
- (MPSGraphTensor*)depthwiseConvolution3DWithSourceTensor:(MPSGraphTensor*)source
                                            weightsTensor:(MPSGraphTensor*)weights
                                               descriptor:(MPSGraphDepthwiseConvolution3DOpDescriptor*)descriptor
                                                     name:(NSString*)name;
- (MPSGraphTensor*)depthwiseConvolution3DDataGradientWithIncomingGradientTensor:(MPSGraphTensor*)incomingGradient
                                                                  weightsTensor:(MPSGraphTensor*)weights
                                                                    outputShape:(MPSShape*)outputShape
                                                                     descriptor:
                                                                         (MPSGraphDepthwiseConvolution3DOpDescriptor*)
                                                                             descriptor
                                                                           name:(NSString*)name;
- (MPSGraphTensor*)depthwiseConvolution3DWeightsGradientWithIncomingGradientTensor:(MPSGraphTensor*)incomingGradient
                                                                      sourceTensor:(MPSGraphTensor*)source
                                                                       outputShape:(MPSShape*)outputShape
                                                                        descriptor:
                                                                            (MPSGraphDepthwiseConvolution3DOpDescriptor*)
                                                                                descriptor
                                                                              name:(NSString*)name;
@end

@interface MPSGraph (MPSGraphPoolingOps)
- (MPSGraphTensor*)maxPooling2DWithSourceTensor:(MPSGraphTensor*)source
                                     descriptor:(MPSGraphPooling2DOpDescriptor*)descriptor
                                           name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)maxPooling2DReturnIndicesWithSourceTensor:(MPSGraphTensor*)source
                                                            descriptor:(MPSGraphPooling2DOpDescriptor*)descriptor
                                                                  name:(NSString*)name;
- (MPSGraphTensor*)maxPooling2DGradientWithGradientTensor:(MPSGraphTensor*)gradient
                                             sourceTensor:(MPSGraphTensor*)source
                                               descriptor:(MPSGraphPooling2DOpDescriptor*)descriptor
                                                     name:(NSString*)name;
- (MPSGraphTensor*)maxPooling2DGradientWithGradientTensor:(MPSGraphTensor*)gradient
                                            indicesTensor:(MPSGraphTensor*)indices
                                              outputShape:(MPSShape*)outputShape
                                               descriptor:(MPSGraphPooling2DOpDescriptor*)descriptor
                                                     name:(NSString*)name;
- (MPSGraphTensor*)maxPooling2DGradientWithGradientTensor:(MPSGraphTensor*)gradient
                                            indicesTensor:(MPSGraphTensor*)indices
                                        outputShapeTensor:(MPSGraphTensor*)outputShape
                                               descriptor:(MPSGraphPooling2DOpDescriptor*)descriptor
                                                     name:(NSString*)name;
- (MPSGraphTensor*)avgPooling2DWithSourceTensor:(MPSGraphTensor*)source
                                     descriptor:(MPSGraphPooling2DOpDescriptor*)descriptor
                                           name:(NSString*)name;
- (MPSGraphTensor*)avgPooling2DGradientWithGradientTensor:(MPSGraphTensor*)gradient
                                             sourceTensor:(MPSGraphTensor*)source
                                               descriptor:(MPSGraphPooling2DOpDescriptor*)descriptor
                                                     name:(NSString*)name;
- (MPSGraphTensor*)maxPooling4DWithSourceTensor:(MPSGraphTensor*)source
                                     descriptor:(MPSGraphPooling4DOpDescriptor*)descriptor
                                           name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)maxPooling4DReturnIndicesWithSourceTensor:(MPSGraphTensor*)source
                                                            descriptor:(MPSGraphPooling4DOpDescriptor*)descriptor
                                                                  name:(NSString*)name;
- (MPSGraphTensor*)maxPooling4DGradientWithGradientTensor:(MPSGraphTensor*)gradient
                                             sourceTensor:(MPSGraphTensor*)source
                                               descriptor:(MPSGraphPooling4DOpDescriptor*)descriptor
                                                     name:(NSString*)name;
- (MPSGraphTensor*)maxPooling4DGradientWithGradientTensor:(MPSGraphTensor*)gradient
                                            indicesTensor:(MPSGraphTensor*)indices
                                              outputShape:(MPSShape*)outputShape
                                               descriptor:(MPSGraphPooling4DOpDescriptor*)descriptor
                                                     name:(NSString*)name;
- (MPSGraphTensor*)avgPooling4DWithSourceTensor:(MPSGraphTensor*)source
                                     descriptor:(MPSGraphPooling4DOpDescriptor*)descriptor
                                           name:(NSString*)name;
- (MPSGraphTensor*)avgPooling4DGradientWithGradientTensor:(MPSGraphTensor*)gradient
                                             sourceTensor:(MPSGraphTensor*)source
                                               descriptor:(MPSGraphPooling4DOpDescriptor*)descriptor
                                                     name:(NSString*)name;
- (MPSGraphTensor*)L2NormPooling4DWithSourceTensor:(MPSGraphTensor*)source
                                        descriptor:(MPSGraphPooling4DOpDescriptor*)descriptor
                                              name:(NSString*)name;
- (MPSGraphTensor*)L2NormPooling4DGradientWithGradientTensor:(MPSGraphTensor*)gradient
                                                sourceTensor:(MPSGraphTensor*)source
                                                  descriptor:(MPSGraphPooling4DOpDescriptor*)descriptor
                                                        name:(NSString*)name;
@end

@interface MPSGraph (MPSGraphResizeOps)
- (MPSGraphTensor*)resizeTensor:(MPSGraphTensor*)imagesTensor
                           size:(MPSShape*)size
                           mode:(MPSGraphResizeMode)mode
                   centerResult:(BOOL)centerResult
                   alignCorners:(BOOL)alignCorners
                         layout:(MPSGraphTensorNamedDataLayout)layout
                           name:(NSString*)name;
- (MPSGraphTensor*)resizeTensor:(MPSGraphTensor*)imagesTensor
                     sizeTensor:(MPSGraphTensor*)size
                           mode:(MPSGraphResizeMode)mode
                   centerResult:(BOOL)centerResult
                   alignCorners:(BOOL)alignCorners
                         layout:(MPSGraphTensorNamedDataLayout)layout
                           name:(NSString*)name;
- (MPSGraphTensor*)resizeNearestWithTensor:(MPSGraphTensor*)imagesTensor
                                sizeTensor:(MPSGraphTensor*)size
                       nearestRoundingMode:(MPSGraphResizeNearestRoundingMode)nearestRoundingMode
                              centerResult:(BOOL)centerResult
                              alignCorners:(BOOL)alignCorners
                                    layout:(MPSGraphTensorNamedDataLayout)layout
                                      name:(NSString*)name;
- (MPSGraphTensor*)resizeNearestWithTensor:(MPSGraphTensor*)imagesTensor
                                sizeTensor:(MPSGraphTensor*)size
                         scaleOffsetTensor:(MPSGraphTensor*)scaleOffset
                       nearestRoundingMode:(MPSGraphResizeNearestRoundingMode)nearestRoundingMode
                                    layout:(MPSGraphTensorNamedDataLayout)layout
                                      name:(NSString*)name;
- (MPSGraphTensor*)resizeBilinearWithTensor:(MPSGraphTensor*)imagesTensor
                                 sizeTensor:(MPSGraphTensor*)size
                               centerResult:(BOOL)centerResult
                               alignCorners:(BOOL)alignCorners
                                     layout:(MPSGraphTensorNamedDataLayout)layout
                                       name:(NSString*)name;
- (MPSGraphTensor*)resizeBilinearWithTensor:(MPSGraphTensor*)imagesTensor
                                 sizeTensor:(MPSGraphTensor*)size
                          scaleOffsetTensor:(MPSGraphTensor*)scaleOffset
                                     layout:(MPSGraphTensorNamedDataLayout)layout
                                       name:(NSString*)name;
- (MPSGraphTensor*)resizeWithGradientTensor:(MPSGraphTensor*)gradient
                                      input:(MPSGraphTensor*)input
                                       mode:(MPSGraphResizeMode)mode
                               centerResult:(BOOL)centerResult
                               alignCorners:(BOOL)alignCorners
                                     layout:(MPSGraphTensorNamedDataLayout)layout
                                       name:(NSString*)name;
- (MPSGraphTensor*)resizeNearestWithGradientTensor:(MPSGraphTensor*)gradient
                                             input:(MPSGraphTensor*)input
                               nearestRoundingMode:(MPSGraphResizeNearestRoundingMode)nearestRoundingMode
                                      centerResult:(BOOL)centerResult
                                      alignCorners:(BOOL)alignCorners
                                            layout:(MPSGraphTensorNamedDataLayout)layout
                                              name:(NSString*)name;
- (MPSGraphTensor*)resizeNearestWithGradientTensor:(MPSGraphTensor*)gradient
                                             input:(MPSGraphTensor*)input
                                 scaleOffsetTensor:(MPSGraphTensor*)scaleOffset
                               nearestRoundingMode:(MPSGraphResizeNearestRoundingMode)nearestRoundingMode
                                            layout:(MPSGraphTensorNamedDataLayout)layout
                                              name:(NSString*)name;
- (MPSGraphTensor*)resizeBilinearWithGradientTensor:(MPSGraphTensor*)gradient
                                              input:(MPSGraphTensor*)input
                                       centerResult:(BOOL)centerResult
                                       alignCorners:(BOOL)alignCorners
                                             layout:(MPSGraphTensorNamedDataLayout)layout
                                               name:(NSString*)name;
- (MPSGraphTensor*)resizeBilinearWithGradientTensor:(MPSGraphTensor*)gradient
                                              input:(MPSGraphTensor*)input
                                  scaleOffsetTensor:(MPSGraphTensor*)scaleOffset
                                             layout:(MPSGraphTensorNamedDataLayout)layout
                                               name:(NSString*)name;
@end

@interface MPSGraph (MPSGraphSampleGridOps)
- (MPSGraphTensor*)sampleGridWithSourceTensor:(MPSGraphTensor*)source
                             coordinateTensor:(MPSGraphTensor*)coordinates
                                       layout:(MPSGraphTensorNamedDataLayout)layout
                         normalizeCoordinates:(BOOL)normalizeCoordinates
                          relativeCoordinates:(BOOL)relativeCoordinates
                                 alignCorners:(BOOL)alignCorners
                                  paddingMode:(MPSGraphPaddingMode)paddingMode
                                 samplingMode:(MPSGraphResizeMode)samplingMode
                                constantValue:(double)constantValue
                                         name:(NSString*)name;
- (MPSGraphTensor*)sampleGridWithSourceTensor:(MPSGraphTensor*)source
                             coordinateTensor:(MPSGraphTensor*)coordinates
                                       layout:(MPSGraphTensorNamedDataLayout)layout
                         normalizeCoordinates:(BOOL)normalizeCoordinates
                          relativeCoordinates:(BOOL)relativeCoordinates
                                 alignCorners:(BOOL)alignCorners
                                  paddingMode:(MPSGraphPaddingMode)paddingMode
                          nearestRoundingMode:(MPSGraphResizeNearestRoundingMode)nearestRoundingMode
                                constantValue:(double)constantValue
                                         name:(NSString*)name;
@end

@interface MPSGraph (MPSGraphImToColOps)
- (MPSGraphTensor*)imToColWithSourceTensor:(MPSGraphTensor*)source
                                descriptor:(MPSGraphImToColOpDescriptor*)descriptor
                                      name:(NSString*)name;
- (MPSGraphTensor*)colToImWithSourceTensor:(MPSGraphTensor*)source
                               outputShape:(MPSShape*)outputShape
                                descriptor:(MPSGraphImToColOpDescriptor*)descriptor
                                      name:(NSString*)name;
@end

@interface MPSGraph (MPSGraphFourierTransformOps)
- (MPSGraphTensor*)fastFourierTransformWithTensor:(MPSGraphTensor*)tensor
                                             axes:(NSArray<NSNumber*>*)axes
                                       descriptor:(MPSGraphFFTDescriptor*)descriptor
                                             name:(NSString*)name;
- (MPSGraphTensor*)fastFourierTransformWithTensor:(MPSGraphTensor*)tensor
                                       axesTensor:(MPSGraphTensor*)axesTensor
                                       descriptor:(MPSGraphFFTDescriptor*)descriptor
                                             name:(NSString*)name;
- (MPSGraphTensor*)realToHermiteanFFTWithTensor:(MPSGraphTensor*)tensor
                                           axes:(NSArray<NSNumber*>*)axes
                                     descriptor:(MPSGraphFFTDescriptor*)descriptor
                                           name:(NSString*)name;
- (MPSGraphTensor*)realToHermiteanFFTWithTensor:(MPSGraphTensor*)tensor
                                     axesTensor:(MPSGraphTensor*)axesTensor
                                     descriptor:(MPSGraphFFTDescriptor*)descriptor
                                           name:(NSString*)name;
- (MPSGraphTensor*)HermiteanToRealFFTWithTensor:(MPSGraphTensor*)tensor
                                           axes:(NSArray<NSNumber*>*)axes
                                     descriptor:(MPSGraphFFTDescriptor*)descriptor
                                           name:(NSString*)name;
- (MPSGraphTensor*)HermiteanToRealFFTWithTensor:(MPSGraphTensor*)tensor
                                     axesTensor:(MPSGraphTensor*)axesTensor
                                     descriptor:(MPSGraphFFTDescriptor*)descriptor
                                           name:(NSString*)name;
@end
