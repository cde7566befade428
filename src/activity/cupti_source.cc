// File: cupti_source.cc
// Layer: kairos_activity (CUDA builds only). See cupti_source.h.
// Threading: see cupti_source.h.
#include "activity/cupti_source.h"

#include "activity/cuda_presence.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "activity/correlation.h"
#include "activity/cupti_cbids.h"
#include "activity/cupti_devices.h"
#include "activity/gpu_annotation.h"
#include "activity/nccl_collectives.h"
#include "clock.h"
#include "log.h"

namespace kairos::internal {
namespace {

// 1 MiB (about 5 k kernel records): the pool keeps one with CUPTI, one spare and one being
// converted resident (prefaulted, so CUPTI's writes take no fault on an application thread),
// so this size sets most of kairos' memory in a window; 4 MiB buffers made that 12.6 MB
// (docs/PERFORMANCE.md, issue 29 item 2).
constexpr size_t kDefaultBufferSize = 1u << 20;
// Link table: at most 1 M pairs (8 MiB of address space); the first 64 KiB (8192 calls) are
// prefaulted in warm-up.
constexpr size_t kMaxLinks = size_t{1} << 20;
constexpr size_t kLinkPrefaultBytes = 64u << 10;
constexpr CUptiResult kMultipleSubscribers = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  CuptiBufferPool& pool = ProcessCuptiPool();
  *buffer = pool.Acquire();
  *size = *buffer != nullptr ? pool.buffer_size() : 0;
  *max_records = 0;  // fill the buffer
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  ProcessCuptiPool().Complete(buffer, valid_size);
}

void CUPTIAPI ApiCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* cbdata) {
  static_cast<CuptiSource*>(userdata)->OnApiCallback(domain, cbid, cbdata);
}

// CUPTI's default Linux timebase is CLOCK_REALTIME already; registering it explicitly makes
// GPU and CPU-side CUPTI records Unix ns on every platform (WSL defaults to MONOTONIC_RAW).
uint64_t CUPTIAPI UnixTimestamp() { return static_cast<uint64_t>(UnixNowNs()); }

struct KindChoice {
  ActivityType type;
  CUpti_ActivityKind kind;
};
// Kineto's default kinds (cuda13-cupti-nvtx-facts.md §8), keyed by ACTIVITY_TYPES.
constexpr KindChoice kKinds[] = {
    {ActivityType::kKernel, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
    {ActivityType::kGpuMemcpy, CUPTI_ACTIVITY_KIND_MEMCPY},
    {ActivityType::kGpuMemcpy, CUPTI_ACTIVITY_KIND_MEMCPY2},
    {ActivityType::kGpuMemset, CUPTI_ACTIVITY_KIND_MEMSET},
    {ActivityType::kCudaRuntime, CUPTI_ACTIVITY_KIND_RUNTIME},
    {ActivityType::kCudaDriver, CUPTI_ACTIVITY_KIND_DRIVER},
    {ActivityType::kCudaSync, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION},
    {ActivityType::kExternalCorrelation, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION},
    {ActivityType::kOverhead, CUPTI_ACTIVITY_KIND_OVERHEAD},
    // Only with memory recording (EnableKinds): allocations, frees, pool operations.
    {ActivityType::kMemory, CUPTI_ACTIVITY_KIND_MEMORY2},
    {ActivityType::kMemory, CUPTI_ACTIVITY_KIND_MEMORY_POOL},
};

const char* KindName(CUpti_ActivityKind k) {
  switch (k) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "CONCURRENT_KERNEL";
    case CUPTI_ACTIVITY_KIND_MEMCPY: return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return "MEMCPY2";
    case CUPTI_ACTIVITY_KIND_MEMSET: return "MEMSET";
    case CUPTI_ACTIVITY_KIND_RUNTIME: return "RUNTIME";
    case CUPTI_ACTIVITY_KIND_DRIVER: return "DRIVER";
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return "SYNCHRONIZATION";
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return "EXTERNAL_CORRELATION";
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return "OVERHEAD";
    case CUPTI_ACTIVITY_KIND_MEMORY2: return "MEMORY2";
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return "MEMORY_POOL";
    default: return "?";
  }
}

}  // namespace

namespace {
// Never destroyed, see the header. Replaced (the old one leaked) in a forked child, whose
// copy may have a mutex held by, or a worker that was, a thread that does not exist there.
// Created on first use: the first of racing threads wins, the others free theirs.
std::atomic<CuptiBufferPool*> g_pool{nullptr};
}  // namespace

