// mps-migrate host shim: the Metal API the MPS host code uses (declarations; kernels/host_shim/runtime implements
// them on the CPU backend). Shapes follow Apple's Metal framework documentation.
#pragma once
#include <Foundation/Foundation.h>
#include <dispatch/dispatch.h>
#include <simd/simd.h>

typedef struct { NSUInteger width, height, depth; } MTLSize;
static inline MTLSize MTLSizeMake(NSUInteger w, NSUInteger h, NSUInteger d) { MTLSize s = {w, h, d}; return s; }
typedef struct { NSUInteger x, y, z; } MTLOrigin;
typedef struct { MTLOrigin origin; MTLSize size; } MTLRegion;
typedef NS_ENUM(NSUInteger, MTLStorageMode){MTLStorageModeShared = 0, MTLStorageModeManaged = 1,
                                            MTLStorageModePrivate = 2, MTLStorageModeMemoryless = 3};
typedef NS_ENUM(NSUInteger, MTLCPUCacheMode){MTLCPUCacheModeDefaultCache = 0, MTLCPUCacheModeWriteCombined = 1};
typedef NS_ENUM(NSUInteger, MTLHazardTrackingMode){MTLHazardTrackingModeDefault = 0, MTLHazardTrackingModeUntracked = 1,
                                                   MTLHazardTrackingModeTracked = 2};
typedef NS_OPTIONS(NSUInteger, MTLResourceOptions){
    MTLResourceCPUCacheModeDefaultCache = 0,        MTLResourceCPUCacheModeWriteCombined = 1,
    MTLResourceStorageModeShared = 0 << 4,          MTLResourceStorageModeManaged = 1 << 4,
    MTLResourceStorageModePrivate = 2 << 4,         MTLResourceStorageModeMemoryless = 3 << 4,
    MTLResourceHazardTrackingModeDefault = 0 << 8,  MTLResourceHazardTrackingModeUntracked = 1 << 8,
    MTLResourceHazardTrackingModeTracked = 2 << 8,  MTLResourceOptionCPUCacheModeDefault = 0,
};
typedef NS_OPTIONS(NSUInteger, MTLResourceUsage){MTLResourceUsageRead = 1, MTLResourceUsageWrite = 2,
                                                 MTLResourceUsageSample = 4};
typedef NS_ENUM(NSUInteger, MTLPurgeableState){MTLPurgeableStateKeepCurrent = 1, MTLPurgeableStateNonVolatile = 2,
                                               MTLPurgeableStateVolatile = 3, MTLPurgeableStateEmpty = 4};
typedef NS_ENUM(NSUInteger, MTLLanguageVersion){MTLLanguageVersion2_4 = (2 << 16) + 4, MTLLanguageVersion3_0 = (3 << 16),
                                                MTLLanguageVersion3_1 = (3 << 16) + 1, MTLLanguageVersion3_2 = (3 << 16) + 2};
typedef NS_ENUM(NSInteger, MTLMathMode){MTLMathModeSafe = 0, MTLMathModeRelaxed = 1, MTLMathModeFast = 2};
typedef NS_ENUM(NSInteger, MTLMathFloatingPointFunctions){MTLMathFloatingPointFunctionsFast = 0,
                                                          MTLMathFloatingPointFunctionsPrecise = 1};
typedef NS_ENUM(NSInteger, MTLGPUFamily){MTLGPUFamilyApple7 = 1007, MTLGPUFamilyApple8 = 1008,
                                         MTLGPUFamilyApple9 = 1009, MTLGPUFamilyMac2 = 2002,
                                         MTLGPUFamilyMetal3 = 5001};
typedef NS_ENUM(NSUInteger, MTLCommandBufferStatus){
    MTLCommandBufferStatusNotEnqueued = 0, MTLCommandBufferStatusEnqueued = 1, MTLCommandBufferStatusCommitted = 2,
    MTLCommandBufferStatusScheduled = 3,   MTLCommandBufferStatusCompleted = 4, MTLCommandBufferStatusError = 5};
