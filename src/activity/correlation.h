// File: correlation.h
// Layer: kairos_activity (CUDA builds only). The end-of-session join of converted CUPTI
// records: runtime/driver call <-> GPU activity by correlation id, call <-> CPU range by
// external correlation id, ac2g flow flags, then the move of converter-local events, names,
// tracks and side-table rows into the session's TraceData.
// Records arrive in any order and across buffers, so the join runs once over everything.
// Threading: session thread only (inside CuptiSource::Collect).
#ifndef KAIROS_SRC_ACTIVITY_CORRELATION_H_
#define KAIROS_SRC_ACTIVITY_CORRELATION_H_

#include <cstdint>
#include <vector>

#include "activity/cupti_convert.h"
#include "model/trace_data.h"

namespace kairos::internal {

struct MergeResult {
  uint64_t gpu_events = 0;        // kernel + memcpy + memset events merged
  uint64_t uncorrelated_gpu = 0;  // GPU events whose launching call is not in the trace
  uint64_t flows = 0;             // GPU events that got an ac2g flow (kFlagFlowIn)
  uint64_t linked_to_cpu = 0;     // events that got an external id (CPU range)
  uint64_t memory_without_call = 0;  // memory events whose API call is not in the trace
  std::vector<uint32_t> devices;  // device ordinals that appear, ascending
};

// Finalizes `converter`, correlates its events and appends them to `data` (thread tracks are
// shared with the CPU source's tracks for the same tid; pid = data.pid). Leaves the converter
// holding moved-from state: Clear() it before reuse.
MergeResult MergeIntoTraceData(CuptiConverter& converter, TraceData& data);

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CORRELATION_H_
