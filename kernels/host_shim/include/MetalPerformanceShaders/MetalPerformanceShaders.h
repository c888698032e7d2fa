// mps-migrate host shim: MetalPerformanceShaders types the MPS host code names (declarations only: MPS kernels are
// not run off-Apple).
#pragma once
#include <Metal/Metal.h>

typedef NS_OPTIONS(uint32_t, MPSDataType){
    MPSDataTypeInvalid = 0,
    MPSDataTypeFloatBit = 0x10000000,
    MPSDataTypeFloat32 = MPSDataTypeFloatBit | 32,
    MPSDataTypeFloat16 = MPSDataTypeFloatBit | 16,
    MPSDataTypeComplexBit = 0x01000000,
    MPSDataTypeComplexFloat32 = MPSDataTypeFloatBit | MPSDataTypeComplexBit | 64,
    MPSDataTypeComplexFloat16 = MPSDataTypeFloatBit | MPSDataTypeComplexBit | 32,
    MPSDataTypeSignedBit = 0x20000000,
    MPSDataTypeIntBit = MPSDataTypeSignedBit,
    MPSDataTypeInt4 = MPSDataTypeSignedBit | 4,
    MPSDataTypeInt8 = MPSDataTypeSignedBit | 8,
    MPSDataTypeInt16 = MPSDataTypeSignedBit | 16,
    MPSDataTypeInt32 = MPSDataTypeSignedBit | 32,
    MPSDataTypeInt64 = MPSDataTypeSignedBit | 64,
    MPSDataTypeUInt4 = 4,
    MPSDataTypeUInt8 = 8,
    MPSDataTypeUInt16 = 16,
    MPSDataTypeUInt32 = 32,
    MPSDataTypeUInt64 = 64,
    MPSDataTypeAlternateEncodingBit = 0x80000000,
    MPSDataTypeBool = MPSDataTypeAlternateEncodingBit | 8,
    MPSDataTypeBFloat16 = MPSDataTypeAlternateEncodingBit | MPSDataTypeFloat16,
    MPSDataTypeNormalizedBit = 0x40000000,
    MPSDataTypeUnorm1 = MPSDataTypeNormalizedBit | 1,
    MPSDataTypeUnorm8 = MPSDataTypeNormalizedBit | 8,
};
typedef NSArray<NSNumber*> MPSShape;
typedef NS_ENUM(NSUInteger, MPSAliasingStrategy){MPSAliasingStrategyDefault = 0, MPSAliasingStrategyShallAlias = 1,
                                                 MPSAliasingStrategyShallNotAlias = 2};
typedef NS_ENUM(NSUInteger, MPSMatrixDecompositionStatus){MPSMatrixDecompositionStatusSuccess = 0,
                                                          MPSMatrixDecompositionStatusFailure = -1,
                                                          MPSMatrixDecompositionStatusSingular = -2,
                                                          MPSMatrixDecompositionStatusNonPositiveDefinite = -3};

@interface MPSKernel : NSObject <NSCopying>
- (instancetype)initWithDevice:(id<MTLDevice>)d;
@property(nonatomic, copy) NSString* label;
@property(nonatomic, readonly) id<MTLDevice> device;
@end
@interface MPSCommandBuffer : NSObject <MTLCommandBuffer>
+ (instancetype)commandBufferFromCommandQueue:(id<MTLCommandQueue>)q;
+ (instancetype)commandBufferWithCommandBuffer:(id<MTLCommandBuffer>)b;
- (id<MTLCommandBuffer>)commandBuffer;
- (id<MTLCommandBuffer>)rootCommandBuffer;
- (void)commitAndContinue;
@end
@interface MPSNDArrayDescriptor : NSObject
+ (instancetype)descriptorWithDataType:(MPSDataType)t shape:(MPSShape*)s;
+ (instancetype)descriptorWithDataType:(MPSDataType)t dimensionCount:(NSUInteger)n dimensionSizes:(NSUInteger*)sizes;
@property(nonatomic) MPSDataType dataType;
@property(nonatomic) NSUInteger numberOfDimensions;
@property(nonatomic) BOOL preferPackedRows;
- (NSUInteger)lengthOfDimension:(NSUInteger)i;
- (void)setLengthOfDimension:(NSUInteger)len atIndex:(NSUInteger)i;
- (void)transposeDimension:(NSUInteger)a withDimension:(NSUInteger)b;
- (void)reshapeWithShape:(MPSShape*)s;
- (void)reshapeWithDimensionCount:(NSUInteger)n dimensionSizes:(NSUInteger*)sizes;
- (MPSShape*)getShape;
@end
@interface MPSNDArray : NSObject
- (instancetype)initWithDevice:(id<MTLDevice>)d descriptor:(MPSNDArrayDescriptor*)desc;
- (instancetype)initWithBuffer:(id<MTLBuffer>)b offset:(NSUInteger)o descriptor:(MPSNDArrayDescriptor*)desc;
- (instancetype)initWithDevice:(id<MTLDevice>)d scalar:(double)v;
- (MPSNDArray*)arrayViewWithDescriptor:(MPSNDArrayDescriptor*)desc;
- (MPSNDArray*)arrayViewWithShape:(MPSShape*)shape strides:(MPSShape*)strides;
- (MPSNDArray*)arrayViewWithCommandBuffer:(id<MTLCommandBuffer>)cb
                               descriptor:(MPSNDArrayDescriptor*)desc
                                 aliasing:(MPSAliasingStrategy)a;
