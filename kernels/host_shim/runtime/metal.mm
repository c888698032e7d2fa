// mps-migrate host shim: Metal objects on the CPU backend. Buffers are host memory; a library is one or more
// shared libraries the CPU backend built from MSL (resolved through the Python worker); a compute encoder runs each
// dispatch at once, in encoding order, which is what a serial command queue guarantees.
#include <Metal/Metal.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>
#include "shim_objects.h"

NSString* const MTLLibraryErrorDomain = @"MTLLibraryErrorDomain";

namespace mps_shim {
static Resolver g_resolver = nullptr;

std::string& last_kernel_error() {
  static thread_local std::string e;
  return e;
}

int worker_count() {
  static int n = [] {
    const char* env = getenv("MPS_MIGRATE_THREADS");
    int v = env ? atoi(env) : 0;
    if (v <= 0) v = (int)std::thread::hardware_concurrency();
    return v > 0 ? (v > 64 ? 64 : v) : 1;
  }();
  return n;
}

std::vector<KernelEntry> resolve(const char* kind, const std::string& arg, std::string& error) {
  static std::mutex mu;
  static std::map<std::string, void*> handles;
  std::vector<KernelEntry> out;
  if (!g_resolver) {
    error = "no Metal compiler is attached to the shim (mps_shim_set_resolver was not called)";
    return out;
  }
  std::vector<char> buf(1 << 20);
  if (g_resolver(kind, arg.c_str(), buf.data(), buf.size()) != 0) {
    error = buf.data();
    return out;
  }
  std::string text(buf.data());
  size_t nl = text.find('\n');
  std::string so = text.substr(0, nl);
  std::lock_guard<std::mutex> lock(mu);
  void*& h = handles[so];
  if (!h) h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    error = std::string("cannot load the compiled kernels: ") + dlerror();
    return out;
  }
  size_t pos = nl == std::string::npos ? text.size() : nl + 1;
  for (int idx = 0; pos < text.size(); ++idx) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string sym = "__msl_launch_" + std::to_string(idx);
    out.push_back({text.substr(pos, end - pos), (LaunchFn)dlsym(h, sym.c_str())});
    pos = end + 1;
  }
  return out;
}
} // namespace mps_shim

extern "C" void mps_shim_set_resolver(mps_shim::Resolver r) {
  mps_shim::g_resolver = r;
}



@implementation MMShimLabelled
- (void)dealloc {
  [_label release];
  [super dealloc];
}
- (NSString*)label {
  return _label;
}
- (void)setLabel:(NSString*)l {
  [_label release];
  _label = [l copy];
}
@end

@implementation MMShimBuffer
- (instancetype)initWithLength:(NSUInteger)length device:(id<MTLDevice>)d {
  if ((self = [super init])) {
    size_t n = length ? (length + 63) / 64 * 64 : 64;
    _contents = aligned_alloc(64, n);
    memset(_contents, 0, n);
    _length = length;
    _owned = YES;
    _device = d;
  }
  return self;
}
- (void)dealloc {
  if (_owned) free(_contents);
  [super dealloc];
}
- (void*)contents {
  return _contents;
}
- (NSUInteger)length {
  return _length;
}
- (NSUInteger)allocatedSize {
  return _length;
}
- (NSUInteger)gpuAddress {
  return (NSUInteger)_contents;
}
- (id<MTLDevice>)device {
  return _device;
}
- (MTLStorageMode)storageMode {
  return MTLStorageModeShared;
}
- (MTLCPUCacheMode)cpuCacheMode {
  return MTLCPUCacheModeDefaultCache;
}
- (MTLHazardTrackingMode)hazardTrackingMode {
  return MTLHazardTrackingModeTracked;
}
- (MTLResourceOptions)resourceOptions {
  return MTLResourceStorageModeShared;
}
- (MTLPurgeableState)setPurgeableState:(MTLPurgeableState)s {
  return MTLPurgeableStateNonVolatile;
}
- (id<MTLHeap>)heap {
  return nil;
}
- (NSUInteger)heapOffset {
  return 0;
}
- (void)makeAliasable {
}
- (BOOL)isAliasable {
  return NO;
}
- (void)didModifyRange:(NSRange)r {
}
- (id<MTLBuffer>)newRemoteBufferViewForDevice:(id<MTLDevice>)d {
  return [self retain];
}
@end

