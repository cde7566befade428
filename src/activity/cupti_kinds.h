// File: cupti_kinds.h
// Layer: kairos_activity (CUDA builds only). Which CUPTI activity kinds are on: a trace
// window's (chosen by ACTIVITY_TYPES and memory recording, with the runtime/driver callback
// filters) or, between windows, telemetry's kernel and copy kinds. One list for both, because
// CUPTI has one switch per kind for the whole process: whoever turned a kind on, DisableAll
// turns it off. Also the status text of a failed CUPTI call, which every caller reports alike.
// Threading: none of its own; CuptiSource serialises every call with its CUPTI mutex.
#ifndef KAIROS_SRC_ACTIVITY_CUPTI_KINDS_H_
#define KAIROS_SRC_ACTIVITY_CUPTI_KINDS_H_

#include <vector>

#include "absl/status/status.h"
#include "activity/cupti_api.h"
#include "config/config.h"

namespace kairos::internal {

// The status of CUPTI call `what` that returned `r` (OK on success): names the result, hints
// at a missing driver, and says the CPU trace continues.
absl::Status CuptiCallStatus(const CuptiApi& api, CUptiResult r, const char* what);
// "CONCURRENT_KERNEL", "MEMCPY", ... for the kinds kairos enables ("?" otherwise).
const char* CuptiKindName(CUpti_ActivityKind kind);

// The config asks for some GPU activity (a GPU type in ACTIVITY_TYPES, or memory).
bool WantsGpuActivity(const Config& config);
// Memory recording (PROFILE_PROFILE_MEMORY or ACTIVITY_TYPES memory): MEMORY2 and MEMORY_POOL.
bool WantsMemory(const Config& config);

class CuptiKinds {
 public:
  // Enables the kinds `config` asks for, with their filters, skipping those already on.
  // Stops at the first failure and returns its status; what was enabled stays listed.
  absl::Status EnableForConfig(const CuptiApi& api, const Config& config);
  // Telemetry's kinds (kernel, memcpy, peer memcpy); stops at the first failure.
  absl::Status EnableTotals(const CuptiApi& api);
  // Telemetry's kinds again after a window, each as far as CUPTI allows (failures ignored:
  // the totals then only miss records of that kind).
  void ResumeTotals(const CuptiApi& api);
  // Disables every listed kind (failures logged verbosely) and empties the list.
  void DisableAll(const CuptiApi* api);
  bool empty() const { return enabled_.empty(); }

 private:
  std::vector<CUpti_ActivityKind> enabled_;
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CUPTI_KINDS_H_
