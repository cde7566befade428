// File: cupti_trace.cc
// Layer: kairos_activity (CUDA builds only). See cupti_trace.h.
#include "activity/cupti_trace.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "activity/cupti_devices.h"
#include "activity/cupti_kinds.h"
#include "util/clock.h"
#include "util/log.h"

namespace kairos::internal {
namespace {

// Link table: at most 1 M pairs (8 MiB of address space); the first 64 KiB (8192 calls) are
// prefaulted in warm-up.
constexpr size_t kMaxLinks = size_t{1} << 20;
constexpr size_t kLinkPrefaultBytes = 64u << 10;
constexpr CUptiResult kMultipleSubscribers = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;

}  // namespace

void CuptiTrace::Begin() {
  missing_reason_.clear();
  counts_ = WindowCounts{};
  memory_on_ = false;  // Activate decides for this window
  memory_baselines_.clear();
  memory_baseline_ns_ = 0;
  window_start_ = 0;
  window_end_ = INT64_MAX;
}

absl::Status CuptiTrace::Subscribe(const CuptiApi& api, CUpti_CallbackFunc callback,
                                   void* userdata) {
  api_ = &api;
  // One subscriber per process: a second tool (Nsight, DCGM profiling, another profiler)
  // owns CUPTI, and kairos steps aside rather than fight it.
  char old_name[128] = {};
  CUptiResult r;
  if (api.Subscribe_v2 != nullptr) {
    CUpti_SubscriberParams params;
    std::memset(&params, 0, sizeof(params));
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "kairos";
    params.oldSubscriberName = old_name;
    params.oldSubscriberSize = sizeof(old_name);
    r = api.Subscribe_v2(&subscriber_, callback, userdata, &params);
  } else {
    r = api.Subscribe(&subscriber_, callback, userdata);
  }
  if (r == kMultipleSubscribers) {
    subscriber_ = nullptr;
    old_name[sizeof(old_name) - 1] = '\0';
    return absl::UnavailableError(absl::StrCat(
        "another CUPTI subscriber is active (", old_name[0] != '\0' ? old_name : "unnamed tool",
        "); GPU activity disabled, CPU trace continues"));
  }
  absl::Status s = CuptiCallStatus(api, r, "cuptiSubscribe");
  if (!s.ok()) subscriber_ = nullptr;
  return s;
}

absl::Status CuptiTrace::EnableCallbacks(const CuptiApi& api) {
  absl::Status s = CuptiCallStatus(api, api.EnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API),
                                   "cuptiEnableDomain(RUNTIME_API)");
  if (!s.ok()) return s;
  return CuptiCallStatus(api, api.EnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API),
                         "cuptiEnableDomain(DRIVER_API)");
}

void CuptiTrace::CreateConverter(const CuptiApi& api, size_t max_events) {
  converter_ = std::make_unique<CuptiConverter>(api.GetCallbackName, max_events);
}

void CuptiTrace::CreateLinks(size_t max_events) {
  // Zero pages, not a zeroed array: the first warm-up of a CUDA process used to spend tens of
  // ms faulting in and clearing 8 MiB while kairos_start() waited.
  if (!links_.Create(std::min<size_t>(max_events, kMaxLinks), kLinkPrefaultBytes)) {
    KAIROS_LOG_WARNING("cannot map the CUPTI link table; runtime calls are not linked to "
                       "CPU ranges (counted in cupti_link_overflow)");
  }
}

void CuptiTrace::Activate(bool memory) {
  memory_on_ = memory;
  // Stamped once every kind is on: from here nothing is missed. The first enable of a process
  // can take long on a real GPU (CUPTI sets up tracing on the device).
  enabled_raw_ = ReadRawClock();
  active_ = true;
  linking_.store(true, std::memory_order_relaxed);
}

