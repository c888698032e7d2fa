// Fixture for tests/test_host_reader.py: Objective-C constructs tree-sitter-cpp does not know.
#include <ATen/native/mps/OperationUtils.h>

@interface FakeSpinDescriptor : NSObject<NSCopying>
@property(readwrite, nonatomic) BOOL clockwise;
- (nonnull id)copyWithZone:(nullable NSZone*)zone;
@end

@implementation FakeSpinDescriptor
- (nonnull id)copyWithZone:(nullable NSZone*)zone {
  return self;
}
@end

typedef NS_ENUM(NSUInteger, SpinMode) {
  SpinModeSlow = 0,
  SpinModeFast = 1,
};

namespace at::native {
static const char* SPIN_METAL = R"SPIN(
#include <metal_stdlib>
using namespace metal;
kernel void spin_kernel(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  out[tid] = 1.0; // not host code: "quotes" and [[attributes]] stay inside
}
)SPIN";

void run_with_block(dispatch_queue_t queue, void (^block)()) {
  dispatch_sync(queue, ^{
    block();
  });
}

static id<MTLLibrary> build_library(id<MTLDevice> device, bool fast) {
  NSError* error = nil;
  MTLCompileOptions* options = [[MTLCompileOptions new] autorelease];
  [options setFastMathEnabled:fast ? YES : NO];
  id<MTLLibrary> library = [device newLibraryWithSource:[NSString stringWithUTF8String:SPIN_METAL]
                                                options:options
                                                  error:&error];
  NSMutableDictionary* extra = [@{
    @"a" : @1,
    @"b" : @2,
  } mutableCopy];
  MPSGraphTensor* picked = [graph
      selectWithPredicateTensor:[graph lessThanWithPrimaryTensor:x
                                                 secondaryTensor:[graph constantWithScalar:0.0
                                                                                  dataType:MPSDataTypeFloat32]
                                                            name:nil]
            truePredicateTensor:x
           falsePredicateTensor:y
                           name:nil];
  MPSGraphTensor* sliced = [graph sliceTensor:picked
                                    dimension:0
#if defined(__MAC_14_0)
                                        start:0
#else
                                        start:(NSUInteger)0
#endif
                                       length:1
                                         name:nil];
  id<MTLBuffer> buf = (__bridge id<MTLBuffer>)(ptr);
  auto xor_bits = bits ^ mask;
  return library;
}

Tensor& spin_out_mps(const Tensor& self, Tensor& output) {
  auto block = ^MPSGraphTensor*(MPSGraph* mpsGraph, MPSGraphTensor* t) {
    return [mpsGraph absoluteWithTensor:t name:nil];
  };
  @try {
    [object doSomething];
  } @catch (NSException* e) {
    TORCH_CHECK(false, "failed");
  }
  return output;
}

} // namespace at::native
