// File: telemetry.h
// Layer: kairos_counters. Always-on telemetry (KAIROS_TELEMETRY_INTERVAL_SECS=N): outside
// and during trace windows, a rolling per-GPU aggregate of PM-sampling counters at a coarse
// interval, written every N seconds as one JSON line per GPU to KAIROS_TELEMETRY_FILE
// (docs/TELEMETRY.md has the schema). While a trace window samples counters itself
// (pm_source.h), telemetry pauses its own samplers (CUPTI allows one PM-sampling session per
// GPU) and is fed the window's samples instead, so it keeps running through traces.
// Steps come from the iteration counter; step times from stamps the step hook leaves in a
// ring (TelemetryNoteStep).
// Threading: one writer thread of its own; Feed/Pause/Resume come from the session runner.
// mu_ guards all state.
#ifndef KAIROS_SRC_COUNTERS_TELEMETRY_H_
#define KAIROS_SRC_COUNTERS_TELEMETRY_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "counters/line_log.h"
#include "counters/pm_backend.h"
#include "model/memory_totals.h"

namespace kairos {

// Step stamps for step_time_ms_p50. The step hook (kairos_step, optimizer steps) stores its
// raw clock reading for step n in the ring of the telemetry writer that runs; the telemetry
// thread reads the stamps of each interval's steps. The ring belongs to the Telemetry object
// (allocated by Start); the pointer the step hook loads is not telemetry's: it is a slot of
// the session's step state (TelemetryOptions::step_slot), so a process without telemetry
// pays one load per step and holds no ring.
inline constexpr size_t kTelemetryStepRing = 4096;  // steps per interval with a known time
struct TelemetryStepRing {
  std::atomic<uint64_t> raw[kTelemetryStepRing] = {};
};
// The step hook's side: `ring` is the slot's value (nullptr: no writer runs).
inline void TelemetryNoteStep(TelemetryStepRing* ring, int64_t n, uint64_t raw) {
  if (__builtin_expect(ring != nullptr, 0))
    ring->raw[static_cast<uint64_t>(n) % kTelemetryStepRing].store(raw, std::memory_order_relaxed);
}

// Median of the step times of steps (first, last] from the stamps in `ring`: step n lasted
// stamp[n] - stamp[n-1]. Steps whose stamps were overwritten (more than the ring holds),
// unset, or not increasing are skipped; nullopt when none is left.
std::optional<double> MedianStepMs(const TelemetryStepRing& ring, int64_t first, int64_t last,
                                   double ns_per_tick);

// The metrics telemetry samples: GPU busy (graphics/compute engine active) plus the four
// defaults of the PM source. A fresh list per call (the Telemetry object keeps its copy).
std::vector<std::string> TelemetryMetrics();

// One GPU's aggregate over one telemetry interval. Means are time-weighted over the sampled
// part of the interval; nullopt where unknown.
struct TelemetryRecord {
  int64_t ts_ns = 0;        // end of the interval, Unix ns
  std::string host;
  int64_t pid = 0;
  std::optional<int64_t> job_id, rank;
  uint32_t device = 0;
  std::string gpu_uuid, gpu_name;  // "" = unknown (null in the line)
  int64_t interval_ns = 0;
  std::optional<double> gpu_busy_pct, sm_active_pct, achieved_occupancy_pct, tensor_active_pct,
      dram_throughput_pct;
  std::optional<int64_t> kernels, memcpy_bytes, steps;
  std::optional<double> step_time_ms_p50;
  // The process on the host: CPU time over the interval (% of one core; > 100 with several
  // busy threads) and resident memory at its end, from /proc/self/stat. Same on every GPU's line.
  std::optional<double> process_cpu_pct;
  std::optional<int64_t> process_rss_bytes;
  // Device memory of this GPU in use (total - free, cuMemGetInfo: every process's memory on
  // it, not only this one's) and its size, read at the interval's end; null when the process
  // has no active primary context on the GPU, and on the line written at exit.
  std::optional<int64_t> gpu_memory_used_bytes, gpu_memory_total_bytes;
  // Lines of earlier intervals that could not be written (a full disk); written only when
  // not 0, so a reader sees the gap where it happened.
  uint64_t lines_lost = 0;
};

// The line format's version (docs/TELEMETRY.md): 2 added schema_version, gpu_uuid, gpu_name,
// process_cpu_pct, process_rss_bytes; 3 added gpu_memory_used_bytes, gpu_memory_total_bytes.
inline constexpr int kTelemetrySchemaVersion = 3;

// Exactly the documented fields, in order, one line with no trailing newline.
std::string TelemetryLine(const TelemetryRecord& r);

// Rolling sums for one GPU: samples in, one record out per interval.
class TelemetryAggregator {
 public:
  // `metrics` names the values of each sample (any order; unknown names are ignored).
  void Add(const std::vector<std::string>& metrics, const PmSample& s);
  // Fills the PM fields of `r` from what was added since the last Take, then clears.
  void Take(TelemetryRecord* r);

