// File: telemetry.cc — see telemetry.h.
#include "counters/telemetry.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "counters/proc_parse.h"
#include "json/json_writer.h"
#include "model/gpu_counters.h"
#include "util/clock.h"
#include "util/dcheck.h"
#include "util/log.h"
#include "util/thread_name.h"

namespace kairos {
namespace {

constexpr const char* kGpuBusy = "gr__cycles_active.avg.pct_of_peak_sustained_elapsed";
constexpr int64_t kMsNs = 1000000;

bool ReadProcSelfStat(std::string* text) {
  const int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  const ssize_t n = read(fd, buf, sizeof(buf));
  close(fd);
  if (n <= 0) return false;
  text->assign(buf, static_cast<size_t>(n));
  return true;
}

}  // namespace

std::optional<double> MedianStepMs(const TelemetryStepRing& ring, int64_t first, int64_t last,
                                   double ns_per_tick) {
  // The ring holds stamps of the newest kTelemetryStepRing steps; step n needs n and n - 1.
  first = std::max<int64_t>({first, last - static_cast<int64_t>(kTelemetryStepRing) + 1, 0});
  std::vector<double> ms;
  for (int64_t n = first + 1; n <= last; ++n) {
    const uint64_t a = ring.raw[static_cast<uint64_t>(n - 1) % kTelemetryStepRing].load(std::memory_order_relaxed);
    const uint64_t b = ring.raw[static_cast<uint64_t>(n) % kTelemetryStepRing].load(std::memory_order_relaxed);
    if (a == 0 || b <= a) continue;
    ms.push_back(static_cast<double>(b - a) * ns_per_tick / 1e6);
  }
  if (ms.empty()) return std::nullopt;
  // The lower median of an even count: a step time that occurred, not an average of two.
  const size_t mid = (ms.size() - 1) / 2;
  std::nth_element(ms.begin(), ms.begin() + static_cast<ptrdiff_t>(mid), ms.end());
  return ms[mid];
}

std::vector<std::string> TelemetryMetrics() {
  return {kGpuBusy, kPmSmActive, kPmOccupancy, kPmTensorActive, kPmDramThroughput};
}

std::string TelemetryLine(const TelemetryRecord& r) {
  JsonWriter w;
  auto num = [&](const char* k, const std::optional<double>& v) {
    w.Key(k);
    if (v) w.Double(*v); else w.Null();
  };
  auto integer = [&](const char* k, const std::optional<int64_t>& v) {
    w.Key(k);
    if (v) w.Int(*v); else w.Null();
  };
  w.BeginObject();
  w.Key("schema_version").Int(kTelemetrySchemaVersion);
  w.Key("ts_ns").Int(r.ts_ns);
  w.Key("host").String(r.host);
  w.Key("pid").Int(r.pid);
  integer("job_id", r.job_id);
  integer("rank", r.rank);
  w.Key("device").Uint(r.device);
  w.Key("gpu_uuid");
  if (r.gpu_uuid.empty()) w.Null(); else w.String(r.gpu_uuid);
  w.Key("gpu_name");
  if (r.gpu_name.empty()) w.Null(); else w.String(r.gpu_name);
  w.Key("interval_ns").Int(r.interval_ns);
  num("gpu_busy_pct", r.gpu_busy_pct);
  num("sm_active_pct", r.sm_active_pct);
  num("achieved_occupancy_pct", r.achieved_occupancy_pct);
  num("tensor_active_pct", r.tensor_active_pct);
  num("dram_throughput_pct", r.dram_throughput_pct);
  integer("kernels", r.kernels);
  integer("memcpy_bytes", r.memcpy_bytes);
  integer("steps", r.steps);
  num("step_time_ms_p50", r.step_time_ms_p50);
  num("process_cpu_pct", r.process_cpu_pct);
  integer("process_rss_bytes", r.process_rss_bytes);
  integer("gpu_memory_used_bytes", r.gpu_memory_used_bytes);
  integer("gpu_memory_total_bytes", r.gpu_memory_total_bytes);
  if (r.lines_lost > 0) w.Key("lines_lost").Uint(r.lines_lost);
  w.EndObject();
  return std::string(w.str());
}

void TelemetryAggregator::Add(const std::vector<std::string>& metrics, const PmSample& s) {
  const double len = static_cast<double>(std::max<int64_t>(s.end_ns - s.start_ns, 0));
  if (len <= 0) return;
  double sm = -1;
  for (size_t i = 0; i < metrics.size() && i < s.values.size(); ++i)
    if (metrics[i] == kPmSmActive) sm = s.values[i];
  for (size_t i = 0; i < metrics.size() && i < s.values.size(); ++i) {
    const std::string& m = metrics[i];
    const double v = s.values[i];
    if (m == kGpuBusy) {
      busy_.weighted += v * len, busy_.weight += len;
    } else if (m == kPmSmActive) {
      sm_.weighted += v * len, sm_.weight += len;
    } else if (m == kPmOccupancy) {
      // A share of active cycles: weighted by SM activity when it was sampled too.
      const double w = sm >= 0 ? len * sm / 100.0 : len;
      occ_.weighted += v * w, occ_.weight += w;
    } else if (m == kPmTensorActive) {
      tensor_.weighted += v * len, tensor_.weight += len;
    } else if (m == kPmDramThroughput) {
      dram_.weighted += v * len, dram_.weight += len;
    }
  }
}

void TelemetryAggregator::Take(TelemetryRecord* r) {
  auto mean = [](const Sum& s) -> std::optional<double> {
    if (s.weight <= 0) return std::nullopt;
    return s.weighted / s.weight;
  };
  r->gpu_busy_pct = mean(busy_);
  r->sm_active_pct = mean(sm_);
  r->achieved_occupancy_pct = mean(occ_);
  // Sampled SMs but never active: occupancy is 0 by definition, not unknown.
  if (!r->achieved_occupancy_pct && occ_.weight == 0 && sm_.weight > 0 &&
      r->sm_active_pct && *r->sm_active_pct == 0)
    r->achieved_occupancy_pct = 0.0;
  r->tensor_active_pct = mean(tensor_);
  r->dram_throughput_pct = mean(dram_);
  *this = TelemetryAggregator();
}

Telemetry::~Telemetry() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  // Unpublish the ring before it is freed with this object (only if it is still ours).
  TelemetryStepRing* mine = steps_.get();
  if (mine != nullptr && options_.step_slot != nullptr)
    options_.step_slot->compare_exchange_strong(mine, nullptr);
  for (Gpu& g : gpus_)
    if (g.sampler) g.sampler->Stop();
}