CuptiBufferPool& ProcessCuptiPool() {
  CuptiBufferPool* pool = g_pool.load(std::memory_order_acquire);
  if (pool != nullptr) return *pool;
  auto* fresh = new CuptiBufferPool();
  if (g_pool.compare_exchange_strong(pool, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;
  return *pool;
}

CuptiBufferPool* ReplaceProcessCuptiPoolAfterFork() {
  CuptiBufferPool* old = g_pool.load(std::memory_order_relaxed);
  if (old == nullptr) return nullptr;  // never used: nothing inherited
  g_pool.store(new CuptiBufferPool(), std::memory_order_release);
  return old;  // the caller (the process root's fork hook) keeps it reachable
}

CuptiSource::CuptiSource(CuptiSourceOptions options) : options_(std::move(options)) {}

CuptiSource::~CuptiSource() {
  totals_on_.store(false);
  std::lock_guard<std::mutex> totals_lock(totals_mu_);
  Teardown();
}

void CuptiSource::Fail(std::string reason) {
  KAIROS_LOG_WARNING("%s", reason.c_str());
  missing_reason_ = std::move(reason);
  linking_.store(false, std::memory_order_relaxed);
  StopNcclCapture();
  DisableKinds();
  if (subscriber_ != nullptr && api_ != nullptr) {
    api_->Unsubscribe(subscriber_);
    subscriber_ = nullptr;
  }
  ProcessCuptiPool().Stop();
  phase_.store(Phase::kIdle, std::memory_order_release);
  active_ = false;
}

absl::Status CuptiSource::Call(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return absl::OkStatus();
  std::string hint;
  if (r == CUPTI_ERROR_UNKNOWN) hint = " (no NVIDIA driver or GPU?)";
  return absl::UnavailableError(absl::StrCat("CUPTI ", what, " failed: ",
                                             CuptiResultName(*api_, r), hint,
                                             "; GPU activity disabled, CPU trace continues"));
}

absl::Status CuptiSource::EnableKinds(const Config& config) {
  memory_on_ = config.profile_memory || (config.activity_types & ActivityBit(ActivityType::kMemory));
  for (const KindChoice& c : kKinds) {
    if ((config.activity_types & ActivityBit(c.type)) == 0 &&
        !(memory_on_ && c.type == ActivityType::kMemory)) {
      continue;
    }
    if (std::find(enabled_.begin(), enabled_.end(), c.kind) != enabled_.end()) continue;
    const CUptiResult r = api_->ActivityEnable(c.kind);
    if (r != CUPTI_SUCCESS) {
      return Call(r, absl::StrCat("cuptiActivityEnable(", KindName(c.kind), ")").c_str());
    }
    enabled_.push_back(c.kind);
    if (c.kind == CUPTI_ACTIVITY_KIND_RUNTIME && api_->ActivityEnableRuntimeApi != nullptr) {
      for (uint32_t cbid : FilteredRuntimeCbids()) api_->ActivityEnableRuntimeApi(cbid, 0);
    }
    if (c.kind == CUPTI_ACTIVITY_KIND_DRIVER && api_->ActivityEnableDriverApi != nullptr) {
      // Keep launches and VMM calls only; the rest never enters the buffers.
      for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
        if (!IsKeptDriverCbid(cbid)) api_->ActivityEnableDriverApi(cbid, 0);
      }
    }
    if (c.kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION &&
        api_->ActivityEnableCudaEventDeviceTimestamps != nullptr) {
      api_->ActivityEnableCudaEventDeviceTimestamps(1);
    }
  }
  return absl::OkStatus();
}

void CuptiSource::DisableKinds() {
  if (api_ == nullptr) return;
  for (CUpti_ActivityKind k : enabled_) {
    const CUptiResult r = api_->ActivityDisable(k);
    if (r != CUPTI_SUCCESS) {
      KAIROS_LOG_VERBOSE("cuptiActivityDisable(%s): %s", KindName(k),
                         CuptiResultName(*api_, r).c_str());
    }
  }
  enabled_.clear();
}

void CuptiSource::LoadApi() {
  if (options_.api != nullptr || loaded_.has_value() || !load_error_.empty()) return;
  absl::StatusOr<CuptiApi> api = LoadCuptiApi(options_.library_path);
  if (api.ok()) {
    loaded_ = *std::move(api);
  } else {
    load_error_ =
        absl::StrCat(api.status().message(), "; GPU activity disabled, CPU trace continues");
  }
}

absl::Status CuptiSource::StartWarmup(const Config& config) {
  std::lock_guard<std::mutex> totals_lock(totals_mu_);
  Teardown();
  window_holds_cupti_ = true;  // until Reset; the telemetry totals resume then
  missing_reason_.clear();
  warmup_discarded_ = late_records_ = cupti_dropped_ = 0;
  warmup_drops_ = ConvertStats{};
  flush_failed_ = false;
  memory_on_ = false;  // EnableKinds decides for this window
  memory_baselines_.clear();
  memory_baseline_ns_ = 0;
  window_start_ = 0;
  window_end_ = INT64_MAX;
  constexpr ActivitySet kGpuTypes =
      ActivityBit(ActivityType::kKernel) | ActivityBit(ActivityType::kGpuMemcpy) |
      ActivityBit(ActivityType::kGpuMemset) | ActivityBit(ActivityType::kCudaRuntime) |
      ActivityBit(ActivityType::kCudaDriver) | ActivityBit(ActivityType::kCudaSync) |
      ActivityBit(ActivityType::kOverhead) | ActivityBit(ActivityType::kMemory);
  if (!config.activities_enabled ||
      ((config.activity_types & kGpuTypes) == 0 && !config.profile_memory)) {
    // No GPU activity asked for: nothing is missing. Telemetry keeps counting meanwhile.
    window_holds_cupti_ = false;
    std::string why;
    if (totals_on_.load() && !EnableTotalsLocked(&why)) {
      KAIROS_LOG_WARNING("telemetry: cannot resume CUPTI kernel and copy records (%s); kernels "
                         "and memcpy_bytes are null from now on", why.c_str());
      totals_on_.store(false);
      totals_failed_.store(true);
    }
    return absl::OkStatus();
  }

  if (options_.api == nullptr && options_.library_path.empty() && !ProcessUsesCuda()) {
    // A CPU-only process: CUPTI is not loaded (it would only fail to find a driver, with a
    // warning on the job's stderr). The trace says why it has no GPU data.
    missing_reason_ = "the process has not loaded CUDA (no libcudart/libcuda, no "
                      "CUDA_INJECTION64_PATH); GPU activity not traced";
    return absl::OkStatus();
  }
  LoadApi();
  api_ = options_.api != nullptr ? options_.api : (loaded_.has_value() ? &*loaded_ : nullptr);
  if (api_ == nullptr) {
    Fail(load_error_);
    return absl::OkStatus();
  }
  if (absl::Status s = CheckCuptiVersion(api_->version); !s.ok()) {
    Fail(std::string(s.message()));
    return absl::OkStatus();
  }

  // One subscriber per process: a second tool (Nsight, DCGM profiling, another profiler)
  // owns CUPTI, and kairos steps aside rather than fight it.
  char old_name[128] = {};
  CUptiResult r;
  if (api_->Subscribe_v2 != nullptr) {
    CUpti_SubscriberParams params;
    std::memset(&params, 0, sizeof(params));
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "kairos";
    params.oldSubscriberName = old_name;
    params.oldSubscriberSize = sizeof(old_name);
    r = api_->Subscribe_v2(&subscriber_, ApiCallback, this, &params);
  } else {
    r = api_->Subscribe(&subscriber_, ApiCallback, this);
  }
  if (r == kMultipleSubscribers) {
    subscriber_ = nullptr;
    old_name[sizeof(old_name) - 1] = '\0';
    Fail(absl::StrCat("another CUPTI subscriber is active (",
                      old_name[0] != '\0' ? old_name : "unnamed tool",
                      "); GPU activity disabled, CPU trace continues"));
    return absl::OkStatus();
  }
  if (absl::Status s = Call(r, "cuptiSubscribe"); !s.ok()) {
    subscriber_ = nullptr;
    Fail(std::string(s.message()));
    return absl::OkStatus();
  }

  // Buffers and the event store set up before any kind is enabled; once records flow the store
  // grows on the conversion worker (event_chunks.h), never on CUPTI's calling thread.
  const int64_t mb = std::max<int64_t>(config.max_gpu_buffer_mb, 1);
  const size_t size = options_.buffer_size != 0 ? options_.buffer_size : kDefaultBufferSize;
  const size_t count =
      options_.buffer_count != 0 ? options_.buffer_count
                                 : 1 + static_cast<size_t>(mb) * (size_t{1} << 20) / size;
  CuptiBufferPool& pool = ProcessCuptiPool();
  // No buffer on this (the caller's) path: the pool's worker prefaults the first ones as soon
  // as it starts and adds more as CUPTI uses them (memory follows use).
  if (absl::Status s = pool.Allocate(size, count, /*initial=*/0); !s.ok()) {
    Fail(absl::StrCat("CUPTI buffer pool: ", s.message(), "; GPU activity disabled, CPU trace "
                      "continues"));
    return absl::OkStatus();
  }
  const size_t max_events = options_.max_events != 0
                                ? options_.max_events
                                : static_cast<size_t>(mb) * (1u << 20) / sizeof(Event);
  converter_ = std::make_unique<CuptiConverter>(api_->GetCallbackName, max_events);
  if (options_.current_range_id != nullptr) {
    // Zero pages, not a zeroed array: the first warm-up of a CUDA process used to spend
    // tens of ms faulting in and clearing 8 MiB while kairos_start() waited.
    if (!collectives_.Create()) {
      KAIROS_LOG_WARNING("cannot allocate the NCCL collective table; collective kernels carry "
                         "no message sizes (counted in nccl_collective_overflow)");
    }
    if (!links_.Create(std::min<size_t>(max_events, kMaxLinks), kLinkPrefaultBytes)) {
      KAIROS_LOG_WARNING("cannot map the CUPTI link table; runtime calls are not linked to "
                         "CPU ranges (counted in cupti_link_overflow)");
    }
  }

  // System thread ids so runtime rows land on the same rows as the CPU ranges.
  if (api_->SetThreadIdType != nullptr &&
      api_->SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) != CUPTI_SUCCESS) {
    KAIROS_LOG_VERBOSE("cuptiSetThreadIdType(SYSTEM) failed; runtime rows use pthread ids");
  }
  own_timestamps_ = api_->ActivityRegisterTimestampCallback != nullptr &&
                    api_->ActivityRegisterTimestampCallback(UnixTimestamp) == CUPTI_SUCCESS;
  pool.Start([this](const uint8_t* b, size_t n) { OnBuffer(b, n); },
             [this] {  // caught up: the event store resident ahead of the next buffer
               const Phase p = phase_.load(std::memory_order_acquire);
               if (p == Phase::kRecording || p == Phase::kStarting) converter_->PrepareStore();
             });
  phase_.store(Phase::kWarmup, std::memory_order_release);
  absl::Status s = Call(api_->ActivityRegisterCallbacks(BufferRequested, BufferCompleted),
                        "cuptiActivityRegisterCallbacks");
  // The API callbacks come on before the records: every kernel record then has had its
  // launch seen, so an NCCL kernel launched while warm-up starts (an iteration window's
  // first step races the session thread here) still gets its operation.
  if (s.ok() && options_.current_range_id != nullptr) {
    nccl_capture_.store(true, std::memory_order_relaxed);
    s = Call(api_->EnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API),
             "cuptiEnableDomain(RUNTIME_API)");
    if (s.ok()) {
      s = Call(api_->EnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API),
               "cuptiEnableDomain(DRIVER_API)");
    }
  }
  if (s.ok()) s = EnableKinds(config);
  if (!s.ok()) {
    Fail(std::string(s.message()));
    return absl::OkStatus();
  }
  // Stamped once every kind is on: from here nothing is missed. The first enable of a process
  // can take long on a real GPU (CUPTI sets up tracing on the device).
  enabled_raw_ = ReadRawClock();
  active_ = true;
  return absl::OkStatus();
}