 private:
  struct Sum {
    double weighted = 0, weight = 0;
  };
  Sum busy_, sm_, occ_, tensor_, dram_;
};

// Kernels completed and bytes copied on one GPU, from CUPTI activity records.
struct TelemetryActivity {
  int64_t kernels = 0;
  int64_t memcpy_bytes = 0;
  int64_t busy_ns = -1;  // union of kernel and copy time in the interval; < 0: unknown
  bool known = true;  // false: counting stopped (the fields are null)
};

struct TelemetryOptions {
  int64_t interval_ns = 0;        // > 0
  int64_t sample_interval_ns = 100000000;  // PM sampling period while outside windows
  std::string path;               // appended to; created 0644; "" = no file (sink only)
  // PATH is renamed to PATH.1 (replacing it) before it would grow past this; 0 = never.
  uint64_t max_file_bytes = 64u << 20;
  std::string host;
  int64_t pid = 0;
  std::optional<int64_t> job_id, rank;
  std::optional<uint32_t> device;  // CUPTI_PM_SAMPLING_DEVICE_ID, else every GPU
  std::function<std::unique_ptr<PmPlatform>()> platform;  // null: no PM sampling
  std::function<int64_t()> iterations;  // kairos_step count; null = steps unknown
  // Where the step hook finds this writer's step ring (the session's StepState::telemetry,
  // set by root.cc): published by Start, cleared by the destructor if still this writer's.
  // nullptr: no step is stamped (step_time_ms_p50 stays null). Needs `iterations`.
  std::atomic<TelemetryStepRing*>* step_slot = nullptr;
  // CUPTI kernel and copy records (the session root wires the CUPTI source): start counting
  // (false + reason: kernels and memcpy_bytes stay null), and take a device's totals of
  // records that ended before a time (Unix ns, whole ms). Null: unknown.
  std::function<bool(std::string* why)> activity_start;
  std::function<TelemetryActivity(uint32_t device, int64_t end_ns)> activity_take;
  std::function<int64_t()> clock;       // Unix ns; null = UnixNowNs
  // Raw clock ticks to ns for step stamps; 0 = measured over each interval from clock
  // anchors (TakeClockAnchor). Tests that note steps with ns stamps set 1.
  double step_ns_per_tick = 0;
  bool run_thread = true;               // false: tests call Tick()
  // Reads /proc/self/stat for the process fields (text, false when unreadable); null = the
  // real file. Tests inject captured text.
  std::function<bool(std::string* text)> read_proc_self_stat;
  // Telemetry begins (opens the file, starts samplers, counts steps) only once this says
  // the process is a training job; until then it costs a check every
  // kTelemetryReadyPollNs and leaves no file and no warning. Null: begin at Start.
  std::function<bool()> ready;
  // Device memory in use of the GPUs whose primary context the process already has
  // (QueryMemoryInUse, cupti_devices.h: never creates a context or allocates), called on the
  // writer thread once per interval, outside mu_ (it takes the dynamic loader's lock), never
  // from Finish (process exit: the driver may be going away). Null: the fields are null.
  std::function<std::vector<MemoryBaseline>()> device_memory;
};

// How often a process that is not (yet) a training job is looked at again (at first every
// 1/16 of it, doubling).
inline constexpr int64_t kTelemetryReadyPollNs = 200000000;

class Telemetry {
 public:
  Telemetry() = default;
  ~Telemetry();
  Telemetry(const Telemetry&) = delete;
  Telemetry& operator=(const Telemetry&) = delete;

