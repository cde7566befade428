// File: runner.cc
// Layer: kairos_session. The session runner: the controller thread of SessionController. It
// feeds the Scheduler ticks (time and iteration), performs the action each transition owes
// (warm up, open, close, abort) on the TraceSources, and hands a closed window to the trace
// assembler.
// Waits on a condition variable with the scheduler's next deadline (no polling).
// Threading: runs on the runner thread only; holds mu_ except around source calls,
// collection and I/O, so callers (Stop, Flush, step hooks) never wait behind a write.
#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "session/controller.h"
#include "session/trace_assembler.h"
#include "session/trace_identity.h"
#include "util/clock.h"
#include "util/dcheck.h"
#include "util/log.h"
#include "util/thread_name.h"

namespace kairos {

namespace {
constexpr int64_t kLateWarnNs = 10 * 1000000;
// Longest single wait: a deadline days away is re-evaluated now and then instead of being
// handed to the condition variable, whose clock arithmetic must not overflow.
constexpr int64_t kMaxWaitNs = int64_t{3600} * 1000000000;
// Longest wait for the hook of a boundary the runner has already counted (CountedBoundaryRaw):
// the step's thread only has to reach the session mutex, so this is reached only when that
// thread was descheduled in between; then the window edge falls back to this thread's clock.
constexpr int64_t kBoundaryWaitMs = 200;
}  // namespace


void SessionController::RunnerMain() {
  NameThisThread("session");
  std::unique_lock<std::mutex> lock(mu_);
  runner_id_ = std::this_thread::get_id();
  for (;;) {
    if (stopping_) return;  // the destructor joins this thread
    sched_.Handle(Now(SessionEventKind::kTick)).IgnoreError();  // a tick is never refused
    const Action action = sched_.TakeAction();
    if (action != Action::kNone)
      KAIROS_LOG_VERBOSE("session %llu: %s, %s at iteration %lld",
                         static_cast<unsigned long long>(sched_.accepted()),
                         SessionStateName(sched_.state()), ActionName(action),
                         static_cast<long long>(g_steps.iteration.load()));
    switch (action) {
      case Action::kNone:
        WaitForWake(lock);
        break;
      case Action::kWarmUp:
        window_ = std::make_unique<Window>();
        WarmUp(lock, *window_);
        SourcesWarm(*window_);
        break;
      case Action::kOpen:
        Open(lock, *window_);
        break;
      case Action::kClose:
        Close(lock, *window_);
        break;
      case Action::kAbort:
        if (window_ == nullptr) window_ = std::make_unique<Window>();
        Abort(lock, *window_);
        break;
    }
  }
}

int64_t SessionController::ProcessBaseNsLocked() {
  KAIROS_DCHECK(OnRunnerLocked(), "runs on the session thread");
  int64_t base = process_base_ns_.load(std::memory_order_relaxed);
  if (base == 0) {
    base = FloorBaseTime(UnixNowNs());
    process_base_ns_.store(base, std::memory_order_relaxed);
  }
  return base;
}

void SessionController::WaitForWake(std::unique_lock<std::mutex>& lock) {
  KAIROS_DCHECK(lock.owns_lock(), "waits with the session lock held");
  KAIROS_DCHECK(OnRunnerLocked(), "runs on the session thread");
  // seq_cst store then load: pairs with StepHook's increment-then-load.
  const int64_t wake_it = sched_.wake_iteration();
  // While an iteration window is live, every boundary from its warm-up on goes through
  // OnStepBoundary (a mutex and a wake per iteration, only during the window), so the exact
  // boundary that ends the window is known even when the job runs through several
  // iterations before this thread gets the CPU back. Without it a late runner would close
  // the window at its own clock and record extra ProfilerSteps.
  g_steps.wake_at.store(sched_.hook_iteration());
  if (wake_it != kNever && g_steps.iteration.load() >= wake_it) return;  // passed before we asked
  const int64_t wake_ns = sched_.wake_ns();
  if (wake_ns == kNever) {
    cv_.wait(lock);
    return;
  }
  const int64_t now = UnixNowNs();
  if (now >= wake_ns) return;
  cv_.wait_for(lock, std::chrono::nanoseconds(std::min(wake_ns - now, kMaxWaitNs)));
}

void SessionController::WarmUp(std::unique_lock<std::mutex>& lock, Window& w) {
  KAIROS_DCHECK(lock.owns_lock(), "runs with the session lock held");
  KAIROS_DCHECK(OnRunnerLocked(), "runs on the session thread");
  KAIROS_DCHECK(sched_.state() == SessionState::kWarmUp, "warm-up runs in WarmUp");
  std::vector<TraceSource*> sources;
  for (auto& s : sources_) sources.push_back(s.get());
  const Config config = active_.config;
  const bool iteration_mode = sched_.plan().iteration_mode;
  if (sched_.fell_back()) {
    const std::string msg = absl::StrCat(
        "no iteration was counted within ", config.iteration_fallback_timeout_ms,
        " ms; fell back to a duration window of ", config.duration_ms, " ms");
    KAIROS_LOG_WARNING("%s", msg.c_str());
    w.warnings.push_back(msg);
  }
  lock.unlock();
  for (TraceSource* s : sources) {
    absl::Status st = s->StartWarmup(config);
    if (st.ok()) {
      w.warmed.push_back(s);
    } else {
      KAIROS_LOG_WARNING("source %s sits this trace out: %s", s->name(),
                         std::string(st.message()).c_str());
      w.warnings.push_back(absl::StrCat("source ", s->name(), ": ", st.message()));
    }
  }
  // Iteration windows record CPU ranges from warm-up on, so ranges straddling the first
  // boundary keep their true start (clamped, flagged) instead of being lost.
  if (iteration_mode)
    for (TraceSource* s : w.warmed) s->StartEarly();
  // The latest instant from which a source records all an iteration window needs (0: none
  // cares when it was warmed up).
  for (TraceSource* s : w.warmed) {
    if (const uint64_t ready = s->ReadyRaw(); ready > w.ready_raw) {
      w.ready_raw = ready;
      w.ready_source = s->name();
      w.ready_source_reports_late = s->ReportsLateStart();
    }
  }
  lock.lock();
  // CPU ranges switched on by a request that came after its own start boundary.
  if (active_.cpu_ready_raw > w.ready_raw) {
    w.ready_raw = active_.cpu_ready_raw;
    w.ready_source = "cpu";
    w.ready_source_reports_late = false;
  }
}

void SessionController::SourcesWarm(Window& w) {
  KAIROS_DCHECK(OnRunnerLocked(), "runs on the session thread");
  SchedulerEvent e = Now(SessionEventKind::kSourcesWarm);
  // The boundaries counted at that instant (the step ring): at or past the start, the
  // scheduler moves the start to the next one.
  if (w.ready_raw != 0) e.ready_iteration = IterationAtRaw(w.ready_raw);
  // Refused (and ignored) when the request was cancelled meanwhile.
  if (!sched_.Handle(e).ok()) return;
  // The trace says so too (Close), unless a stop keeps the planned start after all.
  if (sched_.start_moved_from() != 0) KAIROS_LOG_WARNING("%s", StartMovedMessage(w).c_str());
  if (sched_.start_incomplete_until() >= 0 && !w.ready_source_reports_late)
    KAIROS_LOG_WARNING("%s", StartIncompleteMessage(w).c_str());
}

std::string SessionController::StartMovedMessage(const Window& w) const {
  KAIROS_DCHECK(OnRunnerLocked(), "runs on the session thread");
  const int64_t from = sched_.start_moved_from(), to = sched_.plan().start_iteration;
  return absl::StrCat("the window starts at iteration ", to, " instead of ", from, ": source ",
                      w.ready_source, " was recording only after iteration ", from,
                      " began (raise ACTIVITIES_WARMUP_ITERATIONS)");
}

std::string SessionController::StartIncompleteMessage(const Window& w) const {
  KAIROS_DCHECK(OnRunnerLocked(), "runs on the session thread");
  const int64_t start = sched_.plan().start_iteration, until = sched_.start_incomplete_until();
  const char* why = sched_.plan().start_shared
                        ? " (a job-wide window: every rank covers the same iterations)"
                        : " (it was stopped before a later start)";
  return absl::StrCat("source ", w.ready_source, " was recording only from iteration ", until,
                      " on: the window keeps its start at iteration ", start, why,
                      ", so its data of iterations ", start, "-", until,
                      " is incomplete (raise ACTIVITIES_WARMUP_ITERATIONS)");
}

void SessionController::Open(std::unique_lock<std::mutex>& lock, Window& w) {
  KAIROS_DCHECK(lock.owns_lock(), "runs with the session lock held");
  KAIROS_DCHECK(OnRunnerLocked(), "runs on the session thread");
  KAIROS_DCHECK(
      sched_.state() == SessionState::kRecording || sched_.state() == SessionState::kFlushing,
      "open runs in Recording, or in Flushing from a close that found it not opened");
  KAIROS_DCHECK(!w.opened, "a window opens once");
  const WindowPlan& plan = sched_.plan();
  w.start_raw = 0;
  if (plan.iteration_mode) {
    // The start boundary is counted (the tick or the stop that led here saw it), but its hook
    // may not have delivered it yet.
    w.start_raw = CountedBoundaryRaw(lock, plan.start_iteration);
    w.start_is_step_boundary = w.start_raw != 0;
  } else if (!plan.sync && plan.start_ns != kNever) {
    const int64_t late = sched_.opened_ns() - plan.start_ns;
    if (late > kLateWarnNs)
      KAIROS_LOG_INFO("Tracing started %lld ms late!", static_cast<long long>(late / 1000000));
  }
  if (w.start_raw == 0) w.start_raw = ReadRawClock();
  w.opened = true;
  // Sources that joined during the warm-up (RegisterJoiningTraceSource) and that WarmUp's
  // copy of the sources did not include.
  for (TraceSource* s : joining_) {
    if (std::find(w.warmed.begin(), w.warmed.end(), s) == w.warmed.end() &&
        s->StartWarmup(active_.config).ok())
      w.warmed.push_back(s);
  }
  joining_.clear();
  anchors_.Opened();  // first TSC<->Unix anchor of this window (clock.h)
  std::vector<TraceSource*> warmed = w.warmed;
  lock.unlock();
  // An iteration window began at the step boundary (start_raw), which the training thread
  // crossed before this thread woke up: the sources are told that instant, so they keep what
  // happened since (the CUPTI source, the first iteration's GPU work). One anchor and, for the
  // TSC, a 1 ms slope measurement on this thread map it to Unix time.
  int64_t start_ns = UnixNowNs();
  if (w.start_is_step_boundary) {
    ClockConverter to_unix;
    to_unix.SetAnchors({TakeClockAnchor()});
    start_ns = std::min(start_ns, to_unix.ToUnixNs(w.start_raw));
  }
  for (TraceSource* s : warmed) s->StartRecording(start_ns);
  lock.lock();
  done_cv_.notify_all();  // Start() and WaitForStartupWindow() wait for the open window
}

void SessionController::Close(std::unique_lock<std::mutex>& lock, Window& w) {
  KAIROS_DCHECK(lock.owns_lock(), "runs with the session lock held");
  KAIROS_DCHECK(OnRunnerLocked(), "runs on the session thread");
  KAIROS_DCHECK(sched_.state() == SessionState::kFlushing, "close runs in Flushing");
  // A stop that arrived between the transition to Recording and the runner's open replaced
  // the owed open: open now, so the sources see the usual sequence.
  if (!w.opened) Open(lock, w);
  uint64_t end_raw = close_raw_;
  const WindowPlan& plan = sched_.plan();
  if (plan.iteration_mode) {
    // The window ends at the boundary that ends its last iteration, also when a stop or flush
    // arrived after that boundary but before this thread closed the window. Looked up before
    // the hooks are switched off below, so the hook of a boundary already counted still comes.
    const int64_t end_it = SatAdd(plan.start_iteration, plan.iterations);
    if (g_steps.iteration.load() >= end_it) {
      const uint64_t raw = CountedBoundaryRaw(lock, end_it);
      if (raw != 0 && (end_raw == 0 || raw < end_raw)) end_raw = raw;
    }
  }
  g_steps.wake_at.store(kNever);
  if (end_raw == 0) end_raw = ReadRawClock();
  AssembleRequest request;
  request.config = active_.config;
  request.source = active_.source;
  request.sources = w.warmed;
  request.warnings = std::move(w.warnings);
  request.start_raw = w.start_raw;
  request.end_raw = std::max(end_raw, w.start_raw);
  request.start_is_step_boundary = w.start_is_step_boundary;
  request.metadata = metadata_;
  // A start that moved (SourcesWarm) and stayed moved.
  if (sched_.start_moved_from() != 0) {
    request.warnings.push_back(StartMovedMessage(w));
    request.stats.emplace_back(
        "window_start_moved_iterations",
        static_cast<uint64_t>(plan.start_iteration - sched_.start_moved_from()));
  }
  // A start that stayed although a source was ready only after it (unless its own data says
  // what it missed).
  if (sched_.start_incomplete_until() >= 0 && !w.ready_source_reports_late) {
    request.warnings.push_back(StartIncompleteMessage(w));
    request.stats.emplace_back(
        "window_start_incomplete_iterations",
        static_cast<uint64_t>(
            std::max<int64_t>(sched_.start_incomplete_until() - plan.start_iteration + 1, 0)));
  }
  request.anchors = &anchors_;
  request.process_base_ns = ProcessBaseNsLocked();
  request.nccl = nccl_;
  lock.unlock();
  const int64_t end_ns = UnixNowNs();
  for (TraceSource* s : request.sources) s->StopRecording(end_ns);
  AssembleResult result = AssembleAndWrite(std::move(request));
  lock.lock();
  FinishLocked(Result{std::move(result.status), std::move(result.path)});
}

void SessionController::Abort(std::unique_lock<std::mutex>& lock, Window& w) {
  KAIROS_DCHECK(lock.owns_lock(), "runs with the session lock held");
  KAIROS_DCHECK(OnRunnerLocked(), "runs on the session thread");
  KAIROS_DCHECK(sched_.state() == SessionState::kFlushing, "abort runs in Flushing");
  KAIROS_DCHECK(!w.opened, "only a window that never opened is aborted");
  g_steps.wake_at.store(kNever);
  const Outcome outcome = sched_.outcome();
  std::vector<TraceSource*> all;
  for (auto& s : sources_) all.push_back(s.get());
  std::vector<TraceSource*> warmed = w.warmed;
  lock.unlock();
  for (TraceSource* s : all) s->CancelEarlyStart();
  for (TraceSource* s : warmed) s->Reset();
  lock.lock();
  FinishLocked(Result{outcome == Outcome::kDropped
                          ? absl::NotFoundError("trace request dropped: no iteration was "
                                                "counted and no duration was configured")
                          : absl::NotFoundError("trace cancelled before its window opened"),
                      std::string()});
}

uint64_t SessionController::CountedBoundaryRaw(std::unique_lock<std::mutex>& lock, int64_t it) {
  KAIROS_DCHECK(lock.owns_lock(), "runs with the session lock held");
  KAIROS_DCHECK(OnRunnerLocked(), "runs on the session thread");
  // The tick that moved the session reads g_steps.iteration without the step's hook: the runner can
  // count a boundary between StepHook's increment and its OnStepBoundary, which then waits for
  // this mutex. Taking this thread's clock instead moved the window edge past the boundary (at
  // the end: one ProfilerStep too many; at the start: the first one flagged as begun before the
  // window).
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kBoundaryWaitMs);
  for (;;) {
    uint64_t found = 0;
    for (const auto& [b, raw] : boundaries_)
      if (b == it && (found == 0 || raw < found)) found = raw;
    if (found == 0) found = StepBoundaryRaw(it);
    if (found != 0) return found;
    // OnStepBoundary wakes this wait; the short slice also rereads the ring, which a step
    // whose hook is not called (hooks switched off meanwhile) still writes.
    if (std::chrono::steady_clock::now() >= deadline) return 0;
    cv_.wait_for(lock, std::chrono::milliseconds(1));
  }
}

void SessionController::FinishLocked(Result result) {
  KAIROS_DCHECK(OnRunnerLocked(), "runs on the session thread");
  if (result.status.ok()) last_path_ = result.path;
  last_result_ = std::move(result);
  window_.reset();
  joining_.clear();
  close_raw_ = 0;
  const absl::Status s = sched_.Handle(Now(SessionEventKind::kFlushed));
  KAIROS_DCHECK(s.ok(), "the runner finishes only a flushing session");
  (void)s;
  done_cv_.notify_all();
}

}  // namespace kairos