typedef NS_ENUM(NSUInteger, MTLDispatchType){MTLDispatchTypeSerial = 0, MTLDispatchTypeConcurrent = 1};
typedef NS_ENUM(NSInteger, MTLCaptureDestination){MTLCaptureDestinationDeveloperTools = 1,
                                                  MTLCaptureDestinationGPUTraceDocument = 2};
typedef NS_ENUM(NSInteger, MTLHeapType){MTLHeapTypeAutomatic = 0, MTLHeapTypePlacement = 1};
typedef NS_ENUM(NSUInteger, MTLLibraryError){MTLLibraryErrorUnsupported = 1, MTLLibraryErrorInternal = 2,
                                             MTLLibraryErrorCompileFailure = 3, MTLLibraryErrorCompileWarning = 4,
                                             MTLLibraryErrorFunctionNotFound = 5, MTLLibraryErrorFileNotFound = 6};
#ifdef __cplusplus
extern "C" {
#endif
extern NSString* const MTLLibraryErrorDomain;
#ifdef __cplusplus
}
#endif

@protocol MTLDevice, MTLCommandBuffer, MTLFunction, MTLLibrary, MTLBuffer, MTLHeap, MTLArgumentEncoder;
typedef void (^MTLCommandBufferHandler)(id<MTLCommandBuffer>);
typedef void (^MTLSharedEventNotificationBlock)(id, uint64_t);

@protocol MTLResource <NSObject>
- (id<MTLDevice>)device;
- (MTLStorageMode)storageMode;
- (MTLCPUCacheMode)cpuCacheMode;
- (MTLHazardTrackingMode)hazardTrackingMode;
- (MTLResourceOptions)resourceOptions;
- (NSString*)label;
- (void)setLabel:(NSString*)l;
- (MTLPurgeableState)setPurgeableState:(MTLPurgeableState)s;
- (id<MTLHeap>)heap;
- (NSUInteger)heapOffset;
- (NSUInteger)allocatedSize;
- (void)makeAliasable;
- (BOOL)isAliasable;
@end
@protocol MTLBuffer <MTLResource>
- (void*)contents;
- (NSUInteger)length;
- (NSUInteger)gpuAddress;
- (void)didModifyRange:(NSRange)r;
- (id<MTLBuffer>)newRemoteBufferViewForDevice:(id<MTLDevice>)d;
@end
@interface MTLHeapDescriptor : NSObject <NSCopying>
@property(nonatomic) NSUInteger size;
@property(nonatomic) MTLStorageMode storageMode;
@property(nonatomic) MTLCPUCacheMode cpuCacheMode;
@property(nonatomic) MTLHazardTrackingMode hazardTrackingMode;
@property(nonatomic) MTLResourceOptions resourceOptions;
@property(nonatomic) MTLHeapType type;
@end
@protocol MTLHeap <NSObject>
- (NSUInteger)size;
- (NSUInteger)usedSize;
- (NSUInteger)currentAllocatedSize;
- (NSUInteger)maxAvailableSizeWithAlignment:(NSUInteger)alignment;
- (MTLStorageMode)storageMode;
- (MTLResourceOptions)resourceOptions;
- (MTLPurgeableState)setPurgeableState:(MTLPurgeableState)s;
- (id<MTLBuffer>)newBufferWithLength:(NSUInteger)length options:(MTLResourceOptions)options;
- (NSString*)label;
- (void)setLabel:(NSString*)l;
@end
@protocol MTLFunction <NSObject>
- (NSString*)name;
- (id<MTLDevice>)device;
- (id<MTLArgumentEncoder>)newArgumentEncoderWithBufferIndex:(NSUInteger)bufferIndex;
@end
@protocol MTLComputePipelineState <NSObject>
- (NSUInteger)maxTotalThreadsPerThreadgroup;
- (NSUInteger)threadExecutionWidth;
- (NSUInteger)staticThreadgroupMemoryLength;
- (id<MTLDevice>)device;
@end
@protocol MTLArgumentEncoder <NSObject>
- (NSUInteger)encodedLength;
- (void)setArgumentBuffer:(id<MTLBuffer>)b offset:(NSUInteger)o;
- (void)setBuffer:(id<MTLBuffer>)b offset:(NSUInteger)o atIndex:(NSUInteger)i;
- (void)setBytes:(const void*)bytes length:(NSUInteger)len atIndex:(NSUInteger)i;
- (void*)constantDataAtIndex:(NSUInteger)i;
@end
@protocol MTLLibrary <NSObject>
- (id<MTLFunction>)newFunctionWithName:(NSString*)name;
- (NSArray<NSString*>*)functionNames;
- (id<MTLDevice>)device;
- (NSString*)label;
- (void)setLabel:(NSString*)l;
@end
@protocol MTLCommandEncoder <NSObject>
- (void)endEncoding;
- (void)pushDebugGroup:(NSString*)s;
- (void)popDebugGroup;
- (void)insertDebugSignpost:(NSString*)s;
- (NSString*)label;
- (void)setLabel:(NSString*)l;
@end
@protocol MTLComputeCommandEncoder <MTLCommandEncoder>
- (MTLDispatchType)dispatchType;
- (void)setComputePipelineState:(id<MTLComputePipelineState>)state;
- (void)setBytes:(const void*)bytes length:(NSUInteger)length atIndex:(NSUInteger)index;
- (void)setBuffer:(id<MTLBuffer>)buffer offset:(NSUInteger)offset atIndex:(NSUInteger)index;
- (void)setBufferOffset:(NSUInteger)offset atIndex:(NSUInteger)index;
- (void)setBuffers:(const id<MTLBuffer> __unsafe_unretained[])buffers
           offsets:(const NSUInteger[])offsets
         withRange:(NSRange)range;
