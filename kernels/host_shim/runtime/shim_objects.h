// mps-migrate host shim runtime: the Objective-C classes its two .mm files share (metal.mm implements them).
#pragma once
#include <Metal/Metal.h>
#include <vector>
#include "shim_runtime.h"

static constexpr int kSlots = 31;  // buffer indices 0-30, as Metal's argument table

// An object with a label (buffers, libraries, encoders).
@interface MMShimLabelled : NSObject {
  NSString* _label;
}
- (NSString*)label;
- (void)setLabel:(NSString*)l;
@end

// The encoders' common part: the debug-group calls, which do nothing here.
@interface MMShimEncoder : MMShimLabelled <MTLCommandEncoder>
@end

@interface MMShimBuffer : MMShimLabelled <MTLBuffer> {
 @public
  void* _contents;
  NSUInteger _length;
  BOOL _owned;
  id<MTLDevice> _device;
}
- (instancetype)initWithLength:(NSUInteger)length device:(id<MTLDevice>)d;
@end

@interface MMShimFunction : NSObject <MTLFunction> {
 @public
  mps_shim::KernelEntry _entry;
  NSString* _name;
}
@end

@interface MMShimPipeline : NSObject <MTLComputePipelineState> {
 @public
  mps_shim::KernelEntry _entry;
}
@end

@interface MMShimLibrary : MMShimLabelled <MTLLibrary> {
 @public
  std::vector<mps_shim::KernelEntry>* _kernels;
  BOOL _bundled;
}
@end

@interface MMShimComputeEncoder : MMShimEncoder <MTLComputeCommandEncoder> {
  MMShimPipeline* _pipeline;
  void* _buffers[kSlots];
  std::vector<char>* _bytes[kSlots];
}
@end

@interface MMShimBlitEncoder : MMShimEncoder <MTLBlitCommandEncoder>
@end
