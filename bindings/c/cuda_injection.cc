// File: cuda_injection.cc
// Layer: bindings/c (CUDA builds only). Attach without code change: registers the CUPTI
// TraceSource "cuda" with the process root when libkairos.so is loaded (LD_PRELOAD or
// linking), and exports InitializeInjection so CUDA_INJECTION64_PATH=libkairos.so works too.
// Both paths read the config from the environment (the process root does that in
// Profiler::Get()); neither needs a call from the program.
// Threading: the constructor runs at load time on the loading thread; the CUDA driver calls
// InitializeInjection once, during cuInit, on the thread that initializes CUDA. Registration
// happens once per process image (std::call_once).
#include <memory>
#include <mutex>

#include "activity/cpu_recorder.h"
#include "activity/cupti_source.h"
#include "config/env.h"
#include "kairos.h"
#include "session/profiler.h"

namespace {

uint32_t CurrentRange() { return kairos::internal::CurrentCpuRangeId(); }

void RegisterCudaSourceOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    kairos::internal::CuptiSourceOptions options;
    options.library_path = kairos::Env().cupti_library;
    options.current_range_id = CurrentRange;
    kairos::Profiler::Get().RegisterTraceSource(
        std::make_unique<kairos::internal::CuptiSource>(std::move(options)));
  });
}

// Priority 101 runs before the library's default-priority load constructor, so the "cuda"
// source is usually registered before a window configured in the environment warms up.
__attribute__((constructor(101))) void KairosRegisterCudaSource() {
  try {
    RegisterCudaSourceOnce();
  } catch (...) {
  }
}

}  // namespace

extern "C" {

// CUDA driver injection entry point (CUDA_INJECTION64_PATH). Returns 1 (success) always:
// a tracing problem must never fail the application's CUDA initialization.
KAIROS_API int InitializeInjection(void) {
  try {
    RegisterCudaSourceOnce();
  } catch (...) {
  }
  return 1;
}

}  // extern "C"
