// File: cupti_nccl_capture.h
// Layer: kairos_activity (CUDA builds only). NCCL launch capture: each kernel launch on a
// thread takes the NCCL operations that thread just enqueued (nccl_collectives.h) and files
// them under the launch's CUPTI correlation id, so Collect can give the window's collective
// kernels their message sizes. Capture runs from warm-up on, not only while the window
// records: an iteration window opens at a step boundary before the session thread reaches
// StartRecording, and the first step's collectives are launched in between.
// Owner: CuptiSource (one per source). The capture flag is this module's own: on from
// StartCapture (warm-up) to EndWindow/Stop; the API callback reads it.
// Threading: OnApiEnter on application threads (CUPTI's API-enter callback: relaxed loads and
// stores, no lock, no syscall); everything else on the session thread.
#ifndef KAIROS_SRC_ACTIVITY_CUPTI_NCCL_CAPTURE_H_
#define KAIROS_SRC_ACTIVITY_CUPTI_NCCL_CAPTURE_H_

#include <atomic>
#include <cstdint>

#include <cupti.h>

#include "activity/collective_launch_table.h"
#include "activity/cupti_cbids.h"
#include "activity/nccl_collectives.h"
#include "model/trace_data.h"

namespace kairos::internal {

class NcclLaunchCapture {
 public:
  // `tallies`: the root's NCCL plugin tallies, for the window's nccl_ops_without_launch
  // (nullptr: none counted). Must outlive the capture.
  explicit NcclLaunchCapture(const NcclTallies* tallies = nullptr) : tallies_(tallies) {}
  // Warm-up: maps the table (zero pages) once; warns when it cannot (every operation is then
  // counted in nccl_collective_overflow).
  void Create();
  // Warm-up: launches take operations from now on.
  void StartCapture() { capture_.store(true, std::memory_order_relaxed); }

  // Hot path, CUPTI's API-enter callback: the kernel of an NCCL operation this thread just
  // enqueued is the next launch here (the outermost call takes it when a runtime launch calls
  // the driver).
  void OnApiEnter(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint32_t correlation) {
    if (!capture_.load(std::memory_order_relaxed)) return;
    if (!(domain == CUPTI_CB_DOMAIN_RUNTIME_API ? IsKernelLaunchRuntimeCbid(cbid)
                                                : IsKernelLaunchDriverCbid(cbid))) {
      return;
    }
    CollectiveRecord op;
    if (TakePendingCollective(&op)) {
      op.correlation = correlation;
      table_.Add(op);
    }
  }

  // The window opens: what NCCL enqueues without a launch is counted from here.
  void BeginWindow();
  // The window closes: launches take nothing more; the window's unlaunched operations are
  // counted.
  void EndWindow();
  // Capture off without a window's count (a failed warm-up, teardown).
  void Stop();
  // The window's operations whose kernel is in `data` (the ring also holds warm-up's), and
  // the nccl_* stats.
  void AddTo(TraceData& data) const;
  // Forgets every operation (the table's storage stays: a late launch may still write).
  void Clear() { table_.Clear(); }

 private:
  uint64_t Unlaunched() const {
    return tallies_ != nullptr ? NcclCounters(*tallies_).without_launch : 0;
  }

  const NcclTallies* tallies_;
  CollectiveLaunchTable table_;
  std::atomic<bool> capture_{false};
  uint64_t unlaunched_at_start_ = 0;  // the tallies' without_launch at the window start
  uint64_t unlaunched_ = 0;           // ... and how many more by the window's end
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CUPTI_NCCL_CAPTURE_H_