- (void)setThreadgroupMemoryLength:(NSUInteger)length atIndex:(NSUInteger)index;
- (void)dispatchThreads:(MTLSize)threadsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup;
- (void)dispatchThreadgroups:(MTLSize)threadgroupsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup;
- (void)useResource:(id<MTLResource>)r usage:(MTLResourceUsage)u;
- (void)useResources:(const id<MTLResource> __unsafe_unretained[])r count:(NSUInteger)n usage:(MTLResourceUsage)u;
- (void)memoryBarrierWithScope:(NSUInteger)scope;
@end
@protocol MTLBlitCommandEncoder <MTLCommandEncoder>
- (void)copyFromBuffer:(id<MTLBuffer>)src
          sourceOffset:(NSUInteger)so
              toBuffer:(id<MTLBuffer>)dst
     destinationOffset:(NSUInteger)dof
                  size:(NSUInteger)n;
- (void)fillBuffer:(id<MTLBuffer>)b range:(NSRange)r value:(uint8_t)v;
- (void)synchronizeResource:(id<MTLResource>)r;
@end
@protocol MTLEvent <NSObject>
- (id<MTLDevice>)device;
@end
@interface MTLSharedEventListener : NSObject
- (instancetype)init;
- (instancetype)initWithDispatchQueue:(dispatch_queue_t)q;
@end
@protocol MTLSharedEvent <MTLEvent>
- (uint64_t)signaledValue;
- (void)setSignaledValue:(uint64_t)v;
- (void)notifyListener:(MTLSharedEventListener*)l atValue:(uint64_t)v block:(MTLSharedEventNotificationBlock)b;
- (BOOL)waitUntilSignaledValue:(uint64_t)v timeoutMS:(uint64_t)ms;
@end
@protocol MTLCommandBuffer <NSObject>
- (id<MTLDevice>)device;
- (void)commit;
- (void)enqueue;
- (void)waitUntilCompleted;
- (void)waitUntilScheduled;
- (void)addCompletedHandler:(MTLCommandBufferHandler)h;
- (void)addScheduledHandler:(MTLCommandBufferHandler)h;
- (MTLCommandBufferStatus)status;
- (NSError*)error;
- (NSString*)label;
- (void)setLabel:(NSString*)l;
- (id<MTLComputeCommandEncoder>)computeCommandEncoder;
- (id<MTLComputeCommandEncoder>)computeCommandEncoderWithDispatchType:(MTLDispatchType)t;
- (id<MTLBlitCommandEncoder>)blitCommandEncoder;
- (void)encodeSignalEvent:(id<MTLEvent>)e value:(uint64_t)v;
- (void)encodeWaitForEvent:(id<MTLEvent>)e value:(uint64_t)v;
@end
@protocol MTLCommandQueue <NSObject>
- (id<MTLCommandBuffer>)commandBuffer;
- (id<MTLCommandBuffer>)commandBufferWithUnretainedReferences;
- (id<MTLDevice>)device;
- (NSString*)label;
- (void)setLabel:(NSString*)l;
@end
@interface MTLCompileOptions : NSObject <NSCopying>
@property(nonatomic) MTLLanguageVersion languageVersion;
@property(nonatomic) BOOL fastMathEnabled;
@property(nonatomic) MTLMathMode mathMode;
@property(nonatomic) MTLMathFloatingPointFunctions mathFloatingPointFunctions;
@property(nonatomic, copy) NSDictionary* preprocessorMacros;
@end
@interface MTLComputePipelineDescriptor : NSObject <NSCopying>
@property(nonatomic, strong) id<MTLFunction> computeFunction;
@property(nonatomic, copy) NSString* label;
@end
@protocol MTLDevice <NSObject>
- (NSString*)name;
- (uint64_t)registryID;
- (BOOL)supportsFamily:(MTLGPUFamily)f;
- (BOOL)hasUnifiedMemory;
- (BOOL)isLowPower;
- (BOOL)isHeadless;
- (uint64_t)recommendedMaxWorkingSetSize;
- (NSUInteger)currentAllocatedSize;
- (NSUInteger)maxBufferLength;
- (NSUInteger)maxThreadgroupMemoryLength;
- (MTLSize)maxThreadsPerThreadgroup;
- (NSUInteger)heapBufferSizeAndAlignWithLength:(NSUInteger)length options:(MTLResourceOptions)options;
- (id<MTLCommandQueue>)newCommandQueue;
- (id<MTLCommandQueue>)newCommandQueueWithMaxCommandBufferCount:(NSUInteger)n;
- (id<MTLHeap>)newHeapWithDescriptor:(MTLHeapDescriptor*)d;
- (id<MTLBuffer>)newBufferWithLength:(NSUInteger)length options:(MTLResourceOptions)options;
- (id<MTLBuffer>)newBufferWithBytes:(const void*)p length:(NSUInteger)length options:(MTLResourceOptions)options;
- (id<MTLBuffer>)newBufferWithBytesNoCopy:(void*)p
                                   length:(NSUInteger)length
                                  options:(MTLResourceOptions)options
                              deallocator:(void (^)(void*, NSUInteger))d;