absl::Status Telemetry::Start(TelemetryOptions options) {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_) return absl::FailedPreconditionError("telemetry already running");
  if (options.interval_ns <= 0) return absl::InvalidArgumentError("telemetry interval must be > 0");
  KAIROS_DCHECK(options.step_slot == nullptr || options.iterations != nullptr,
                "a step slot needs the iteration count (the ring is made only with it)");
  options_ = std::move(options);
  if (options_.ready && !options_.ready()) {
    // Not a training process (yet): no file, no samplers, no warning; the thread looks again
    // every kReadyPollNs and begins when it is (a launcher or shell tool never is).
    waiting_ = true;
    running_ = true;
    if (options_.run_thread) thread_ = std::thread([this] { ThreadMain(); });
    return absl::OkStatus();
  }
  if (absl::Status s = BeginLocked(/*late=*/false); !s.ok()) return s;
  running_ = true;
  if (options_.run_thread) thread_ = std::thread([this] { ThreadMain(); });
  return absl::OkStatus();
}

bool Telemetry::BeginWhenReady() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!waiting_) return running_;
  }
  // Outside mu_: the readiness rule may take the dynamic loader's lock.
  if (options_.ready && !options_.ready()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (!waiting_) return running_;
  waiting_ = false;
  if (absl::Status s = BeginLocked(/*late=*/true); !s.ok()) {
    KAIROS_LOG_WARNING("%s", std::string(s.message()).c_str());
    running_ = false;
    return false;
  }
  return true;
}

