// mps-migrate host shim: MetalPerformanceShadersGraph's core types and the MPSGraph class (declarations only; the
// op categories are in the sibling headers). A graph is not run off-Apple: the runtime answers any MPSGraph
// selector with an error naming it.
#pragma once
#include <MetalPerformanceShaders/MetalPerformanceShaders.h>

typedef NS_ENUM(NSUInteger, MPSGraphOptions){MPSGraphOptionsNone = 0, MPSGraphOptionsSynchronizeResults = 1,
                                             MPSGraphOptionsVerbose = 2, MPSGraphOptionsDefault = 1};
typedef NS_ENUM(uint64_t, MPSGraphOptimization){MPSGraphOptimizationLevel0 = 0, MPSGraphOptimizationLevel1 = 1};
typedef NS_ENUM(NSUInteger, MPSGraphPaddingStyle){MPSGraphPaddingStyleExplicit = 0, MPSGraphPaddingStyleTF_VALID = 1,
                                                  MPSGraphPaddingStyleTF_SAME = 2,
                                                  MPSGraphPaddingStyleExplicitOffset = 3,
                                                  MPSGraphPaddingStyleONNX_SAME_LOWER = 4};
typedef NS_ENUM(NSUInteger, MPSGraphTensorNamedDataLayout){
    MPSGraphTensorNamedDataLayoutNCHW = 0,  MPSGraphTensorNamedDataLayoutNHWC = 1,
    MPSGraphTensorNamedDataLayoutOIHW = 2,  MPSGraphTensorNamedDataLayoutHWIO = 3,
    MPSGraphTensorNamedDataLayoutCHW = 4,   MPSGraphTensorNamedDataLayoutHWC = 5,
    MPSGraphTensorNamedDataLayoutHW = 6,    MPSGraphTensorNamedDataLayoutNCDHW = 7,
    MPSGraphTensorNamedDataLayoutNDHWC = 8, MPSGraphTensorNamedDataLayoutOIDHW = 9,
    MPSGraphTensorNamedDataLayoutDHWIO = 10};
typedef NS_ENUM(NSUInteger, MPSGraphPaddingMode){MPSGraphPaddingModeConstant = 0, MPSGraphPaddingModeReflect = 1,
                                                 MPSGraphPaddingModeSymmetric = 2, MPSGraphPaddingModeClampToEdge = 3,
                                                 MPSGraphPaddingModeZero = 4, MPSGraphPaddingModePeriodic = 5,
                                                 MPSGraphPaddingModeAntiPeriodic = 6};
typedef NS_ENUM(NSUInteger, MPSGraphResizeMode){MPSGraphResizeNearest = 0, MPSGraphResizeBilinear = 1};
typedef NS_ENUM(NSUInteger, MPSGraphResizeNearestRoundingMode){
    MPSGraphResizeNearestRoundingModeRoundPreferCeil = 0, MPSGraphResizeNearestRoundingModeRoundPreferFloor = 1,
    MPSGraphResizeNearestRoundingModeCeil = 2,            MPSGraphResizeNearestRoundingModeFloor = 3,
    MPSGraphResizeNearestRoundingModeRoundToEven = 4,     MPSGraphResizeNearestRoundingModeRoundToOdd = 5};
typedef NS_ENUM(NSInteger, MPSGraphScatterMode){MPSGraphScatterModeAdd = 0, MPSGraphScatterModeSub = 1,
                                                MPSGraphScatterModeMul = 2, MPSGraphScatterModeDiv = 3,
                                                MPSGraphScatterModeMin = 4, MPSGraphScatterModeMax = 5,
                                                MPSGraphScatterModeSet = 6};
typedef NS_ENUM(NSInteger, MPSGraphReductionMode){MPSGraphReductionModeMin = 0, MPSGraphReductionModeMax = 1,
                                                  MPSGraphReductionModeSum = 2, MPSGraphReductionModeProduct = 3,
                                                  MPSGraphReductionModeArgumentMin = 4,
                                                  MPSGraphReductionModeArgumentMax = 5};
