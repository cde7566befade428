// File: cuda_injection.cc
// Layer: bindings/c (CUDA builds only). Attach without code change through the CUDA driver:
// exports InitializeInjection so CUDA_INJECTION64_PATH=libkairos.so traces an unmodified
// program. The "cuda" TraceSource is registered by the process root itself, so LD_PRELOAD,
// linking and injection all get the same sources; this entry point only makes sure the root
// exists and that a window the environment opens at start-up is open before the program's
// first GPU work (bounded: kairos.h).
// Threading: the CUDA driver calls InitializeInjection once, on the thread that initialises
// CUDA, after dlopen() has returned (so the loader lock is not held). Idempotent.
#include "kairos.h"
#include "session/api.h"

extern "C" {

// Returns 1 (success) always: a tracing problem must never fail the application's CUDA
// initialisation.
KAIROS_API int InitializeInjection(void) {
  try {
    kairos::api::OnCudaInjection();
  } catch (...) {
    kairos::api::LogBarrierError("InitializeInjection", "exception");
  }
  return 1;
}

}  // extern "C"
