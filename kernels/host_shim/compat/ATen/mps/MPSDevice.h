// mps-migrate host shim: at::mps::MPSDevice as every era's host code calls it. The wheel's header lists only the
// macOS versions its own torch still checks; host code of older trees names others (MACOS_VER_13_3_PLUS, ...) and
// supportsComplex(). The shim's runtime implements this class (the CPU wheel defines no at::mps symbol), as a
// macOS 15.2 Apple 9 GPU: every version check up to 15.2 is true.
#pragma once
#include <ATen/Device.h>
#include <c10/core/Allocator.h>
#include <c10/macros/Macros.h>
#include <c10/util/Exception.h>
#include <string>

#ifdef __OBJC__
#include <Metal/Metal.h>
typedef id<MTLDevice> MTLDevice_t;
#else
typedef void* MTLDevice_t;
#endif

namespace at::mps {

enum class MacOSVersion : uint32_t {
  MACOS_VER_13_0_PLUS = 0,
  MACOS_VER_13_1_PLUS,
  MACOS_VER_13_2_PLUS,
  MACOS_VER_13_3_PLUS,
  MACOS_VER_14_0_PLUS,
  MACOS_VER_14_4_PLUS,
  MACOS_VER_15_0_PLUS,
  MACOS_VER_15_1_PLUS,
  MACOS_VER_15_2_PLUS,
  MACOS_VER_26_0_PLUS,
  MACOS_VER_26_4_PLUS,
};

enum class AppleGPUFamily : uint32_t {
  APPLE_7_PLUS = 1007,
  APPLE_8_PLUS = 1008,
  APPLE_9_PLUS = 1009,
  APPLE_10_PLUS = 1010,
};

class MPSDevice {
 public:
  MPSDevice(MPSDevice& other) = delete;
  void operator=(const MPSDevice&) = delete;
  static MPSDevice* getInstance();
  MTLDevice_t device() {
    return _mtl_device;
  }
  bool isMacOS13Plus(MacOSVersion version) const;
  bool supportsComplex() const {
    return true;
  }
  std::string getName() const;
  unsigned getCoreCount() const;
  ~MPSDevice();

 private:
  static MPSDevice* _device;
  MTLDevice_t _mtl_device;
  MPSDevice();
};

bool is_available();
bool is_macos_13_or_newer(MacOSVersion version = MacOSVersion::MACOS_VER_13_0_PLUS);
bool is_apple_family_or_newer(AppleGPUFamily family);
at::Allocator* GetMPSAllocator(bool useSharedAllocator = false);

inline Device getDeviceFromPtr(void* ptr) {
  return {c10::DeviceType::MPS, 0};
}

} // namespace at::mps