void CuptiSource::StopNcclCapture() {
  nccl_capture_.store(false, std::memory_order_relaxed);
  collectives_.EndWindow();
}

void CuptiSource::OnApiCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void* cbdata) {
  const auto* d = static_cast<const CUpti_CallbackData*>(cbdata);
  if (d == nullptr) return;
  if (d->callbackSite == CUPTI_API_ENTER) {
    // Relaxed: a call racing the window edge may or may not be linked; both are correct.
    const bool linking = linking_.load(std::memory_order_relaxed);
    const uint32_t id = linking && options_.current_range_id ? options_.current_range_id() : 0;
    // While recording, CUDA calls are the steadiest heartbeat kairos sees: one of them per
    // second takes the clock anchor that keeps CPU ranges on CUPTI's timebase over long
    // windows (about 0.5 us, once a second; otherwise one raw clock read).
    if (linking && options_.window_anchors != nullptr) options_.window_anchors->AnchorIfDue();
    if (d->correlationData != nullptr) *d->correlationData = id;
    if (id != 0) {
      api_->ActivityPushExternalCorrelationId(kKairosCorrelationKind, id);
      links_.Add(d->correlationId, id);
    }
    // The kernel of an NCCL operation this thread just enqueued: its launch is the next one
    // here (the outermost call takes it when a runtime launch calls the driver). From
    // warm-up on, not only while linking: an iteration window opens at a step boundary
    // before StartRecording runs, and its first step's collectives come in between.
    if (nccl_capture_.load(std::memory_order_relaxed) &&
        (domain == CUPTI_CB_DOMAIN_RUNTIME_API ? IsKernelLaunchRuntimeCbid(cbid)
                                               : IsKernelLaunchDriverCbid(cbid))) {
      CollectiveRecord op;
      if (TakePendingCollective(&op)) {
        op.correlation = d->correlationId;
        collectives_.Add(op);
      }
    }
  } else if (d->correlationData != nullptr && *d->correlationData != 0) {
    // Pop whatever ENTER pushed, even if linking stopped in between, so the per-thread
    // stack stays balanced.
    api_->ActivityPopExternalCorrelationId(kKairosCorrelationKind, nullptr);
  }
}

