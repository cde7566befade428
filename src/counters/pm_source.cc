// File: pm_source.cc — see pm_source.h.
#include "counters/pm_source.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "util/clock.h"
#include "counters/telemetry.h"
#include "model/gpu_counters.h"
#include "util/log.h"
#include "util/thread_name.h"
#ifdef KAIROS_HAVE_CUPTI
#include "counters/pm_cupti.h"
#endif

namespace kairos {

std::vector<std::string> DefaultPmMetrics() {
  return {kPmSmActive, kPmOccupancy, kPmTensorActive, kPmDramThroughput};
}

bool PmSamplingRequested(const Config& config) {
  return config.activities_enabled &&
         (!config.pm_sampling_metrics.empty() ||
          (config.activity_types & ActivityBit(ActivityType::kHardwareCounters)) != 0);
}

std::vector<std::string> PmMetricsFor(const Config& config) {
  if (!config.pm_sampling_metrics.empty()) {
    // Duplicates would make two tracks of one name on a device; keep the first.
    std::vector<std::string> out;
    for (const std::string& m : config.pm_sampling_metrics)
      if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
    return out;
  }
  return DefaultPmMetrics();
}

PmSamplingSource::PmSamplingSource(PmSourceOptions options) : options_(std::move(options)) {}

PmSamplingSource::~PmSamplingSource() {
  StopThread();
  std::lock_guard<std::mutex> lock(mu_);
  StopSamplersLocked();
}

absl::Status PmSamplingSource::StartWarmup(const Config& config) {
  StopThread();
  std::lock_guard<std::mutex> lock(mu_);
  StopSamplersLocked();
  values_.clear();
  failures_.clear();
  dropped_ = overflows_ = poll_errors_ = 0;
  window_start_ns_ = 0;
  window_end_ns_ = INT64_MAX;
  ready_raw_ = 0;
  enabled_ = PmSamplingRequested(config);
  if (!enabled_) return absl::OkStatus();
  metrics_ = PmMetricsFor(config);
  if (options_.telemetry != nullptr) options_.telemetry->Pause();
  interval_ns_ = std::max<int64_t>(config.pm_sampling_interval_us, 1) * 1000;
  if (platform_ == nullptr) {
    if (options_.platform) {
      platform_ = options_.platform();
    } else {
#ifdef KAIROS_HAVE_CUPTI
      platform_ = internal::CreateCuptiPmPlatform(options_.cupti_library, nullptr);
#endif
    }
  }
  if (platform_ == nullptr) {
    enabled_ = false;
    return absl::UnavailableError("PM sampling needs a CUDA build of kairos; GPU counters off");
  }
  std::vector<uint32_t> ordinals;
  if (config.pm_sampling_device_id >= 0) {
    ordinals.push_back(static_cast<uint32_t>(config.pm_sampling_device_id));
  } else {
    const int n = std::max(platform_->DeviceCount(), 1);
    for (int i = 0; i < n; ++i) ordinals.push_back(static_cast<uint32_t>(i));
  }
  for (uint32_t d : ordinals) {
    std::unique_ptr<PmSampler> s = platform_->Open();
    absl::Status st = s ? s->Start(d, metrics_, interval_ns_)
                        : absl::UnavailableError("no PM sampler");
    if (st.ok()) {
      devices_.push_back(Device{d, std::move(s)});
    } else {
      failures_.push_back(absl::StrCat("GPU ", d, ": ", st.message()));
    }
  }
  if (devices_.empty()) {
    enabled_ = false;
    if (options_.telemetry != nullptr) options_.telemetry->Resume();
    // The session logs this once and puts it in the trace's warnings: the trace is written
    // without GPU counters and says why.
    return absl::UnavailableError(absl::StrCat("PM sampling unavailable, trace has no GPU "
                                               "counters: ", absl::StrJoin(failures_, "; ")));
  }
  ready_raw_ = ReadRawClock();  // every sampler started: samples from here on
  ordinals_.clear();
  for (const Device& d : devices_) ordinals_.push_back(d.ordinal);
  for (const std::string& f : failures_)
    KAIROS_LOG_WARNING("PM sampling: %s; that GPU has no counters in this trace", f.c_str());
  if (options_.run_thread) {
    stop_ = false;
    thread_ = std::thread([this] { ThreadMain(); });
  }
  return absl::OkStatus();
}

void PmSamplingSource::StartRecording(int64_t window_start_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  window_start_ns_ = window_start_ns;
  window_end_ns_ = INT64_MAX;
  if (!enabled_) return;
  // Warm-up's samples go; then what the hardware holds from the window's start on is kept
  // (PollLocked filters by window_start_ns_): an iteration window began at its step boundary,
  // before this thread opened it, and the samples of that gap are the window's.
  values_.clear();
  dropped_ = 0;
  PollLocked();
}

void PmSamplingSource::StopRecording(int64_t window_end_ns) {
  StopThread();
  std::lock_guard<std::mutex> lock(mu_);
  window_end_ns_ = window_end_ns;
  if (!enabled_) return;
  PollLocked();  // what the hardware holds up to now; later samples lie past the window
  StopSamplersLocked();
}

void PmSamplingSource::Reset() {
  StopThread();
  std::lock_guard<std::mutex> lock(mu_);
  StopSamplersLocked();
  if (enabled_ && options_.telemetry != nullptr) options_.telemetry->Resume();
  enabled_ = false;
  ready_raw_ = 0;
  values_.clear();
  values_.shrink_to_fit();
  scratch_.clear();
  scratch_.shrink_to_fit();
}

void PmSamplingSource::Poll() {
  std::lock_guard<std::mutex> lock(mu_);
  PollLocked();
}

void PmSamplingSource::PollLocked() {
  for (size_t di = 0; di < devices_.size(); ++di) {
    Device& d = devices_[di];
    if (d.sampler == nullptr) continue;
    scratch_.clear();
    bool overflowed = false;
    absl::Status st = d.sampler->Poll(&scratch_, &overflowed);
    if (!st.ok()) {
      ++poll_errors_;
      KAIROS_LOG_WARNING_LIMITED("PM sampling: GPU %u: %s", d.ordinal,
                                 std::string(st.message()).c_str());
    }
    if (overflowed) ++overflows_;
    if (options_.telemetry != nullptr) options_.telemetry->Feed(d.ordinal, metrics_, scratch_);
    for (const PmSample& s : scratch_) {
      // Samples that ended before the window opened are warm-up; the window filter in
      // Collect handles the rest (the end is known only then).
      if (s.end_ns <= window_start_ns_) continue;
      const size_t n = std::min(s.values.size(), metrics_.size());
      for (size_t m = 0; m < n; ++m) {
        if (values_.size() >= options_.max_values) {
          ++dropped_;
          continue;
        }
        values_.push_back(Value{s.start_ns, s.values[m], static_cast<uint32_t>(di),
                                static_cast<uint32_t>(m)});
      }
    }
  }
}

void PmSamplingSource::StopSamplersLocked() {
  for (Device& d : devices_)
    if (d.sampler) d.sampler->Stop();
  devices_.clear();
}

void PmSamplingSource::StopThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PmSamplingSource::ThreadMain() {
  NameThisThread("pm");
  std::unique_lock<std::mutex> lock(mu_);
  const auto period = std::chrono::milliseconds(std::max<int64_t>(options_.poll_interval_ms, 1));
  while (!stop_) {
    cv_.wait_for(lock, period);
    if (stop_) break;
    PollLocked();
  }
}

void PmSamplingSource::Collect(TraceData& data) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!enabled_ && failures_.empty()) return;
  for (const std::string& f : failures_)
    data.warnings.push_back(absl::StrCat("source pm_sampling: ", f, "; no GPU counters for it"));
  // The session stamps the window end before StopRecording; nothing may lie after it.
  int64_t end_ns = window_end_ns_;
  if (data.window_end_ns > 0 && data.window_end_ns < end_ns) end_ns = data.window_end_ns;
  // Track per (device index, metric), created in first-sample order.
  std::vector<uint32_t> track_of(devices_.size() * metrics_.size() + metrics_.size(), UINT32_MAX);
  const bool was_empty = data.counter_samples.empty();
  size_t kept = 0;
  for (const Value& v : values_) {
    if (v.ts_ns < window_start_ns_ || v.ts_ns >= end_ns || v.metric >= metrics_.size()) continue;
    const size_t key = static_cast<size_t>(v.device) * metrics_.size() + v.metric;
    if (key >= track_of.size()) track_of.resize(key + 1, UINT32_MAX);
    if (track_of[key] == UINT32_MAX) {
      track_of[key] = static_cast<uint32_t>(data.counter_tracks.size());
      CounterTrack t;
      t.name = metrics_[v.metric];
      const bool pct = t.name.find(".pct_of_") != std::string::npos;
      t.unit = pct ? "%" : "value";
      const uint32_t ordinal = v.device < ordinals_.size() ? ordinals_[v.device] : v.device;
      t.group = absl::StrCat("GPU ", ordinal);
      t.device = static_cast<int32_t>(ordinal);
      data.counter_tracks.push_back(std::move(t));
    }
    data.counter_samples.push_back(CounterSample{v.ts_ns, v.value, track_of[key]});
    ++kept;
  }
  if (!was_empty || kept > 0) {
    std::stable_sort(data.counter_samples.begin(), data.counter_samples.end(),
                     [](const CounterSample& a, const CounterSample& b) { return a.ts_ns < b.ts_ns; });
  }
  data.kernel_counters = AttributeKernelCounters(data);
  data.metadata.emplace_back(
      "pm_sampling", absl::StrCat("metrics=", absl::StrJoin(metrics_, ","),
                                  " interval_us=", interval_ns_ / 1000));
  data.AddStat("pm_samples", kept);
  if (dropped_ > 0) data.AddStat("pm_samples_dropped", dropped_);
  if (overflows_ > 0) data.AddStat("pm_hw_buffer_overflows", overflows_);
  if (poll_errors_ > 0) data.AddStat("pm_decode_errors", poll_errors_);
}

}  // namespace kairos
