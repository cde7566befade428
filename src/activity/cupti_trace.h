// File: cupti_trace.h
// Layer: kairos_activity (CUDA builds only). The tracing session of the "cuda" source: one
// trace window's GPU records. It holds the CUPTI subscription whose API callback links
// runtime calls to CPU ranges, the converter (event store) the buffers go into, the link
// table, the window's edges in CUPTI's timebase, the memory baselines, and the window's loss
// counters; Collect-side it merges all of that into the TraceData.
// Owner: CuptiSource, which calls it only from its TraceSource methods. It keeps no phase of
// its own; what other threads need is set by those calls:
// - recording(): "is a window recording" (the API callback beats the clock). Set at the end
//   of StartRecording (Open), cleared by StopRecording (StopLinking) and at teardown.
// - linking(): the API callback links calls to the CPU range open around them. Set when
//   warm-up has every kind on (Activate), cleared with recording().
// - the buffer handler: what the buffer worker does with a completed buffer. Each call
//   installs the one for the buffers that complete until the next call: StartWarmup discards
//   and counts (TakeWarmupBuffers), StartRecording converts what warm-up left, counting its
//   drops as warm-up's, then converts (Open), StopRecording counts late records (Close), and
//   teardown, or telemetry's counting after a window, ignores them (IgnoreBuffers).
// Threading: LinkEnter/LinkExit on application threads (no lock, no syscall, no allocation);
// OnBuffer on the buffer worker; everything else on the session thread. The counters the
// worker writes are read on the session thread after a pool Drain().
#ifndef KAIROS_SRC_ACTIVITY_CUPTI_TRACE_H_
#define KAIROS_SRC_ACTIVITY_CUPTI_TRACE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "activity/correlation.h"
#include "activity/cupti_api.h"
#include "activity/cupti_buffers.h"
#include "activity/cupti_convert.h"
#include "activity/cupti_link_table.h"
#include "model/memory_totals.h"
#include "model/trace_data.h"
#include "model/trace_source.h"

namespace kairos::internal {

// External correlation kind kairos pushes its CPU range ids under.
inline constexpr CUpti_ExternalCorrelationKind kKairosCorrelationKind =
    CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;

// A window's loss counters: written by the buffer worker (and Open/Close), read by the session
// thread after a pool Drain(). Zeroed at each warm-up.
struct WindowCounts {
  uint64_t warmup_discarded = 0;
  uint64_t late_records = 0;
  uint64_t cupti_dropped = 0;
  uint64_t refused_at_start = 0;  // the pool's refused() when the window opened
  uint64_t foreign_at_start = 0;  // ... and its foreign()
  // What the conversion of warm-up buffers at Open dropped (filtered, unknown, bad; the
  // records before the window are the converter's before_window): reported as
  // cupti_warmup_discarded, not as window losses.
  ConvertStats warmup_drops;
  bool flush_failed = false;
};

class CuptiTrace {
 public:
  using RangeIdFn = uint32_t (*)();
  using DeviceInfoFn = bool (*)(uint32_t device, DeviceInfo* out);
  // `current_range_id`: the CPU range open on the calling thread (nullptr: no linking).
  // `device_info`: properties of devices that appear.
  CuptiTrace(RangeIdFn current_range_id, DeviceInfoFn device_info)
      : current_range_id_(current_range_id), device_info_(device_info) {}

  // ---- StartWarmup ----
  // A new window: forgets the previous one's reason, counters, edges and memory baselines.
  void Begin();
  // Why this window has no GPU data (also the failure paths' reason).
  void SetMissingReason(std::string reason) { missing_reason_ = std::move(reason); }
  const std::string& missing_reason() const { return missing_reason_; }
  // Subscribes `callback` (kairos' API callback) as the process's CUPTI subscriber "kairos".
  absl::Status Subscribe(const CuptiApi& api, CUpti_CallbackFunc callback, void* userdata);
  // Turns on the runtime and driver API callbacks of the subscription.
  absl::Status EnableCallbacks(const CuptiApi& api);
  // The event store, before any kind is enabled: nothing is allocated once records flow.
  void CreateConverter(const CuptiApi& api, size_t max_events);
  // The (correlation, range) link table: zero pages, a small head prefaulted.
  void CreateLinks(size_t max_events);
  // Buffers from here on are warm-up's: discarded, counted.
  void TakeWarmupBuffers() { handler_.store(&DiscardWarmup, std::memory_order_release); }
  // Every kind is on (stamped: GPU work before this instant may be missing); `memory`: the
  // window records memory (baselines at Open, totals at Collect).
  void Activate(bool memory);

  // ---- StartRecording ----
  // The window opens at `window_start` (CUPTI's timebase): converts what warm-up left from
  // that instant on, then every buffer; linking starts.
  void Open(const CuptiApi& api, int64_t window_start, CuptiBufferPool& pool);

