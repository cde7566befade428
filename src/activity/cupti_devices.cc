// File: cupti_devices.cc
// Layer: kairos_activity (CUDA builds only). See cupti_devices.h.
// Threading: session thread.
#include "activity/cupti_devices.h"

#include <cuda.h>
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

std::vector<MemoryBaseline> QueryMemoryInUse() {
  std::vector<MemoryBaseline> out;
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (h == nullptr) return out;
  using Count = CUresult (*)(int*);
  using State = CUresult (*)(CUdevice, unsigned int*, int*);
  using Retain = CUresult (*)(CUcontext*, CUdevice);
  using Release = CUresult (*)(CUdevice);
  using Push = CUresult (*)(CUcontext);
  using Pop = CUresult (*)(CUcontext*);
  using Info = CUresult (*)(size_t*, size_t*);
  auto count = reinterpret_cast<Count>(dlsym(h, "cuDeviceGetCount"));
  auto state = reinterpret_cast<State>(dlsym(h, "cuDevicePrimaryCtxGetState"));
  auto retain = reinterpret_cast<Retain>(dlsym(h, "cuDevicePrimaryCtxRetain"));
  auto release = reinterpret_cast<Release>(dlsym(h, "cuDevicePrimaryCtxRelease_v2"));
  auto push = reinterpret_cast<Push>(dlsym(h, "cuCtxPushCurrent_v2"));
  auto pop = reinterpret_cast<Pop>(dlsym(h, "cuCtxPopCurrent_v2"));
  auto info = reinterpret_cast<Info>(dlsym(h, "cuMemGetInfo_v2"));
  int n = 0;
  if (count != nullptr && state != nullptr && retain != nullptr && release != nullptr &&
      push != nullptr && pop != nullptr && info != nullptr && count(&n) == CUDA_SUCCESS) {
    for (int d = 0; d < n; ++d) {
      unsigned int flags = 0;
      int active = 0;
      if (state(d, &flags, &active) != CUDA_SUCCESS || !active) continue;  // never create one
      CUcontext ctx = nullptr;
      if (retain(&ctx, d) != CUDA_SUCCESS) continue;
      if (push(ctx) == CUDA_SUCCESS) {
        size_t free_bytes = 0, total = 0;
        if (info(&free_bytes, &total) == CUDA_SUCCESS && total >= free_bytes) {
          out.push_back({d, static_cast<uint64_t>(total - free_bytes), static_cast<uint64_t>(total)});
        }
        CUcontext popped = nullptr;
        pop(&popped);
      }
      release(d);
    }
  }
  dlclose(h);
  return out;
}

}  // namespace kairos::internal
