// File: cupti_devices.cc
// Layer: kairos_activity (CUDA builds only). See cupti_devices.h.
// Threading: session thread.
#include "activity/cupti_devices.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstring>

namespace kairos::internal {

bool QueryDeviceInfo(uint32_t device, DeviceInfo* out) {
  // RTLD_NOLOAD: only a runtime the application already uses; loading one here would
  // initialize CUDA in a process that never asked for it.
  void* handle = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  using GetProps = cudaError_t (*)(cudaDeviceProp*, int);
  auto get = reinterpret_cast<GetProps>(dlsym(handle, "cudaGetDeviceProperties"));
  bool ok = false;
  if (get != nullptr) {
    cudaDeviceProp p;
    std::memset(&p, 0, sizeof(p));
    if (get(&p, static_cast<int>(device)) == cudaSuccess) {
      out->id = device;
      out->name = std::string(p.name, strnlen(p.name, sizeof(p.name)));
      out->total_global_mem = p.totalGlobalMem;
      out->compute_major = p.major;
      out->compute_minor = p.minor;
      out->max_threads_per_block = p.maxThreadsPerBlock;
      out->max_threads_per_multiprocessor = p.maxThreadsPerMultiProcessor;
      out->regs_per_block = p.regsPerBlock;
      out->warp_size = p.warpSize;
      out->shared_mem_per_block = p.sharedMemPerBlock;
      out->num_sms = p.multiProcessorCount;
      out->regs_per_multiprocessor = p.regsPerMultiprocessor;
      out->shared_mem_per_block_optin = p.sharedMemPerBlockOptin;
      out->shared_mem_per_multiprocessor = p.sharedMemPerMultiprocessor;
      out->max_blocks_per_multiprocessor = p.maxBlocksPerMultiProcessor;
      ok = true;
    }
  }
  dlclose(handle);  // drops only the reference taken above
  return ok;
}

}  // namespace kairos::internal