  // ---- StopRecording ----
  void StopLinking() {
    recording_.store(false, std::memory_order_relaxed);
    linking_.store(false, std::memory_order_relaxed);
  }
  // The window closed at `window_end` (CUPTI's timebase; kinds already disabled): forced
  // flush, drain, CUPTI's drop count; later buffers are late records.
  void Close(const CuptiApi& api, int64_t window_end, CuptiBufferPool& pool);
  // Buffers from here on are none of this window's business.
  void IgnoreBuffers() { handler_.store(&Ignore, std::memory_order_release); }

  // ---- SetWindowEdges / Collect / Reset ----
  void SetEdges(const WindowEdges& edges);
  void ClearEdges();
  // The missing-data reason into the trace (warning and metadata), when there is one.
  void AddMissingReason(TraceData& data) const;
  // Links, clock shift (`cupti_offset`), closing edge, merge, memory totals.
  MergeResult Merge(TraceData& data, int64_t cupti_offset);
  // Devices that appear, the CUPTI version, and the window's loss counters and warnings.
  void AddDevicesAndStats(TraceData& data, const MergeResult& m, const CuptiApi& api,
                          const CuptiBufferPool& pool);
  // Unsubscribes (when subscribed) with `api`.
  void Unsubscribe(const CuptiApi* api);
  // GPU tracing is off for this window (a failure, or teardown): no linking, buffers ignored.
  void Deactivate();
  // Frees the event store and the link table's pages.
  void Release();

  // Warm-up enabled every kind (Activate) and no failure or teardown came since; the event
  // store exists whenever this is true.
  bool active() const { return active_; }
  bool recording() const { return recording_.load(std::memory_order_relaxed); }
  // Calls are linked to the CPU range open around them from warm-up on (Activate), not only
  // from Open: an iteration window starts at the step boundary and its CPU ranges record from
  // the warm-up boundary, but this thread opens the window later (2.9 ms on an H100 running a
  // PyTorch loop: a whole first step of kernels came without their ops' External ids).
  // Outside CPU recording current_range_id() is 0, so warm-up links nothing else.
  bool linking() const { return linking_.load(std::memory_order_relaxed); }

  // ---- Any thread ----
  // Buffer worker: the handler the last session-thread call installed.
  void OnBuffer(const uint8_t* buffer, size_t valid_size) {
    handler_.load(std::memory_order_acquire)(*this, buffer, valid_size);
  }
  // Buffer worker, when it has caught up: while buffers are converted (the window starting or
  // recording), the event store is made resident ahead of the next buffer.
  void OnIdle() {
    const BufferFn h = handler_.load(std::memory_order_acquire);
    if (h == &Convert || h == &ConvertWarmupLeftovers) converter_->PrepareStore();
  }
  // CUPTI's API-enter callback (application thread): pushes the CPU range open on this thread
  // as the call's external correlation id and records the pair, while `recording`.
  void LinkEnter(const CUpti_CallbackData& d, bool recording);
  // API-exit: pops what enter pushed, even if linking stopped in between.
  void LinkExit(const CUpti_CallbackData& d);

 private:
  using BufferFn = void (*)(CuptiTrace&, const uint8_t*, size_t);
  static void Ignore(CuptiTrace&, const uint8_t*, size_t) {}
  static void DiscardWarmup(CuptiTrace& t, const uint8_t* b, size_t n);
  static void ConvertWarmupLeftovers(CuptiTrace& t, const uint8_t* b, size_t n);
  static void Convert(CuptiTrace& t, const uint8_t* b, size_t n);
  static void CountLate(CuptiTrace& t, const uint8_t* b, size_t n);
  // [memory] totals, counter tracks, baseline metadata and stats.
  void AddMemory(TraceData& data, const MergeResult& m);
  void AddLossStats(TraceData& data, const CuptiBufferPool& pool);

  const RangeIdFn current_range_id_;
  const DeviceInfoFn device_info_;
  const CuptiApi* api_ = nullptr;  // the subscription's (push/pop on application threads)
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::unique_ptr<CuptiConverter> converter_;
  // (correlation id, CPU range id) pairs written by the API-enter callback on application
  // threads, no allocation. They link calls to ranges even where CUPTI emits the
  // EXTERNAL_CORRELATION record after the exit callback has popped the id. Mapped at
  // warm-up (zero pages: nothing touched but a small head); overflow is counted.
  CuptiLinkTable links_;
  std::atomic<bool> recording_{false};
  std::atomic<bool> linking_{false};
  std::atomic<BufferFn> handler_{&Ignore};
  bool active_ = false;
  std::string missing_reason_;
  // Memory recording: each device's memory in use when the window opened, read when.
  bool memory_on_ = false;
  std::vector<MemoryBaseline> memory_baselines_;
  int64_t memory_baseline_ns_ = 0;  // session clock
  int64_t window_start_ = 0;
  int64_t window_end_ = INT64_MAX;  // in CUPTI's timebase
  // The window's closing edge in the session clock: launches after it are not in the window.
  int64_t window_edge_end_ns_ = INT64_MAX;
  uint64_t enabled_raw_ = 0;     // raw clock once warm-up had enabled every kind
  int64_t enabled_late_ns_ = 0;  // how long after the window's start edge that was
  WindowCounts counts_;
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CUPTI_TRACE_H_
