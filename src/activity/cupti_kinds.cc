// File: cupti_kinds.cc
// Layer: kairos_activity (CUDA builds only). See cupti_kinds.h.
#include "activity/cupti_kinds.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "activity/cupti_cbids.h"
#include "util/log.h"

namespace kairos::internal {
namespace {

struct KindChoice {
  ActivityType type;
  CUpti_ActivityKind kind;
};
// Kineto's default kinds (cuda13-cupti-nvtx-facts.md §8), keyed by ACTIVITY_TYPES.
constexpr KindChoice kKinds[] = {
    {ActivityType::kKernel, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
    {ActivityType::kGpuMemcpy, CUPTI_ACTIVITY_KIND_MEMCPY},
    {ActivityType::kGpuMemcpy, CUPTI_ACTIVITY_KIND_MEMCPY2},
    {ActivityType::kGpuMemset, CUPTI_ACTIVITY_KIND_MEMSET},
    {ActivityType::kCudaRuntime, CUPTI_ACTIVITY_KIND_RUNTIME},
    {ActivityType::kCudaDriver, CUPTI_ACTIVITY_KIND_DRIVER},
    {ActivityType::kCudaSync, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION},
    {ActivityType::kExternalCorrelation, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION},
    {ActivityType::kOverhead, CUPTI_ACTIVITY_KIND_OVERHEAD},
    // Only with memory recording (WantsMemory): allocations, frees, pool operations.
    {ActivityType::kMemory, CUPTI_ACTIVITY_KIND_MEMORY2},
    {ActivityType::kMemory, CUPTI_ACTIVITY_KIND_MEMORY_POOL},
};

// What telemetry's totals count (cupti_tally.h).
constexpr CUpti_ActivityKind kTotalsKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2};

// The runtime/driver callback filters and the event timestamps that go with `kind`.
void ApplyFilters(const CuptiApi& api, CUpti_ActivityKind kind) {
  if (kind == CUPTI_ACTIVITY_KIND_RUNTIME && api.ActivityEnableRuntimeApi != nullptr) {
    for (uint32_t cbid : FilteredRuntimeCbids()) api.ActivityEnableRuntimeApi(cbid, 0);
  }
  if (kind == CUPTI_ACTIVITY_KIND_DRIVER && api.ActivityEnableDriverApi != nullptr) {
    // Keep launches and VMM calls only; the rest never enters the buffers.
    for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
      if (!IsKeptDriverCbid(cbid)) api.ActivityEnableDriverApi(cbid, 0);
    }
  }
  if (kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION &&
      api.ActivityEnableCudaEventDeviceTimestamps != nullptr) {
    api.ActivityEnableCudaEventDeviceTimestamps(1);
  }
}

absl::Status EnableStatus(const CuptiApi& api, CUptiResult r, CUpti_ActivityKind kind) {
  return CuptiCallStatus(api, r, absl::StrCat("cuptiActivityEnable(", CuptiKindName(kind), ")").c_str());
}

}  // namespace

absl::Status CuptiCallStatus(const CuptiApi& api, CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return absl::OkStatus();
  std::string hint;
  if (r == CUPTI_ERROR_UNKNOWN) hint = " (no NVIDIA driver or GPU?)";
  return absl::UnavailableError(absl::StrCat("CUPTI ", what, " failed: ", CuptiResultName(api, r),
                                             hint, "; GPU activity disabled, CPU trace continues"));
}

const char* CuptiKindName(CUpti_ActivityKind k) {
  switch (k) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "CONCURRENT_KERNEL";
    case CUPTI_ACTIVITY_KIND_MEMCPY: return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return "MEMCPY2";
    case CUPTI_ACTIVITY_KIND_MEMSET: return "MEMSET";
    case CUPTI_ACTIVITY_KIND_RUNTIME: return "RUNTIME";
    case CUPTI_ACTIVITY_KIND_DRIVER: return "DRIVER";
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return "SYNCHRONIZATION";
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return "EXTERNAL_CORRELATION";
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return "OVERHEAD";
    case CUPTI_ACTIVITY_KIND_MEMORY2: return "MEMORY2";
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return "MEMORY_POOL";
    default: return "?";
  }
}

bool WantsGpuActivity(const Config& config) {
  constexpr ActivitySet kGpuTypes =
      ActivityBit(ActivityType::kKernel) | ActivityBit(ActivityType::kGpuMemcpy) |
      ActivityBit(ActivityType::kGpuMemset) | ActivityBit(ActivityType::kCudaRuntime) |
      ActivityBit(ActivityType::kCudaDriver) | ActivityBit(ActivityType::kCudaSync) |
      ActivityBit(ActivityType::kOverhead) | ActivityBit(ActivityType::kMemory);
  return config.activities_enabled &&
         ((config.activity_types & kGpuTypes) != 0 || config.profile_memory);
}

bool WantsMemory(const Config& config) {
  return config.profile_memory || (config.activity_types & ActivityBit(ActivityType::kMemory));
}

absl::Status CuptiKinds::EnableForConfig(const CuptiApi& api, const Config& config) {
  const bool memory = WantsMemory(config);
  for (const KindChoice& c : kKinds) {
    if ((config.activity_types & ActivityBit(c.type)) == 0 &&
        !(memory && c.type == ActivityType::kMemory)) {
      continue;
    }
    if (std::find(enabled_.begin(), enabled_.end(), c.kind) != enabled_.end()) continue;
    const CUptiResult r = api.ActivityEnable(c.kind);
    if (r != CUPTI_SUCCESS) return EnableStatus(api, r, c.kind);
    enabled_.push_back(c.kind);
    ApplyFilters(api, c.kind);
  }
  return absl::OkStatus();
}

absl::Status CuptiKinds::EnableTotals(const CuptiApi& api) {
  for (CUpti_ActivityKind k : kTotalsKinds) {
    const CUptiResult r = api.ActivityEnable(k);
    if (r != CUPTI_SUCCESS) return EnableStatus(api, r, k);
    enabled_.push_back(k);
  }
  return absl::OkStatus();
}

void CuptiKinds::ResumeTotals(const CuptiApi& api) {
  for (CUpti_ActivityKind k : kTotalsKinds) {
    if (api.ActivityEnable(k) == CUPTI_SUCCESS) enabled_.push_back(k);
  }
}

void CuptiKinds::DisableAll(const CuptiApi* api) {
  if (api == nullptr) return;
  for (CUpti_ActivityKind k : enabled_) {
    const CUptiResult r = api->ActivityDisable(k);
    if (r != CUPTI_SUCCESS) {
      KAIROS_LOG_VERBOSE("cuptiActivityDisable(%s): %s", CuptiKindName(k),
                         CuptiResultName(*api, r).c_str());
    }
  }
  enabled_.clear();
}

}  // namespace kairos::internal
