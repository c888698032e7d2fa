// mps-migrate host shim: the Metal device, queues, command buffers (MPSCommandBuffer), events, compile options,
// libdispatch (queues run blocks on the caller's thread, in order) and the dyld queries of the bundled library.
#include <MetalPerformanceShaders/MetalPerformanceShaders.h>
#include <dispatch/dispatch.h>
#include <mach-o/dyld.h>
#include <stdlib.h>
#include <string.h>
#include <mutex>
#include <stdexcept>
#include <string>
#include "shim_objects.h"


static NSError* shim_library_error(const std::string& msg) {
  NSDictionary* info = [NSDictionary dictionaryWithObject:[NSString stringWithUTF8String:msg.c_str()]
                                                   forKey:NSLocalizedDescriptionKey];
  return [NSError errorWithDomain:MTLLibraryErrorDomain code:MTLLibraryErrorCompileFailure userInfo:info];
}

// Apple's +stringWithCString:encoding: with NSASCIIStringEncoding keeps bytes past 127 (PyTorch 2.6's Gamma.mm
// passes Metal source whose comment has a '±' that way); GNUstep's returns nil. Such text is read as UTF-8 here.
@implementation NSString (MPSShimLenientASCII)
+ (instancetype)stringWithCString:(const char*)bytes encoding:(NSStringEncoding)encoding {
  if (bytes == nullptr) return nil;
  size_t n = strlen(bytes);
  if (encoding == NSASCIIStringEncoding) {
    for (size_t i = 0; i < n; ++i)
      if ((unsigned char)bytes[i] > 127) {
        encoding = NSUTF8StringEncoding;
        break;
      }
  }
  NSString* s = [[NSString alloc] initWithBytes:bytes length:n encoding:encoding];
  if (s == nil && encoding == NSUTF8StringEncoding)
    s = [[NSString alloc] initWithBytes:bytes length:n encoding:NSISOLatin1StringEncoding];
  return [s autorelease];
}
@end

@implementation MPSCommandBuffer
+ (instancetype)commandBufferFromCommandQueue:(id<MTLCommandQueue>)q {
  return [[self new] autorelease];
}
+ (instancetype)commandBufferWithCommandBuffer:(id<MTLCommandBuffer>)b {
  return [[self new] autorelease];
}
- (id<MTLCommandBuffer>)commandBuffer {
  return self;
}
- (id<MTLCommandBuffer>)rootCommandBuffer {
  return self;
}
- (id<MTLDevice>)device {
  return MTLCreateSystemDefaultDevice();
}
- (void)commitAndContinue {
}
- (void)commit {
}
- (void)enqueue {
}
- (void)waitUntilCompleted {
}
- (void)waitUntilScheduled {
}
- (void)addCompletedHandler:(MTLCommandBufferHandler)h {
  h(self);
}
- (void)addScheduledHandler:(MTLCommandBufferHandler)h {
  h(self);
}
- (MTLCommandBufferStatus)status {
  return MTLCommandBufferStatusCompleted;
}
- (NSError*)error {
  return nil;
}
- (NSString*)label {
  return nil;
}
- (void)setLabel:(NSString*)l {
}
- (id<MTLComputeCommandEncoder>)computeCommandEncoder {
  return [[MMShimComputeEncoder new] autorelease];
}
- (id<MTLComputeCommandEncoder>)computeCommandEncoderWithDispatchType:(MTLDispatchType)t {
  return [self computeCommandEncoder];
}
- (id<MTLBlitCommandEncoder>)blitCommandEncoder {
  return [[MMShimBlitEncoder new] autorelease];
}
- (void)encodeSignalEvent:(id<MTLEvent>)e value:(uint64_t)v {
  [(id<MTLSharedEvent>)e setSignaledValue:v];
}
- (void)encodeWaitForEvent:(id<MTLEvent>)e value:(uint64_t)v {
}
@end

@interface MMShimQueue : NSObject <MTLCommandQueue>
@end
@implementation MMShimQueue
- (id<MTLCommandBuffer>)commandBuffer {
  return [[MPSCommandBuffer new] autorelease];
}
- (id<MTLCommandBuffer>)commandBufferWithUnretainedReferences {
  return [self commandBuffer];
}
- (id<MTLDevice>)device {
  return MTLCreateSystemDefaultDevice();
}
- (NSString*)label {
  return nil;
}
- (void)setLabel:(NSString*)l {
}
@end

