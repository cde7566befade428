// File: nvtx_injection.cc
// Layer: bindings/c. Exports InitializeInjectionNvtx2, so NVTX_INJECTION64_PATH=libkairos.so
// makes kairos the NVTX tool of an unmodified program (docs/NVTX.md). The logic lives in
// src/activity/nvtx_injection.cc, wired to the process root by api::AttachNvtx.
// Threading: NVTX calls the entry point once per shared object that uses NVTX, on whichever
// thread makes that object's first NVTX call, possibly concurrently; the process-wide setup
// runs once.
#include "kairos.h"
#include "session/api.h"

extern "C" {

// Returns 1 when kairos' handlers are installed, 0 ("no tool": NVTX calls become no-ops)
// when the NVTX instance offers no callback table or setup failed.
KAIROS_API int InitializeInjectionNvtx2(const void* (*get_export_table)(uint32_t)) {
  try {
    return kairos::api::AttachNvtx(get_export_table);
  } catch (...) {
    kairos::api::LogBarrierError("InitializeInjectionNvtx2", "exception");
    return 0;
  }
}

}  // extern "C"