void CuptiSource::OnBuffer(const uint8_t* buffer, size_t valid_size) {
  // Buffers complete periodically while the GPU works: a cheap place to anchor the raw
  // clock during long windows (clock.h).
  if (options_.window_anchors != nullptr) options_.window_anchors->AnchorIfDue();
  if (totals_on_.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(tally_mu_);
    tally_.AddBuffer(buffer, valid_size, UnixNowNs());
  }
  switch (phase_.load(std::memory_order_acquire)) {
    case Phase::kRecording:
      converter_->ConvertBuffer(buffer, valid_size);
      break;
    case Phase::kStarting: {
      const ConvertStats before = converter_->stats();
      converter_->ConvertBuffer(buffer, valid_size);
      const ConvertStats& after = converter_->stats();
      const uint64_t out = after.out_of_range - before.out_of_range;
      const uint64_t api = after.filtered_api - before.filtered_api;
      const uint64_t unknown = after.unknown_kind - before.unknown_kind;
      const uint64_t bad = after.bad_timestamp - before.bad_timestamp;
      warmup_drops_.out_of_range += out;
      warmup_drops_.filtered_api += api;
      warmup_drops_.unknown_kind += unknown;
      warmup_drops_.bad_timestamp += bad;
      warmup_discarded_ += out + api + unknown + bad;
      break;
    }
    case Phase::kStopped:
      late_records_ += CountCuptiRecords(buffer, valid_size);
      break;
    case Phase::kIdle:      // telemetry's records before any window: tallied above, and a
    case Phase::kCounting:  // count here would be reset by the next StartWarmup unread
      break;
    case Phase::kWarmup:
      warmup_discarded_ += CountCuptiRecords(buffer, valid_size);
      break;
  }
}

