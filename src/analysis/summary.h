// File: summary.h
// Layer: kairos_analysis. Automated trace comprehension: turns a finished TraceData into a
// Summary (per-device temporal and idle breakdowns, SM proxies, hotspots, step statistics,
// antipattern findings with evidence and advice, one verdict per device) and renders it as
// JSON (schema in docs/SUMMARY.md) or readable text. Reads only TraceData, so a trace
// rebuilt from a JSON file gives the same summary as the session that wrote it.
// Threading: pure functions of their arguments; safe to call from any thread.
#ifndef KAIROS_SRC_ANALYSIS_SUMMARY_H_
#define KAIROS_SRC_ANALYSIS_SUMMARY_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analysis/kernel_class.h"
#include "model/trace_data.h"

namespace kairos {

// Detector thresholds. docs/SUMMARY.md gives the reasoning behind every default.
struct AnalysisOptions {
  size_t top_n = 10;                          // rows per hotspot table
  size_t max_examples = 3;                    // example events per finding
  // Precision floor: a finding whose time (Finding::time_ns) is below this share of the
  // window is dropped, however clearly its pattern matched.
  double min_window_share = 0.02;
  // Series for the HTML report (not part of the JSON summary): per-device utilisation in
  // this many time bins (0 = none), and every step's duration.
  size_t timeline_bins = 0;
  bool keep_step_series = false;
  // The report's Python flame graph: at most this many call-tree nodes (0 = none). Nodes
  // under python_flame_min_share of all Python time are left out (their time stays in their
  // parent's).
  size_t python_flame_nodes = 0;
  double python_flame_min_share = 0.002;
  // Steps: a step is an outlier when it exceeds the mean of the other steps by more than
  // step_outlier_sigma of their standard deviation and the median by step_outlier_min_excess.
  double step_outlier_sigma = 5.0;
  double step_outlier_min_excess = 0.2;
  size_t step_outlier_min_steps = 5;
  // launch_bound
  int64_t small_op_ns = 10000;
  uint64_t small_op_min_count = 100;
  double small_op_min_fraction = 0.5;
  // small_copies
  uint64_t small_copy_bytes = 65536;
  uint64_t small_copy_min_count = 50;
  // pageable_copies
  uint64_t pageable_min_count = 10;
  double pageable_min_window_fraction = 0.01;
  // gpu_idle_host_bound
  double idle_min_fraction = 0.3;
  // The "well tuned" verdict: no finding and every device idle below this share.
  double well_tuned_max_idle = 0.1;
  double host_wait_min_share = 0.5;
  uint64_t host_wait_min_intervals = 3;  // one long wait is set-up, not a feeding pattern
  double iowait_high_pct = 10.0;
  // excessive_sync
  uint64_t sync_min_count = 10;
  double sync_min_window_fraction = 0.05;
  // insufficient_concurrency / low_occupancy
  double kernel_time_min_fraction = 0.2;
  uint64_t kernel_min_count = 10;
  double low_occupancy_pct = 25.0;
  // A small grid whose measured SM activity is at least this is not "insufficient".
  double measured_busy_sm_pct = 90.0;
  // per_step_copy_back
  uint64_t copy_back_max_bytes = 1024;
  double copy_back_min_step_fraction = 0.8;
  size_t copy_back_min_steps = 3;
  // long_initialization
  double init_step_factor = 3.0;
  int64_t init_min_ns = 10000000;
  // Memory ([memory] events, docs/MEMORY.md). memory_headroom: peak allocated below this
  // share of the device; oom_risk: peak at or above this share.
  double memory_headroom_max_share = 0.5;
  double memory_oom_min_share = 0.9;
  // leak_suspect / alloc_in_step_loop: at least this many complete steps with memory events.
  size_t memory_min_steps = 3;
  // fragmentation: at the reserved peak, reserved - allocated above this share of reserved
  // and this many bytes.
  double fragmentation_min_share = 0.3;
  int64_t fragmentation_min_bytes = int64_t{256} << 20;
  size_t memory_top_sites = 5;  // rows of not-freed allocation sites per device
  // tensor_cores_idle: fp32 GEMM-class kernels take at least this share of the device's
  // kernel time; or PM sampling's tensor-pipe activity is below the percentage below.
  double tensor_idle_min_share = 0.3;
  double tensor_idle_max_active_pct = 1.0;
  // data_loader_bound: data loading is at least this share of the steps' time while the GPU
  // is busy less than this share of it.
  double data_loader_min_share = 0.2;
  double data_loader_max_gpu_busy = 0.5;
  // MFU's peak in TFLOP/s for every dtype instead of the table (callers pass
  // KAIROS_PEAK_TFLOPS, read by src/config/env.cc); <= 0 = the table.
  double peak_tflops = -1;
};

// Nearest-rank statistics over a set of durations.
struct DurationStats {
  uint64_t count = 0;
  int64_t total_ns = 0, mean_ns = 0, median_ns = 0, p95_ns = 0, max_ns = 0;
};

struct DeviceSummary {
  uint32_t device = 0;
  int64_t window_ns = 0;
  int64_t busy_ns = 0;  // union of all GPU work on the device
  double busy_fraction = 0.0;
  // Temporal breakdown (sums to window_ns): each instant goes to the first of compute,
  // communication, memcpy, memset that is active, else to idle.
  int64_t compute_ns = 0, communication_ns = 0, memcpy_ns = 0, memset_ns = 0, idle_ns = 0;
  // Idle breakdown (sums to idle_ns).
  int64_t idle_host_wait_ns = 0, idle_kernel_wait_ns = 0, idle_other_ns = 0;
  uint64_t kernel_count = 0, memcpy_count = 0, memset_count = 0;
  double est_occupancy_pct = -1.0;  // kernel-time-weighted; -1 = unknown
  double blocks_per_sm = -1.0;      // kernel-time-weighted; -1 = unknown
  // Measured by PM sampling over the window (gpu_counters.h); -1 = not sampled.
  double measured_sm_active_pct = -1.0;   // SM efficiency: share of time SMs were active
  double measured_occupancy_pct = -1.0;   // achieved occupancy, weighted by SM activity
  double measured_tensor_active_pct = -1.0;
  double measured_dram_throughput_pct = -1.0;
  uint64_t pm_samples = 0;
  // Kernel time (sum of durations, not a union) per KernelClass, indexed by the enum.
  std::array<int64_t, kNumKernelClasses> class_kernel_ns{};
  std::string host_wait_top_range;  // CPU range with the most self time during host waits
  // With Python stacks: the user's Python frame (innermost, not a library's) with the most
  // time during host waits, as "step (train.py:42)"; empty without.
  std::string host_wait_top_python;
  std::string verdict;
};

struct Hotspot {
  std::string name;
  DurationStats stats;
  // Kernels only: time-weighted means of the launches that got PM-sampling values, the
  // launch-configuration estimate beside them; -1 = unknown.
  double measured_sm_active_pct = -1.0;
  double measured_occupancy_pct = -1.0;
  double est_occupancy_pct = -1.0;
};

// A Python function of the user's program or its libraries (python_function events):
// inclusive time (once per function when it recurses) and self time (not inside another
// Python frame), clipped to the window.
// One node of the Python call tree merged over threads and calls (the report's flame graph):
// a function reached by the same chain of callers. Node 0 is the root, all Python threads.
struct PythonFlameNode {
  std::string name;   // "file(line): function", as in the trace ("" for the root)
  std::string label;  // "function (file:line)"
  int32_t parent = -1;  // index in Summary::python_flame, before this node; -1 for the root
  uint32_t depth = 0;   // 0 for the root
  int64_t total_ns = 0;  // inclusive, clipped to the window, summed over threads and calls
  uint64_t calls = 0;
  bool user = false;  // the user's code, not a library's (IsUserPythonFrame)
};

struct PythonFunctionStat {
  std::string name;  // "file(line): function", as in the trace
  uint64_t calls = 0;
  int64_t total_ns = 0, self_ns = 0;
  int64_t gpu_ns = 0;  // GPU ops launched under it (inclusive, once per op)
};

// NCCL operations of one kind on one device (TraceData::collectives joined with their
// kernels): what they moved and how fast. A collective kernel's time includes waiting for
// the slowest rank, so on a rank that waits the bandwidths are lower bounds (the cross-rank
// summary separates wait from transfer).
struct CollectiveSummary {
  uint32_t device = 0;
  std::string name;          // "allreduce", ..., "coalesced" (CollectiveTraceName)
  std::string dtype;         // "Float", ...; "" when unknown or mixed
  int32_t group_size = 0;
  uint64_t calls = 0;
  uint64_t bytes = 0;        // sum over calls of the message size (below); 0 if dtype unknown
  uint64_t median_bytes = 0;
  int64_t time_ns = 0;       // sum of the kernels' durations
  // bytes / time, and that times NCCL's bus factor (all-reduce 2(n-1)/n, all-gather,
  // reduce-scatter and all-to-all (n-1)/n, others 1), as nccl-tests reports them; -1 when
  // the size or time is unknown.
  double algbw_gbps = -1.0;
  double busbw_gbps = -1.0;
  // Bus bandwidth of the fastest call: close to the link's when some call did not wait (the
  // mean above mixes in every wait); -1 when unknown.
  double best_busbw_gbps = -1.0;
};

struct StepOutlier {
  int64_t step = 0;  // N of ProfilerStep#N
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  double sigma = 0.0;  // excess over the other steps' mean in their standard deviations
};

struct StepSummary {
  uint64_t count = 0;
  int64_t mean_ns = 0, median_ns = 0, stdev_ns = 0, min_ns = 0, max_ns = 0;
  int64_t first_step_start_ns = 0;
  std::vector<StepOutlier> outliers;
};

struct HostSummary {
  bool present = false;
  double cpu_util_mean_pct = 0.0, cpu_iowait_mean_pct = 0.0, process_cpu_mean_pct = 0.0;
};

struct EventRef {
  uint64_t id = 0;     // correlation id, else the CPU range's external id, else 0
  int64_t ts_ns = 0;
  std::string name;
};

struct Finding {
  std::string id;      // stable detector id, e.g. "launch_bound"
  std::string title;
  int64_t device = -1; // -1 = not device-specific
  std::string confidence;    // "high", "medium" or "low" (rules in docs/SUMMARY.md)
  int64_t time_ns = 0;       // the time the finding concerns (per detector, docs/SUMMARY.md)
  double window_share = 0;   // time_ns / window, capped at 1
  std::vector<std::pair<std::string, double>> evidence;  // in output order
  std::vector<EventRef> examples;
  std::string recommendation;
};

// Utilisation of one device over the window in equal bins: the share of each bin that was
// compute, communication (and not compute), memory copies/sets (and neither), by the same
// priority as the temporal breakdown; busy = their sum.
struct DeviceTimeline {
  uint32_t device = 0;
  int64_t bin_ns = 0;
  std::vector<float> compute, communication, memory;
};

struct StepSample {
  int64_t step = 0;
  int64_t start_ns = 0, duration_ns = 0;
};

// Allocations made in the window and not freed in it, by the CPU range (or API call) that
// made them.
struct MemorySite {
  std::string name;
  std::string python;  // with Python stacks: the user's line that allocated ("train.py:42 in step")
  uint64_t count = 0;
  int64_t bytes = 0;
};

// One memory (Device Type, Device Id) of the [memory] events: absolute totals as the events
// carry them (docs/MEMORY.md).
struct MemorySummary {
  int32_t device = -1;       // -1 = host
  uint8_t device_type = 1;   // 0 = CPU, 1 = CUDA
  // A framework allocator's events (IsAllocatorMemory), else CUPTI's driver allocations; a
  // device with both has one entry of each, never one mixed total.
  bool allocator = false;
  uint64_t allocs = 0, frees = 0;
  int64_t allocated_bytes = 0, freed_bytes = 0;  // sums over the window's events
  int64_t start_allocated = 0;   // before the first event (the baseline)
  int64_t end_allocated = 0;     // after the last
  int64_t peak_allocated = 0, peak_reserved = 0;
  int64_t peak_ts_ns = 0;
  int64_t peak_step = -1;        // ProfilerStep#N holding the peak; -1 = none
  std::string peak_site;         // innermost CPU range (or API call) at the peak
  std::string peak_python;       // with Python stacks: the user's line at the peak; "" = none
  uint64_t device_total_bytes = 0;  // 0 = unknown
  double peak_share = -1.0;      // peak_allocated / device total; -1 = unknown
  uint64_t frees_before_window = 0;
  uint64_t not_freed_count = 0;
  int64_t not_freed_bytes = 0;
  std::vector<MemorySite> not_freed_sites;  // largest bytes first
  // Net bytes allocated in each complete step (allocations minus frees), by step.
  std::vector<std::pair<int64_t, int64_t>> step_growth;
  uint64_t sync_alloc_calls_in_steps = 0;  // non-async device allocations and frees in steps
};

// Compute efficiency (compute.cc, docs/FLOPS.md). An op's dtype picks the peak.
enum class Precision : uint8_t { kUnknown = 0, kFp32, kTf32, kFp16, kBf16, kFp8 };
const char* PrecisionId(Precision p);
// The dense datasheet peak of `dev` for `p` in TFLOP/s; -1 when the device or dtype is not in
// the table (never a guess).
double PeakTflops(const DeviceInfo& dev, Precision p);

struct OpCompute {
  std::string name;
  std::string precision;  // "fp32", ..., "mixed", "unknown"
  uint64_t count = 0;
  int64_t flops = 0;
  int64_t kernel_ns = 0;    // its kernels' time (sum of durations)
  double tflops = -1;       // flops / kernel_ns; -1 = no kernel
  double mfu = -1;          // time at peak / kernel_ns; -1 = unknown peak or no kernel
  double peak_ns = 0;       // (internal) sum of flops / peak
  bool peak_known = true;   // (internal)
};

struct StepCompute {
  int64_t step = 0;
  int64_t flops = 0;
  double tflops = -1;  // flops / the step's duration
  double mfu = -1;     // its GPU operators' time at peak / the step's duration
};

struct ComputeSummary {
  bool present = false;     // some operator in the window has FLOPs
  int64_t total_flops = 0;  // counted operators (outermost with FLOPs) in the window
  uint64_t op_count = 0;
  int64_t gpu_flops = 0;    // of the operators that launched kernels
  int64_t kernel_ns = 0;    // those kernels' time
  double window_tflops = -1;  // total_flops / window
  double kernel_tflops = -1;  // gpu_flops / kernel_ns
  double mfu = -1;            // sum(flops / peak(dtype)) / window; -1 when a peak is unknown
  std::string device_name;
  std::string peak_source;    // "table" or "KAIROS_PEAK_TFLOPS"
  std::array<double, kNumKernelClasses> class_flops{};
  std::array<int64_t, kNumKernelClasses> class_ns{};  // kernels with attributed FLOPs
  std::vector<OpCompute> top_ops;  // by FLOPs
  std::vector<StepCompute> steps;
  std::array<double, kNumKernelClasses> class_peak_ns{};  // attributed flops / peak
  std::array<bool, kNumKernelClasses> class_peak_unknown{};
  std::vector<int64_t> step_flops;  // (internal) by ctx step index
  std::vector<double> step_peak_ns;  // (internal)
  std::vector<uint8_t> step_peak_unknown;  // (internal)
};

// Step phases (phases.cc): numbered by priority (an instant covered by several goes to the
// lowest number).
inline constexpr int kPhaseDataLoading = 0, kPhaseOptimizer = 1, kPhaseBackward = 2,
                     kPhaseForward = 3, kPhaseOther = 4, kNumPhases = 5;
const char* PhaseId(int phase);  // "data_loading", "optimizer", "backward", "forward", "other"

struct StepPhases {
  int64_t step = 0;
  int64_t duration_ns = 0;
  std::array<int64_t, kNumPhases> host_ns{};  // sums to duration_ns
  std::array<int64_t, kNumPhases> gpu_ns{};   // kernel time launched from each phase
};

struct PhaseSummary {
  bool present = false;  // some complete step in the window
  std::array<int64_t, kNumPhases> mean_host_ns{}, mean_gpu_ns{};
  std::vector<StepPhases> steps;
};
// Whether any step time went to a named phase. A job that marks its steps but runs none of
// the ranges the phases are read from (a C or JAX loop with its own range names) has every
// instant in `other`: the text summary and the report then say the steps were not split
// instead of printing four zeros beside a range the user named "forward".
inline bool PhasesRecognised(const PhaseSummary& p) {
  for (int k = 0; k < kNumPhases; ++k)
    if (k != kPhaseOther && p.mean_host_ns[static_cast<size_t>(k)] > 0) return true;
  for (const StepPhases& r : p.steps)
    for (int k = 0; k < kNumPhases; ++k)
      if (k != kPhaseOther && r.host_ns[static_cast<size_t>(k)] > 0) return true;
  return false;
}

// The most (Device Type, Device Id) groups the memory analysis summarises (GPU ids in order,
// then the host): more than a process sees (8 GPUs x 7 MIG instances is 56), and a bound on
// the summary and report of a trace whose [memory] events name thousands of devices.
inline constexpr size_t kMaxMemoryDevices = 64;

struct Summary {
  int64_t window_start_ns = 0, window_end_ns = 0;
  uint64_t event_count = 0;
  std::string verdict;                 // one line for the whole trace
  std::vector<std::string> verdicts;   // one per device with work, then one for all idle ones
  std::vector<DeviceSummary> devices;  // devices with GPU work in the window, by id
  std::vector<uint32_t> idle_devices;  // devices known to the trace with none, by id
  std::vector<Hotspot> top_kernels, top_memcpys, top_cpu_ranges;
  std::vector<PythonFunctionStat> top_python_functions;  // by total time; empty without stacks
  std::vector<CollectiveSummary> collectives;  // by device, then time (largest first)
  StepSummary steps;
  HostSummary host;
  std::vector<Finding> findings;       // largest window_share first
  std::vector<DeviceTimeline> timelines;  // AnalysisOptions::timeline_bins > 0 only
  std::vector<StepSample> step_series;    // AnalysisOptions::keep_step_series only
  // AnalysisOptions::python_flame_nodes > 0 only: depth-first, children by time (largest
  // first); empty without Python frames. python_flame_cut counts frames whose node fell
  // under the node cap while building (their time stays in their parent's).
  std::vector<PythonFlameNode> python_flame;
  uint64_t python_flame_cut = 0;
  std::vector<MemorySummary> memory;      // [memory] events by (Device Type, Device Id)
  // Devices past kMaxMemoryDevices (a read trace can name any number): not summarised, counted.
  uint64_t memory_devices_left_out = 0, memory_events_left_out = 0;
  ComputeSummary compute;                 // FLOPs, TFLOP/s, MFU (docs/FLOPS.md)
  PhaseSummary phases;                    // where each step went (docs/SUMMARY.md)
};

Summary Analyze(const TraceData& data, const AnalysisOptions& options = {});
// Deterministic: equal summaries give byte-equal strings.
std::string SummaryToJson(const Summary& summary);
std::string SummaryToText(const Summary& summary);
// Markdown for pasting into an issue or a pull request: verdict, tables, findings.
std::string SummaryToMarkdown(const Summary& summary);
// "1-3,5": sorted device ids with runs collapsed.
std::string DeviceList(const std::vector<uint32_t>& ids);

}  // namespace kairos

#endif  // KAIROS_SRC_ANALYSIS_SUMMARY_H_
