// File: nvtx_injection.cc
// Layer: bindings/c. Exports InitializeInjectionNvtx2, so NVTX_INJECTION64_PATH=libkairos.so
// makes kairos the NVTX tool of an unmodified program (docs/NVTX.md). The logic lives in
// src/activity/nvtx_injection.cc; this file only wires it to the process root.
// Threading: NVTX calls the entry point once per shared object that uses NVTX, on whichever
// thread makes that object's first NVTX call, possibly concurrently; the process-wide setup
// runs once (std::call_once).
#include <mutex>

#include "activity/nvtx_injection.h"
#include "activity/nvtx_registry.h"
#include "kairos.h"
#include "session/profiler.h"

namespace {

void SetUpOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    const kairos::Config config = kairos::Profiler::Get().base_config();
    // Applied when a domain is created: a filtered domain then costs nothing per call.
    kairos::internal::NvtxSetDomainFilter(config.nvtx_domains_include,
                                          config.nvtx_domains_exclude);
  });
}

}  // namespace

extern "C" {

// Returns 1 when kairos' handlers are installed, 0 ("no tool": NVTX calls become no-ops)
// when the NVTX instance offers no callback table or setup failed.
KAIROS_API int InitializeInjectionNvtx2(const void* (*get_export_table)(uint32_t)) {
  try {
    SetUpOnce();
    const int attached = kairos::internal::NvtxAttach(get_export_table);
    // A window the environment opens at start-up is open before the first NVTX call (the
    // one that loaded kairos) goes on to the handlers, so the program's first ranges are
    // recorded. Bounded wait; once per process.
    if (attached != 0) kairos::Profiler::Get().WaitForStartupWindow();
    return attached;
  } catch (...) {
    return 0;
  }
}

}  // extern "C"
