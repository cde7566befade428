// File: cupti_source.h
// Layer: kairos_activity (CUDA builds only). The TraceSource "cuda": GPU activity through
// CUPTI. StartWarmup loads CUPTI, subscribes (to link runtime calls to CPU ranges), registers
// the buffer callbacks, prefaults the buffer pool and enables the activity kinds; buffers
// completed during warm-up are discarded. StartRecording opens the window; StopRecording
// disables every kind and flushes; Collect converts, correlates and appends to the TraceData;
// Reset unsubscribes and frees. Between sessions CUPTI activity is off, so the job pays
// nothing, unless telemetry asked for kernel and copy totals (StartActivityTotals): then
// kernel and memcpy records stay enabled between windows, only counted.
// When GPU tracing is impossible (no CUPTI, no driver, unknown CUPTI version, another CUPTI
// subscriber, a failing CUPTI call) the source logs one warning, stays out of the way, and
// Collect writes the reason into the trace (metadata "gpu_data_missing_reason" and
// TraceData::warnings); the CPU trace is unaffected. StartWarmup therefore returns OK in that
// case: GPU unavailability is a property of the trace, not a session failure.
// Threading: TraceSource methods on the session thread. CUPTI calls the buffer callbacks
// from any thread and the API callback on application threads (see cupti_buffers.h).
#ifndef KAIROS_SRC_ACTIVITY_CUPTI_SOURCE_H_
#define KAIROS_SRC_ACTIVITY_CUPTI_SOURCE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "activity/collective_launch_table.h"
#include "activity/correlation.h"
#include "activity/cupti_api.h"
#include "activity/cupti_tally.h"
#include "activity/cupti_buffers.h"
#include "activity/cupti_convert.h"
#include "activity/cupti_link_table.h"
#include "clock.h"
#include "config/config.h"  // the sources take a Config (trace_source.h only declares it)
#include "memory_totals.h"
#include "trace_source.h"

namespace kairos::internal {

struct CuptiSourceOptions {
  // libcupti to load ("" = the process's own, then the usual sonames). The process root
  // passes Env().cupti_library (KAIROS_CUPTI_LIBRARY).
  std::string library_path;
  // Use this table instead of loading libcupti (tests). Must outlive the source.
  const CuptiApi* api = nullptr;
  size_t buffer_size = 0;   // 0 = 1 MiB (about 5 k kernel records)
  size_t buffer_count = 0;  // 0 = 1 + ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB / buffer_size
  size_t max_events = 0;    // 0 = ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB worth of 40-byte events
  // Id of the CPU range open on the calling thread (internal::CurrentCpuRangeId); pushed as
  // a CUPTI external correlation id around each runtime/driver call. nullptr = no linking
  // (and no CUPTI subscription).
  uint32_t (*current_range_id)() = nullptr;
  // Device properties for devices that appear (nullptr = QueryDeviceInfo).
  bool (*device_info)(uint32_t device, DeviceInfo* out) = nullptr;
  // The session's window anchor log (clock.h), which the source anchors while a window is
  // open (CUDA calls and buffers are its heartbeat) and at the window's close. nullptr: none.
  WindowAnchors* window_anchors = nullptr;
};

// External correlation kind kairos pushes its CPU range ids under.
inline constexpr CUpti_ExternalCorrelationKind kKairosCorrelationKind =
    CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;

class CuptiSource : public TraceSource {
 public:
  explicit CuptiSource(CuptiSourceOptions options);
  ~CuptiSource() override;
  const char* name() const override { return "cuda"; }
  // Loads libcupti and resolves its entry points now, on the calling thread (idempotent; a
  // failure is kept and reported at the next warm-up). StartWarmup does it otherwise. The
  // process root calls it at init when the environment configures a trace, so the
  // controller's warm-up never needs the dynamic loader's lock, which a thread running
  // library constructors inside dlopen() holds (CUDA_INJECTION64_PATH loads kairos so).
  void LoadApi();
  absl::Status StartWarmup(const Config& config) override;
  void StartRecording(int64_t window_start_ns) override;
  void StopRecording(int64_t window_end_ns) override;
  void Collect(TraceData& data) override;
  // The exact closing edge (a step boundary or the duration's end), set before Collect.
  void SetWindowEdges(const WindowEdges& edges) override;
  void Reset() override;

  // ---- Telemetry totals (docs/TELEMETRY.md) ----
  // Kernels completed and bytes copied per device, by the record's end time. Once started,
  // kernel and memcpy records are enabled between windows too (nothing else: no API
  // records), and every record of those kinds, inside a window or not, is also counted here.
  struct ActivityTotals {
    int64_t kernels = 0;
    int64_t memcpy_bytes = 0;
    // GPU time with a kernel or copy running (their union), at 1/64 ms resolution, before
    // the edge: telemetry's gpu_busy_pct where PM sampling is unavailable.
    int64_t busy_ns = 0;
    // False once counting could not be resumed after a window (then for good): the totals
    // miss records and must not be reported as counts.
    bool complete = true;
  };
  // Any thread (the telemetry writer's). Loads CUPTI and enables the two kinds now when no
  // window holds CUPTI (else after it). Returns false, with the reason, when CUPTI cannot.
  bool StartActivityTotals(std::string* why);
  // Any thread. Flushes CUPTI, waits for the records to be counted, and returns (and
  // forgets) `device`'s totals of records that ended before `end_ns` (Unix ns, a whole
  // millisecond); later ones stay for the next call.
  ActivityTotals TakeActivityTotals(uint32_t device, int64_t end_ns);