  // Opens the file, starts the samplers (a GPU that cannot sample gets null counter fields and
  // one warning) and the writer thread. Error: the file cannot be opened. With
  // options.ready not (yet) true, only the thread starts; the rest waits for readiness (a
  // file error then is logged, not returned).
  absl::Status Start(TelemetryOptions options);
  bool running() const;
  // Writes the lines of the interval that ends at `now_ns` rounded down to a whole ms (the
  // thread's step; activity records are counted per ms of their end).
  void Tick(int64_t now_ns);

  // Where each interval's lines go besides the file: `kairos daemon --metrics-port` (the
  // daemon client sends them as one "tlm" datagram). Called on the writer thread with the
  // interval's lines (newline-terminated), under mu_: it must not block (one non-blocking
  // send). May be set before or after Start; replaces the previous one.
  using Sink = std::function<bool(const std::string& lines)>;
  void SetSink(Sink sink);

  // Process exit: stops the thread and writes the lines of the partial interval since the
  // last edge (a job shorter than one interval still gets its lines). Later calls do nothing.
  void Finish();

  // A trace window takes the GPUs' PM sampling: stop ours until Resume.
  void Pause();
  void Resume();
  // Samples the window's PM source decoded for `device`.
  void Feed(uint32_t device, const std::vector<std::string>& metrics,
            const std::vector<PmSample>& samples);

 private:
  struct Gpu {
    uint32_t device;
    std::unique_ptr<PmSampler> sampler;  // null while paused or when it cannot sample
    TelemetryAggregator agg;
    GpuIdentity identity;  // asked once, when telemetry begins
  };
  // Opens the file and starts what the interval lines need (Start, or the first time
  // `ready` says yes). Error: the file cannot be opened.
  absl::Status BeginLocked(bool late);
  // Begins when waiting and ready; true when telemetry is running (begun).
  bool BeginWhenReady();
  void StartSamplersLocked();
  // The process fields of the interval of `interval_ns` that ends now (0: only remember the
  // CPU ticks). Under mu_.
  std::pair<std::optional<double>, std::optional<int64_t>> ProcessFields(int64_t interval_ns);
  void PollLocked();
  void ThreadMain();
  // Tick, with the device memory read beforehand (`query_memory`, outside mu_) or left null.
  void TickWith(int64_t now_ns, bool query_memory);
  // One GPU's fields of the interval ending at `now_ns` into `r` (under mu_).
  void FillGpuLocked(Gpu& g, const std::vector<MemoryBaseline>& memory, int64_t now_ns,
                     TelemetryRecord* r);

  TelemetryOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  bool running_ = false, stop_ = false, paused_ = false;
  bool waiting_ = false;  // started, but `ready` has not said yes yet
  LineLog log_;
  std::unique_ptr<PmPlatform> platform_;
  std::vector<Gpu> gpus_;
  std::vector<PmSample> scratch_;
  const std::vector<std::string> metrics_ = TelemetryMetrics();  // what every sampler samples
  int64_t last_ns_ = 0;
  int64_t last_iterations_ = 0;
  bool activity_on_ = false;
  // Steps up to this one have had their time counted (the newest step's stamp may still be
  // in flight when an interval ends, so it is counted in the next one).
  int64_t steps_timed_ = 0;
  std::unique_ptr<TelemetryStepRing> steps_;  // published in options_.step_slot while running
  int64_t last_anchor_unix_ns_ = 0;
  uint64_t last_anchor_raw_ = 0;
  bool write_warned_ = false;  // one warning per run of failed writes
  // CPU ticks (utime + stime) of the process at the last edge; < 0 until first read.
  int64_t last_cpu_ticks_ = -1;
  Sink sink_;
  uint64_t sink_failures_ = 0;  // intervals the sink refused (the daemon's queue was full)
};

}  // namespace kairos

#endif  // KAIROS_SRC_COUNTERS_TELEMETRY_H_
