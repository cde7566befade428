// File: profiler.cc — see profiler.h. The request side: init, requests, sync start/stop,
// flush, fork and exit handling, the step hook. The controller loop is in controller.cc.
// Layer: kairos_session. Threading: every method locks mu_; waits are bounded.
#include "session/profiler.h"
#include "counters/host_sampler.h"
#include "session/daemon_glue.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>

#include "absl/strings/str_cat.h"
#include "clock.h"
#include "config/env.h"
#include "log.h"
#include "session/daemon_glue.h"
#ifdef KAIROS_HAVE_CUPTI
#include "activity/cupti_source.h"
#endif

namespace kairos {

std::atomic<int64_t> g_iteration{0};
std::atomic<int64_t> g_step_wake_at{std::numeric_limits<int64_t>::max()};

namespace {

std::atomic<Profiler*> g_profiler{nullptr};
std::once_flag g_profiler_once;
// Profilers abandoned by fork(), kept reachable so leak checkers in the child stay quiet.
Profiler* g_abandoned[16];
int g_abandoned_count = 0;

constexpr auto kStartWait = std::chrono::seconds(10);
constexpr auto kFlushWait = std::chrono::seconds(60);

void ChildAfterFork() { Profiler::ResetAfterFork(); }
void AtExitHandler() {
  Profiler* p = g_profiler.load(std::memory_order_acquire);
  if (p != nullptr) p->AtExit();
}

}  // namespace

namespace {
std::string_view Trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t' || v.front() == '\r')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) v.remove_suffix(1);
  return v;
}
}  // namespace

bool TextNamesWindow(std::string_view text) {
  static constexpr std::string_view kKeys[] = {
      "PROFILE_START_TIME",       "PROFILE_START_ITERATION", "PROFILE_START_ITERATION_ROUNDUP",
      "ACTIVITIES_ITERATIONS",    "ACTIVITIES_DURATION_MSECS", "ACTIVITIES_DURATION_SECS",
      "ACTIVITIES_WARMUP_PERIOD_SECS", "ACTIVITIES_WARMUP_ITERATIONS"};
  while (!text.empty()) {
    const size_t eol = text.find_first_of("\n;");
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    line = line.substr(0, line.find('#'));
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = Trim(line.substr(0, eq));
    for (std::string_view k : kKeys)
      if (key == k) return true;
  }
  return false;
}

Profiler::Profiler() {
  auto cpu = std::make_unique<internal::CpuRecorder>();
  cpu_ = cpu.get();
  sources_.push_back(std::move(cpu));
}

Profiler& Profiler::Get() {
  Profiler* p = g_profiler.load(std::memory_order_acquire);
  if (p != nullptr) return *p;
  std::call_once(g_profiler_once, [] {
    auto* fresh = new Profiler;  // never destroyed: see the header
    g_profiler.store(fresh, std::memory_order_release);
    pthread_atfork(nullptr, nullptr, ChildAfterFork);
    std::atexit(AtExitHandler);
    fresh->InitFromEnvironment();
    StartDaemonClientIfEnabled(fresh->base_config().daemon_poll_ms);  // no-op unless enabled
  });
  return *g_profiler.load(std::memory_order_acquire);
}

void Profiler::ResetAfterFork() {
  // Child of fork(): only the forking thread exists. Nothing of the parent's profiler is
  // touched (its mutex may be held forever); a fresh idle one with the env base config.
  internal::CpuRecorderAfterForkChild();
  g_iteration.store(0, std::memory_order_relaxed);
  g_step_wake_at.store(std::numeric_limits<int64_t>::max(), std::memory_order_relaxed);
  Profiler* old = g_profiler.load(std::memory_order_relaxed);
  if (old == nullptr) return;
  if (g_abandoned_count < 16) g_abandoned[g_abandoned_count++] = old;
#ifdef KAIROS_HAVE_CUPTI
  internal::ReplaceProcessCuptiPoolAfterFork();
#endif
  auto* fresh = new Profiler;
  // The parent's sources stay with the abandoned root; the child gets fresh idle ones.
  fresh->RegisterBuiltinSources(false);
  auto loaded = LoadConfigFromEnv(nullptr);
  if (loaded.ok() && loaded->config.has_value()) fresh->base_config_ = *loaded->config;
  g_profiler.store(fresh, std::memory_order_release);
}

void Profiler::InitFromEnvironment() {
  const EnvSettings& env = Env();
  if (env.log_level.has_value()) SetLogLevel(*env.log_level);
  for (const std::string& w : env.warnings) KAIROS_LOG_WARNING("%s", w.c_str());
  LoadEnvironmentConfig();
  // The daemon client (its own thread) starts only when the environment asks for it.
  if (env.use_daemon) StartDaemonClientIfEnabled(base_config().daemon_poll_ms);
}