absl::Status Telemetry::BeginLocked(bool late) {
  // The default name is predictable (host, pid) in a shared directory: never follow a symlink
  // planted there, never block on a FIFO, and append only to a regular file, the rules the
  // trace sink keeps (docs/OUTPUT.md); whole lines only, bounded by rotation (line_log.h).
  if (!options_.path.empty()) {
    if (absl::Status s = log_.Open(options_.path, options_.max_file_bytes); !s.ok())
      return absl::UnavailableError(absl::StrCat("telemetry: ", s.message(), "; telemetry off"));
  }
  if (options_.platform) platform_ = options_.platform();  // decided now: CUDA may be new
  int n = platform_ ? std::max(platform_->DeviceCount(), 1) : 1;
  if (options_.device) {
    gpus_.push_back(Gpu{*options_.device, nullptr, {}, {}});
  } else {
    for (int i = 0; i < n; ++i) gpus_.push_back(Gpu{static_cast<uint32_t>(i), nullptr, {}, {}});
  }
  if (platform_)
    for (Gpu& g : gpus_) g.identity = platform_->Identity(static_cast<int>(g.device));
  if (!paused_) StartSamplersLocked();
  if (options_.activity_start && options_.activity_take) {
    std::string why;
    activity_on_ = options_.activity_start(&why);
    if (!activity_on_)
      KAIROS_LOG_WARNING("telemetry: no CUPTI kernel and copy records (%s); kernels and memcpy_bytes are null",
                         why.c_str());
  }
  last_ns_ = options_.clock ? options_.clock() : UnixNowNs();
  last_ns_ -= last_ns_ % kMsNs;
  // The step count is read next to the edge's clock, before the discard below: that flush
  // can take tens of ms under load, and a step taken during it (its kernel ended after the
  // edge, so counted) used to be missed, so lines held more kernels than steps.
  if (options_.iterations) {
    last_iterations_ = options_.iterations();
    steps_timed_ = last_iterations_;
    steps_ = std::make_unique<TelemetryStepRing>();
    if (options_.step_slot != nullptr)
      options_.step_slot->store(steps_.get(), std::memory_order_release);
  }
  // Begun late (it waited for a training process), CUDA already works and a trace window
  // may hold CUPTI: what ended before the first interval is not this interval's to count.
  if (late && activity_on_)
    for (const Gpu& g : gpus_) (void)options_.activity_take(g.device, last_ns_);
  const ClockAnchor a = TakeClockAnchor();
  last_anchor_raw_ = a.raw;
  last_anchor_unix_ns_ = a.unix_ns;
  (void)ProcessFields(0);  // the CPU ticks the first interval counts from
  return absl::OkStatus();
}

std::pair<std::optional<double>, std::optional<int64_t>> Telemetry::ProcessFields(int64_t interval_ns) {
  std::string text;
  const bool ok = options_.read_proc_self_stat ? options_.read_proc_self_stat(&text)
                                               : ReadProcSelfStat(&text);
  absl::StatusOr<internal::ProcessStat> st =
      ok ? internal::ParseProcessStat(text) : absl::StatusOr<internal::ProcessStat>(absl::UnavailableError("unreadable"));
  if (!st.ok()) {
    last_cpu_ticks_ = -1;
    return {std::nullopt, std::nullopt};
  }
  const int64_t ticks = static_cast<int64_t>(st->utime_ticks + st->stime_ticks);
  std::optional<double> cpu;
  if (last_cpu_ticks_ >= 0 && interval_ns > 0) {
    const double ns_per_tick = 1e9 / static_cast<double>(sysconf(_SC_CLK_TCK));
    cpu = 100.0 * static_cast<double>(ticks - last_cpu_ticks_) * ns_per_tick /
          static_cast<double>(interval_ns);
  }
  last_cpu_ticks_ = ticks;
  return {cpu, static_cast<int64_t>(st->rss_pages) * static_cast<int64_t>(sysconf(_SC_PAGESIZE))};
}

bool Telemetry::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