int64_t CuptiSource::MeasureCuptiOffset() const {
  // CUPTI stamps every record with our callback (CLOCK_REALTIME): the clocks are one, and a
  // measurement could only add its own error. On a loaded machine that error was a few
  // microseconds, which shifted every GPU and API record against the CPU ranges around them.
  if (own_timestamps_) return 0;
  if (api_ == nullptr || api_->GetTimestamp == nullptr) return 0;
  // Otherwise the tightest of a few bracketed reads, as for the clock anchors.
  int64_t best = 0, best_width = INT64_MAX;
  for (int i = 0; i < 8; ++i) {
    const int64_t before = UnixNowNs();
    uint64_t cupti = 0;
    if (api_->GetTimestamp(&cupti) != CUPTI_SUCCESS || cupti == 0) return 0;
    const int64_t after = UnixNowNs();
    if (after - before < best_width) {
      best_width = after - before;
      best = static_cast<int64_t>(cupti) - (before + (after - before) / 2);
    }
  }
  return best;
}

void CuptiSource::StartRecording(int64_t window_start_ns) {
  if (!active_) return;
  // The window edges are mapped into CUPTI's timebase, so a record produced before
  // StopRecording is never cut by a skew between CUPTI's clock and the session's.
  cupti_offset_ = MeasureCuptiOffset();
  window_start_ = window_start_ns + cupti_offset_;
  if (memory_on_) {
    // Read now, on this thread; records between the window's start and now are both in it
    // and in the window, so Collect takes them back out (AddMemory).
    memory_baselines_ = QueryMemoryInUse();
    memory_baseline_ns_ = UnixNowNs();
  }
  converter_->SetWindow(window_start_, INT64_MAX);
  // The window may have begun before this call: an iteration window starts at the step
  // boundary the training thread crossed, and this thread wakes up later (milliseconds on a
  // loaded host). So what warm-up produced so far is converted, not thrown away: records from
  // the window's start on are kept (the first iteration's GPU work), and what the window
  // filter drops from those buffers is warm-up, counted as such (OnBuffer, kStarting).
  phase_.store(Phase::kStarting, std::memory_order_release);
  api_->ActivityFlushAll(0);
  CuptiBufferPool& pool = ProcessCuptiPool();
  pool.Drain();
  phase_.store(Phase::kRecording, std::memory_order_release);
  size_t dropped = 0;
  api_->ActivityGetNumDroppedRecords(nullptr, 0, &dropped);  // reset: warm-up drops don't count
  refused_at_start_ = pool.refused();
  foreign_at_start_ = pool.foreign();
  // Linking starts here: calls made between the window's start and now are still correlated
  // with their GPU work (CUPTI's correlation ids), only not with the CPU range around them.
  linking_.store(options_.current_range_id != nullptr, std::memory_order_relaxed);
  nccl_unlaunched_at_start_ = NcclCounters().without_launch;
  collectives_.BeginWindow();
}

