// File: test/sim/src/cupti_entry.h
// Layer: CUDA/CUPTI simulator, substitute libcupti.so.13: entry-point helpers.
// Threading: thread-safe.
//
// Every public CUPTI function starts with KSIM_CUPTI_ENTRY (the
// KAIROS_SIM_CUPTI_FAIL fault knob) and reports errors through Fail(), which
// also sets the value cuptiGetLastError returns.
#ifndef KAIROS_TEST_SIM_SRC_CUPTI_ENTRY_H_
#define KAIROS_TEST_SIM_SRC_CUPTI_ENTRY_H_

#include <cupti.h>

#include "cupti_core.h"
#include "sim_common.h"

#define KSIM_PUBLIC extern "C" __attribute__((visibility("default")))

#define KSIM_CUPTI_ENTRY(name)                                             \
  do {                                                                     \
    CUptiResult forced_ = Core().ForcedResult(name);                       \
    if (forced_ != CUPTI_SUCCESS) {                                        \
      KSIM_DIAG("%s: failing with %d (KAIROS_SIM_CUPTI_FAIL)", name, forced_); \
      Core().last_error.store(forced_);                                    \
      return forced_;                                                      \
    }                                                                      \
  } while (0)

namespace kairos::sim {

inline CUptiResult Fail(CUptiResult r) {
  Core().last_error.store(r);
  return r;
}

}  // namespace kairos::sim

#endif  // KAIROS_TEST_SIM_SRC_CUPTI_ENTRY_H_
