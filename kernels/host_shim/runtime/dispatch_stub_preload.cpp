// mps-migrate host shim, preloaded (LD_PRELOAD) into the worker: DispatchStub honours its MPS slot. A CPU build of
// libtorch asserts on the MPS device type; the tree's REGISTER_DISPATCH in a .mm fills mps_dispatch_ptr, which
// this answers, and every other device goes to libtorch's own get_call_ptr.
#include <ATen/native/DispatchStub.h>
#include <c10/util/Exception.h>
#include <dlfcn.h>
#include <cstdio>
#include <cstdlib>

namespace at::native {
void* DispatchStubImpl::get_call_ptr(c10::DeviceType t, void* d, void* avx512, void* avx2) {
  if (t == c10::DeviceType::MPS) {
    TORCH_CHECK(mps_dispatch_ptr, "DispatchStub: no MPS kernel is registered for this stub in the host build");
    return mps_dispatch_ptr;
  }
  using Fn = void* (*)(DispatchStubImpl*, c10::DeviceType, void*, void*, void*);
  static Fn real = [] {
    void* h = dlopen("libtorch_cpu.so", RTLD_NOW | RTLD_NOLOAD);
    Fn f = h ? (Fn)dlsym(h, "_ZN2at6native16DispatchStubImpl12get_call_ptrEN3c1010DeviceTypeEPvS4_S4_") : nullptr;
    if (!f) {
      std::fprintf(stderr, "mps-migrate: libtorch_cpu's DispatchStubImpl::get_call_ptr was not found\n");
      std::abort();
    }
    return f;
  }();
  return real(this, t, d, avx512, avx2);
}
} // namespace at::native
