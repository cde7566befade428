// File: gpu_counters.h
// Layer: kairos_model. What GPU hardware-counter samples (CUPTI PM sampling, src/counters/
// pm_source.h) mean once they are counter tracks in a TraceData: the metric names kairos
// knows by meaning, per-device means, and the attribution of samples to kernels. Shared by
// the PM source (kernel args at collect time), the writers and the analysis (which recompute
// from the tracks of a trace read back from disk), so every consumer agrees on one rule.
// Threading: pure functions over a const TraceData.
#ifndef KAIROS_SRC_GPU_COUNTERS_H_
#define KAIROS_SRC_GPU_COUNTERS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/trace_data.h"

namespace kairos {

// CUDA 13 metric names (the names real CUPTI PM sampling accepts on Ampere and later).
inline constexpr const char* kPmSmActive = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kPmOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr const char* kPmTensorActive =
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kPmDramThroughput =
    "dram__throughput.avg.pct_of_peak_sustained_elapsed";

// Kernel-event arg names (docs/COUNTERS.md).
inline constexpr const char* kArgSmActive = "SM active %";
inline constexpr const char* kArgOccupancy = "achieved occupancy %";
inline constexpr const char* kArgPmSamples = "PM samples";

// One sample as the interval it describes: a PM sample is stamped at its start and holds
// until the next sample of the same track; the last one lasts the track's median spacing.
struct CounterInterval {
  int64_t start_ns;
  int64_t end_ns;
  double value;
};

// The track of `metric` on `device`, or -1.
int64_t FindGpuCounterTrack(const TraceData& data, int32_t device, std::string_view metric);
// The samples of counter track `track` (data.counter_samples is sorted by time).
std::vector<CounterInterval> CounterIntervals(const TraceData& data, uint32_t track);

// Measured means over the window for one device; -1 where the metric was not sampled.
struct DeviceCounterMeans {
  double sm_active_pct = -1.0;
  // sm__warps_active is a percentage of *active* cycles, so the device mean weights each
  // sample by its SM-active fraction (an idle interval says nothing about occupancy).
  double occupancy_pct = -1.0;
  double tensor_active_pct = -1.0;
  double dram_throughput_pct = -1.0;
  uint64_t samples = 0;  // samples of the SM-active track (or of the first metric found)
};
DeviceCounterMeans MeanDeviceCounters(const TraceData& data, int32_t device);

// A kernel gets measured values when at least one sample is mostly (>= half of the sample's
// interval) covered by the kernel: the mean is over those samples. Shorter kernels share an
// interval with other work and get none rather than a number that is not theirs.
inline constexpr double kMinSampleCoverage = 0.5;

// Per-kernel means for every kernel event on a GPU stream of a device with SM-active or
// occupancy tracks; sorted by correlation id. Kernels with no correlation id are skipped.
std::vector<KernelCounters> AttributeKernelCounters(const TraceData& data);

// The row of `correlation` in data.kernel_counters, or nullptr.
const KernelCounters* FindKernelCounters(const TraceData& data, uint32_t correlation);

}  // namespace kairos

#endif  // KAIROS_SRC_GPU_COUNTERS_H_
