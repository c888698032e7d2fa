// mps-migrate host shim: the at::mps classes host code calls (the CPU wheel defines none) and a fake MPS device:
// tensors whose storage is a shim MTLBuffer (the data pointer is the buffer object, as with PyTorch's MPS
// allocator), a device guard, MPS hooks, the factory/copy/view kernels, and a CPU fallback for every other op
// (each fallback is recorded, so a report can say what did not run through the tree's host code).
#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/detail/MPSHooksInterface.h>
#include <ATen/mps/MPSAllocatorInterface.h>
#include <ATen/mps/EmptyTensor.h>
#include <ATen/mps/MPSDevice.h>
#include <ATen/mps/MPSProfiler.h>
#include <ATen/mps/MPSStream.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>
#include <atomic>
#include <vector>
#include <mutex>
#include <set>
#include <string>

extern "C" id mps_shim_new_buffer(size_t length);
extern "C" void* mps_shim_buffer_contents(id buffer);
extern "C" void mps_shim_release(id obj);
extern "C" void mps_shim_run_graph(MPSGraph* graph, NSDictionary* feeds, NSDictionary* results);

namespace {
std::atomic<size_t> g_allocated{0};
std::mutex g_fallback_mu;
std::set<std::string>* g_fallbacks = new std::set<std::string>();

// A freed buffer is released at the next synchronization, not at once: PyTorch's MPS allocator keeps a freed
// buffer's memory until the GPU is done with it, and host code relies on that (Indexing.mm binds a buffer whose
// DataPtr was a temporary).
std::mutex g_pending_mu;
std::vector<id>* g_pending = new std::vector<id>();

void release_buffer(void* ctx) {
  std::lock_guard<std::mutex> lock(g_pending_mu);
  g_pending->push_back((id)ctx);
}

void release_pending() {
  std::vector<id> now;
  {
    std::lock_guard<std::mutex> lock(g_pending_mu);
    now.swap(*g_pending);
  }
  for (id b : now) mps_shim_release(b);
}

int g_fill_byte = -1;  // set by the worker (mps_shim_set_fill_byte): rules/verify.yaml's sentinel_byte

void* host_ptr(const void* data_ptr) {
  return mps_shim_buffer_contents((id)data_ptr);
}
} // namespace

namespace at::mps {

// ---------------------------------------------------------------- allocator
class ShimAllocator final : public IMPSAllocator {
 public:
  c10::DataPtr allocate(size_t n) override {
    id buffer = mps_shim_new_buffer(n);
    // A Mac's caching allocator hands out blocks with stale bytes: verify's sentinel makes unwritten outputs show.
    if (g_fill_byte >= 0) std::memset(mps_shim_buffer_contents(buffer), g_fill_byte, n);
    g_allocated += n;
    return {(void*)buffer, (void*)buffer, &release_buffer, c10::Device(c10::DeviceType::MPS, 0)};
  }
  c10::DeleterFnPtr raw_deleter() const override {
    return &release_buffer;
  }
  void copy_data(void* dst, const void* src, std::size_t count) const override {
    std::memcpy(host_ptr(dst), host_ptr(src), count);
  }
  bool initialized() override {
    return true;
  }
  void emptyCache(c10::MempoolId_t) override {}
  void recordStream(const c10::DataPtr&, c10::Stream) override {}
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex) override {
    return {};
  }
  void resetAccumulatedStats(c10::DeviceIndex) override {}
  void resetPeakStats(c10::DeviceIndex) override {}
  void freeInactiveBuffers() const override {}
  ssize_t getUnalignedBufferSize(const void* ptr) const override {
    return -1;
  }
  IntArrayRef getBufferShape(const void* ptr) const override {
    return {};
  }
  id_t getBufferId(const void* ptr) const override {
    return 0;
  }
  void setBufferShape(const void* ptr, const IntArrayRef& shape) const override {}
  bool isSharedBuffer(const void* ptr) const override {
    return true;
  }
  c10::DataPtr allocScalarBufferWithValue(void* value, size_t size) const override {
    auto p = const_cast<ShimAllocator*>(this)->allocate(size);
    std::memcpy(host_ptr(p.get()), value, size);
    return p;
  }
  std::string formatSize(size_t size) const override {
    return std::to_string(size) + " bytes";
  }
  void setLowWatermarkRatio(double) const override {}
  void setHighWatermarkRatio(double) const override {}
  ssize_t getLowWatermarkValue() const override {
    return 0;
  }
  size_t getLowWatermarkLimit() const override {
    return 0;
  }
  size_t getHighWatermarkLimit() const override {
    return 0;
  }
  size_t getTotalAllocatedMemory() const override {
    return g_allocated;
  }
  size_t getCurrentAllocatedMemory() const override {
    return g_allocated;
  }
  size_t getDriverAllocatedMemory() const override {
    return g_allocated;
  }
  size_t getRecommendedMaxMemory() const override {
    return 16ull << 30;
  }
  std::pair<const void*, uint32_t> getSharedBufferPtr(const void* ptr) const override {
    return {host_ptr(ptr), 0};
  }
  c10::Storage getHostAliasStorage(const c10::Storage& s) const override {
    TORCH_CHECK(false, "getHostAliasStorage is not supported by the mps-migrate shim");
  }
  bool recordEvents(c10::ArrayRef<const void*>) const override {
    return true;
  }
  bool waitForEvents(c10::ArrayRef<const void*>) const override {
    return true;
  }
};