@interface MMShimEvent : NSObject <MTLSharedEvent> {
  uint64_t _value;
}
@end
@implementation MMShimEvent
- (id<MTLDevice>)device {
  return MTLCreateSystemDefaultDevice();
}
- (uint64_t)signaledValue {
  return _value;
}
- (void)setSignaledValue:(uint64_t)v {
  _value = v;
}
- (void)notifyListener:(MTLSharedEventListener*)l atValue:(uint64_t)v block:(MTLSharedEventNotificationBlock)b {
  if (_value >= v) b(self, _value);
}
- (BOOL)waitUntilSignaledValue:(uint64_t)v timeoutMS:(uint64_t)ms {
  return _value >= v;
}
@end

@implementation MTLSharedEventListener
- (instancetype)initWithDispatchQueue:(dispatch_queue_t)q {
  return [super init];
}
@end

@implementation MTLCompileOptions
@synthesize languageVersion = _languageVersion, fastMathEnabled = _fastMathEnabled, mathMode = _mathMode;
@synthesize mathFloatingPointFunctions = _mathFloatingPointFunctions, preprocessorMacros = _preprocessorMacros;
- (id)copyWithZone:(NSZone*)zone {
  return [self retain];
}
@end

@implementation MTLCaptureManager
+ (MTLCaptureManager*)sharedCaptureManager {
  static MTLCaptureManager* m = [MTLCaptureManager new];
  return m;
}
- (BOOL)startCaptureWithDescriptor:(MTLCaptureDescriptor*)d error:(NSError**)e {
  return NO;
}
- (void)stopCapture {
}
- (BOOL)isCapturing {
  return NO;
}
- (BOOL)supportsDestination:(MTLCaptureDestination)d {
  return NO;
}
@end

@interface MMShimDevice : NSObject <MTLDevice>
@end
@implementation MMShimDevice
- (NSString*)name {
  return @"mps-migrate CPU backend";
}
- (uint64_t)registryID {
  return 1;
}
- (BOOL)supportsFamily:(MTLGPUFamily)f {
  return f <= MTLGPUFamilyApple9 || f == MTLGPUFamilyMac2 || f == MTLGPUFamilyMetal3;
}
- (BOOL)hasUnifiedMemory {
  return YES;
}
- (BOOL)isLowPower {
  return NO;
}
- (BOOL)isHeadless {
  return YES;
}
- (uint64_t)recommendedMaxWorkingSetSize {
  return 16ull << 30;
}
- (NSUInteger)currentAllocatedSize {
  return 0;
}
- (NSUInteger)maxBufferLength {
  return 16ull << 30;
}
- (NSUInteger)maxThreadgroupMemoryLength {
  return 32768;
}
- (MTLSize)maxThreadsPerThreadgroup {
  return MTLSizeMake(1024, 1024, 1024);
}
- (NSUInteger)heapBufferSizeAndAlignWithLength:(NSUInteger)length options:(MTLResourceOptions)options {
  return (length + 16383) / 16384 * 16384;
}
- (id<MTLCommandQueue>)newCommandQueue {
  return [MMShimQueue new];
}
- (id<MTLCommandQueue>)newCommandQueueWithMaxCommandBufferCount:(NSUInteger)n {
  return [MMShimQueue new];
}
- (id<MTLHeap>)newHeapWithDescriptor:(MTLHeapDescriptor*)d {
  return nil;
}
- (id<MTLBuffer>)newBufferWithLength:(NSUInteger)length options:(MTLResourceOptions)options {
  return [[MMShimBuffer alloc] initWithLength:length device:self];
}
- (id<MTLBuffer>)newBufferWithBytes:(const void*)p length:(NSUInteger)length options:(MTLResourceOptions)options {
  id<MTLBuffer> b = [self newBufferWithLength:length options:options];
  memcpy([b contents], p, length);
  return b;
}
- (id<MTLBuffer>)newBufferWithBytesNoCopy:(void*)p
                                   length:(NSUInteger)length
                                  options:(MTLResourceOptions)options
                              deallocator:(void (^)(void*, NSUInteger))d {
  throw std::runtime_error("newBufferWithBytesNoCopy: is not supported by the mps-migrate shim");
}
- (id<MTLSharedEvent>)newSharedEvent {
  return [MMShimEvent new];
}
- (id<MTLEvent>)newEvent {
  return [MMShimEvent new];
}
- (id<MTLLibrary>)newLibraryWithSource:(NSString*)src options:(MTLCompileOptions*)opts error:(NSError**)err {
  std::string error;
  if (src == nil || [src UTF8String] == nullptr) {
    if (err) *err = shim_library_error("newLibraryWithSource: was given no source text");
    return nil;
  }
  auto kernels = mps_shim::resolve("source", [src UTF8String], error);
  if (!error.empty()) {
    if (err) *err = shim_library_error(error);
    return nil;
  }
  MMShimLibrary* lib = [MMShimLibrary new];
  *lib->_kernels = kernels;
  return lib;
}
- (id<MTLLibrary>)newLibraryWithURL:(NSURL*)url error:(NSError**)err {
  return [self newLibraryWithData:nullptr error:err];
}
- (id<MTLLibrary>)newLibraryWithData:(dispatch_data_t)data error:(NSError**)err {
  MMShimLibrary* lib = [MMShimLibrary new];
  lib->_bundled = YES;
  return lib;
}
- (id<MTLComputePipelineState>)newComputePipelineStateWithFunction:(id<MTLFunction>)f error:(NSError**)err {
  MMShimPipeline* p = [MMShimPipeline new];
  p->_entry = ((MMShimFunction*)f)->_entry;
  return p;
}
- (id<MTLComputePipelineState>)newComputePipelineStateWithDescriptor:(MTLComputePipelineDescriptor*)d
                                                              options:(NSUInteger)o
                                                           reflection:(id*)r
                                                                error:(NSError**)err {
  return [self newComputePipelineStateWithFunction:[d computeFunction] error:err];
}
@end

