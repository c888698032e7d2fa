// mps-migrate host shim runtime: what its parts share.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mps_shim {

// The CPU backend's launch record (kernels/msl/msl_runtime_exec.h, __msl_dispatch).
struct Dispatch {
  uint32_t threads[3];
  uint32_t group[3];
  uint32_t ngroups[3];
  int32_t nworkers;
  int32_t checked;
  const uint64_t* guards;
  int32_t nguards;
  int32_t status;
  uint64_t fault_addr;
  uint32_t fault_tpig[3];
  uint32_t fault_tgpig[3];
  uint32_t fault_lid[3];
  char message[256];
  int32_t fault_signal;
};
using LaunchFn = int (*)(void** buffers, Dispatch* d);

// A compiled kernel: its shared library's launcher.
struct KernelEntry {
  std::string name;
  LaunchFn launch = nullptr;
};

// Resolves Metal sources and bundled kernel names to compiled libraries. Set by the Python worker
// (migrate/host_code/worker.py): kind "source" (arg: MSL text) or "bundled" (arg: a kernel's host name). Writes
// "SO_PATH\nNAME0\nNAME1..." (launcher i is __msl_launch_i) or an error message; returns 0 on success.
using Resolver = int (*)(const char* kind, const char* arg, char* out, size_t out_len);

std::vector<KernelEntry> resolve(const char* kind, const std::string& arg, std::string& error);
int worker_count();
std::string& last_kernel_error();

} // namespace mps_shim

extern "C" void mps_shim_set_resolver(mps_shim::Resolver r);