void CuptiSource::StopRecording(int64_t window_end_ns) {
  std::lock_guard<std::mutex> totals_lock(totals_mu_);
  if (!active_) return;
  // The window's closing edge, before the flush takes its time.
  if (options_.window_anchors != nullptr) options_.window_anchors->AnchorNow();
  const int64_t offset = MeasureCuptiOffset();
  window_end_ = window_end_ns == INT64_MAX ? INT64_MAX : window_end_ns + offset;
  cupti_offset_ = (cupti_offset_ + offset) / 2;
  linking_.store(false, std::memory_order_relaxed);
  StopNcclCapture();
  nccl_unlaunched_ = NcclCounters().without_launch - nccl_unlaunched_at_start_;
  DisableKinds();
  const CUptiResult r = api_->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (r != CUPTI_SUCCESS) {
    flush_failed_ = true;
    KAIROS_LOG_WARNING("CUPTI cuptiActivityFlushAll failed: %s; GPU records still held by CUPTI "
                       "are missing from this trace",
                       CuptiResultName(*api_, r).c_str());
  }
  ProcessCuptiPool().Drain();
  size_t dropped = 0;
  if (api_->ActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) {
    cupti_dropped_ += dropped;
  }
  phase_.store(Phase::kStopped, std::memory_order_release);
  // Telemetry keeps counting while this window's trace is assembled and written (seconds for
  // a large one): its two kinds come back on until Reset, and their buffers are only tallied
  // (kCounting), neither converted nor counted as this window's late records.
  if (totals_on_.load()) {
    phase_.store(Phase::kCounting, std::memory_order_release);
    for (CUpti_ActivityKind k : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                 CUPTI_ACTIVITY_KIND_MEMCPY2})
      if (api_->ActivityEnable(k) == CUPTI_SUCCESS) enabled_.push_back(k);
  }
}

void CuptiSource::AddStats(TraceData& data) {
  const ConvertStats& s = converter_->stats();
  CuptiBufferPool& pool = ProcessCuptiPool();
  data.AddStat("cupti_dropped", cupti_dropped_);
  // Losses said in words as well (the stats count them; kairos_warnings says they happened).
  const uint64_t refused = pool.refused() - refused_at_start_;
  if (cupti_dropped_ > 0 || refused > 0 || s.store_full > 0) {
    data.warnings.push_back(absl::StrCat(
        "cuda: GPU records lost: ", cupti_dropped_, " dropped by CUPTI, ", refused,
        " buffers refused, ", s.store_full,
        " over the event store; raise ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB (cupti_dropped, "
        "cupti_buffers_refused, cupti_event_store_full)"));
  }
  data.AddStat("cupti_buffers_refused", pool.refused() - refused_at_start_);
  data.AddStat("cupti_foreign_buffers", pool.foreign() - foreign_at_start_);
  data.AddStat("cupti_out_of_range", s.out_of_range - warmup_drops_.out_of_range);
  data.AddStat("cupti_event_store_full", s.store_full);
  data.AddStat("cupti_unknown_records", s.unknown_kind - warmup_drops_.unknown_kind);
  data.AddStat("cupti_bad_timestamps", s.bad_timestamp - warmup_drops_.bad_timestamp);
  data.AddStat("cupti_truncated_buffers", s.truncated_buffers);
  data.AddStat("cupti_filtered_api", s.filtered_api - warmup_drops_.filtered_api);
  data.AddStat("cupti_warmup_discarded", warmup_discarded_);
  data.AddStat("cupti_late_records", late_records_);
  data.AddStat("cupti_flush_failed", flush_failed_ ? 1 : 0);
}

void CuptiSource::AddCollectives(TraceData& data) {
  std::vector<CollectiveRecord> ring = collectives_.Collect();
  if (ring.empty() && collectives_.overflow() == 0) return;
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
  data.AddStat("nccl_collective_overflow", collectives_.overflow());
  // Operations NCCL enqueued in the window without a kernel launch kairos saw.
  if (nccl_unlaunched_ > 0) data.AddStat("nccl_ops_without_launch", nccl_unlaunched_);
}