void Telemetry::StartSamplersLocked() {
  if (platform_ == nullptr) return;
  for (Gpu& g : gpus_) {
    if (g.sampler) continue;
    std::unique_ptr<PmSampler> s = platform_->Open();
    absl::Status st = s ? s->Start(g.device, metrics_, options_.sample_interval_ns)
                        : absl::UnavailableError("no PM sampler");
    if (st.ok()) {
      g.sampler = std::move(s);
    } else {
      KAIROS_LOG_ONCE(LogLevel::kWarning,
                      "telemetry: GPU counters unavailable (%s); their fields are null",
                      std::string(st.message()).c_str());
    }
  }
}

void Telemetry::PollLocked() {
  for (Gpu& g : gpus_) {
    if (!g.sampler) continue;
    scratch_.clear();
    bool overflowed = false;
    (void)g.sampler->Poll(&scratch_, &overflowed);  // a failed decode leaves nulls
    for (const PmSample& s : scratch_) g.agg.Add(metrics_, s);
  }
}

void Telemetry::Pause() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!running_ || paused_) return;
  PollLocked();  // keep what was sampled up to the window
  for (Gpu& g : gpus_) {
    if (g.sampler) g.sampler->Stop();
    g.sampler.reset();
  }
  paused_ = true;
}

void Telemetry::Resume() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!running_ || !paused_) return;
  paused_ = false;
  StartSamplersLocked();
}

void Telemetry::Feed(uint32_t device, const std::vector<std::string>& metrics,
                     const std::vector<PmSample>& samples) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!running_) return;
  for (Gpu& g : gpus_) {
    if (g.device != device) continue;
    for (const PmSample& s : samples) g.agg.Add(metrics, s);
  }
}

void Telemetry::FillGpuLocked(Gpu& g, const std::vector<MemoryBaseline>& memory, int64_t now_ns,
                              TelemetryRecord* r) {
  r->device = g.device;
  r->gpu_uuid = g.identity.uuid;
  r->gpu_name = g.identity.name;
  g.agg.Take(r);
  r->gpu_memory_used_bytes.reset();
  r->gpu_memory_total_bytes.reset();
  for (const MemoryBaseline& m : memory) {
    if (m.device != static_cast<int32_t>(g.device)) continue;
    r->gpu_memory_used_bytes = static_cast<int64_t>(m.used_bytes);
    r->gpu_memory_total_bytes = static_cast<int64_t>(m.total_bytes);
  }
  if (activity_on_) {
    const TelemetryActivity a = options_.activity_take(g.device, now_ns);
    r->kernels = a.known ? std::optional<int64_t>(a.kernels) : std::nullopt;
    r->memcpy_bytes = a.known ? std::optional<int64_t>(a.memcpy_bytes) : std::nullopt;
    // Without PM sampling (no permission is common in fleets), GPU busy from the records:
    // the share of the interval with a kernel or copy running.
    if (!r->gpu_busy_pct && a.known && a.busy_ns >= 0 && r->interval_ns > 0)
      r->gpu_busy_pct = std::min(100.0, 100.0 * static_cast<double>(a.busy_ns) / static_cast<double>(r->interval_ns));
  }
}

void Telemetry::Tick(int64_t now_ns) { TickWith(now_ns, /*query_memory=*/true); }

