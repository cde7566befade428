// File: controller.cc — see controller.h. The request side: init, requests, synchronous
// start/stop, flush, exit, the step hook. The runner is in runner.cc; the process root
// (creation, fork, exit, signals) in root.cc.
// Layer: kairos_session. Threading: every method locks mu_; every wait is bounded.
#include "session/controller.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

#include "absl/strings/str_cat.h"
#include "activity/cpu_recorder.h"
#include "util/clock.h"
#include "config/env.h"
#include "counters/telemetry.h"
#include "util/dcheck.h"
#include "util/log.h"
#include "util/signal_mask.h"

namespace kairos {

StepState g_steps;

namespace {
void NoteStepTime(int64_t iteration, uint64_t raw) {
  StepState::Slot& slot = g_steps.ring[iteration % StepState::kRing];
  slot.iteration.store(-1, std::memory_order_relaxed);
  // Orders the -1 before the new time (no instruction on x86), so StepBoundaryRaw's second
  // look at the iteration catches a slot rewritten while it read the time.
  std::atomic_thread_fence(std::memory_order_release);
  slot.raw.store(raw, std::memory_order_relaxed);
  slot.iteration.store(iteration, std::memory_order_release);
}

// The raw clock value of Unix time `unix_ms`, for a request stamped by the daemon; 0 when the
// stamp is more than a minute old (no step ring reaches that far; plan from the poll instead).
// A stamp ahead of this host's clock (another host's daemon) reads as now. For the TSC one
// anchor and a 1 ms slope measurement convert it: call without the session mutex.
uint64_t RawAtUnixMs(int64_t unix_ms) {
  const ClockAnchor a = TakeClockAnchor();
  const int64_t ago_ns = a.unix_ns - unix_ms * 1000000;
  if (ago_ns > 60 * 1000000000LL) return 0;
  if (ago_ns <= 0) return a.raw;
  double ns_per_tick = 1.0;
  if (RawClockIsTsc()) {
    ClockConverter c;
    c.SetAnchors({a});
    ns_per_tick = c.ns_per_tick();
  }
  const uint64_t ticks = static_cast<uint64_t>(static_cast<double>(ago_ns) / ns_per_tick);
  return ticks < a.raw ? a.raw - ticks : 0;
}
}  // namespace

int64_t IterationAtRaw(uint64_t raw) {
  int64_t k = g_steps.iteration.load();
  for (const int64_t oldest = std::max<int64_t>(0, k - StepState::kRing + 1); k > oldest; --k) {
    const StepState::Slot& slot = g_steps.ring[k % StepState::kRing];
    if (slot.iteration.load(std::memory_order_acquire) != k) continue;  // being written: now
    if (slot.raw.load(std::memory_order_relaxed) <= raw) return k;
  }
  return k;
}

uint64_t StepBoundaryRaw(int64_t iteration) {
  if (iteration < 1) return 0;
  const StepState::Slot& slot = g_steps.ring[iteration % StepState::kRing];
  if (slot.iteration.load(std::memory_order_acquire) != iteration) return 0;
  const uint64_t raw = slot.raw.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  // Still the same boundary: the slot was not rewritten for a boundary 64 later meanwhile.
  if (slot.iteration.load(std::memory_order_relaxed) != iteration) return 0;
  return raw;
}

void StepStateAfterForkChild() {
  g_steps.iteration.store(0, std::memory_order_relaxed);
  g_steps.wake_at.store(std::numeric_limits<int64_t>::max(), std::memory_order_relaxed);
  g_steps.telemetry.store(nullptr, std::memory_order_relaxed);
  for (StepState::Slot& slot : g_steps.ring) {
    slot.iteration.store(-1, std::memory_order_relaxed);
    slot.raw.store(0, std::memory_order_relaxed);
  }
}

SessionController::SessionController() = default;

SessionController::~SessionController() {
  Shutdown();
  std::unique_lock<std::mutex> lock(mu_);
  KAIROS_DCHECK(!OnRunnerLocked(), "a session is not destroyed from its own runner");
  stopping_ = true;
  cv_.notify_all();
  lock.unlock();
  if (runner_.joinable()) runner_.join();
}

SchedulerEvent SessionController::Now(SessionEventKind kind) const {
  SchedulerEvent e;
  e.kind = kind;
  e.now_ns = UnixNowNs();
  e.iteration = g_steps.iteration.load();
  return e;
}

void SessionController::InstallEnvironmentConfig(const absl::StatusOr<ConfigFromEnv>& loaded,
                                                 bool schedule) {
  if (!loaded.ok()) {
    KAIROS_LOG_WARNING("config from the environment rejected: %s",
                       std::string(loaded.status().message()).c_str());
    return;
  }
  if (!loaded->config.has_value()) return;  // nothing configured: stay dormant
  std::unique_lock<std::mutex> lock(mu_);
  base_config_ = *loaded->config;
  env_config_ = base_config_;
  if (!schedule || !base_config_.activities_enabled) return;
  // A config that only sets options (e.g. KAIROS_DAEMON_POLL_MS for an on-demand job, or an
  // output format) must not start a trace by itself; only one that names a window does.
  if (!loaded->info.names_window) {
    KAIROS_LOG_INFO("config from %s names no window; waiting for a trigger",
                    loaded->origin.c_str());
    return;
  }
  KAIROS_LOG_INFO("trace configured by %s", loaded->origin.c_str());
  absl::Status s = RequestLocked(base_config_, ConfigSource::kEnv, false);
  if (!s.ok()) {
    KAIROS_LOG_WARNING("trace from %s not scheduled: %s", loaded->origin.c_str(),
                       std::string(s.message()).c_str());
    return;
  }
  const Config& c = base_config_;
  if (!c.IterationMode() && c.profile_start_time_ms <= 0 && c.warmup_secs <= 0)
    startup_session_ = sched_.accepted();
}

void SessionController::WaitForStartupWindow() {
  std::unique_lock<std::mutex> lock(mu_);
  if (startup_session_ == 0) return;
  const uint64_t seq = startup_session_;
  startup_session_ = 0;  // one wait per process: later callers (and the second hook) go on
  if (!done_cv_.wait_for(lock, std::chrono::milliseconds(kStartWaitMs), [&] {
        return sched_.finished() >= seq || sched_.state() == SessionState::kRecording;
      })) {
    KAIROS_LOG_WARNING("the trace configured in the environment did not start within %lld s; "
                       "the program continues, its first GPU work may be missing",
                       static_cast<long long>(kStartWaitMs / 1000));
  }
}

absl::Status SessionController::Init(std::string_view text,
                                     const std::vector<ConfigValue>& values) {
  std::vector<std::string> warnings;
  Config env_config;
  {
    std::lock_guard<std::mutex> lock(mu_);
    env_config = env_config_;
  }
  ConfigParseInfo info;
  absl::StatusOr<Config> parsed =
      ParseConfig(text, values, env_config, ParseOptions{ConfigSource::kApi, 0}, &warnings, &info);
  for (const std::string& w : warnings) KAIROS_LOG_WARNING("%s", w.c_str());
  if (!parsed.ok()) return parsed.status();
  std::unique_lock<std::mutex> lock(mu_);
  sched_.Handle(Now(SessionEventKind::kReopen)).IgnoreError();  // never refused
  if (info.names_window && parsed->activities_enabled) {
    // Installed only when the window is accepted: a rejected init ("profiler busy", a start
    // time in the past) leaves the previous config in force.
    if (absl::Status s = RequestLocked(*parsed, ConfigSource::kApi, false); !s.ok()) return s;
  }
  base_config_ = *std::move(parsed);
  return absl::OkStatus();
}

absl::Status SessionController::RequestLocked(const Config& requested, ConfigSource source,
                                              bool sync, uint64_t reference_raw) {
  Config config = requested;
  config.iteration_fallback_timeout_ms =
      IterationFallbackMs(requested.iteration_fallback_timeout_ms, source);
  // A synchronous request waits for the runner to open its window: never from the runner.
  KAIROS_DCHECK(!OnRunnerLocked(),
                "requests come from the application's or the daemon client's threads");
  // Refused before planning: a busy profiler says so, not a planning error.
  if (absl::Status s = sched_.Admit(); !s.ok()) return s;
  // The runner first (the first request starts its thread): between the iteration read below
  // and the early start's arming, the job steps on; a thread start there (milliseconds under
  // ASan on a loaded machine) let a job at 200 us a step pass the planned start boundary
  // before recording was armed, and the window's first step lost its first ranges
  // (daemon_e2e_test under ASan). A request refused by planning leaves an idle runner.
  if (absl::Status s = EnsureRunnerLocked(); !s.ok()) return s;
  SchedulerEvent e = Now(SessionEventKind::kRequest);
  RequestInstant at;
  at.now_ns = e.now_ns;
  at.iteration = e.iteration;
  // The daemon's poll tick (or stamp), as an iteration: every rank of the job plans from it.
  if (reference_raw != 0) at.reference_iteration = IterationAtRaw(reference_raw);
  std::string note;
  absl::StatusOr<WindowPlan> plan = PlanRequest(config, sync, at, &note);
  if (!plan.ok()) return plan.status();
  if (!note.empty()) KAIROS_LOG_INFO("%s", note.c_str());
  e.plan = &*plan;
  if (absl::Status s = sched_.Handle(e); !s.ok()) return s;
  KAIROS_DCHECK(sched_.state() == SessionState::kArmed, "an accepted request is armed");
  active_ = Active{config, source};
  boundaries_.clear();
  close_raw_ = 0;
  if (plan->iteration_mode) {
    // Armed now, on the requesting thread, so no boundary is missed while the runner wakes
    // up: the step hook starts the cpu source at the warm-up boundary. seq_cst: pairs with
    // StepHook (see there).
    for (auto& s : sources_) s->PrepareEarlyStart(config);
    g_steps.wake_at.store(plan->warmup_iteration);
    // A step on another thread (the daemon client's request, the job's steps) between the
    // read of g_steps.iteration above and this store found no hook to call, so nothing switched
    // recording on at its boundary; its time is in the step ring (CountedBoundaryRaw finds
    // it). Store then load here, increment then load in StepHook: one side sees the other.
    if (g_steps.iteration.load() >= plan->warmup_iteration) {
      for (auto& s : sources_) s->StartEarly();
      // Past the start boundary too: CPU ranges record only from here, so the CPU source is
      // ready only now, as CUPTI after a late enable; SourcesWarm moves the start (or says
      // what is incomplete) instead of a window whose first step silently lacks its ranges.
      if (g_steps.iteration.load() >= plan->start_iteration) active_.cpu_ready_raw = ReadRawClock();
    }
  }
  cv_.notify_all();
  return absl::OkStatus();
}

absl::Status SessionController::EnsureRunnerLocked() {
  KAIROS_DCHECK(runner_started_ == runner_.joinable(), "a started runner stays joinable");
  if (runner_started_) return absl::OkStatus();
  // The runner, and the threads it starts, never take the job's SIGTERM/SIGINT.
  const JobSignalsBlocked blocked;
  try {
    // Kept joinable: the destructor (a test's session) joins it; the root's session is never
    // destroyed, so its runner is never joined.
    runner_ = std::thread([this] { RunnerMain(); });
  } catch (...) {
    return absl::ResourceExhaustedError("cannot start the kairos session thread");
  }
  runner_started_ = true;
  return absl::OkStatus();
}

absl::Status SessionController::RequestTrace(const Config& config, ConfigSource source,
                                             uint64_t reference_raw) {
  // The daemon's stamp is the one instant every rank of the job shares exactly; the poll tick
  // is shared only as closely as the ranks' poller threads wake up together.
  if (config.request_time_ms > 0 && config.IterationMode()) {
    if (const uint64_t stamped = RawAtUnixMs(config.request_time_ms); stamped != 0)
      reference_raw = stamped;
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (!config.activities_enabled)
    return absl::InvalidArgumentError("ACTIVITIES_ENABLED is false; nothing to trace");
  return RequestLocked(config, source, false, reference_raw);
}

bool SessionController::WaitFinishedLocked(std::unique_lock<std::mutex>& lock, uint64_t seq,
                                           int64_t timeout_ms) {
  KAIROS_DCHECK(lock.owns_lock(), "waits with the session lock held");
  // The runner finishes sessions: waiting for one on it would wait out the whole bound.
  KAIROS_DCHECK(!OnRunnerLocked(), "the runner never waits for a session to finish");
  return done_cv_.wait_for(lock, std::chrono::milliseconds(std::max<int64_t>(timeout_ms, 0)),
                           [&] { return sched_.finished() >= seq; });
}

absl::Status SessionController::EndCurrentLocked(uint64_t now_raw, SessionEventKind kind) {
  absl::Status s = sched_.Handle(Now(kind));
  if (s.ok()) {
    // Recording closed now, or an iteration window past its start boundary closes (now or once
    // warm): the window ends here unless its end boundary came first. A cancel records nothing.
    if (sched_.outcome() != Outcome::kCancelled) close_raw_ = now_raw;
    cv_.notify_all();
  }
  return s;
}

absl::Status SessionController::Start() {
  // One deadline for the whole call: cancelling a waiting request and opening the window
  // together take at most kStartWaitMs.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kStartWaitMs);
  std::unique_lock<std::mutex> lock(mu_);
  if (sched_.state() == SessionState::kArmed || sched_.state() == SessionState::kWarmUp) {
    // A framework (sync) trace pre-empts a request whose window has not opened: the cancel
    // is an edge to Flushing, so it cannot be lost; the runner only releases the sources.
    KAIROS_LOG_INFO("kairos_start cancels the trace request that was waiting to open");
    // Refused only when nothing waits to open; then there is nothing to cancel.
    sched_.Handle(Now(SessionEventKind::kCancel)).IgnoreError();
    cv_.notify_all();
  }
  if (sched_.state() == SessionState::kFlushing && sched_.outcome() != Outcome::kClosed) {
    const uint64_t cancelled = sched_.accepted();
    if (!done_cv_.wait_until(lock, deadline, [&] { return sched_.finished() >= cancelled; }))
      return absl::UnavailableError("timed out cancelling the pending trace");
  }
  if (absl::Status s = RequestLocked(base_config_, ConfigSource::kApi, true); !s.ok()) return s;
  const uint64_t seq = sched_.accepted();
  const bool settled = done_cv_.wait_until(lock, deadline, [&] {
    return sched_.finished() >= seq || sched_.state() == SessionState::kRecording ||
           sched_.state() == SessionState::kFlushing;
  });
  if (!settled) {
    // Bounded: the window is cancelled so it cannot open behind the caller's back.
    sched_.Handle(Now(SessionEventKind::kCancel)).IgnoreError();
    cv_.notify_all();
    return absl::UnavailableError("timed out starting the trace");
  }
  if (sched_.accepted() == seq && sched_.state() == SessionState::kRecording)
    return absl::OkStatus();
  if (sched_.accepted() == seq && sched_.state() == SessionState::kFlushing &&
      sched_.outcome() == Outcome::kClosed)
    return absl::OkStatus();  // opened, and already stopped by another thread
  return last_result_.status.ok() ? absl::InternalError("trace ended before it started")
                                  : last_result_.status;
}

absl::Status SessionController::Stop() {
  const uint64_t now_raw = ReadRawClock();
  std::lock_guard<std::mutex> lock(mu_);
  return EndCurrentLocked(now_raw, SessionEventKind::kStopRecording);
}

absl::StatusOr<std::string> SessionController::Flush() {
  const uint64_t now_raw = ReadRawClock();
  std::unique_lock<std::mutex> lock(mu_);
  if (!sched_.busy()) {
    // The most recent trace's outcome, so that stop-then-flush gets the same answer whether
    // the runner finished writing before the flush came or after (a failed write used to
    // return an older trace's path when it finished first).
    if (!last_result_.status.ok()) return last_result_.status;
    if (last_path_.empty()) return absl::NotFoundError("no trace has been written");
    return last_path_;
  }
  const uint64_t seq = sched_.accepted();
  EndCurrentLocked(now_raw).IgnoreError();  // refused: nothing left to end
  if (!WaitFinishedLocked(lock, seq, kFlushWaitMs))
    return absl::UnavailableError("timed out waiting for the trace to be written");
  if (!last_result_.status.ok()) return last_result_.status;
  return last_result_.path;
}

int64_t SessionController::ExitFlushBoundMs() {
  std::lock_guard<std::mutex> lock(mu_);
  // The base config's value only: a daemon request's config cannot lengthen the exit.
  return std::clamp<int64_t>(base_config_.exit_flush_timeout_ms, 0, kMaxExitFlushMs);
}

void SessionController::Shutdown() {
  AtExit();
  std::lock_guard<std::mutex> lock(mu_);
  sched_.Handle(Now(SessionEventKind::kShutdown)).IgnoreError();  // never refused
}

void SessionController::AtExit() {
  const uint64_t now_raw = ReadRawClock();
  const int64_t bound_ms = ExitFlushBoundMs();
  std::unique_lock<std::mutex> lock(mu_);
  if (!sched_.busy()) return;
  const uint64_t seq = sched_.accepted();
  const int64_t at = g_steps.iteration.load();
  if (sched_.plan().iteration_mode && at < sched_.PlannedStart() &&
      (sched_.state() == SessionState::kArmed || sched_.state() == SessionState::kWarmUp)) {
    // An iteration window whose start was not reached is cancelled without a trace: say why
    // (the process's own config does not fall back to a duration window).
    KAIROS_LOG_WARNING(
        "the process exits at iteration %lld, before the window at iteration %lld opened: no "
        "trace%s",
        static_cast<long long>(at), static_cast<long long>(sched_.PlannedStart()),
        at == 0 ? " (no iteration was counted: call kairos_step() once per training step, or "
                  "run PyTorch under `python3 -m kairos run`; docs/PYTORCH.md)"
                : "");
  }
  EndCurrentLocked(now_raw).IgnoreError();  // refused: nothing left to end
  if (!WaitFinishedLocked(lock, seq, bound_ms)) {
    KAIROS_LOG_WARNING("trace not finished within KAIROS_EXIT_FLUSH_TIMEOUT_MS=%lld ms; exiting",
                       static_cast<long long>(bound_ms));
  }
}

void SessionController::RegisterTraceSource(std::unique_ptr<TraceSource> source) {
  if (source == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  sources_.push_back(std::move(source));
}

void SessionController::RegisterJoiningTraceSource(std::unique_ptr<TraceSource> source) {
  if (source == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  TraceSource* s = source.get();
  sources_.push_back(std::move(source));
  if (window_ == nullptr) return;  // the next window's WarmUp takes it like any source
  // WarmUp writes window_->warmed without the mutex: only an open window is joined here;
  // otherwise Open() adds it.
  if (window_->opened && sched_.state() == SessionState::kRecording) {
    if (s->StartWarmup(active_.config).ok()) window_->warmed.push_back(s);
  } else {
    joining_.push_back(s);
  }
}

absl::Status SessionController::SetMetadata(std::string key, std::string value) {
  if (key.size() > kMaxMetadataKeyBytes)
    return absl::InvalidArgumentError(absl::StrCat("kairos_set_metadata: key longer than ",
                                                   kMaxMetadataKeyBytes, " bytes"));
  if (value.size() > kMaxMetadataValueBytes)
    return absl::InvalidArgumentError(absl::StrCat("kairos_set_metadata: value of '", key,
                                                   "' longer than ", kMaxMetadataValueBytes,
                                                   " bytes"));
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = metadata_index_.find(key); it != metadata_index_.end()) {
    metadata_[it->second].second = std::move(value);
    return absl::OkStatus();
  }
  if (metadata_.size() >= kMaxMetadataKeys)
    return absl::ResourceExhaustedError(absl::StrCat("kairos_set_metadata: at most ",
                                                     kMaxMetadataKeys, " keys; '", key,
                                                     "' not added"));
  metadata_index_.emplace(key, metadata_.size());
  metadata_.emplace_back(std::move(key), std::move(value));
  return absl::OkStatus();
}

void SessionController::OnStepBoundary(int64_t iteration, uint64_t raw_time) {
  std::lock_guard<std::mutex> lock(mu_);
  KAIROS_DCHECK(!OnRunnerLocked(), "boundaries come from the application's step hook");
  // Bounded; past the bound the newest boundary replaces the last slot, so the one that ends
  // a long iteration window is still found when it closes.
  if (boundaries_.size() < 1024) {
    boundaries_.emplace_back(iteration, raw_time);
  } else {
    boundaries_.back() = {iteration, raw_time};
  }
  // From the warm-up boundary of an iteration window on, CPU ranges record from this instant,
  // so the first ProfilerStep and the ranges around it do not depend on the runner's wake-up
  // latency (Scheduler::StartsEarlyAt says when).
  if (sched_.StartsEarlyAt(iteration))
    for (auto& s : sources_) s->StartEarly();
  cv_.notify_all();
}

SessionState SessionController::state() {
  std::lock_guard<std::mutex> lock(mu_);
  return sched_.state();
}

bool SessionController::busy() {
  std::lock_guard<std::mutex> lock(mu_);
  return sched_.busy();
}

Config SessionController::base_config() {
  std::lock_guard<std::mutex> lock(mu_);
  return base_config_;
}

uint64_t SessionController::completed_sessions() {
  std::lock_guard<std::mutex> lock(mu_);
  return sched_.finished();
}

bool SessionController::WaitForCompletedSessions(uint64_t n, int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  return WaitFinishedLocked(lock, n, timeout_ms);
}

void StepHook() {
  const uint64_t raw = ReadRawClock();
  // seq_cst (a locked add on x86, same cost as relaxed): pairs with the runner's store of
  // g_steps.wake_at followed by its load of g_steps.iteration, so one side always sees the other
  // and a boundary is never missed.
  const int64_t n = g_steps.iteration.fetch_add(1) + 1;
  NoteStepTime(n, raw);
  // Step times for telemetry lines: every step of an interval, not the last 64 (one relaxed
  // load when telemetry is off).
  TelemetryNoteStep(g_steps.telemetry.load(std::memory_order_acquire), n, raw);
  if (__builtin_expect(n >= g_steps.wake_at.load(), 0)) {
    // Record first: once the runner is woken it may close the window at this boundary, and
    // the step that ends the window must be in it. If the boundary is the warm-up boundary,
    // OnStepBoundary switches recording on, and the step is recorded after it.
    const bool was_recording = internal::CpuRecording();
    if (was_recording) internal::RecordStep(n, raw);
    SessionController::Get().OnStepBoundary(n, raw);
    if (!was_recording) internal::RecordStep(n, raw);
    return;
  }
  internal::RecordStep(n, raw);
}

}  // namespace kairos