extern "C" id mps_shim_new_buffer(size_t length) {
  return [[MMShimBuffer alloc] initWithLength:length device:MTLCreateSystemDefaultDevice()];
}
extern "C" void* mps_shim_buffer_contents(id buffer) {
  return buffer ? ((MMShimBuffer*)buffer)->_contents : nullptr;
}
extern "C" void mps_shim_release(id obj) {
  [obj release];
}

@implementation MMShimFunction
- (NSString*)name {
  return _name;
}
- (id<MTLDevice>)device {
  return MTLCreateSystemDefaultDevice();
}
- (void)dealloc {
  [_name release];
  [super dealloc];
}
@end

@implementation MMShimPipeline
- (NSUInteger)maxTotalThreadsPerThreadgroup {
  return 1024;
}
- (NSUInteger)threadExecutionWidth {
  return 32;
}
- (NSUInteger)staticThreadgroupMemoryLength {
  return 0;
}
- (id<MTLDevice>)device {
  return MTLCreateSystemDefaultDevice();
}
@end

// A library: kernels of one compiled source, or (bundled) the tree's kernel files, built as names are asked for.
@implementation MMShimLibrary
- (instancetype)init {
  if ((self = [super init])) _kernels = new std::vector<mps_shim::KernelEntry>();
  return self;
}
- (void)dealloc {
  delete _kernels;
  [super dealloc];
}
- (id<MTLFunction>)newFunctionWithName:(NSString*)name {
  std::string want = [name UTF8String];
  for (auto& k : *_kernels)
    if (k.name == want && k.launch) {
      MMShimFunction* f = [MMShimFunction new];
      f->_entry = k;
      f->_name = [name copy];
      return f;
    }
  if (_bundled) {
    std::string err;
    auto found = mps_shim::resolve("bundled", want, err);
    if (!found.empty()) {
      _kernels->insert(_kernels->end(), found.begin(), found.end());
      return [self newFunctionWithName:name];
    }
    mps_shim::last_kernel_error() = err;
  }
  return nil;
}
- (NSArray<NSString*>*)functionNames {
  NSMutableArray* names = [NSMutableArray array];
  for (auto& k : *_kernels) [names addObject:[NSString stringWithUTF8String:k.name.c_str()]];
  return names;
}
- (id<MTLDevice>)device {
  return MTLCreateSystemDefaultDevice();
}
@end

// ---------------------------------------------------------------- encoders

@implementation MMShimEncoder
- (void)endEncoding {
}
- (void)pushDebugGroup:(NSString*)s {
}
- (void)popDebugGroup {
}
- (void)insertDebugSignpost:(NSString*)s {
}
@end

