// File: cupti_source.cc
// Layer: kairos_activity (CUDA builds only). See cupti_source.h: the TraceSource calls in
// order, each a short sequence over the modules that own the jobs.
// Threading: see cupti_source.h.
#include "activity/cupti_source.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "activity/cuda_presence.h"
#include "activity/gpu_annotation.h"
#include "util/log.h"

namespace kairos::internal {
namespace {

// 1 MiB (about 5 k kernel records): the pool keeps one with CUPTI, one spare and one being
// converted resident (prefaulted, so CUPTI's writes take no fault on an application thread),
// so this size sets most of kairos' memory in a window; 4 MiB buffers made that 12.6 MB
// (docs/PERFORMANCE.md, issue 29 item 2).
constexpr size_t kDefaultBufferSize = 1u << 20;
// Kernel and copy records outside windows: small buffers, flushed every telemetry interval.
constexpr size_t kTotalsBufferSize = 1u << 20;
constexpr size_t kTotalsBuffers = 4;

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

absl::Status RegisterBufferCallbacks(const CuptiApi& api) {
  return CuptiCallStatus(api, api.ActivityRegisterCallbacks(BufferRequested, BufferCompleted),
                         "cuptiActivityRegisterCallbacks");
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

void ReplaceProcessCuptiPoolAfterFork() {
  const CuptiBufferPool* old = g_pool.load(std::memory_order_relaxed);
  if (old == nullptr) return;  // never used: nothing inherited
  g_pool.store(new CuptiBufferPool(old), std::memory_order_release);
}

CuptiSource::CuptiSource(CuptiSourceOptions options)
    : options_(std::move(options)),
      trace_(options_.current_range_id, options_.device_info),
      nccl_(options_.nccl_tallies),
      clock_(options_.window_anchors) {}

CuptiSource::~CuptiSource() {
  totals_.TurnOff();
  std::lock_guard<std::mutex> lock(mu_);
  Teardown();
}

// ---- CUPTI itself ----

void CuptiSource::LoadApi() {
  if (options_.api != nullptr || loaded_.has_value() || !load_error_.empty()) return;
  absl::StatusOr<CuptiApi> api = LoadCuptiApi(options_.library_path);
  if (api.ok()) {
    loaded_ = *std::move(api);
    if (options_.after_library_loaded != nullptr) options_.after_library_loaded();
  } else {
    load_error_ =
        absl::StrCat(api.status().message(), "; GPU activity disabled, CPU trace continues");
  }
}

bool CuptiSource::MayUseCupti() const {
  return options_.api != nullptr || !options_.library_path.empty() ||
         ProcessUsesCuda(options_.cuda_injected);
}

const CuptiApi* CuptiSource::ResolveApi(std::string* why) {
  LoadApi();
  api_ = options_.api != nullptr ? options_.api : (loaded_.has_value() ? &*loaded_ : nullptr);
  if (api_ == nullptr) {
    *why = load_error_;
    return nullptr;
  }
  if (absl::Status s = CheckCuptiVersion(api_->version); !s.ok()) {
    *why = std::string(s.message());
    return nullptr;
  }
  return api_;
}

void CuptiSource::Fail(std::string reason) {
  KAIROS_LOG_WARNING("%s", reason.c_str());
  trace_.SetMissingReason(std::move(reason));
  trace_.StopLinking();
  nccl_.Stop();
  kinds_.DisableAll(api_);
  trace_.Unsubscribe(api_);
  ProcessCuptiPool().Stop();
  trace_.Deactivate();
}

// ---- TraceSource ----

absl::Status CuptiSource::StartWarmup(const Config& config) {
  std::lock_guard<std::mutex> lock(mu_);
  Teardown();
  trace_.Begin();
  if (!WantsGpuActivity(config)) {
    // No GPU activity asked for: nothing is missing. Telemetry keeps counting meanwhile.
    window_holds_cupti_ = false;
    ResumeTotalsLocked("");
    return absl::OkStatus();
  }
  window_holds_cupti_ = true;  // until Reset; the telemetry totals resume then
  if (!MayUseCupti()) {
    // A CPU-only process: CUPTI is not loaded (it would only fail to find a driver, with a
    // warning on the job's stderr). The trace says why it has no GPU data.
    trace_.SetMissingReason("the process has not loaded CUDA (no libcudart/libcuda, no "
                            "CUDA_INJECTION64_PATH); GPU activity not traced");
    return absl::OkStatus();
  }
  std::string why;
  const CuptiApi* api = ResolveApi(&why);
  absl::Status s = api != nullptr ? SetUpWindow(*api, config) : absl::UnavailableError(why);
  if (!s.ok()) Fail(std::string(s.message()));
  return absl::OkStatus();  // GPU unavailability is the trace's property (header)
}

absl::Status CuptiSource::SetUpWindow(const CuptiApi& api, const Config& config) {
  if (absl::Status s = trace_.Subscribe(api, ApiCallback, this); !s.ok()) return s;
  if (absl::Status s = AllocateBuffers(api, config); !s.ok()) return s;
  if (absl::Status s = EnableRecording(api, config); !s.ok()) return s;
  trace_.Activate(WantsMemory(config));
  return absl::OkStatus();
}

absl::Status CuptiSource::AllocateBuffers(const CuptiApi& api, const Config& config) {
  // Buffers and the event store set up before any kind is enabled; once records flow the store
  // grows on the conversion worker (event_chunks.h), never on CUPTI's calling thread.
  const int64_t mb = std::max<int64_t>(config.max_gpu_buffer_mb, 1);
  const size_t size = options_.buffer_size != 0 ? options_.buffer_size : kDefaultBufferSize;
  const size_t count =
      options_.buffer_count != 0 ? options_.buffer_count
                                 : 1 + static_cast<size_t>(mb) * (size_t{1} << 20) / size;
  // No buffer on this (the caller's) path: the pool's worker prefaults the first ones as soon
  // as it starts and adds more as CUPTI uses them (memory follows use).
  if (absl::Status s = ProcessCuptiPool().Allocate(size, count, /*initial=*/0); !s.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "CUPTI buffer pool: ", s.message(), "; GPU activity disabled, CPU trace continues"));
  }
  const size_t max_events = options_.max_events != 0
                                ? options_.max_events
                                : static_cast<size_t>(mb) * (1u << 20) / sizeof(Event);
  trace_.CreateConverter(api, max_events);
  if (options_.current_range_id != nullptr) {
    nccl_.Create();
    trace_.CreateLinks(max_events);
  }
  return absl::OkStatus();
}

absl::Status CuptiSource::EnableRecording(const CuptiApi& api, const Config& config) {
  // System thread ids so runtime rows land on the same rows as the CPU ranges.
  if (api.SetThreadIdType != nullptr &&
      api.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) != CUPTI_SUCCESS) {
    KAIROS_LOG_VERBOSE("cuptiSetThreadIdType(SYSTEM) failed; runtime rows use pthread ids");
  }
  clock_.UseUnixTimestamps(api);
  // Caught up: the event store made resident ahead of the next buffer (event_chunks.h).
  ProcessCuptiPool().Start([this](const uint8_t* b, size_t n) { OnBuffer(b, n); },
                           [this] { trace_.OnIdle(); });
  trace_.TakeWarmupBuffers();
  absl::Status s = RegisterBufferCallbacks(api);
  // The API callbacks come on before the records: every kernel record then has had its
  // launch seen, so an NCCL kernel launched while warm-up starts (an iteration window's
  // first step races the session thread here) still gets its operation.
  if (s.ok() && options_.current_range_id != nullptr) {
    nccl_.StartCapture();
    s = trace_.EnableCallbacks(api);
  }
  if (s.ok()) s = kinds_.EnableForConfig(api, config);
  return s;
}