void CuptiSource::AddMemory(TraceData& data, const MergeResult& m) {
  // The baseline was read after the window opened: what the window's records allocated and
  // freed up to that read is in it already, so it comes back out, giving the memory in use at
  // the window's start.
  std::vector<MemoryBaseline> baselines = memory_baselines_;
  for (MemoryBaseline& b : baselines) {
    int64_t net = 0;
    for (const auto& track : data.events_by_track) {
      for (const Event& e : track) {
        if (!IsMemoryEvent(e) || e.start_ns > memory_baseline_ns_ || e.detail >= data.memory.size()) continue;
        const MemoryDetail& d = data.memory[e.detail];
        if (d.device_type == 1 && d.device == b.device) net += d.bytes;
      }
    }
    const int64_t used = static_cast<int64_t>(b.used_bytes) - net;
    b.used_bytes = used > 0 ? static_cast<uint64_t>(used) : 0;
  }
  const MemoryTotalsResult t = ComputeMemoryTotals(data, baselines, converter_->max_events());
  AddMemoryCounters(data);
  data.metadata_json.emplace_back("memory_baseline", MemoryBaselineJson(baselines));
  data.AddStat("memory_events", t.events);
  data.AddStat("memory_frees_before_window", t.frees_before_window);
  data.AddStat("memory_address_reused", t.address_reused);
  data.AddStat("memory_live_overflow", t.tracked_overflow);
  data.AddStat("memory_without_call", m.memory_without_call);
  const ConvertStats& s = converter_->stats();
  data.AddStat("memory_pool_records", s.memory_pool_records);
  data.AddStat("memory_bad_records", s.memory_bad_op);
  if (baselines.empty()) {
    data.warnings.push_back("memory: no device baseline (cuMemGetInfo unavailable): totals count "
                            "from 0 at the window's start");
  }
}

void CuptiSource::Collect(TraceData& data) {
  if (!missing_reason_.empty()) {
    data.warnings.push_back(missing_reason_);
    data.metadata.emplace_back("gpu_data_missing_reason", missing_reason_);
  }
  if (!active_ || converter_ == nullptr) return;
  ProcessCuptiPool().Drain();
  if (phase_.load(std::memory_order_acquire) == Phase::kRecording) StopRecording(INT64_MAX);
  converter_->DropAfter(window_end_);
  for (size_t i = 0; i < links_.stored(); ++i) {
    const uint64_t v = links_.at(i);
    if (v != 0) converter_->AddExternal(static_cast<uint32_t>(v >> 32), v & 0xFFFFFFFFu);
  }
  data.AddStat("cupti_link_overflow", links_.overflow());
  if (cupti_offset_ != 0) converter_->ShiftTime(-cupti_offset_);  // back to the session clock
  if (window_edge_end_ns_ != INT64_MAX) converter_->DropLaunchedAfter(window_edge_end_ns_);
  const MergeResult m = MergeIntoTraceData(*converter_, data);
  if (memory_on_) AddMemory(data, m);
  AddCollectives(data);
  ProjectGpuAnnotations(data);
  auto fill = options_.device_info != nullptr ? options_.device_info : QueryDeviceInfo;
  for (uint32_t device : m.devices) {
    const bool known = std::any_of(data.devices.begin(), data.devices.end(),
                                   [&](const DeviceInfo& d) { return d.id == device; });
    DeviceInfo info;
    if (!known && fill(device, &info)) data.devices.push_back(std::move(info));
  }
  data.metadata_json.emplace_back("cupti_version", std::to_string(api_->version));
  AddStats(data);
  data.AddStat("cupti_uncorrelated", m.uncorrelated_gpu);
  if (enabled_late_ns_ > 0) {
    data.AddStat("cupti_enabled_late_us", static_cast<uint64_t>(enabled_late_ns_ / 1000));
    data.warnings.push_back(absl::StrCat(
        "GPU recording was fully on only ", enabled_late_ns_ / 1000, " us after the window "
        "opened (enabling CUPTI outlasted the warm-up): GPU work launched in that time may be "
        "missing; raise ACTIVITIES_WARMUP_ITERATIONS"));
  }
  if (flush_failed_) {
    data.warnings.push_back("CUPTI flush failed at the end of the window; GPU records still "
                            "held by CUPTI are missing");
  }
}

void CuptiSource::SetWindowEdges(const WindowEdges& edges) {
  window_edge_end_ns_ = edges.clock != nullptr && edges.end_raw != ~0ull
                            ? edges.clock->ToUnixNs(edges.end_raw)
                            : INT64_MAX;
  // An iteration window opens at a step boundary the training thread crosses on its own; when
  // enabling CUPTI took longer than the warm-up iterations, the first launches of the window
  // came before any record could be made. They cannot be counted one by one, so the trace
  // says how long the gap was.
  enabled_late_ns_ = 0;
  if (edges.clock != nullptr && enabled_raw_ > edges.start_raw && edges.start_raw != 0) {
    enabled_late_ns_ = edges.clock->ToUnixNs(enabled_raw_) - edges.clock->ToUnixNs(edges.start_raw);
  }
}