ShimAllocator& shim_allocator() {
  static ShimAllocator* a = new ShimAllocator();
  return *a;
}

IMPSAllocator* getIMPSAllocator() {
  return &shim_allocator();
}
at::Allocator* GetMPSAllocator(bool) {
  return &shim_allocator();
}
bool isMPSPinnedPtr(const void*) {
  return false;
}
C10_DEFINE_REGISTRY(MPSAllocatorCallbacksRegistry, IMpsAllocatorCallback)

// ---------------------------------------------------------------- device
MPSDevice* MPSDevice::_device = nullptr;
MPSDevice::MPSDevice() : _mtl_device(MTLCreateSystemDefaultDevice()) {}
MPSDevice::~MPSDevice() = default;
MPSDevice* MPSDevice::getInstance() {
  static MPSDevice* d = new MPSDevice();
  return d;
}
bool MPSDevice::isMacOS13Plus(MacOSVersion version) const {
  return version <= MacOSVersion::MACOS_VER_15_2_PLUS;
}
std::string MPSDevice::getName() const {
  return "mps-migrate CPU backend";
}
unsigned MPSDevice::getCoreCount() const {
  return 1;
}
bool is_available() {
  return true;
}
bool is_macos_13_or_newer(MacOSVersion version) {
  return MPSDevice::getInstance()->isMacOS13Plus(version);
}
bool is_apple_family_or_newer(AppleGPUFamily family) {
  return family <= AppleGPUFamily::APPLE_9_PLUS;
}