@property(nonatomic, readonly) MPSDataType dataType;
@property(nonatomic, readonly) NSUInteger numberOfDimensions;
@property(nonatomic, copy) NSString* label;
- (NSUInteger)lengthOfDimension:(NSUInteger)i;
- (MPSNDArrayDescriptor*)descriptor;
- (id<MTLBuffer>)buffer;
- (NSUInteger)offset;
- (void)readBytes:(void*)p strideBytes:(NSInteger*)s;
- (void)writeBytes:(void*)p strideBytes:(NSInteger*)s;
- (void)exportDataWithCommandBuffer:(id<MTLCommandBuffer>)cb
                           toBuffer:(id<MTLBuffer>)b
                    destinationDataType:(MPSDataType)t
                             offset:(NSUInteger)o
                         rowStrides:(NSInteger*)s;
@end
@interface MPSNDArrayMultiaryKernel : MPSKernel
- (void)encodeToCommandBuffer:(id<MTLCommandBuffer>)cb
                  sourceArrays:(NSArray<MPSNDArray*>*)src
              destinationArray:(MPSNDArray*)dst;
- (void)encodeToCommandEncoder:(id<MTLComputeCommandEncoder>)encoder
                 commandBuffer:(id<MTLCommandBuffer>)cb
                  sourceArrays:(NSArray<MPSNDArray*>*)src
              destinationArray:(MPSNDArray*)dst;
@end
@interface MPSNDArrayUnaryKernel : MPSNDArrayMultiaryKernel
- (void)encodeToCommandBuffer:(id<MTLCommandBuffer>)cb sourceArray:(MPSNDArray*)src destinationArray:(MPSNDArray*)dst;
@end
@interface MPSNDArrayIdentity : MPSNDArrayUnaryKernel
- (MPSNDArray*)reshapeWithCommandBuffer:(id<MTLCommandBuffer>)cb
                            sourceArray:(MPSNDArray*)src
                                  shape:(MPSShape*)shape
                       destinationArray:(MPSNDArray*)dst;
@end
@interface MPSNDArrayMatrixMultiplication : MPSNDArrayMultiaryKernel
- (instancetype)initWithDevice:(id<MTLDevice>)d sourceCount:(NSUInteger)n;
@property(nonatomic) double alpha;
@property(nonatomic) double beta;
@end
@interface MPSMatrixDescriptor : NSObject
+ (instancetype)matrixDescriptorWithRows:(NSUInteger)r columns:(NSUInteger)c rowBytes:(NSUInteger)rb dataType:(MPSDataType)t;
+ (instancetype)matrixDescriptorWithRows:(NSUInteger)r
                                 columns:(NSUInteger)c
                                matrices:(NSUInteger)m
                                rowBytes:(NSUInteger)rb
                             matrixBytes:(NSUInteger)mb
                                dataType:(MPSDataType)t;
+ (NSUInteger)rowBytesForColumns:(NSUInteger)c dataType:(MPSDataType)t;
@end
@interface MPSMatrix : NSObject
- (instancetype)initWithBuffer:(id<MTLBuffer>)b descriptor:(MPSMatrixDescriptor*)d;
- (instancetype)initWithBuffer:(id<MTLBuffer>)b offset:(NSUInteger)o descriptor:(MPSMatrixDescriptor*)d;
@end
@interface MPSMatrixDecompositionLU : MPSKernel
- (instancetype)initWithDevice:(id<MTLDevice>)d rows:(NSUInteger)r columns:(NSUInteger)c;
- (void)encodeToCommandBuffer:(id<MTLCommandBuffer>)cb
                 sourceMatrix:(MPSMatrix*)src
               resultMatrix:(MPSMatrix*)dst
                 pivotIndices:(MPSMatrix*)pivots
                       status:(id<MTLBuffer>)status;
@end
@interface MPSMatrixSolveLU : MPSKernel
- (instancetype)initWithDevice:(id<MTLDevice>)d
                     transpose:(BOOL)t
                         order:(NSUInteger)o
          numberOfRightHandSides:(NSUInteger)n;
- (void)encodeToCommandBuffer:(id<MTLCommandBuffer>)cb
                 sourceMatrix:(MPSMatrix*)src
          rightHandSideMatrix:(MPSMatrix*)rhs
                 pivotIndices:(MPSMatrix*)pivots
               solutionMatrix:(MPSMatrix*)solution;
@end
@interface MPSMatrixSolveTriangular : MPSKernel
- (instancetype)initWithDevice:(id<MTLDevice>)d
                         right:(BOOL)r
                         upper:(BOOL)u
                     transpose:(BOOL)t
                          unit:(BOOL)unit
                         order:(NSUInteger)o
        numberOfRightHandSides:(NSUInteger)n
                         alpha:(double)a;
- (void)encodeToCommandBuffer:(id<MTLCommandBuffer>)cb
                 sourceMatrix:(MPSMatrix*)src
          rightHandSideMatrix:(MPSMatrix*)rhs
               solutionMatrix:(MPSMatrix*)solution;
@end