typedef NS_ENUM(NSUInteger, MPSGraphFFTScalingMode){MPSGraphFFTScalingModeNone = 0, MPSGraphFFTScalingModeSize = 1,
                                                    MPSGraphFFTScalingModeUnitary = 2};
typedef NS_ENUM(uint64_t, MPSGraphRandomDistribution){MPSGraphRandomDistributionUniform = 0,
                                                      MPSGraphRandomDistributionNormal = 1,
                                                      MPSGraphRandomDistributionTruncatedNormal = 2};
typedef NS_ENUM(uint64_t, MPSGraphRandomNormalSamplingMethod){MPSGraphRandomNormalSamplingInvCDF = 0,
                                                              MPSGraphRandomNormalSamplingBoxMuller = 1};
typedef NS_ENUM(NSUInteger, MPSGraphPoolingReturnIndicesMode){
    MPSGraphPoolingReturnIndicesNone = 0,          MPSGraphPoolingReturnIndicesGlobalFlatten1D = 1,
    MPSGraphPoolingReturnIndicesGlobalFlatten2D = 2, MPSGraphPoolingReturnIndicesGlobalFlatten3D = 3,
    MPSGraphPoolingReturnIndicesGlobalFlatten4D = 4, MPSGraphPoolingReturnIndicesLocalFlatten1D = 5,
    MPSGraphPoolingReturnIndicesLocalFlatten2D = 6, MPSGraphPoolingReturnIndicesLocalFlatten3D = 7,
    MPSGraphPoolingReturnIndicesLocalFlatten4D = 8};
typedef NS_ENUM(uint32_t, MPSGraphDeviceType){MPSGraphDeviceTypeMetal = 0};

@interface MPSGraphObject : NSObject
@end
@interface MPSGraphType : MPSGraphObject <NSCopying>
@end
@interface MPSGraphShapedType : MPSGraphType
- (instancetype)initWithShape:(MPSShape*)s dataType:(MPSDataType)t;
@property(nonatomic, copy) MPSShape* shape;
@property(nonatomic) MPSDataType dataType;
@end
@interface MPSGraphDevice : MPSGraphObject
+ (instancetype)deviceWithMTLDevice:(id<MTLDevice>)d;
@property(nonatomic, readonly) MPSGraphDeviceType type;
@property(nonatomic, readonly) id<MTLDevice> metalDevice;
@end
@class MPSGraphOperation;
@interface MPSGraphTensor : MPSGraphObject <NSCopying>
@property(nonatomic, readonly, copy) MPSShape* shape;
@property(nonatomic, readonly) MPSDataType dataType;
@property(nonatomic, readonly) MPSGraphOperation* operation;
@end
@interface MPSGraphOperation : MPSGraphObject <NSCopying>
@property(nonatomic, readonly) NSArray<MPSGraphTensor*>* inputTensors;
@property(nonatomic, readonly) NSArray<MPSGraphTensor*>* outputTensors;
@property(nonatomic, readonly, copy) NSString* name;
@end
@interface MPSGraphTensorData : MPSGraphObject
- (instancetype)initWithMTLBuffer:(id<MTLBuffer>)b shape:(MPSShape*)s dataType:(MPSDataType)t;
- (instancetype)initWithMTLBuffer:(id<MTLBuffer>)b shape:(MPSShape*)s dataType:(MPSDataType)t rowBytes:(NSUInteger)rb;
- (instancetype)initWithMPSNDArray:(MPSNDArray*)a;
- (instancetype)initWithDevice:(MPSGraphDevice*)d data:(NSData*)data shape:(MPSShape*)s dataType:(MPSDataType)t;
@property(nonatomic, readonly, copy) MPSShape* shape;
@property(nonatomic, readonly) MPSDataType dataType;
@property(nonatomic, readonly) MPSGraphDevice* device;
- (MPSNDArray*)mpsndarray;
@end
typedef NSDictionary<MPSGraphTensor*, MPSGraphTensorData*> MPSGraphTensorDataDictionary;
typedef NSDictionary<MPSGraphTensor*, MPSGraphShapedType*> MPSGraphTensorShapedTypeDictionary;
typedef void (^MPSGraphCompletionHandler)(MPSGraphTensorDataDictionary*, NSError*);