// ---------------------------------------------------------------- stream
MPSStream::MPSStream(Stream stream) : _stream(stream) {
  _commandQueue = [MTLCreateSystemDefaultDevice() newCommandQueue];
  _serialQueue = dispatch_queue_create("mps-migrate stream", nullptr);
}
MPSStream::~MPSStream() = default;
MPSCommandBuffer_t MPSStream::commandBuffer() {
  if (!_commandBuffer) _commandBuffer = [(MPSCommandBuffer*)[_commandQueue commandBuffer] retain];
  return _commandBuffer;
}
MTLComputeCommandEncoder_t MPSStream::commandEncoder() {
  if (!_commandEncoder) _commandEncoder = [[commandBuffer() computeCommandEncoder] retain];
  return _commandEncoder;
}
void MPSStream::endKernelCoalescing() {
  if (_commandEncoder) {
    [_commandEncoder endEncoding];
    [_commandEncoder release];
    _commandEncoder = nil;
  }
}
void MPSStream::synchronize(SyncType) {
  endKernelCoalescing();
  release_pending();
}
void MPSStream::commit() {
  endKernelCoalescing();
}
void MPSStream::commitAndWait() {
  endKernelCoalescing();
}
void MPSStream::commitAndContinue() {
  endKernelCoalescing();
}
void MPSStream::flush() {}
void MPSStream::copy(MTLBuffer_t src, MTLBuffer_t dst, size_t length, size_t srcOffset, size_t dstOffset, uint64_t,
                     SyncType) {
  endKernelCoalescing();
  std::memmove((char*)[dst contents] + dstOffset, (char*)[src contents] + srcOffset, length);
}
void MPSStream::fill(MTLBuffer_t buffer, uint8_t value, size_t length, size_t offset, SyncType) {
  endKernelCoalescing();
  TORCH_CHECK(offset + length <= [buffer length], "MPSStream::fill past the buffer's end");
  std::memset((char*)[buffer contents] + offset, value, length);
}
void MPSStream::copy_and_sync(MTLBuffer_t src, MTLBuffer_t dst, size_t length, size_t srcOffset, size_t dstOffset,
                              bool, uint64_t profileId) {
  copy(src, dst, length, srcOffset, dstOffset, profileId, SyncType::NONE);
}
void MPSStream::executeMPSGraph(MPSGraph* graph, NSDictionary* feeds, NSDictionary* results, SyncType) {
  endKernelCoalescing();
  mps_shim_run_graph(graph, feeds, results);  // mpsgraph.mm: evaluated by the worker's emulation
}
void MPSStream::addCompletedHandler(MTLCommandBufferHandler block) {
  block(commandBuffer());
}
MTLDevice_t MPSStream::device() const {
  return MTLCreateSystemDefaultDevice();
}
MTLBuffer_t MPSStream::getErrorBuffer() {
  if (!_errorBuffer) _errorBuffer = [MTLCreateSystemDefaultDevice() newBufferWithLength:16384 options:0];
  return _errorBuffer;
}
void MPSStream::checkLastError() {}

MPSStream* MPSStreamImpl::_stream = nullptr;
MPSStream* MPSStreamImpl::getInstance() {
  static MPSStream* s = new MPSStream(Stream(Stream::UNSAFE, c10::Device(DeviceType::MPS, 0), 0));
  return s;
}
MPSStream* getCurrentMPSStream() {
  return MPSStreamImpl::getInstance();
}
MPSStream* getDefaultMPSStream() {
  return MPSStreamImpl::getInstance();
}
void dispatch_sync_with_rethrow(dispatch_queue_t queue, void (^block)()) {
  // The shim's queues run blocks on the caller's thread, so an exception propagates as it is.
  dispatch_sync(queue, block);
}

// ---------------------------------------------------------------- profiler (every call a no-op)
namespace Profiler {
MPSProfiler::MPSProfiler() : m_os_log_events(nullptr), m_os_log_intervals(nullptr) {}
MPSProfiler::~MPSProfiler() = default;
uint64_t MPSProfiler::beginProfileKernel(const void*, const std::string&, bool) {
  return 0;
}
uint64_t MPSProfiler::beginProfileKernel(const void*, const std::string&, const TensorList&) {
  return 0;
}
uint64_t MPSProfiler::beginProfileCopy(const void*, const void*, const OptionalTensorRef, const OptionalTensorRef,
                                       size_t, bool, bool) {
  return 0;
}
void MPSProfiler::endProfileKernel(const void*, SyncType) {}
void MPSProfiler::endProfileCopy(uint64_t, SyncType) {}
void MPSProfiler::beginProfileGPUInterval(const void*) {}
bool MPSProfiler::isCaptureEnabled() const {
  return false;
}
bool MPSProfiler::isCapturing() const {
  return false;
}
void MPSProfiler::startCapture(const std::string&, MPSStream*) {}
void MPSProfiler::stopCapture(MPSStream*) {}
} // namespace Profiler
Profiler::MPSProfiler& getMPSProfiler() {
  static Profiler::MPSProfiler* p = new Profiler::MPSProfiler();
  return *p;
}
} // namespace at::mps