void CuptiSource::StartRecording(int64_t window_start_ns) {
  if (!trace_.active()) return;
  // The window edges are mapped into CUPTI's timebase, so a record produced before
  // StopRecording is never cut by a skew between CUPTI's clock and the session's.
  const int64_t offset = clock_.MeasureAtOpen(*api_);
  trace_.Open(*api_, window_start_ns + offset, ProcessCuptiPool());
  nccl_.BeginWindow();
}

void CuptiSource::StopRecording(int64_t window_end_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!trace_.active()) return;
  clock_.AnchorEdge();  // the window's closing edge, before the flush takes its time
  const int64_t offset = clock_.MeasureAtClose(*api_);
  trace_.StopLinking();
  nccl_.EndWindow();
  kinds_.DisableAll(api_);
  trace_.Close(*api_, window_end_ns == INT64_MAX ? INT64_MAX : window_end_ns + offset,
               ProcessCuptiPool());
  // Telemetry keeps counting while this window's trace is assembled and written (seconds for
  // a large one): its kinds come back on until Reset, and their buffers are only tallied,
  // neither converted nor counted as this window's late records.
  if (totals_.on()) {
    trace_.IgnoreBuffers();
    kinds_.ResumeTotals(*api_);
  }
}

void CuptiSource::Collect(TraceData& data) {
  trace_.AddMissingReason(data);
  if (!trace_.active()) return;
  CuptiBufferPool& pool = ProcessCuptiPool();
  pool.Drain();
  if (trace_.recording()) StopRecording(INT64_MAX);  // a caller that skipped StopRecording
  const MergeResult m = trace_.Merge(data, clock_.offset());
  nccl_.AddTo(data);
  ProjectGpuAnnotations(data);
  trace_.AddDevicesAndStats(data, m, *api_, pool);
}