void Profiler::RegisterBuiltinSources(bool load_now) {
#ifdef KAIROS_HAVE_CUPTI
  // Registered by the root itself, before any window can be scheduled, so the first
  // session (an environment-configured one included) already has the "cuda" source.
  internal::CuptiSourceOptions options;
  options.library_path = Env().cupti_library;
  options.current_range_id = internal::CurrentCpuRangeId;
  auto cuda = std::make_unique<internal::CuptiSource>(std::move(options));
  if (load_now) cuda->LoadApi();
  RegisterTraceSource(std::move(cuda));
#else
  (void)load_now;
#endif
  // Host metrics (/proc) on the timeline; idle unless a session runs with
  // KAIROS_HOST_METRICS_INTERVAL_MS > 0 (default 100).
  RegisterTraceSource(std::make_unique<HostSampler>());
}

void Profiler::LoadEnvironmentConfig() {
  std::vector<std::string> warnings;
  auto loaded = LoadConfigFromEnv(&warnings);
  for (const std::string& w : warnings) KAIROS_LOG_WARNING("%s", w.c_str());
  RegisterBuiltinSources(loaded.ok() && loaded->config.has_value() &&
                         loaded->config->activities_enabled && TextNamesWindow(loaded->text));
  if (!loaded.ok()) {
    KAIROS_LOG_WARNING("config from the environment rejected: %s",
                       std::string(loaded.status().message()).c_str());
    return;
  }
  if (!loaded->config.has_value()) return;  // nothing configured: stay dormant
  std::unique_lock<std::mutex> lock(mu_);
  base_config_ = *loaded->config;
  env_config_ = base_config_;
  if (!base_config_.activities_enabled) return;
  // A config that only sets options (e.g. KAIROS_DAEMON_POLL_MS for an on-demand job, or an
  // output format) must not start a trace by itself; only one that names a window does.
  if (!TextNamesWindow(loaded->text)) {
    KAIROS_LOG_INFO("config from %s names no window; waiting for a trigger",
                    loaded->origin.c_str());
    return;
  }
  KAIROS_LOG_INFO("trace configured by %s", loaded->origin.c_str());
  absl::Status s = ScheduleLocked(Request{base_config_, ConfigSource::kEnv, false}, lock);
  if (!s.ok()) {
    KAIROS_LOG_WARNING("trace from %s not scheduled: %s", loaded->origin.c_str(),
                       std::string(s.message()).c_str());
    return;
  }
  const Config& c = base_config_;
  if (!c.IterationMode() && c.profile_start_time_ms <= 0 && c.warmup_secs <= 0)
    startup_seq_ = session_seq_;
}

void Profiler::WaitForStartupWindow() {
  std::unique_lock<std::mutex> lock(mu_);
  if (startup_seq_ == 0) return;
  const uint64_t seq = startup_seq_;
  startup_seq_ = 0;  // one wait per process: later callers (and the second hook) go on
  if (!done_cv_.wait_for(lock, kStartWait, [&] {
        return completed_seq_ >= seq || recording_seq_ == seq;
      })) {
    KAIROS_LOG_WARNING("the trace configured in the environment did not start within %lld s; "
                       "the program continues, its first GPU work may be missing",
                       static_cast<long long>(kStartWait.count()));
  }
}

absl::Status Profiler::Init(std::string_view text) {
  std::vector<std::string> warnings;
  Config env_config;
  {
    std::lock_guard<std::mutex> lock(mu_);
    env_config = env_config_;
  }
  absl::StatusOr<Config> parsed =
      ParseConfig(text, env_config, ParseOptions{ConfigSource::kApi, 0}, &warnings);
  for (const std::string& w : warnings) KAIROS_LOG_WARNING("%s", w.c_str());
  if (!parsed.ok()) return parsed.status();
  std::unique_lock<std::mutex> lock(mu_);
  base_config_ = *parsed;
  shut_down_ = false;
  if (!TextNamesWindow(text) || !base_config_.activities_enabled) return absl::OkStatus();
  return ScheduleLocked(Request{base_config_, ConfigSource::kApi, false}, lock);
}