namespace at::detail {
TensorBase empty_mps(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout>,
                     std::optional<Device>, std::optional<bool>, std::optional<c10::MemoryFormat> mf) {
  return empty_generic(size, &at::mps::shim_allocator(), DispatchKeySet(DispatchKey::MPS), dtype_or_default(dtype),
                       mf);
}
TensorBase empty_mps(IntArrayRef size, const TensorOptions& options) {
  return empty_mps(size, optTypeMetaToScalarType(options.dtype_opt()), options.layout_opt(), options.device_opt(),
                   options.pinned_memory_opt(), options.memory_format_opt());
}
TensorBase empty_strided_mps(IntArrayRef size, IntArrayRef stride, ScalarType dtype, std::optional<Device>) {
  return empty_strided_generic(size, stride, &at::mps::shim_allocator(), DispatchKeySet(DispatchKey::MPS), dtype);
}
TensorBase empty_strided_mps(IntArrayRef size, IntArrayRef stride, const TensorOptions& options) {
  return empty_strided_mps(size, stride, optTypeMetaToScalarType(options.dtype_opt()).value_or(get_default_dtype_as_scalartype()), options.device_opt());
}
} // namespace at::detail

namespace {
using namespace at;

Tensor cpu_alias(const Tensor& t) {
  if (!t.is_mps()) return t;
  char* base = (char*)host_ptr(t.storage().data());
  return at::from_blob(base + t.storage_offset() * t.element_size(), t.sizes(), t.strides(),
                       t.options().device(kCPU));
}

Tensor empty_mps(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                 std::optional<Device> device, std::optional<bool> pin, std::optional<MemoryFormat> mf) {
  return at::detail::empty_mps(size, dtype, layout, device, pin, mf);
}
Tensor empty_strided_mps(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype,
                         std::optional<Layout>, std::optional<Device> device, std::optional<bool>) {
  return at::detail::empty_strided_mps(size, stride, dtype_or_default(dtype), device);
}
Tensor& copy_mps_(Tensor& self, const Tensor& src, bool) {
  Tensor d = cpu_alias(self);
  d.copy_(cpu_alias(src));
  if (!self.is_mps()) at::mps::getDefaultMPSStream()->synchronize(at::mps::SyncType::COMMIT_AND_WAIT);
  return self;
}
Tensor copy_from_mps(const Tensor& self, const Tensor& dst, bool non_blocking) {
  Tensor d = dst;
  copy_mps_(d, self, non_blocking);
  return dst;
}
Tensor copy_from_and_resize_mps(const Tensor& self, const Tensor& dst) {
  at::native::resize_output(dst, self.sizes());
  return copy_from_mps(self, dst, false);
}
Scalar local_scalar_mps(const Tensor& self) {
  return cpu_alias(self).item();
}
Tensor& fill_mps_(Tensor& self, const Scalar& v) {
  cpu_alias(self).fill_(v);
  return self;
}
Tensor& zero_mps_(Tensor& self) {
  cpu_alias(self).zero_();
  return self;
}
// Grows the storage here first: CPU's resize_ would memcpy from the data pointers, which are buffer objects.
const Tensor& resize_mps_(const Tensor& self, IntArrayRef size, std::optional<MemoryFormat> mf) {
  auto* impl = self.unsafeGetTensorImpl();
  size_t needed = (size_t)(impl->storage_offset() + c10::multiply_integers(size)) * self.itemsize();
  c10::StorageImpl* storage = impl->storage().unsafeGetStorageImpl();
  if (storage && needed > storage->nbytes()) {
    c10::DataPtr fresh = storage->allocator()->allocate(needed);
    if (storage->nbytes() && storage->data_ptr().get())
      std::memcpy(host_ptr(fresh.get()), host_ptr(storage->data_ptr().get()), storage->nbytes());
    storage->set_data_ptr_noswap(std::move(fresh));
    storage->set_nbytes(needed);
  }
  return at::native::resize_(self, size, mf);
}

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  {
    std::lock_guard<std::mutex> lock(g_fallback_mu);
    const auto& name = op.schema().operator_name();
    g_fallbacks->insert(name.overload_name.empty() ? name.name : name.name + "." + name.overload_name);
  }
  at::native::cpu_fallback(op, stack);
}

