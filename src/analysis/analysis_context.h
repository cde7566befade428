// File: analysis_context.h
// Layer: kairos_analysis (internal). The index one Analyze() call builds once and every
// sub-module (breakdown, hotspots, steps, antipatterns) reads: the window, each device's GPU
// work in time order, launches by correlation id, steps and the idle gaps.
// Threading: built and read by the calling thread only.
#ifndef KAIROS_SRC_ANALYSIS_ANALYSIS_CONTEXT_H_
#define KAIROS_SRC_ANALYSIS_ANALYSIS_CONTEXT_H_

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/kernel_class.h"
#include "analysis/summary.h"
#include "model/gpu_counters.h"
#include "model/trace_data.h"

namespace kairos::internal {

enum class GpuCategory : uint8_t { kCompute = 0, kCommunication, kMemcpy, kMemset };

// One per GPU op in the window, so 16 bytes: its interval clipped to the window is computed
// from the event when read (AnalysisContext::Start, End), not stored.
struct GpuOp {
  const Event* event;
  GpuCategory category;
  KernelClass name_class;  // kernels: ClassifyKernelName of its name; others: kOther
};

struct Interval {
  int64_t start_ns;
  int64_t end_ns;
};

// One per idle gap of a device (about one per GPU op), so kept to 24 bytes: the end is the
// next op's start (a gap is only found before an op that starts inside the window, so its
// start is not clipped), and the rest of the gap's split (kernel wait, other) is summed
// where it is classified (breakdown.cc) and read nowhere else.
struct IdleGap {
  int64_t start_ns;
  int64_t host_wait_ns;  // leading part: the next op's launch call had not returned
  const Event* next;  // the GPU op that ended the gap; nullptr for the trailing gap
  int64_t End(int64_t window_end_ns) const { return next != nullptr ? next->start_ns : window_end_ns; }
};

struct DeviceWork {
  uint32_t device = 0;
  std::vector<GpuOp> ops;  // sorted by start
  std::vector<IdleGap> gaps;
};

struct Step {
  int64_t number;
  int64_t start_ns, end_ns;
};

struct Launch {
  int64_t start_ns, end_ns;
};

// The runtime/driver calls of the GPU ops whose launch is needed (about one per GPU op), by
// correlation id: two sorted arrays, 20 bytes an entry, where a hash map of the same entries
// took about 50 (24-byte slots at half load).
class LaunchTable {
 public:
  const Launch* Find(uint32_t correlation) const {
    if (!dense_.empty()) {
      if (correlation < base_ || correlation - base_ >= dense_.size()) return nullptr;
      const uint32_t slot = dense_[correlation - base_];
      return slot != 0 ? &launches_[slot - 1] : nullptr;
    }
    auto it = std::lower_bound(ids_.begin(), ids_.end(), correlation);
    if (it == ids_.end() || *it != correlation) return nullptr;
    return &launches_[static_cast<size_t>(it - ids_.begin())];
  }