absl::Status Profiler::ScheduleLocked(Request request, std::unique_lock<std::mutex>&) {
  if (shut_down_) return absl::FailedPreconditionError("kairos is shut down");
  if (pending_ != nullptr || sm_.state() != SessionState::kIdle)
    return absl::FailedPreconditionError("profiler busy");
  const Config& c = request.config;
  if (!request.sync && !c.IterationMode() && c.profile_start_time_ms > 0) {
    const int64_t now_ms = UnixNowNs() / 1000000;
    if (c.profile_start_time_ms < now_ms) {
      return absl::InvalidArgumentError(absl::StrCat(
          "start timestamp is in the past (PROFILE_START_TIME=", c.profile_start_time_ms,
          " is ", now_ms - c.profile_start_time_ms, " ms before now)"));
    }
    if (c.profile_start_time_ms - now_ms < c.warmup_secs * 1000) {
      return absl::InvalidArgumentError(absl::StrCat(
          "insufficient time for warmup: PROFILE_START_TIME is ", c.profile_start_time_ms - now_ms,
          " ms ahead, ACTIVITIES_WARMUP_PERIOD_SECS=", c.warmup_secs));
    }
  }
  if (absl::Status s = EnsureControllerLocked(); !s.ok()) return s;
  request.accepted_unix_ns = UnixNowNs();
  boundaries_.clear();
  if (!request.sync && c.IterationMode()) {
    const int64_t warm = std::max<int64_t>(c.warmup_iterations, 0);
    int64_t start = c.profile_start_iteration;
    const int64_t cur = g_iteration.load();
    if (start - warm <= cur) {
      // Already passed (or running now: its beginning cannot be observed any more).
      const int64_t roundup = c.profile_start_iteration_roundup;
      int64_t next = cur + 1 + warm;
      if (roundup > 0) next = (next + roundup - 1) / roundup * roundup;
      KAIROS_LOG_INFO("iteration %lld has already begun (now %lld); the window starts at %lld",
                      static_cast<long long>(start - warm), static_cast<long long>(cur),
                      static_cast<long long>(next));
      start = next;
    }
    request.start_iteration = start;
    request.warmup_iteration = start - warm;
    request.never_stepped = cur == 0;
    request.cpu_epoch = cpu_->Prepare(c);
    armed_cpu_epoch_ = request.cpu_epoch;
    armed_iteration_ = request.warmup_iteration;
    // Armed now, on the requesting thread, so no boundary is missed while the controller
    // thread wakes up. seq_cst: pairs with StepHook (see there).
    g_step_wake_at.store(request.warmup_iteration);
  }
  pending_ = std::make_unique<Request>(std::move(request));
  ++session_seq_;
  cv_.notify_all();
  return absl::OkStatus();
}

absl::Status Profiler::EnsureControllerLocked() {
  if (controller_started_) return absl::OkStatus();
  try {
    std::thread t([this] { ControllerMain(); });
    t.detach();  // the root is never destroyed, so the thread never outlives its object
  } catch (...) {
    return absl::ResourceExhaustedError("cannot start the kairos controller thread");
  }
  controller_started_ = true;
  return absl::OkStatus();
}

absl::Status Profiler::RequestTrace(const Config& config, ConfigSource source) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!config.activities_enabled)
    return absl::InvalidArgumentError("ACTIVITIES_ENABLED is false; nothing to trace");
  return ScheduleLocked(Request{config, source, false}, lock);
}

absl::Status Profiler::Start() {
  std::unique_lock<std::mutex> lock(mu_);
  if (sm_.state() == SessionState::kWarmup || pending_ != nullptr) {
    // A framework (sync) trace pre-empts a request that is still warming up.
    KAIROS_LOG_INFO("kairos_start cancels the trace request that was warming up");
    cancel_requested_ = true;
    cv_.notify_all();
    const uint64_t target = session_seq_;
    if (!done_cv_.wait_for(lock, kStartWait, [&] { return completed_seq_ >= target; }))
      return absl::UnavailableError("timed out cancelling the pending trace");
  }
  if (absl::Status s = ScheduleLocked(Request{base_config_, ConfigSource::kApi, true}, lock);
      !s.ok())
    return s;
  const uint64_t seq = session_seq_;
  const bool opened = done_cv_.wait_for(lock, kStartWait, [&] {
    return completed_seq_ >= seq || (recording_seq_ == seq);
  });
  if (!opened) return absl::UnavailableError("timed out starting the trace");
  if (recording_seq_ != seq) return last_result_.status.ok()
                                        ? absl::InternalError("trace ended before it started")
                                        : last_result_.status;
  return absl::OkStatus();
}

absl::Status Profiler::Stop() {
  const uint64_t now_raw = ReadRawClock();
  std::lock_guard<std::mutex> lock(mu_);
  if (sm_.state() != SessionState::kRecording || stop_requested_)
    return absl::FailedPreconditionError("no trace is recording");
  stop_requested_ = true;
  stop_raw_ = now_raw;
  cv_.notify_all();
  return absl::OkStatus();
}

