// File: cupti_nccl_capture.cc
// Layer: kairos_activity (CUDA builds only). See cupti_nccl_capture.h.
#include "activity/cupti_nccl_capture.h"

#include <algorithm>
#include <vector>

#include "util/log.h"

namespace kairos::internal {

void NcclLaunchCapture::Create() {
  // Zero pages, not a zeroed array: the first warm-up of a CUDA process used to spend tens of
  // ms faulting in and clearing memory while kairos_start() waited.
  if (!table_.Create()) {
    KAIROS_LOG_WARNING("cannot allocate the NCCL collective table; collective kernels carry "
                       "no message sizes (counted in nccl_collective_overflow)");
  }
}

void NcclLaunchCapture::BeginWindow() {
  unlaunched_at_start_ = Unlaunched();
  table_.BeginWindow();
}

void NcclLaunchCapture::EndWindow() {
  Stop();
  unlaunched_ = Unlaunched() - unlaunched_at_start_;
}

void NcclLaunchCapture::Stop() {
  capture_.store(false, std::memory_order_relaxed);
  table_.EndWindow();
}

void NcclLaunchCapture::AddTo(TraceData& data) const {
  std::vector<CollectiveRecord> ring = table_.Collect();
  if (ring.empty() && table_.overflow() == 0) return;
  // The ring also holds warm-up's operations: keep those whose kernel is in the trace.
  std::vector<uint32_t> kernels;
  for (const auto& track : data.events_by_track) {
    for (const Event& e : track) {
      if (e.kind == EventKind::kKernel && e.correlation != 0) kernels.push_back(e.correlation);
    }
  }
  std::sort(kernels.begin(), kernels.end());
  for (const CollectiveRecord& r : ring) {
    if (std::binary_search(kernels.begin(), kernels.end(), r.correlation)) {
      data.collectives.push_back(r);
    }
  }
  data.AddStat("nccl_collective_launches", data.collectives.size());
  data.AddStat("nccl_collective_overflow", table_.overflow());
  // Operations NCCL enqueued in the window without a kernel launch kairos saw.
  if (unlaunched_ > 0) data.AddStat("nccl_ops_without_launch", unlaunched_);
}

}  // namespace kairos::internal