@interface MPSGraphExecutionDescriptor : MPSGraphObject
@property(nonatomic) BOOL waitUntilCompleted;
@property(nonatomic, copy) id completionHandler;
@property(nonatomic, copy) id scheduledHandler;
@end
@interface MPSGraphCompilationDescriptor : MPSGraphObject <NSCopying>
@property(nonatomic) MPSGraphOptimization optimizationLevel;
@property(nonatomic) BOOL waitForCompilationCompletion;
@end
@interface MPSGraphExecutableExecutionDescriptor : MPSGraphObject
@property(nonatomic) BOOL waitUntilCompleted;
@end
@interface MPSGraphExecutable : MPSGraphObject
@property(nonatomic, readonly) NSArray<MPSGraphTensor*>* feedTensors;
@property(nonatomic, readonly) NSArray<MPSGraphTensor*>* targetTensors;
- (NSArray<MPSGraphTensorData*>*)encodeToCommandBuffer:(MPSCommandBuffer*)cb
                                           inputsArray:(NSArray<MPSGraphTensorData*>*)inputs
                                          resultsArray:(NSArray<MPSGraphTensorData*>*)results
                                   executionDescriptor:(MPSGraphExecutableExecutionDescriptor*)d;
@end

@interface MPSGraphConvolution2DOpDescriptor : MPSGraphObject <NSCopying>
+ (instancetype)descriptorWithStrideInX:(NSUInteger)sx strideInY:(NSUInteger)sy dilationRateInX:(NSUInteger)dx
                        dilationRateInY:(NSUInteger)dy groups:(NSUInteger)g paddingLeft:(NSUInteger)pl
                           paddingRight:(NSUInteger)pr paddingTop:(NSUInteger)pt paddingBottom:(NSUInteger)pb
                           paddingStyle:(MPSGraphPaddingStyle)ps dataLayout:(MPSGraphTensorNamedDataLayout)dl
                          weightsLayout:(MPSGraphTensorNamedDataLayout)wl;
@property(nonatomic) NSUInteger strideInX, strideInY, dilationRateInX, dilationRateInY, groups;
@property(nonatomic) NSUInteger paddingLeft, paddingRight, paddingTop, paddingBottom;
@property(nonatomic) MPSGraphPaddingStyle paddingStyle;
@property(nonatomic) MPSGraphTensorNamedDataLayout dataLayout, weightsLayout;
- (void)setExplicitPaddingWithPaddingLeft:(NSUInteger)l paddingRight:(NSUInteger)r paddingTop:(NSUInteger)t
                            paddingBottom:(NSUInteger)b;
@end
@interface MPSGraphConvolution3DOpDescriptor : MPSGraphObject <NSCopying>
@property(nonatomic) NSUInteger strideInX, strideInY, strideInZ, dilationRateInX, dilationRateInY, dilationRateInZ;
@property(nonatomic) NSUInteger paddingLeft, paddingRight, paddingTop, paddingBottom, paddingFront, paddingBack;
@property(nonatomic) NSUInteger groups;
@property(nonatomic) MPSGraphPaddingStyle paddingStyle;
@property(nonatomic) MPSGraphTensorNamedDataLayout dataLayout, weightsLayout;
@end
@interface MPSGraphDepthwiseConvolution2DOpDescriptor : MPSGraphObject <NSCopying>
@property(nonatomic) NSUInteger strideInX, strideInY, dilationRateInX, dilationRateInY;
@property(nonatomic) NSUInteger paddingLeft, paddingRight, paddingTop, paddingBottom;
@property(nonatomic) MPSGraphPaddingStyle paddingStyle;
@property(nonatomic) MPSGraphTensorNamedDataLayout dataLayout, weightsLayout;
@end
@interface MPSGraphDepthwiseConvolution3DOpDescriptor : MPSGraphObject <NSCopying>
+ (instancetype)descriptorWithStrides:(NSArray<NSNumber*>*)s dilationRates:(NSArray<NSNumber*>*)d
                        paddingValues:(NSArray<NSNumber*>*)p paddingStyle:(MPSGraphPaddingStyle)ps;
