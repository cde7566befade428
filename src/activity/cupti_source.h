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
// Composition: this class is thin; each job has its own module, owned here (one each):
//   cupti_trace.h          the tracing session: subscription, linking, converter, window
//                          edges, memory baselines, loss counters, Collect's merge;
//   cupti_totals.h         telemetry's kernel and copy totals;
//   cupti_nccl_capture.h   NCCL operations taken by the kernel launch that carries them;
//   cupti_clock.h          the clock heartbeat, the closing-edge anchor, CUPTI's timebase;
//   cupti_kinds.h          which activity kinds are on (the window's or telemetry's).
// The window's phase is the sequence of TraceSource calls the session makes; no phase is kept
// here beside the session's Scheduler (cupti_trace.h says what each call sets for the
// callbacks on other threads).
// Threading: TraceSource methods on the session thread; StartActivityTotals and
// TakeActivityTotals on the telemetry thread. mu_ serialises what changes CUPTI's recording
// (kinds, buffer callbacks, the pool's worker) between the two. CUPTI calls the buffer
// callbacks from any thread and the API callback on application threads (see cupti_buffers.h).
#ifndef KAIROS_SRC_ACTIVITY_CUPTI_SOURCE_H_
#define KAIROS_SRC_ACTIVITY_CUPTI_SOURCE_H_

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "activity/cupti_api.h"
#include "activity/cupti_buffers.h"
#include "activity/cupti_clock.h"
#include "activity/cupti_kinds.h"
#include "activity/cupti_nccl_capture.h"
#include "activity/cupti_totals.h"
#include "activity/cupti_trace.h"
#include "util/clock.h"
#include "config/config.h"  // the sources take a Config (trace_source.h only declares it)
#include "model/trace_source.h"

namespace kairos::internal {

struct CuptiSourceOptions {
  // libcupti to load ("" = the process's own, then the usual sonames). The process root
  // passes the environment's KAIROS_CUPTI_LIBRARY (EnvSettings::cupti_library).
  std::string library_path;
  // CUDA_INJECTION64_PATH is set (EnvSettings::cuda_injected): the process uses CUDA even
  // before a CUDA library is loaded (ProcessUsesCuda).
  bool cuda_injected = false;
  // Use this table instead of loading libcupti (tests). Must outlive the source.
  const CuptiApi* api = nullptr;
  size_t buffer_size = 0;   // 0 = 1 MiB (about 5 k kernel records)
  size_t buffer_count = 0;  // 0 = 1 + ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB / buffer_size
  size_t max_events = 0;    // 0 = ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB worth of 40-byte events
  // Id of the CPU range open on the calling thread (internal::CurrentCpuRangeId); pushed as
  // a CUPTI external correlation id around each runtime/driver call. nullptr = no linking
  // (and no API callbacks: no NCCL launch capture either).
  uint32_t (*current_range_id)() = nullptr;
  // Device properties for devices that appear (nullptr = QueryDeviceInfo).
  bool (*device_info)(uint32_t device, DeviceInfo* out) = nullptr;
  // The session's window anchor log (clock.h), which the source anchors while a window is
  // open (CUDA calls and buffers are its heartbeat) and at the window's close. nullptr: none.
  WindowAnchors* window_anchors = nullptr;
  // The root's NCCL plugin tallies (nccl_collectives.h), for nccl_ops_without_launch. nullptr:
  // none counted.
  const NcclTallies* nccl_tallies = nullptr;
  // Runs once, on the loading thread, after libcupti was loaded (its static objects exist):
  // the root registers its exit flush again there, so that at exit the window is written
  // while libcupti is still whole. nullptr: nothing.
  void (*after_library_loaded)() = nullptr;
};

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

  // ---- Telemetry totals (docs/TELEMETRY.md, cupti_totals.h) ----
  using ActivityTotals = internal::ActivityTotals;
  // Any thread (the telemetry writer's). Loads CUPTI and enables the two kinds now when no
  // window holds CUPTI (else after it). Returns false, with the reason, when CUPTI cannot.
  bool StartActivityTotals(std::string* why);
  // Any thread. Flushes CUPTI, waits for the records to be counted, and returns (and
  // forgets) `device`'s totals of records that ended before `end_ns` (Unix ns, a whole
  // millisecond); later ones stay for the next call.
  ActivityTotals TakeActivityTotals(uint32_t device, int64_t end_ns);

  // Why GPU data is missing from the current session ("" when it is being recorded).
  const std::string& missing_reason() const { return trace_.missing_reason(); }
  bool active() const { return trace_.active(); }

  // CUPTI callback plumbing (static C callbacks forward here). The API callback is the hot
  // path (application threads): relaxed loads, no lock, no syscall.
  void OnApiCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata);

 private:
  // GPU tracing is off for this window: logs `reason` once, keeps it for Collect, and undoes
  // what warm-up had set up.
  void Fail(std::string reason);
  // The resolved CUPTI table (loads it on first use), or nullptr with `why`.
  const CuptiApi* ResolveApi(std::string* why);
  // The process may load CUPTI: a test table, an explicit library, or CUDA in the process.
  bool MayUseCupti() const;
  // Warm-up after CUPTI is resolved: subscription, buffers and store, kinds.
  absl::Status SetUpWindow(const CuptiApi& api, const Config& config);
  // The buffer pool's geometry and the event store for `config`.
  absl::Status AllocateBuffers(const CuptiApi& api, const Config& config);
  // Timestamps, the buffer worker and callbacks, the API callbacks, the window's kinds.
  absl::Status EnableRecording(const CuptiApi& api, const Config& config);
  // Reset() without resuming the between-window totals (StartWarmup sets up its own).
  void Teardown();
  // Telemetry's kinds between windows when the totals are on; `when` names the moment in the
  // warning if that fails (the totals are then incomplete for good). mu_ held.
  void ResumeTotalsLocked(const char* when);
  // Enables kernel and memcpy records for the totals outside windows (mu_ held).
  bool EnableTotalsLocked(std::string* why);
  // The buffer worker's entry: heartbeat, totals, the trace's handler.
  void OnBuffer(const uint8_t* buffer, size_t valid_size);

  CuptiSourceOptions options_;
  std::optional<CuptiApi> loaded_;  // when loaded by this source
  const CuptiApi* api_ = nullptr;   // once resolved (options_.api or &*loaded_)
  std::string load_error_;          // sticky: a missing libcupti is not retried every session
  CuptiTrace trace_;
  CuptiTotals totals_;
  NcclLaunchCapture nccl_;
  CuptiClock clock_;
  std::mutex mu_;  // see Threading above
  CuptiKinds kinds_;                 // guarded by mu_
  bool window_holds_cupti_ = false;  // StartWarmup (GPU asked for) to Reset; guarded by mu_
};

// The process-wide buffer pool CUPTI's callbacks draw from (never destroyed: CUPTI may call
// the callbacks at any time after registration).
CuptiBufferPool& ProcessCuptiPool();
// fork() child only, called by the process root's one after-fork hook: replaces the process
// pool with a fresh empty one, which keeps the parent's (leaked, not freed: its worker thread
// does not exist in the child) reachable.
void ReplaceProcessCuptiPoolAfterFork();

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CUPTI_SOURCE_H_
