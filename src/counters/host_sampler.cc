// File: host_sampler.cc — see host_sampler.h.
#include "counters/host_sampler.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/thread_name.h"

namespace kairos {
namespace {

class RealProcReader : public ProcReader {
 public:
  // open/read/close into the caller's string: iostreams cost several times more per file,
  // which matters at 5 files every 100 ms (bench/host_sampler_benchmark.cc).
  bool Read(const std::string& path, std::string* out) override {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    out->clear();
    char buf[8192];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
    close(fd);
    return n == 0;
  }
};


// Fixed metrics first, then two per core. The order is the track order in the trace.
enum Metric : uint32_t {
  kCpuUtil = 0, kCpuIowait, kContextSwitches, kProcessCpu, kProcessThreads, kMemUsed,
  kProcessRss, kDiskRead, kDiskWrite, kNetRx, kNetTx, kFixedMetrics
};

}  // namespace

HostSampler::HostSampler(HostSamplerOptions options)
    : options_(std::move(options)),
      own_reader_(options_.reader != nullptr ? nullptr : std::make_unique<RealProcReader>()),
      reader_(options_.reader != nullptr ? options_.reader : own_reader_.get()) {
  if (options_.ticks_per_second <= 0) options_.ticks_per_second = sysconf(_SC_CLK_TCK);
  if (options_.ticks_per_second <= 0) options_.ticks_per_second = 100;
  if (options_.page_size <= 0) options_.page_size = sysconf(_SC_PAGESIZE);
  if (options_.page_size <= 0) options_.page_size = 4096;
}

HostSampler::~HostSampler() { StopThread(); }

int64_t HostSampler::Now() const { return options_.clock ? options_.clock() : UnixNowNs(); }

absl::Status HostSampler::StartWarmup(const Config& config) {
  StopThread();
  std::lock_guard<std::mutex> lock(mu_);
  values_.clear();
  have_prev_ = false;
  recording_ = false;
  dropped_ = missed_ticks_ = read_errors_ = 0;
  enabled_ = config.host_metrics_interval_ms > 0;
  if (!enabled_) return absl::OkStatus();
  interval_ns_ = config.host_metrics_interval_ms * 1000000;
  std::string probe;
  if (!reader_->Read("/proc/stat", &probe)) {
    enabled_ = false;
    return absl::UnavailableError("host metrics: cannot read /proc/stat; host counters off");
  }
  const int64_t now = Now();
  SampleLocked(now);  // the baseline every later rate is measured against
  next_due_ns_ = now + interval_ns_;
  if (options_.run_thread) {
    stop_ = false;
    thread_ = std::thread([this] { ThreadMain(); });
  }
  return absl::OkStatus();
}

void HostSampler::StartRecording(int64_t window_start_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  window_start_ns_ = window_start_ns;
  window_end_ns_ = INT64_MAX;
  if (!enabled_) return;
  values_.clear();  // warm-up samples are discarded
  recording_ = true;
  // Align the schedule to the window so the first in-window sample sits at its start.
  SampleLocked(window_start_ns);
  next_due_ns_ = window_start_ns + interval_ns_;
}

void HostSampler::StopRecording(int64_t window_end_ns) {
  StopThread();
  std::lock_guard<std::mutex> lock(mu_);
  window_end_ns_ = window_end_ns;
  if (!enabled_ || !recording_) return;
  // The thread may have sampled after the window closed (between the caller reading the
  // clock and this call). The first such sample covers the window's last interval and is
  // stamped at the window end; any later ones lie outside the window and are dropped.
  auto late = std::find_if(values_.begin(), values_.end(),
                           [&](const Value& v) { return v.ts_ns > window_end_ns; });
  if (late != values_.end()) {
    const int64_t first_late = late->ts_ns;
    auto past = std::find_if(late, values_.end(), [&](const Value& v) { return v.ts_ns > first_late; });
    values_.erase(past, values_.end());
    for (auto it = late; it != values_.end(); ++it) it->ts_ns = window_end_ns;
  }
  // A closing sample so the last partial interval is covered, unless one sits there already.
  if (values_.empty() || values_.back().ts_ns < window_end_ns) SampleLocked(window_end_ns);
  recording_ = false;
}

void HostSampler::Reset() {
  StopThread();
  std::lock_guard<std::mutex> lock(mu_);
  enabled_ = recording_ = have_prev_ = false;
  values_.clear();
  values_.shrink_to_fit();
}

bool HostSampler::Tick(int64_t now_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!enabled_ || now_ns < next_due_ns_) return false;
  SampleLocked(now_ns);
  next_due_ns_ += interval_ns_;
  // A stalled thread skips the ticks it missed instead of bursting; they are counted.
  while (next_due_ns_ <= now_ns) {
    next_due_ns_ += interval_ns_;
    ++missed_ticks_;
  }
  return true;
}

