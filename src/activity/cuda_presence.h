// File: cuda_presence.h
// Layer: kairos_activity. Whether this process uses CUDA, so CUPTI is loaded only where
// there is GPU work to trace: loading CUPTI initialises the driver, which in a CPU-only
// process fails with a "no driver" warning and costs start-up time for nothing.
// Threading: any thread; reads the loader's list of loaded objects (dl_iterate_phdr takes the
// loader lock, so not from inside a library constructor run by dlopen).
#ifndef KAIROS_SRC_ACTIVITY_CUDA_PRESENCE_H_
#define KAIROS_SRC_ACTIVITY_CUDA_PRESENCE_H_

#include <string_view>

namespace kairos::internal {

// True when a CUDA runtime or driver library (libcudart*, libcuda.so*) is loaded in the
// process, or `cuda_injected` (the environment's EnvSettings::cuda_injected:
// CUDA_INJECTION64_PATH is set, so the driver loads kairos as its injection).
bool ProcessUsesCuda(bool cuda_injected);

// True when `path` (a loaded object's file name) names a CUDA runtime or driver library.
bool IsCudaLibraryPath(std::string_view path);

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CUDA_PRESENCE_H_