 private:
  friend void ResolveLaunches(struct AnalysisContext& ctx);
  // CUPTI's correlation ids come from one counter, so a window's are usually dense: then
  // dense_[id - base_] is 1 + the index of id's call in launches_ (0: none), with no sort and
  // no binary search per lookup (they were half of the breakdowns). Otherwise ids_ is sorted
  // and distinct and launches_[i] is ids_[i]'s call.
  uint32_t base_ = 0;
  std::vector<uint32_t> dense_;
  std::vector<uint32_t> ids_;
  std::vector<Launch> launches_;
};

struct AnalysisContext {
  const TraceData* data = nullptr;
  const AnalysisOptions* options = nullptr;
  int64_t window_start_ns = 0, window_end_ns = 0;
  std::vector<DeviceWork> devices;  // devices with GPU work in the window, by id
  std::vector<uint32_t> idle_devices;  // devices the trace names with none, by id
  LaunchTable launches;  // runtime/driver calls by correlation (ResolveLaunches)
  std::vector<Step> steps;          // complete ProfilerStep#N ranges, by start
  std::vector<uint8_t> is_step_name;  // by StringId: 1 = "ProfilerStep#N"
  // Measured PM-sampling means per kernel (gpu_counters.h), by correlation: the trace's own
  // table, or recomputed from its GPU counter tracks (a trace read back from disk).
  std::vector<KernelCounters> measured;
  const KernelCounters* Measured(uint32_t correlation) const;
  bool IsStepName(StringId id) const { return id < is_step_name.size() && is_step_name[id]; }
  int64_t window_ns() const { return window_end_ns - window_start_ns; }
  std::string_view Name(const Event& e) const { return data->strings.Get(e.name); }
  // A GPU op's interval clipped to the window.
  int64_t Start(const GpuOp& op) const { return std::max(op.event->start_ns, window_start_ns); }
  int64_t End(const GpuOp& op) const { return std::min(op.event->end_ns, window_end_ns); }
  const DeviceInfo* Device(uint32_t id) const;
};

AnalysisContext BuildContext(const TraceData& data, const AnalysisOptions& options);
// Fills ctx.launches with the runtime/driver calls of the GPU ops whose launch is needed
// (the op after each idle gap, small device-to-host copies): one pass over the host
// tracks with lookups into a small set, instead of indexing every launch.
void ResolveLaunches(AnalysisContext& ctx);
// Inline: called per event by most passes (out of line it was 2-3% of Analyze).
inline bool IsCpuRange(EventKind kind) {
  return kind == EventKind::kCpuOp || kind == EventKind::kUserAnnotation;
}
// Parses "ProfilerStep#N"; returns false for other names.
bool ParseStepName(std::string_view name, int64_t* number);
EventRef MakeRef(const AnalysisContext& ctx, const Event& e);
// Nearest-rank percentile (q in (0, 1]) of `values`, which it reorders.
int64_t NearestRank(std::vector<int64_t>& values, double q);
DurationStats StatsOf(std::vector<int64_t>& durations);

// Sub-modules, one job each.
void ComputeBreakdowns(AnalysisContext& ctx, Summary* summary);       // breakdown.cc
void ComputeSmProxies(const AnalysisContext& ctx, Summary* summary);  // sm_metrics.cc
void ComputeHotspots(const AnalysisContext& ctx, Summary* summary);   // hotspots.cc
void ComputeCollectives(const AnalysisContext& ctx, Summary* summary);  // collectives.cc
// PM-sampling values per device and for the top kernels (after ComputeHotspots).
void ComputeMeasuredCounters(const AnalysisContext& ctx, Summary* summary);  // sm_metrics.cc
void ComputeSteps(const AnalysisContext& ctx, Summary* summary);      // steps.cc
void ComputeHostSummary(const AnalysisContext& ctx, Summary* summary);  // host_metrics.cc
// Mean of the named counter over the samples inside `gaps` (sorted); -1 if none.
double CounterMeanIn(const AnalysisContext& ctx, std::string_view track,
                     const std::vector<Interval>& gaps);
void AttributeHostWaits(const AnalysisContext& ctx, Summary* summary);  // host_wait.cc
// Top Python functions (python_frames.cc, python_frames.h).
void ComputePythonFunctions(const AnalysisContext& ctx, Summary* summary);
void ComputePythonFlame(const AnalysisContext& ctx, Summary* summary);  // python_frames.h
void DetectAntipatterns(const AnalysisContext& ctx, Summary* summary);  // antipatterns*.cc
void ComputeTimelines(const AnalysisContext& ctx, Summary* summary);    // timeline.cc
// Memory summaries and findings from [memory] events, after DetectAntipatterns.
void ComputeMemory(const AnalysisContext& ctx, Summary* summary);      // memory.cc
// FLOPs attributed to kernels, TFLOP/s and MFU (docs/FLOPS.md).
void ComputeEfficiency(const AnalysisContext& ctx, Summary* summary);   // compute.cc
// Step phases and the data_loader_bound detector (phases.cc).
void ComputePhases(const AnalysisContext& ctx, Summary* summary);
void DataLoaderBound(const AnalysisContext& ctx, Summary* summary);
void WriteVerdicts(const AnalysisOptions& options, Summary* summary);    // summary.cc

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ANALYSIS_ANALYSIS_CONTEXT_H_