void HostSampler::StopThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HostSampler::ThreadMain() {
  NameThisThread("host");
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    const int64_t wait_ns = next_due_ns_ - Now();
    if (wait_ns > 0) {
      cv_.wait_for(lock, std::chrono::nanoseconds(wait_ns));
      continue;  // re-check stop_ and the deadline (spurious wake-ups)
    }
    lock.unlock();
    Tick(Now());
    lock.lock();
  }
}

HostSampler::Snapshot HostSampler::Read(int64_t now_ns) {
  Snapshot s;
  s.ts_ns = now_ns;
  std::string text;
  auto note = [this](const absl::Status& st) {
    ++read_errors_;
    KAIROS_LOG_ONCE(LogLevel::kWarning, "host metrics: %s", std::string(st.message()).c_str());
  };
  if (reader_->Read("/proc/stat", &text)) {
    auto r = internal::ParseProcStat(text);
    if (r.ok()) { s.stat = *std::move(r); s.has_stat = true; } else note(r.status());
  }
  if (reader_->Read("/proc/meminfo", &text)) {
    auto r = internal::ParseMemInfo(text);
    if (r.ok()) { s.mem = *r; s.has_mem = true; } else note(r.status());
  }
  if (reader_->Read("/proc/self/stat", &text)) {
    auto r = internal::ParseProcessStat(text);
    if (r.ok()) { s.proc = *r; s.has_proc = true; } else note(r.status());
  }
  if (reader_->Read("/proc/diskstats", &text)) {
    auto r = internal::ParseDiskStats(text);
    if (r.ok()) { s.disk = *r; s.has_disk = true; } else note(r.status());
  }
  if (reader_->Read("/proc/net/dev", &text)) {
    auto r = internal::ParseNetDev(text);
    if (r.ok()) { s.net = *r; s.has_net = true; } else note(r.status());
  }
  return s;
}

void HostSampler::EnsureMetricsLocked(size_t cores) {
  if (metrics_.empty()) {
    metrics_ = {
        {"cpu.util", "%", "Host CPU"},           {"cpu.iowait", "%", "Host CPU"},
        {"cpu.context_switches", "1/s", "Host CPU"}, {"process.cpu", "%", "Host process"},
        {"process.threads", "count", "Host process"}, {"mem.used", "bytes", "Host memory"},
        {"process.rss", "bytes", "Host process"}, {"disk.read", "bytes/s", "Host IO"},
        {"disk.write", "bytes/s", "Host IO"},    {"net.rx", "bytes/s", "Host IO"},
        {"net.tx", "bytes/s", "Host IO"}};
  }
  for (; metric_cores_ < cores; ++metric_cores_) {
    metrics_.push_back({absl::StrCat("cpu.util.core", metric_cores_), "%", "Host CPU"});
    metrics_.push_back({absl::StrCat("cpu.iowait.core", metric_cores_), "%", "Host CPU"});
  }
}

void HostSampler::Emit(int64_t ts_ns, uint32_t metric, double value) {
  if (!recording_) return;  // warm-up: only the baseline matters
  if (values_.size() >= options_.max_values) {
    ++dropped_;
    return;
  }
  values_.push_back(Value{ts_ns, value, metric});
}