@property(nonatomic, copy) NSArray<NSNumber*>* strides;
@property(nonatomic, copy) NSArray<NSNumber*>* dilationRates;
@property(nonatomic, copy) NSArray<NSNumber*>* paddingValues;
@property(nonatomic) MPSGraphPaddingStyle paddingStyle;
@property(nonatomic) NSInteger channelDimensionIndex;
@end
@interface MPSGraphPooling2DOpDescriptor : MPSGraphObject <NSCopying>
+ (instancetype)descriptorWithKernelWidth:(NSUInteger)kw kernelHeight:(NSUInteger)kh strideInX:(NSUInteger)sx
                                strideInY:(NSUInteger)sy dilationRateInX:(NSUInteger)dx
                          dilationRateInY:(NSUInteger)dy paddingLeft:(NSUInteger)pl paddingRight:(NSUInteger)pr
                               paddingTop:(NSUInteger)pt paddingBottom:(NSUInteger)pb
                             paddingStyle:(MPSGraphPaddingStyle)ps dataLayout:(MPSGraphTensorNamedDataLayout)dl;
+ (instancetype)descriptorWithKernelWidth:(NSUInteger)kw kernelHeight:(NSUInteger)kh strideInX:(NSUInteger)sx
                                strideInY:(NSUInteger)sy paddingStyle:(MPSGraphPaddingStyle)ps
                               dataLayout:(MPSGraphTensorNamedDataLayout)dl;
@property(nonatomic) NSUInteger kernelWidth, kernelHeight, strideInX, strideInY, dilationRateInX, dilationRateInY;
@property(nonatomic) NSUInteger paddingLeft, paddingRight, paddingTop, paddingBottom;
@property(nonatomic) MPSGraphPaddingStyle paddingStyle;
@property(nonatomic) MPSGraphTensorNamedDataLayout dataLayout;
@property(nonatomic) MPSGraphPoolingReturnIndicesMode returnIndicesMode;
@property(nonatomic) MPSDataType returnIndicesDataType;
@property(nonatomic) BOOL ceilMode, includeZeroPadToAverage;
- (void)setExplicitPaddingWithPaddingLeft:(NSUInteger)l paddingRight:(NSUInteger)r paddingTop:(NSUInteger)t
                            paddingBottom:(NSUInteger)b;
@end
@interface MPSGraphPooling4DOpDescriptor : MPSGraphObject <NSCopying>
+ (instancetype)descriptorWithKernelSizes:(NSArray<NSNumber*>*)k strides:(NSArray<NSNumber*>*)s
                            dilationRates:(NSArray<NSNumber*>*)d paddingValues:(NSArray<NSNumber*>*)p
                             paddingStyle:(MPSGraphPaddingStyle)ps;
+ (instancetype)descriptorWithKernelSizes:(NSArray<NSNumber*>*)k paddingStyle:(MPSGraphPaddingStyle)ps;
@property(nonatomic, copy) NSArray<NSNumber*>* kernelSizes;
@property(nonatomic, copy) NSArray<NSNumber*>* strides;
@property(nonatomic, copy) NSArray<NSNumber*>* dilationRates;
@property(nonatomic, copy) NSArray<NSNumber*>* paddingValues;
@property(nonatomic) MPSGraphPaddingStyle paddingStyle;
@property(nonatomic) MPSGraphPoolingReturnIndicesMode returnIndicesMode;
@property(nonatomic) MPSDataType returnIndicesDataType;
@property(nonatomic) BOOL ceilMode, includeZeroPadToAverage;
@end
@interface MPSGraphRandomOpDescriptor : MPSGraphObject <NSCopying>
+ (instancetype)descriptorWithDistribution:(MPSGraphRandomDistribution)d dataType:(MPSDataType)t;
@property(nonatomic) MPSGraphRandomDistribution distribution;
@property(nonatomic) MPSDataType dataType;
@property(nonatomic) float min, max, mean, standardDeviation;
@property(nonatomic) NSInteger minInteger, maxInteger;
@property(nonatomic) MPSGraphRandomNormalSamplingMethod samplingMethod;
@end
@interface MPSGraphFFTDescriptor : MPSGraphObject <NSCopying>
+ (instancetype)descriptor;
@property(nonatomic) BOOL inverse;
@property(nonatomic) MPSGraphFFTScalingMode scalingMode;
@property(nonatomic) BOOL roundToOddHermitean;
@end
@interface MPSGraphCreateSparseOpDescriptor : MPSGraphObject <NSCopying>
@end
@interface MPSGraphImToColOpDescriptor : MPSGraphObject <NSCopying>
@end