struct ShimGuard final : c10::impl::DeviceGuardImplInterface {
  static constexpr c10::DeviceType D = c10::DeviceType::MPS;
  c10::DeviceType type() const override {
    return D;
  }
  c10::Device exchangeDevice(c10::Device) const override {
    return c10::Device(D, 0);
  }
  c10::Device getDevice() const override {
    return c10::Device(D, 0);
  }
  void setDevice(c10::Device) const override {}
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device) const override {
    return c10::Stream(c10::Stream::DEFAULT, c10::Device(D, 0));
  }
  c10::Stream getDefaultStream(c10::Device d) const override {
    return getStream(d);
  }
  c10::Stream exchangeStream(c10::Stream s) const override {
    return getStream(s.device());
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    return 1;
  }
  void synchronizeDevice(const c10::DeviceIndex) const override {}
};

struct ShimHooks : at::MPSHooksInterface {
  ShimHooks() = default;
  void init() const override {}
  bool hasMPS() const override {
    return true;
  }
  bool isOnMacOSorNewer(unsigned major, unsigned minor) const override {
    return major < 15 || (major == 15 && minor <= 2);
  }
  c10::Allocator* getMPSDeviceAllocator() const override {
    return &at::mps::shim_allocator();
  }
  void deviceSynchronize() const override {}
  void commitStream() const override {}
  void emptyCache() const override {}
  size_t getCurrentAllocatedMemory() const override {
    return g_allocated;
  }
  bool hasPrimaryContext(c10::DeviceIndex) const override {
    return true;
  }
  bool isBuilt() const override {
    return true;
  }
  bool isAvailable() const override {
    return true;
  }
  c10::DeviceIndex deviceCount() const override {
    return 1;
  }
  c10::DeviceIndex getCurrentDevice() const override {
    return 0;
  }
  void setCurrentDevice(c10::DeviceIndex) const override {}
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex) const override {
    return 0;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex) const override {
    return 0;
  }
};

struct AllocatorRegistration {
  AllocatorRegistration() {
    c10::SetAllocator(c10::DeviceType::MPS, &at::mps::shim_allocator(), 1);
  }
} g_allocator_registration;
} // namespace

C10_REGISTER_GUARD_IMPL(MPS, ShimGuard);
C10_REGISTER_TYPED_CLASS(MPSHooksRegistry, "MPSHooks", ShimHooks)

TORCH_LIBRARY_IMPL(aten, MPS, m) {
  m.impl("empty.memory_format", empty_mps);
  m.impl("empty_strided", empty_strided_mps);
  m.impl("copy_", copy_mps_);
  m.impl("_copy_from", copy_from_mps);
  m.impl("_copy_from_and_resize", copy_from_and_resize_mps);
  m.impl("_local_scalar_dense", local_scalar_mps);
  m.impl("fill_.Scalar", fill_mps_);
  m.impl("zero_", zero_mps_);
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("as_strided", TORCH_FN(at::native::as_strided_tensorimpl));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  m.impl("resize_", resize_mps_);
}

TORCH_LIBRARY_IMPL(_, MPS, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

// The ops answered by the CPU fallback so far, one per line (the worker reads them after each case).
extern "C" size_t mps_shim_fallbacks(char* out, size_t n) {
  std::lock_guard<std::mutex> lock(g_fallback_mu);
  std::string all;
  for (const auto& s : *g_fallbacks) all += s + "\n";
  g_fallbacks->clear();
  if (out && n) {
    std::strncpy(out, all.c_str(), n - 1);
    out[n - 1] = 0;
  }
  return all.size();
}

// The byte fresh MPS storage is filled with (negative: left as the buffer came, zeroed).
extern "C" void mps_shim_set_fill_byte(int value) {
  g_fill_byte = value;
}