extern "C" id<MTLDevice> MTLCreateSystemDefaultDevice(void) {
  static id<MTLDevice> d = [MMShimDevice new];
  return d;
}
extern "C" NSArray<id<MTLDevice>>* MTLCopyAllDevices(void) {
  return [[NSArray alloc] initWithObjects:MTLCreateSystemDefaultDevice(), nil];
}

// ---------------------------------------------------------------- libdispatch
struct dispatch_queue_s {
  std::recursive_mutex mu;
  std::string label;
};
struct dispatch_data_s {
  const void* bytes;
  size_t size;
};
extern "C" {
dispatch_queue_t dispatch_queue_create(const char* label, dispatch_queue_attr_t attr) {
  auto* q = new dispatch_queue_s();
  q->label = label ? label : "";
  return q;
}
dispatch_queue_attr_t dispatch_queue_attr_make_with_qos_class(dispatch_queue_attr_t attr, unsigned qos, int prio) {
  return attr;
}
dispatch_queue_t dispatch_get_global_queue(long identifier, unsigned long flags) {
  static dispatch_queue_t q = dispatch_queue_create("global", nullptr);
  return q;
}
dispatch_queue_t dispatch_get_main_queue(void) {
  static dispatch_queue_t q = dispatch_queue_create("main", nullptr);
  return q;
}
void dispatch_sync(dispatch_queue_t q, dispatch_block_t block) {
  std::lock_guard<std::recursive_mutex> lock(q->mu);
  block();
}
void dispatch_async(dispatch_queue_t q, dispatch_block_t block) {
  dispatch_sync(q, block);
}
void dispatch_apply(size_t n, dispatch_queue_t q, void (^block)(size_t)) {
  for (size_t i = 0; i < n; ++i) block(i);
}
void dispatch_release(void* obj) {
}
void dispatch_retain(void* obj) {
}
const char* dispatch_queue_get_label(dispatch_queue_t q) {
  return q ? q->label.c_str() : "";
}
dispatch_data_t dispatch_data_create(const void* buffer, size_t size, dispatch_queue_t q, dispatch_block_t destructor) {
  return new dispatch_data_s{buffer, size};
}
size_t dispatch_data_get_size(dispatch_data_t data) {
  return data ? data->size : 0;
}
dispatch_time_t dispatch_time(dispatch_time_t when, int64_t delta) {
  return when + (dispatch_time_t)delta;
}

// One image, libtorch_cpu, whose bundled Metal sections resolve kernels by name (MMShimLibrary, bundled).
uint32_t _dyld_image_count(void) {
  return 1;
}
const char* _dyld_get_image_name(uint32_t image_index) {
  return "/mps-migrate/libtorch_cpu.dylib";
}
const struct mach_header* _dyld_get_image_header(uint32_t image_index) {
  static mach_header_64 header{};
  return (const struct mach_header*)&header;
}
uint8_t* getsectiondata(const struct mach_header_64* mhp, const char* segname, const char* sectname,
                        unsigned long* size) {
  static uint8_t marker[16] = "mps-migrate";
  *size = sizeof marker;
  return marker;
}
}