@interface MPSGraph : MPSGraphObject
+ (instancetype)new;
@property(nonatomic) MPSGraphOptions options;
- (MPSGraphTensor*)placeholderWithShape:(MPSShape*)s dataType:(MPSDataType)t name:(NSString*)n;
- (MPSGraphTensor*)placeholderWithShape:(MPSShape*)s name:(NSString*)n;
- (MPSGraphTensor*)constantWithScalar:(double)v dataType:(MPSDataType)t;
- (MPSGraphTensor*)constantWithScalar:(double)v shape:(MPSShape*)s dataType:(MPSDataType)t;
- (MPSGraphTensor*)constantWithData:(NSData*)d shape:(MPSShape*)s dataType:(MPSDataType)t;
- (MPSGraphTensor*)constantWithRealPart:(double)r imaginaryPart:(double)i dataType:(MPSDataType)t;
- (MPSGraphTensor*)castTensor:(MPSGraphTensor*)t toType:(MPSDataType)ty name:(NSString*)n;
- (MPSGraphTensor*)identityWithTensor:(MPSGraphTensor*)t name:(NSString*)n;
- (MPSGraphTensor*)reshapeTensor:(MPSGraphTensor*)t withShape:(MPSShape*)s name:(NSString*)n;
- (MPSGraphTensor*)reshapeTensor:(MPSGraphTensor*)t withShapeTensor:(MPSGraphTensor*)s name:(NSString*)n;
- (MPSGraphTensor*)shapeOfTensor:(MPSGraphTensor*)t name:(NSString*)n;
- (MPSGraphTensor*)sliceTensor:(MPSGraphTensor*)t dimension:(NSUInteger)d start:(NSInteger)s length:(NSInteger)l
                          name:(NSString*)n;
- (NSArray<MPSGraphTensor*>*)splitTensor:(MPSGraphTensor*)t numSplits:(NSUInteger)k axis:(NSInteger)a name:(NSString*)n;
- (NSArray<MPSGraphTensor*>*)splitTensor:(MPSGraphTensor*)t splitSizes:(NSArray<NSNumber*>*)s axis:(NSInteger)a
                                    name:(NSString*)n;
- (MPSGraphTensorDataDictionary*)runWithMTLCommandQueue:(id<MTLCommandQueue>)q
                                                  feeds:(MPSGraphTensorDataDictionary*)f
                                          targetTensors:(NSArray<MPSGraphTensor*>*)t
                                       targetOperations:(NSArray<MPSGraphOperation*>*)o;
- (void)encodeToCommandBuffer:(MPSCommandBuffer*)cb
                        feeds:(MPSGraphTensorDataDictionary*)f
             targetOperations:(NSArray<MPSGraphOperation*>*)ops
            resultsDictionary:(MPSGraphTensorDataDictionary*)r
          executionDescriptor:(MPSGraphExecutionDescriptor*)d;
- (MPSGraphExecutable*)compileWithDevice:(MPSGraphDevice*)d
                                   feeds:(MPSGraphTensorShapedTypeDictionary*)f
                           targetTensors:(NSArray<MPSGraphTensor*>*)t
                        targetOperations:(NSArray<MPSGraphOperation*>*)o
                   compilationDescriptor:(MPSGraphCompilationDescriptor*)c;
@end