absl::StatusOr<std::string> Profiler::Flush() {
  const uint64_t now_raw = ReadRawClock();
  std::unique_lock<std::mutex> lock(mu_);
  if (sm_.state() == SessionState::kIdle && pending_ == nullptr) {
    if (last_path_.empty()) return absl::NotFoundError("no trace has been written");
    return last_path_;
  }
  const uint64_t target = session_seq_;
  if (sm_.state() == SessionState::kRecording && !stop_requested_) {
    stop_requested_ = true;
    stop_raw_ = now_raw;
  } else if (sm_.state() == SessionState::kWarmup || pending_ != nullptr) {
    cancel_requested_ = true;
  }
  cv_.notify_all();
  if (!done_cv_.wait_for(lock, kFlushWait, [&] { return completed_seq_ >= target; }))
    return absl::UnavailableError("timed out waiting for the trace to be written");
  if (!last_result_.status.ok()) return last_result_.status;
  return last_result_.path;
}

void Profiler::Shutdown() {
  AtExit();
  std::lock_guard<std::mutex> lock(mu_);
  shut_down_ = true;
}

void Profiler::AtExit() {
  const uint64_t now_raw = ReadRawClock();
  std::unique_lock<std::mutex> lock(mu_);
  if (sm_.state() == SessionState::kIdle && pending_ == nullptr) return;
  const uint64_t target = session_seq_;
  if (sm_.state() == SessionState::kRecording && !stop_requested_) {
    stop_requested_ = true;
    stop_raw_ = now_raw;
  } else if (sm_.state() == SessionState::kWarmup || pending_ != nullptr) {
    cancel_requested_ = true;
  }
  cv_.notify_all();
  const auto timeout = std::chrono::milliseconds(std::max<int64_t>(
      active_.config.exit_flush_timeout_ms, base_config_.exit_flush_timeout_ms));
  if (!done_cv_.wait_for(lock, timeout, [&] { return completed_seq_ >= target; })) {
    KAIROS_LOG_WARNING("trace not finished within KAIROS_EXIT_FLUSH_TIMEOUT_MS=%lld ms; exiting",
                       static_cast<long long>(timeout.count()));
  }
}

void Profiler::RegisterTraceSource(std::unique_ptr<TraceSource> source) {
  if (source == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  sources_.push_back(std::move(source));
}

void Profiler::SetMetadata(std::string key, std::string value) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& kv : metadata_) {
    if (kv.first == key) {
      kv.second = std::move(value);
      return;
    }
  }
  metadata_.emplace_back(std::move(key), std::move(value));
}

void Profiler::OnStepBoundary(int64_t iteration, uint64_t raw_time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (boundaries_.size() < 1024) boundaries_.emplace_back(iteration, raw_time);
  if (armed_cpu_epoch_ != 0 && iteration >= armed_iteration_) {
    // The warm-up boundary of an iteration window: CPU ranges record from this instant, so
    // the first ProfilerStep and the ranges around it do not depend on the controller's
    // wake-up latency.
    internal::g_cpu_epoch.store(armed_cpu_epoch_, std::memory_order_release);
    armed_cpu_epoch_ = 0;
  }
  cv_.notify_all();
}

SessionState Profiler::state() {
  std::lock_guard<std::mutex> lock(mu_);
  return sm_.state();
}

Config Profiler::base_config() {
  std::lock_guard<std::mutex> lock(mu_);
  return base_config_;
}

uint64_t Profiler::completed_sessions() {
  std::lock_guard<std::mutex> lock(mu_);
  return completed_seq_;
}

bool Profiler::WaitForCompletedSessions(uint64_t n, int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  return done_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                           [&] { return completed_seq_ >= n; });
}

void StepHook() {
  const uint64_t raw = ReadRawClock();
  // seq_cst (a locked add on x86, same cost as relaxed): pairs with the controller's
  // store of g_step_wake_at followed by its load of g_iteration, so one side always sees
  // the other and a boundary is never missed.
  const int64_t n = g_iteration.fetch_add(1) + 1;
  // The boundary record goes in before OnStepBoundary when recording is on: the boundary
  // that ends an iteration window wakes the controller, which may switch recording off
  // before this thread runs on, and the last ProfilerStep would lose its end. When recording
  // is off, after: the boundary that starts a window switches recording on in there.
  const bool recording = internal::g_cpu_epoch.load(std::memory_order_relaxed) != 0;
  if (recording) internal::RecordStep(n, raw);
  if (__builtin_expect(n >= g_step_wake_at.load(), 0)) Profiler::Get().OnStepBoundary(n, raw);
  if (!recording) internal::RecordStep(n, raw);
}

}  // namespace kairos