void Telemetry::TickWith(int64_t now_ns, bool query_memory) {
  bool was_waiting;
  {
    std::lock_guard<std::mutex> lock(mu_);
    was_waiting = waiting_;
  }
  // Not begun: nothing to write; begun just now: the first interval starts here.
  if (!BeginWhenReady() || was_waiting) return;
  // Outside mu_: the query takes the dynamic loader's lock (dlopen RTLD_NOLOAD) and the
  // driver's; Pause/Feed callers must never wait behind it.
  std::vector<MemoryBaseline> memory;
  if (query_memory && options_.device_memory) memory = options_.device_memory();
  std::lock_guard<std::mutex> lock(mu_);
  if (!running_) return;
  now_ns -= now_ns % kMsNs;  // activity totals are kept per ms of the record's end
  PollLocked();
  TelemetryRecord r;
  r.ts_ns = now_ns;
  r.host = options_.host;
  r.pid = options_.pid;
  r.job_id = options_.job_id;
  r.rank = options_.rank;
  r.interval_ns = now_ns - last_ns_;
  if (options_.iterations) {
    const int64_t it = options_.iterations();
    r.steps = it - last_iterations_;
    last_iterations_ = it;
    double ns_per_tick = options_.step_ns_per_tick;
    const ClockAnchor a = TakeClockAnchor();
    if (ns_per_tick <= 0 && a.raw > last_anchor_raw_)
      ns_per_tick = static_cast<double>(a.unix_ns - last_anchor_unix_ns_) / static_cast<double>(a.raw - last_anchor_raw_);
    last_anchor_raw_ = a.raw;
    last_anchor_unix_ns_ = a.unix_ns;
    // Steps up to it - 1: the newest step's stamp may not be stored yet (the hook counts,
    // then stamps); it is timed in the next interval.
    if (it - 1 > steps_timed_) {
      if (ns_per_tick > 0 && steps_ != nullptr)
        r.step_time_ms_p50 = MedianStepMs(*steps_, steps_timed_, it - 1, ns_per_tick);
      steps_timed_ = it - 1;
    }
  }
  std::tie(r.process_cpu_pct, r.process_rss_bytes) = ProcessFields(r.interval_ns);
  std::string out;
  r.lines_lost = log_.lost_since_last_write();
  for (Gpu& g : gpus_) {
    FillGpuLocked(g, memory, now_ns, &r);
    absl::StrAppend(&out, TelemetryLine(r), "\n");
  }
  last_ns_ = now_ns;
  if (sink_ && !sink_(out) && sink_failures_++ == 0)
    KAIROS_LOG_WARNING("telemetry: the daemon did not take this interval's lines (gone, or its "
                       "queue is full); later refusals are counted only");
  if (options_.path.empty()) return;
  // One write per interval; a full disk loses whole lines (the next written line says how
  // many), never leaves half a line, never blocks long. One warning per run of failures.
  if (log_.Append(out, gpus_.size())) {
    if (write_warned_)
      KAIROS_LOG_INFO("telemetry: writing '%s' again; %llu lines were lost", options_.path.c_str(),
                      static_cast<unsigned long long>(r.lines_lost));
    write_warned_ = false;
  } else if (!write_warned_) {
    write_warned_ = true;
    KAIROS_LOG_WARNING("telemetry: cannot write '%s' (disk full?); lines are lost until it can",
                       options_.path.c_str());
  }
}

void Telemetry::SetSink(Sink sink) {
  std::lock_guard<std::mutex> lock(mu_);
  sink_ = std::move(sink);
}

void Telemetry::Finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!running_ || stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  const int64_t now = options_.clock ? options_.clock() : UnixNowNs();
  int64_t last;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (waiting_) return;  // never began (not a training process): nothing to write
    last = last_ns_;
  }
  // Under a millisecond since the last edge: nothing to say (edges are whole ms).
  // The exit line has no device memory: this is the exiting thread, and the driver may be
  // tearing down; it is never called from here.
  if (now - now % kMsNs > last) TickWith(now, /*query_memory=*/false);
}

void Telemetry::ThreadMain() {
  NameThisThread("telem");
  std::unique_lock<std::mutex> lock(mu_);
  // Soon after start first (a CUDA program loads the driver in its first milliseconds), then
  // every kTelemetryReadyPollNs (a launcher may live for hours).
  int64_t poll_ns = kTelemetryReadyPollNs / 16;
  while (waiting_ && !stop_) {
    cv_.wait_for(lock, std::chrono::nanoseconds(poll_ns));
    poll_ns = std::min(2 * poll_ns, kTelemetryReadyPollNs);
    if (stop_) return;
    lock.unlock();
    const bool began = BeginWhenReady();
    lock.lock();
    if (!began && !waiting_) return;  // became ready but could not begin (logged): off
  }
  int64_t next = last_ns_ + options_.interval_ns;
  while (!stop_) {
    const int64_t now = options_.clock ? options_.clock() : UnixNowNs();
    if (now < next) {
      cv_.wait_for(lock, std::chrono::nanoseconds(std::min<int64_t>(next - now, 200000000)));
      continue;
    }
    lock.unlock();
    Tick(now);
    lock.lock();
    next += options_.interval_ns;
    if (next <= now) next = now + options_.interval_ns;  // a stall skips, never bursts
  }
}

}  // namespace kairos