- (id<MTLSharedEvent>)newSharedEvent;
- (id<MTLEvent>)newEvent;
- (id<MTLLibrary>)newLibraryWithSource:(NSString*)src options:(MTLCompileOptions*)opts error:(NSError**)err;
- (id<MTLLibrary>)newLibraryWithURL:(NSURL*)url error:(NSError**)err;
- (id<MTLLibrary>)newLibraryWithData:(dispatch_data_t)data error:(NSError**)err;
- (id<MTLComputePipelineState>)newComputePipelineStateWithFunction:(id<MTLFunction>)f error:(NSError**)err;
- (id<MTLComputePipelineState>)newComputePipelineStateWithDescriptor:(MTLComputePipelineDescriptor*)d
                                                              options:(NSUInteger)o
                                                           reflection:(id*)r
                                                                error:(NSError**)err;
@end
@interface MTLCaptureDescriptor : NSObject
@property(nonatomic, strong) id captureObject;
@property(nonatomic) MTLCaptureDestination destination;
@property(nonatomic, copy) NSURL* outputURL;
@end
@interface MTLCaptureManager : NSObject
+ (MTLCaptureManager*)sharedCaptureManager;
- (BOOL)startCaptureWithDescriptor:(MTLCaptureDescriptor*)d error:(NSError**)e;
- (void)stopCapture;
- (BOOL)isCapturing;
- (BOOL)supportsDestination:(MTLCaptureDestination)d;
@end
#ifdef __cplusplus
extern "C" {
#endif
id<MTLDevice> MTLCreateSystemDefaultDevice(void);
NSArray<id<MTLDevice>>* MTLCopyAllDevices(void);
#ifdef __cplusplus
}
#endif
