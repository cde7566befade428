// File: nvtx_injection.h
// Layer: kairos_activity. kairos as an NVTX tool: NvtxAttach fills the function slots of one
// NVTX instance (one per shared object that uses NVTX) with handlers that record through the
// same per-thread path as kairos ranges (cpu_recorder.h), and NvtxSource reports NVTX loss
// counters in each trace. bindings/c/nvtx_injection.cc exports InitializeInjectionNvtx2.
// Threading: NvtxAttach may run concurrently from several NVTX instances; it only writes
// slots of the instance that called it. Handlers run on application threads: when nothing
// records, a push/pop pair costs the disabled check plus a thread-local depth update.
#ifndef KAIROS_SRC_ACTIVITY_NVTX_INJECTION_H_
#define KAIROS_SRC_ACTIVITY_NVTX_INJECTION_H_

#include <cstdint>

#include "activity/nvtx_abi.h"
#include "trace_source.h"

namespace kairos::internal {

// Installs the kairos handlers into the NVTX instance that exposes `get_export_table`.
// Returns 1 on success, 0 (NVTX then unloads the tool for that instance) if the instance
// offers no callback table. Idempotent: process-global state is created once.
int NvtxAttach(nvtx::GetExportTableFn get_export_table);

// NvtxSource
//
// The "nvtx" TraceSource: adds nvtx_* counters to TraceData::stats (pops without a push in
// the window; domains created, filtered and overflowed; init calls). The ranges themselves
// are collected by the "cpu" source.
class NvtxSource : public TraceSource {
 public:
  const char* name() const override { return "nvtx"; }
  absl::Status StartWarmup(const Config& config) override;
  void StartRecording(int64_t window_start_ns) override;
  void StopRecording(int64_t window_end_ns) override;
  void Collect(TraceData& data) override;
  void Reset() override {}

 private:
  uint64_t pops_at_start_ = 0;
  uint64_t pops_at_stop_ = 0;
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_NVTX_INJECTION_H_