void CuptiSource::Reset() {
  std::lock_guard<std::mutex> totals_lock(totals_mu_);
  window_edge_end_ns_ = INT64_MAX;
  enabled_raw_ = 0;
  enabled_late_ns_ = 0;
  Teardown();
  window_holds_cupti_ = false;
  std::string why;
  if (totals_on_.load() && !EnableTotalsLocked(&why)) {
    // From now on the totals would silently miss records: report them as unknown instead.
    KAIROS_LOG_WARNING("telemetry: cannot resume CUPTI kernel and copy records after the trace "
                       "window (%s); kernels and memcpy_bytes are null from now on", why.c_str());
    totals_on_.store(false);
    totals_failed_.store(true);
  }
}

void CuptiSource::Teardown() {
  linking_.store(false, std::memory_order_relaxed);
  StopNcclCapture();
  // The window's kinds, or the telemetry totals' between windows.
  if (api_ != nullptr && !enabled_.empty()) {
    DisableKinds();
    api_->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
  CuptiBufferPool& pool = ProcessCuptiPool();
  pool.Stop();
  if (subscriber_ != nullptr && api_ != nullptr) {
    api_->Unsubscribe(subscriber_);
    subscriber_ = nullptr;
  }
  phase_.store(Phase::kIdle, std::memory_order_release);
  converter_.reset();
  links_.Clear();  // its pages back to the kernel: an idle process keeps none
  collectives_.Clear();
  pool.Free();  // keeps the buffers if CUPTI still holds some
  active_ = false;
}

// ---- Telemetry totals ----

namespace {
// Kernel and copy records outside windows: small buffers, flushed every telemetry interval.
constexpr size_t kTotalsBufferSize = 1u << 20;
constexpr size_t kTotalsBuffers = 4;
}  // namespace

bool CuptiSource::EnableTotalsLocked(std::string* why) {
  if (window_holds_cupti_) return true;  // the window's kinds are counted; resumed at Reset
  if (options_.api == nullptr && options_.library_path.empty() && !ProcessUsesCuda()) {
    *why = "the process has not loaded CUDA";
    return false;
  }
  LoadApi();
  api_ = options_.api != nullptr ? options_.api : (loaded_.has_value() ? &*loaded_ : nullptr);
  if (api_ == nullptr) {
    *why = load_error_;
    return false;
  }
  if (absl::Status st = CheckCuptiVersion(api_->version); !st.ok()) {
    *why = std::string(st.message());
    return false;
  }
  CuptiBufferPool& pool = ProcessCuptiPool();
  if (absl::Status st = pool.Allocate(kTotalsBufferSize, kTotalsBuffers, 0); !st.ok()) {
    *why = std::string(st.message());
    return false;
  }
  if (api_->ActivityRegisterTimestampCallback != nullptr) api_->ActivityRegisterTimestampCallback(UnixTimestamp);
  phase_.store(Phase::kIdle, std::memory_order_release);
  pool.Start([this](const uint8_t* b, size_t n) { OnBuffer(b, n); });
  absl::Status st = Call(api_->ActivityRegisterCallbacks(BufferRequested, BufferCompleted),
                         "cuptiActivityRegisterCallbacks");
  for (CUpti_ActivityKind k : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                               CUPTI_ACTIVITY_KIND_MEMCPY2}) {
    if (!st.ok()) break;
    st = Call(api_->ActivityEnable(k), absl::StrCat("cuptiActivityEnable(", KindName(k), ")").c_str());
    if (st.ok()) enabled_.push_back(k);
  }
  if (!st.ok()) {
    DisableKinds();
    pool.Stop();
    *why = std::string(st.message());
    return false;
  }
  return true;
}

bool CuptiSource::StartActivityTotals(std::string* why) {
  std::lock_guard<std::mutex> totals_lock(totals_mu_);
  if (totals_on_.load()) return true;
  totals_on_.store(true);
  if (EnableTotalsLocked(why)) return true;
  totals_on_.store(false);
  return false;
}

CuptiSource::ActivityTotals CuptiSource::TakeActivityTotals(uint32_t device, int64_t end_ns) {
  {
    // Default flush (not forced): every buffer whose records are all complete, so what
    // ended before now is counted now; nothing incomplete is handed over.
    std::lock_guard<std::mutex> totals_lock(totals_mu_);
    if (api_ != nullptr && !enabled_.empty()) {
      api_->ActivityFlushAll(0);
      ProcessCuptiPool().Drain();
    }
  }
  std::lock_guard<std::mutex> lock(tally_mu_);
  const CuptiTally::Totals t = tally_.Take(device, end_ns);
  ActivityTotals out;
  out.complete = !totals_failed_.load();
  out.kernels = t.kernels;
  out.memcpy_bytes = t.memcpy_bytes;
  out.busy_ns = t.busy_ns;
  return out;
}

}  // namespace kairos::internal