void CuptiSource::SetWindowEdges(const WindowEdges& edges) { trace_.SetEdges(edges); }

void CuptiSource::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  trace_.ClearEdges();
  Teardown();
  window_holds_cupti_ = false;
  ResumeTotalsLocked(" after the trace window");
}

void CuptiSource::Teardown() {
  trace_.StopLinking();
  nccl_.Stop();
  // The window's kinds, or the telemetry totals' between windows.
  if (api_ != nullptr && !kinds_.empty()) {
    kinds_.DisableAll(api_);
    api_->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
  CuptiBufferPool& pool = ProcessCuptiPool();
  pool.Stop();
  trace_.Unsubscribe(api_);
  trace_.Deactivate();
  trace_.Release();
  nccl_.Clear();
  pool.Free();  // keeps the buffers if CUPTI still holds some
}

// ---- Callbacks ----

void CuptiSource::OnApiCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void* cbdata) {
  const auto* d = static_cast<const CUpti_CallbackData*>(cbdata);
  if (d == nullptr) return;
  if (d->callbackSite != CUPTI_API_ENTER) {
    trace_.LinkExit(*d);
    return;
  }
  // Relaxed: a call racing the window edge may or may not be linked; both are correct.
  const bool recording = trace_.recording();
  // While recording, CUDA calls are the steadiest heartbeat kairos sees: one of them per
  // second takes the clock anchor that keeps CPU ranges on CUPTI's timebase over long
  // windows (about 0.5 us, once a second; otherwise one raw clock read).
  if (recording) clock_.Beat();
  trace_.LinkEnter(*d, trace_.linking());
  nccl_.OnApiEnter(domain, cbid, d->correlationId);
}

void CuptiSource::OnBuffer(const uint8_t* buffer, size_t valid_size) {
  // Buffers complete periodically while the GPU works: a cheap place to anchor the raw
  // clock during long windows (clock.h).
  clock_.Beat();
  totals_.Count(buffer, valid_size);
  trace_.OnBuffer(buffer, valid_size);
}

// ---- Telemetry totals ----

void CuptiSource::ResumeTotalsLocked(const char* when) {
  std::string why;
  if (!totals_.on() || EnableTotalsLocked(&why)) return;
  // From now on the totals would silently miss records: report them as unknown instead.
  KAIROS_LOG_WARNING("telemetry: cannot resume CUPTI kernel and copy records%s (%s); kernels "
                     "and memcpy_bytes are null from now on", when, why.c_str());
  totals_.GiveUp();
}

bool CuptiSource::EnableTotalsLocked(std::string* why) {
  if (window_holds_cupti_) return true;  // the window's kinds are counted; resumed at Reset
  if (!MayUseCupti()) {
    *why = "the process has not loaded CUDA";
    return false;
  }
  const CuptiApi* api = ResolveApi(why);
  if (api == nullptr) return false;
  CuptiBufferPool& pool = ProcessCuptiPool();
  if (absl::Status st = pool.Allocate(kTotalsBufferSize, kTotalsBuffers, 0); !st.ok()) {
    *why = std::string(st.message());
    return false;
  }
  RegisterUnixTimestamps(*api);
  pool.Start([this](const uint8_t* b, size_t n) { OnBuffer(b, n); });
  absl::Status st = RegisterBufferCallbacks(*api);
  if (st.ok()) st = kinds_.EnableTotals(*api);
  if (!st.ok()) {
    kinds_.DisableAll(api);
    pool.Stop();
    *why = std::string(st.message());
    return false;
  }
  return true;
}

bool CuptiSource::StartActivityTotals(std::string* why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!totals_.TurnOn()) return true;  // already on
  if (EnableTotalsLocked(why)) return true;
  totals_.TurnOff();
  return false;
}

CuptiSource::ActivityTotals CuptiSource::TakeActivityTotals(uint32_t device, int64_t end_ns) {
  {
    // A default flush returns no buffer that holds an incomplete record, and real CUPTI writes
    // a kernel's record at launch: a kernel running at the edge holds back every record since
    // the last delivery (on an H100 the lines alternated ~30 / ~450 kernels for 243 a second).
    // Between windows nothing else reads these records, so the flush is forced: a running
    // kernel comes incomplete and counts now (CuptiTally), its busy time is lost. A window's
    // records must stay whole for its trace: during one the default flush stays, and a line
    // may count late what a held buffer kept (docs/TELEMETRY.md).
    std::lock_guard<std::mutex> lock(mu_);
    if (api_ != nullptr && !kinds_.empty()) {
      api_->ActivityFlushAll(window_holds_cupti_ ? 0 : CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      ProcessCuptiPool().Drain();
    }
  }
  return totals_.Take(device, end_ns);
}

}  // namespace kairos::internal