  // Why GPU data is missing from the current session ("" when it is being recorded).
  const std::string& missing_reason() const { return missing_reason_; }
  bool active() const { return active_; }

  // CUPTI callback plumbing (static C callbacks forward here).
  void OnApiCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata);

 private:
  // kStarting: StartRecording converts the buffers warm-up left behind; what the window filter
  // drops from them is counted as warm-up (warmup_drops_).
  enum class Phase : uint8_t { kIdle = 0, kWarmup, kStarting, kRecording, kStopped, kCounting };
  void Fail(std::string reason);
  absl::Status Call(CUptiResult r, const char* what);
  absl::Status EnableKinds(const Config& config);
  void DisableKinds();
  void OnBuffer(const uint8_t* buffer, size_t valid_size);
  void AddStats(TraceData& data);
  // CUPTI clock minus CLOCK_REALTIME, measured now (0 without cuptiGetTimestamp).
  int64_t MeasureCuptiOffset() const;
  // Reset() without resuming the between-window totals (StartWarmup sets up its own).
  void Teardown();
  // Launches stop taking NCCL operations (window end, failure, teardown).
  void StopNcclCapture();
  // The ring's NCCL operations whose kernel is in `data`, and their counters.
  void AddCollectives(TraceData& data);
  // Enables kernel and memcpy records for the totals outside windows (totals_mu_ held).
  bool EnableTotalsLocked(std::string* why);

  CuptiSourceOptions options_;
  std::optional<CuptiApi> loaded_;  // when loaded by this source
  const CuptiApi* api_ = nullptr;
  std::string load_error_;  // sticky: a missing libcupti is not retried every session
  std::unique_ptr<CuptiConverter> converter_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::vector<CUpti_ActivityKind> enabled_;
  bool active_ = false;
  // Memory recording (PROFILE_PROFILE_MEMORY or ACTIVITY_TYPES memory): MEMORY2 and
  // MEMORY_POOL records, and each device's memory in use when the window opened.
  bool memory_on_ = false;
  std::vector<MemoryBaseline> memory_baselines_;
  int64_t memory_baseline_ns_ = 0;  // when they were read (session clock)
  // [memory] totals, counter tracks, baseline metadata and stats (Collect).
  void AddMemory(TraceData& data, const MergeResult& m);
  std::string missing_reason_;
  std::atomic<Phase> phase_{Phase::kIdle};
  std::atomic<bool> linking_{false};
  // (correlation id, CPU range id) pairs written by the API-enter callback on application
  // threads, no allocation. They link calls to ranges even where CUPTI emits the
  // EXTERNAL_CORRELATION record after the exit callback has popped the id. Mapped at
  // warm-up (zero pages: nothing touched but a small head); overflow is counted.
  CuptiLinkTable links_;
  // NCCL operations by the correlation id of the kernel launch that carried them
  // (nccl_collectives.h): filled by the same callback.
  CollectiveLaunchTable collectives_;
  uint64_t nccl_unlaunched_at_start_ = 0;  // NcclCounters().without_launch at the window start
  uint64_t nccl_unlaunched_ = 0;           // ... and how many more by the window's end
  // Kernel launches take the NCCL operations their thread enqueued (warm-up to window end).
  std::atomic<bool> nccl_capture_{false};
  int64_t window_start_ = 0;
  int64_t window_end_ = INT64_MAX;  // in CUPTI's timebase
  // The window's closing edge in the session clock: launches after it are not in the window.
  int64_t window_edge_end_ns_ = INT64_MAX;
  uint64_t enabled_raw_ = 0;      // raw clock once StartWarmup had enabled every kind
  int64_t enabled_late_ns_ = 0;   // how long after the window's start edge that was
  int64_t cupti_offset_ = 0;         // CUPTI clock - CLOCK_REALTIME, measured at the edges
  bool own_timestamps_ = false;      // CUPTI took our timestamp callback: offset 0 by definition
  // Counters written by the worker, read by the session thread after Drain().
  uint64_t warmup_discarded_ = 0;
  uint64_t late_records_ = 0;
  uint64_t cupti_dropped_ = 0;
  uint64_t refused_at_start_ = 0;
  uint64_t foreign_at_start_ = 0;
  // What the conversion of warm-up buffers at StartRecording dropped (records before the
  // window): reported as cupti_warmup_discarded, not as window losses.
  ConvertStats warmup_drops_;
  bool flush_failed_ = false;
  // Telemetry totals. totals_mu_ serialises the pool's start/stop (session thread) with
  // TakeActivityTotals' flush and drain (telemetry thread); tally_mu_ guards the buckets
  // (worker thread vs Take).
  std::mutex totals_mu_;
  std::atomic<bool> totals_on_{false};
  std::atomic<bool> totals_failed_{false};  // could not resume after a window
  bool window_holds_cupti_ = false;  // between StartWarmup and Reset (totals_mu_)
  std::mutex tally_mu_;
  CuptiTally tally_;  // guarded by tally_mu_
};

// The process-wide buffer pool CUPTI's callbacks draw from (never destroyed: CUPTI may call
// the callbacks at any time after registration).
CuptiBufferPool& ProcessCuptiPool();
// fork() child only, called by the process root's one after-fork hook: replaces the process
// pool with a fresh empty one and returns the parent's copy (nullptr if none), which is
// leaked, not freed: its worker thread does not exist in the child.
CuptiBufferPool* ReplaceProcessCuptiPoolAfterFork();

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CUPTI_SOURCE_H_