void CuptiTrace::Open(const CuptiApi& api, int64_t window_start, CuptiBufferPool& pool) {
  window_start_ = window_start;
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
  // filter drops from those buffers is warm-up, counted as such (ConvertWarmupLeftovers).
  handler_.store(&ConvertWarmupLeftovers, std::memory_order_release);
  api.ActivityFlushAll(0);
  pool.Drain();
  handler_.store(&Convert, std::memory_order_release);
  size_t dropped = 0;
  api.ActivityGetNumDroppedRecords(nullptr, 0, &dropped);  // reset: warm-up drops don't count
  counts_.refused_at_start = pool.refused();
  counts_.foreign_at_start = pool.foreign();
  // Linking began at Activate (linking()): calls made between the window's start and now are
  // correlated with their GPU work and with the CPU range around them.
  recording_.store(true, std::memory_order_relaxed);
}

void CuptiTrace::Close(const CuptiApi& api, int64_t window_end, CuptiBufferPool& pool) {
  window_end_ = window_end;
  const CUptiResult r = api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (r != CUPTI_SUCCESS) {
    counts_.flush_failed = true;
    KAIROS_LOG_WARNING("CUPTI cuptiActivityFlushAll failed: %s; GPU records still held by CUPTI "
                       "are missing from this trace",
                       CuptiResultName(api, r).c_str());
  }
  pool.Drain();
  size_t dropped = 0;
  if (api.ActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) {
    counts_.cupti_dropped += dropped;
  }
  handler_.store(&CountLate, std::memory_order_release);
}

void CuptiTrace::Deactivate() {
  recording_.store(false, std::memory_order_relaxed);
  linking_.store(false, std::memory_order_relaxed);
  handler_.store(&Ignore, std::memory_order_release);
  active_ = false;
}

void CuptiTrace::Unsubscribe(const CuptiApi* api) {
  if (subscriber_ != nullptr && api != nullptr) {
    api->Unsubscribe(subscriber_);
    subscriber_ = nullptr;
  }
}

void CuptiTrace::Release() {
  converter_.reset();
  links_.Clear();  // its pages back to the kernel: an idle process keeps none
}

// ---- Buffer handlers (buffer worker) ----

void CuptiTrace::DiscardWarmup(CuptiTrace& t, const uint8_t* b, size_t n) {
  t.counts_.warmup_discarded += CountCuptiRecords(b, n);
}

void CuptiTrace::ConvertWarmupLeftovers(CuptiTrace& t, const uint8_t* b, size_t n) {
  const ConvertStats before = t.converter_->stats();
  t.converter_->ConvertBuffer(b, n);
  const ConvertStats& after = t.converter_->stats();
  const uint64_t out = after.out_of_range - before.out_of_range;
  const uint64_t api = after.filtered_api - before.filtered_api;
  const uint64_t unknown = after.unknown_kind - before.unknown_kind;
  const uint64_t bad = after.bad_timestamp - before.bad_timestamp;
  t.counts_.warmup_drops.out_of_range += out;
  t.counts_.warmup_drops.filtered_api += api;
  t.counts_.warmup_drops.unknown_kind += unknown;
  t.counts_.warmup_drops.bad_timestamp += bad;
  t.counts_.warmup_discarded += out + api + unknown + bad;
}

void CuptiTrace::Convert(CuptiTrace& t, const uint8_t* b, size_t n) {
  t.converter_->ConvertBuffer(b, n);
}

void CuptiTrace::CountLate(CuptiTrace& t, const uint8_t* b, size_t n) {
  t.counts_.late_records += CountCuptiRecords(b, n);
}

// ---- API callback (application threads) ----

void CuptiTrace::LinkEnter(const CUpti_CallbackData& d, bool recording) {
  // Relaxed: a call racing the window edge may or may not be linked; both are correct.
  const uint32_t id = recording && current_range_id_ != nullptr ? current_range_id_() : 0;
  if (d.correlationData != nullptr) *d.correlationData = id;
  if (id != 0) {
    api_->ActivityPushExternalCorrelationId(kKairosCorrelationKind, id);
    links_.Add(d.correlationId, id);
  }
}

void CuptiTrace::LinkExit(const CUpti_CallbackData& d) {
  // Pop whatever enter pushed, even if linking stopped in between, so the per-thread stack
  // stays balanced.
  if (d.correlationData != nullptr && *d.correlationData != 0) {
    api_->ActivityPopExternalCorrelationId(kKairosCorrelationKind, nullptr);
  }
}

}  // namespace kairos::internal