void HostSampler::SampleLocked(int64_t now_ns) {
  Snapshot cur = Read(now_ns);
  EnsureMetricsLocked(cur.has_stat ? cur.stat.cores.size() : 0);
  const Snapshot& p = prev_;
  const int64_t dt = now_ns - p.ts_ns;
  // Rates describe the interval that ends at this sample; they need a baseline.
  const bool rates = have_prev_ && dt > 0;
  // /proc/stat and /proc/self/stat count CPU time in clock ticks (10 ms at USER_HZ 100): an
  // interval shorter than one tick cannot measure utilisation, and would read as a false 0%
  // (the window-start sample right after a short warm-up, or a window shorter than a tick).
  // Such an interval yields no CPU-time sample; the gauges and other rates still do.
  const bool ticked = rates && dt * options_.ticks_per_second >= 1000000000;
  if (rates && cur.has_stat && p.has_stat) {
    if (ticked) {
      Emit(now_ns, kCpuUtil, internal::BusyPercent(p.stat.all, cur.stat.all));
      Emit(now_ns, kCpuIowait, internal::IowaitPercent(p.stat.all, cur.stat.all));
    }
    Emit(now_ns, kContextSwitches,
         internal::RatePerSecond(p.stat.context_switches, cur.stat.context_switches, dt));
  }
  if (ticked && cur.has_proc && p.has_proc) {
    const uint64_t a = p.proc.utime_ticks + p.proc.stime_ticks;
    const uint64_t b = cur.proc.utime_ticks + cur.proc.stime_ticks;
    Emit(now_ns, kProcessCpu,
         100.0 * internal::RatePerSecond(a, b, dt) / static_cast<double>(options_.ticks_per_second));
  }
  if (cur.has_proc) {
    Emit(now_ns, kProcessThreads, static_cast<double>(cur.proc.num_threads));
  }
  if (cur.has_mem) {
    Emit(now_ns, kMemUsed, static_cast<double>(cur.mem.total_bytes - std::min(cur.mem.total_bytes, cur.mem.available_bytes)));
  }
  if (cur.has_proc) {
    Emit(now_ns, kProcessRss,
         static_cast<double>(cur.proc.rss_pages) * static_cast<double>(options_.page_size));
  }
  if (rates && cur.has_disk && p.has_disk) {
    Emit(now_ns, kDiskRead, internal::RatePerSecond(p.disk.read_bytes, cur.disk.read_bytes, dt));
    Emit(now_ns, kDiskWrite, internal::RatePerSecond(p.disk.write_bytes, cur.disk.write_bytes, dt));
  }
  if (rates && cur.has_net && p.has_net) {
    Emit(now_ns, kNetRx, internal::RatePerSecond(p.net.read_bytes, cur.net.read_bytes, dt));
    Emit(now_ns, kNetTx, internal::RatePerSecond(p.net.write_bytes, cur.net.write_bytes, dt));
  }
  if (ticked && cur.has_stat && p.has_stat) {
    const size_t n = std::min(cur.stat.cores.size(), p.stat.cores.size());
    for (size_t i = 0; i < n; ++i) {
      const uint32_t base = kFixedMetrics + 2 * static_cast<uint32_t>(i);
      Emit(now_ns, base, internal::BusyPercent(p.stat.cores[i], cur.stat.cores[i]));
      Emit(now_ns, base + 1, internal::IowaitPercent(p.stat.cores[i], cur.stat.cores[i]));
    }
  }
  prev_ = std::move(cur);
  have_prev_ = true;
}

void HostSampler::Collect(TraceData& data) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!enabled_) return;
  // Map only the metrics that got samples in the window to trace tracks.
  std::vector<uint32_t> track_of(metrics_.size(), UINT32_MAX);
  size_t kept = 0;
  const bool was_sorted = data.counter_samples.empty();
  // The session stamps the Record Window End marker at the instant the window was asked to
  // close (data.window_end_ns), which precedes StopRecording: nothing may lie after it.
  // The first sample past it (the closing one) covers the window's last interval and is
  // stamped there, unless a sample sits at that instant already; later ones are dropped.
  int64_t end_ns = window_end_ns_;
  if (data.window_end_ns > 0 && data.window_end_ns < end_ns) end_ns = data.window_end_ns;
  int64_t first_late = INT64_MAX;
  bool have_at_end = false;
  for (const Value& v : values_) {
    if (v.ts_ns == end_ns) have_at_end = true;
    if (v.ts_ns > end_ns && v.ts_ns < first_late) first_late = v.ts_ns;
  }
  for (Value v : values_) {
    if (v.ts_ns > end_ns) {
      if (v.ts_ns != first_late || have_at_end) continue;
      v.ts_ns = end_ns;
    }
    if (v.ts_ns < window_start_ns_ || v.metric >= metrics_.size()) continue;
    if (track_of[v.metric] == UINT32_MAX) {
      track_of[v.metric] = static_cast<uint32_t>(data.counter_tracks.size());
      data.counter_tracks.push_back(metrics_[v.metric]);
    }
    data.counter_samples.push_back(CounterSample{v.ts_ns, v.value, track_of[v.metric]});
    ++kept;
  }
  if (!was_sorted) {
    std::stable_sort(data.counter_samples.begin(), data.counter_samples.end(),
                     [](const CounterSample& a, const CounterSample& b) { return a.ts_ns < b.ts_ns; });
  }
  data.AddStat("host_counter_samples", kept);
  if (dropped_ > 0) data.AddStat("host_counter_samples_dropped", dropped_);
  if (missed_ticks_ > 0) data.AddStat("host_sampler_missed_ticks", missed_ticks_);
  if (read_errors_ > 0) data.AddStat("host_proc_read_errors", read_errors_);
}

}  // namespace kairos