@implementation MMShimComputeEncoder
- (instancetype)init {
  if ((self = [super init])) {
    for (int i = 0; i < kSlots; ++i) {
      _buffers[i] = nullptr;
      _bytes[i] = nullptr;
    }
  }
  return self;
}
- (void)dealloc {
  for (int i = 0; i < kSlots; ++i) delete _bytes[i];
  [_pipeline release];
  [super dealloc];
}
- (MTLDispatchType)dispatchType {
  return MTLDispatchTypeSerial;
}
- (void)setComputePipelineState:(id<MTLComputePipelineState>)state {
  [(id)state retain];
  [_pipeline release];
  _pipeline = (MMShimPipeline*)state;
}
- (void)setBytes:(const void*)bytes length:(NSUInteger)length atIndex:(NSUInteger)index {
  if (index >= kSlots) throw std::runtime_error("setBytes: buffer index past 30");
  auto* v = new std::vector<char>((const char*)bytes, (const char*)bytes + length);
  v->resize(length + 64);
  delete _bytes[index];
  _bytes[index] = v;
  _buffers[index] = v->data();
}
- (void)setBuffer:(id<MTLBuffer>)buffer offset:(NSUInteger)offset atIndex:(NSUInteger)index {
  if (index >= kSlots) throw std::runtime_error("setBuffer: buffer index past 30");
  _buffers[index] = buffer ? (char*)[buffer contents] + offset : nullptr;
}
- (void)setBufferOffset:(NSUInteger)offset atIndex:(NSUInteger)index {
  throw std::runtime_error("setBufferOffset:atIndex: is not supported by the mps-migrate shim");
}
- (void)setBuffers:(const id<MTLBuffer> __unsafe_unretained[])buffers
           offsets:(const NSUInteger[])offsets
         withRange:(NSRange)range {
  for (NSUInteger i = 0; i < range.length; ++i)
    [self setBuffer:buffers[i] offset:offsets[i] atIndex:range.location + i];
}
- (void)setThreadgroupMemoryLength:(NSUInteger)length atIndex:(NSUInteger)index {
  if (length > 32768) throw std::runtime_error("threadgroup memory past 32 KiB");
}
- (void)run:(MTLSize)groups threadsPerThreadgroup:(MTLSize)group threads:(MTLSize)grid {
  if (!_pipeline) throw std::runtime_error("dispatch without a compute pipeline state");
  if (grid.width == 0 || grid.height == 0 || grid.depth == 0) return;  // an empty grid runs nothing
  NSUInteger per = group.width * group.height * group.depth;
  if (per == 0 || per > 1024) throw std::runtime_error("threadgroup size must be 1..1024 threads");
  mps_shim::Dispatch d;
  memset(&d, 0, sizeof d);
  d.threads[0] = (uint32_t)grid.width;
  d.threads[1] = (uint32_t)grid.height;
  d.threads[2] = (uint32_t)grid.depth;
  d.group[0] = (uint32_t)group.width;
  d.group[1] = (uint32_t)group.height;
  d.group[2] = (uint32_t)group.depth;
  d.ngroups[0] = (uint32_t)groups.width;
  d.ngroups[1] = (uint32_t)groups.height;
  d.ngroups[2] = (uint32_t)groups.depth;
  uint64_t total = (uint64_t)grid.width * grid.height * grid.depth;
  d.nworkers = total < (1u << 14) ? 1 : mps_shim::worker_count();
  _pipeline->_entry.launch(_buffers, &d);
  if (d.status == 2) {
    throw std::runtime_error(std::string("kernel ") + _pipeline->_entry.name + " reported: " + d.message);
  }
}
- (void)dispatchThreads:(MTLSize)grid threadsPerThreadgroup:(MTLSize)group {
  MTLSize groups = MTLSizeMake((grid.width + group.width - 1) / (group.width ? group.width : 1),
                               (grid.height + group.height - 1) / (group.height ? group.height : 1),
                               (grid.depth + group.depth - 1) / (group.depth ? group.depth : 1));
  [self run:groups threadsPerThreadgroup:group threads:grid];
}
- (void)dispatchThreadgroups:(MTLSize)groups threadsPerThreadgroup:(MTLSize)group {
  MTLSize grid = MTLSizeMake(groups.width * group.width, groups.height * group.height, groups.depth * group.depth);
  [self run:groups threadsPerThreadgroup:group threads:grid];
}
- (void)useResource:(id<MTLResource>)r usage:(MTLResourceUsage)u {
}
- (void)useResources:(const id<MTLResource> __unsafe_unretained[])r count:(NSUInteger)n usage:(MTLResourceUsage)u {
}
- (void)memoryBarrierWithScope:(NSUInteger)scope {
}
@end

@implementation MMShimBlitEncoder
- (void)copyFromBuffer:(id<MTLBuffer>)src
          sourceOffset:(NSUInteger)so
              toBuffer:(id<MTLBuffer>)dst
     destinationOffset:(NSUInteger)dof
                  size:(NSUInteger)n {
  if (so + n > [src length] || dof + n > [dst length]) throw std::runtime_error("blit copy past a buffer's end");
  memmove((char*)[dst contents] + dof, (char*)[src contents] + so, n);
}
- (void)fillBuffer:(id<MTLBuffer>)b range:(NSRange)r value:(uint8_t)v {
  if (r.location + r.length > [b length]) throw std::runtime_error("blit fill past a buffer's end");
  memset((char*)[b contents] + r.location, v, r.length);
}
- (void)synchronizeResource:(id<MTLResource>)r {
}
@end
