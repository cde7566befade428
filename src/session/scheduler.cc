// File: scheduler.cc — see scheduler.h.
// Layer: kairos_session. Pure: no clock, no thread, no source; every input is in the event.
#include "session/scheduler.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "util/dcheck.h"

namespace kairos {

int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  return r;
}

int64_t SatMul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                              : std::numeric_limits<int64_t>::max();
  return r;
}

const char* SessionStateName(SessionState s) {
  switch (s) {
    case SessionState::kIdle: return "idle";
    case SessionState::kArmed: return "armed";
    case SessionState::kWarmUp: return "warm-up";
    case SessionState::kRecording: return "recording";
    case SessionState::kFlushing: return "flushing";
  }
  return "?";
}

const char* ActionName(Action a) {
  switch (a) {
    case Action::kNone: return "none";
    case Action::kWarmUp: return "warm-up";
    case Action::kOpen: return "open";
    case Action::kClose: return "close";
    case Action::kAbort: return "abort";
  }
  return "?";
}

const char* SessionEventKindName(SessionEventKind k) {
  switch (k) {
    case SessionEventKind::kRequest: return "request";
    case SessionEventKind::kTick: return "tick";
    case SessionEventKind::kSourcesWarm: return "sources-warm";
    case SessionEventKind::kStop: return "stop";
    case SessionEventKind::kStopRecording: return "stop-recording";
    case SessionEventKind::kCancel: return "cancel";
    case SessionEventKind::kFlushed: return "flushed";
    case SessionEventKind::kShutdown: return "shutdown";
    case SessionEventKind::kReopen: return "reopen";
  }
  return "?";
}

bool IsLegalTransition(SessionState from, SessionState to) {
  // The edges of docs/ARCHITECTURE.md's table; scheduler_test checks this against the table
  // and against what Handle() does.
  static constexpr bool kTable[kSessionStateCount][kSessionStateCount] = {
      //              idle   armed  warmup recording flushing   (to)
      /* idle */      {false, true,  false, false,    false},
      /* armed */     {false, false, true,  false,    true},
      /* warmup */    {false, false, false, true,     true},
      /* recording */ {false, false, false, false,    true},
      /* flushing */  {true,  false, false, false,    false},
  };
  return kTable[static_cast<int>(from)][static_cast<int>(to)];
}

absl::StatusOr<WindowPlan> PlanWindow(const Config& c, bool sync, int64_t now_ns,
                                      int64_t iteration, std::string* note) {
  constexpr int64_t kNsPerMs = 1000000, kNsPerSec = 1000000000;
  WindowPlan p;
  p.sync = sync;
  if (sync) {
    p.warmup_ns = p.start_ns = now_ns;
    p.duration_ns = kNever;
    return p;
  }
  if (c.IterationMode()) {
    p.iteration_mode = true;
    const int64_t warm = std::max<int64_t>(c.warmup_iterations, 0);
    int64_t start = c.profile_start_iteration;
    if (SatAdd(start, -warm) <= iteration) {
      // Already passed (or running now: its beginning cannot be observed any more).
      const int64_t roundup = c.profile_start_iteration_roundup;
      int64_t next = SatAdd(SatAdd(iteration, 1), warm);
      if (roundup > 0) next = SatMul(SatAdd(next, roundup - 1) / roundup, roundup);
      if (note != nullptr)
        *note = absl::StrCat("iteration ", SatAdd(start, -warm), " has already begun (now ",
                             iteration, "); the window starts at ", next);
      start = next;
    }
    p.start_iteration = start;
    p.warmup_iteration = SatAdd(start, -warm);
    p.iterations = std::max<int64_t>(c.iterations, 0);
    if (iteration == 0 && c.iteration_fallback_timeout_ms > 0) {
      p.fallback_at_ns = SatAdd(now_ns, SatMul(c.iteration_fallback_timeout_ms, kNsPerMs));
      p.fallback_duration_ns = SatMul(std::max<int64_t>(c.duration_ms, 0), kNsPerMs);
    }
    return p;
  }
  const int64_t warm_ns = SatMul(std::max<int64_t>(c.warmup_secs, 0), kNsPerSec);
  if (c.profile_start_time_ms > 0) {
    const int64_t now_ms = now_ns / kNsPerMs;
    if (c.profile_start_time_ms < now_ms) {
      return absl::InvalidArgumentError(absl::StrCat(
          "start timestamp is in the past (PROFILE_START_TIME=", c.profile_start_time_ms,
          " is ", now_ms - c.profile_start_time_ms, " ms before now)"));
    }
    const int64_t ahead_ms = c.profile_start_time_ms - now_ms;
    if (ahead_ms < SatMul(std::max<int64_t>(c.warmup_secs, 0), 1000)) {
      return absl::InvalidArgumentError(
          absl::StrCat("insufficient time for warmup: PROFILE_START_TIME is ", ahead_ms,
                       " ms ahead, ACTIVITIES_WARMUP_PERIOD_SECS=", c.warmup_secs));
    }
    p.start_ns = SatMul(c.profile_start_time_ms, kNsPerMs);
    p.warmup_ns = SatAdd(p.start_ns, -warm_ns);
  } else {
    p.warmup_ns = now_ns;
    p.start_ns = SatAdd(now_ns, warm_ns);
  }
  p.duration_ns = SatMul(std::max<int64_t>(c.duration_ms, 0), kNsPerMs);
  return p;
}

absl::StatusOr<WindowPlan> PlanRequest(const Config& c, bool sync, const RequestInstant& at,
                                       std::string* note) {
  absl::StatusOr<WindowPlan> plan;
  if (at.reference_iteration >= 0 && !sync && c.IterationMode() && at.iteration > 0) {
    plan = PlanWindow(c, sync, at.now_ns, SatAdd(at.reference_iteration, 1), note);
    if (plan.ok() && plan->iteration_mode && plan->warmup_iteration <= at.iteration) {
      std::string passed;
      plan = PlanWindow(c, sync, at.now_ns, at.iteration, &passed);
      if (note != nullptr)
        *note = absl::StrCat("request handled ", at.iteration - at.reference_iteration,
                             " iterations after its poll; planning from the current iteration",
                             passed.empty() ? "" : ": ", passed);
    }
  } else {
    plan = PlanWindow(c, sync, at.now_ns, at.iteration, note);
  }
  if (!plan.ok()) return plan;
  plan->start_shared = at.reference_iteration >= 0;
  // Early warm-up (see the header): 5 of 12 rank traces of the simulated DDP job lost the
  // first kernels of their first iteration without it. The start, and so every rank's
  // window, is unchanged. With a start of 2 or more the warm-up still needs a step first.
  if (plan->iteration_mode && plan->warmup_iteration == plan->start_iteration &&
      plan->start_iteration >= 2)
    plan->warmup_iteration = plan->start_iteration - 1;
  return plan;
}

void Scheduler::Move(SessionState to, Action action) {
  KAIROS_DCHECK(IsLegalTransition(state_, to), "session transition outside the table");
  state_ = to;
  action_ = action;
  if (to == SessionState::kWarmUp) warmed_ = close_when_warm_ = false;
}

absl::Status Scheduler::SourcesWarm(const SchedulerEvent& e) {
  if (state_ != SessionState::kWarmUp)
    return absl::FailedPreconditionError("not warming up");  // cancelled meanwhile
  warmed_ = true;
  // A source that must be on before the start (CUPTI, PM) became ready only after the start
  // boundary: what ran in between is missing from it.
  const bool late = plan_.iteration_mode && e.ready_iteration >= plan_.start_iteration;
  if (close_when_warm_) {
    // A stop came first: the window closes with its planned start, whatever that source
    // missed of it.
    if (late) start_incomplete_until_ = e.ready_iteration;
    CloseWarmUpAtStop();
    return absl::OkStatus();
  }
  if (late && plan_.start_shared) {
    // A job-wide request keeps its start, so all ranks cover the same iterations; the trace
    // says which of them that source missed.
    start_incomplete_until_ = e.ready_iteration;
  } else if (late) {
    // The window starts at the first boundary after every source was ready instead, with
    // the requested length.
    if (start_moved_from_ == 0) start_moved_from_ = plan_.start_iteration;
    plan_.start_iteration = SatAdd(e.ready_iteration, 1);
  }
  if (action_ == Action::kNone) Advance(e.now_ns, e.iteration);
  return absl::OkStatus();
}

void Scheduler::CloseWarmUpAtStop() {
  close_when_warm_ = false;
  open_at_boundary_ = true;
  opened_ns_ = closed_ns_;
  end_iteration_ = SatAdd(plan_.start_iteration, plan_.iterations);
  outcome_ = Outcome::kClosed;
  Move(SessionState::kFlushing, Action::kClose);
}

int64_t Scheduler::PlannedStart() const {
  return start_moved_from_ != 0 ? start_moved_from_ : plan_.start_iteration;
}

absl::Status Scheduler::StopPastStart(const SchedulerEvent& e) {
  // An iteration window whose start boundary has passed is open in all but name (CPU ranges
  // record from warm-up on, the boundaries are kept; only the runner's tick is missing): a
  // stop closes it like a recording window instead of discarding it, at once when the sources
  // are warm, else as soon as they are (the caller's wait is bounded). Also from Armed: the
  // step hook started the CPU ranges at the warm-up boundary on the job's thread although the
  // runner has not run since; it warms up, opens and closes.
  if (state_ == SessionState::kWarmUp && close_when_warm_)
    return absl::FailedPreconditionError("a stop is already pending");
  if (start_moved_from_ != 0 && e.iteration < plan_.start_iteration) {
    // The start moved (kSourcesWarm) and the new one has not come: the window keeps its
    // planned start rather than being lost (its late source reports what it missed).
    start_incomplete_until_ = SatAdd(plan_.start_iteration, -1);  // the late source was ready
    plan_.start_iteration = start_moved_from_;
    start_moved_from_ = 0;
  }
  if (state_ == SessionState::kArmed) Move(SessionState::kWarmUp, Action::kWarmUp);
  closed_ns_ = e.now_ns;
  if (warmed_) {
    CloseWarmUpAtStop();
  } else {
    close_when_warm_ = true;
  }
  return absl::OkStatus();
}

Action Scheduler::TakeAction() {
  const Action a = action_;
  action_ = Action::kNone;
  return a;
}

void Scheduler::Advance(int64_t now_ns, int64_t iteration) {
  switch (state_) {
    case SessionState::kArmed:
      if (plan_.iteration_mode) {
        if (iteration >= plan_.warmup_iteration) {
          Move(SessionState::kWarmUp, Action::kWarmUp);
        } else if (now_ns >= plan_.fallback_at_ns) {
          if (iteration > 0) {  // stepping began just now: wait for the boundary after all
            plan_.fallback_at_ns = kNever;
          } else if (plan_.fallback_duration_ns <= 0) {
            outcome_ = Outcome::kDropped;
            Move(SessionState::kFlushing, Action::kAbort);
          } else {
            fell_back_ = true;
            plan_.iteration_mode = false;
            plan_.warmup_ns = plan_.start_ns = now_ns;
            plan_.duration_ns = plan_.fallback_duration_ns;
            Move(SessionState::kWarmUp, Action::kWarmUp);
          }
        }
      } else if (now_ns >= plan_.warmup_ns) {
        Move(SessionState::kWarmUp, Action::kWarmUp);
      }
      break;
    case SessionState::kWarmUp:
      if (!warmed_) break;
      if (plan_.iteration_mode ? iteration >= plan_.start_iteration : now_ns >= plan_.start_ns) {
        open_at_boundary_ = plan_.iteration_mode;
        opened_ns_ = now_ns;
        end_iteration_ =
            plan_.iteration_mode ? SatAdd(plan_.start_iteration, plan_.iterations) : kNever;
        end_ns_ = plan_.iteration_mode || plan_.sync ? kNever : SatAdd(now_ns, plan_.duration_ns);
        Move(SessionState::kRecording, Action::kOpen);
      }
      break;
    case SessionState::kRecording:
      if (iteration >= end_iteration_ || now_ns >= end_ns_) {
        closed_ns_ = now_ns;
        outcome_ = Outcome::kClosed;
        Move(SessionState::kFlushing, Action::kClose);
      }
      break;
    case SessionState::kIdle:
    case SessionState::kFlushing:
      break;
  }
}

absl::Status Scheduler::Handle(const SchedulerEvent& e) {
  switch (e.kind) {
    case SessionEventKind::kRequest:
      KAIROS_DCHECK(e.plan != nullptr, "a request event carries its plan");
      if (absl::Status s = Admit(); !s.ok()) return s;
      if (e.plan == nullptr) return absl::InvalidArgumentError("request without a window");
      plan_ = *e.plan;
      ++accepted_;
      outcome_ = Outcome::kNone;
      open_at_boundary_ = fell_back_ = false;
      opened_ns_ = closed_ns_ = 0;
      start_moved_from_ = 0;
      start_incomplete_until_ = -1;
      end_ns_ = end_iteration_ = kNever;
      Move(SessionState::kArmed, Action::kNone);
      return absl::OkStatus();
    case SessionEventKind::kTick:
      // One owed action at a time: the runner must perform an open before time may close
      // the window (a tick cannot skip over it).
      if (action_ == Action::kNone) Advance(e.now_ns, e.iteration);
      return absl::OkStatus();
    case SessionEventKind::kSourcesWarm:
      return SourcesWarm(e);
    case SessionEventKind::kStopRecording:
      if (state_ != SessionState::kRecording)
        return absl::FailedPreconditionError("no trace is recording");
      [[fallthrough]];
    case SessionEventKind::kStop:
      if (state_ == SessionState::kRecording) {
        closed_ns_ = e.now_ns;
        outcome_ = Outcome::kClosed;
        Move(SessionState::kFlushing, Action::kClose);
        return absl::OkStatus();
      }
      if ((state_ == SessionState::kArmed || state_ == SessionState::kWarmUp) &&
          plan_.iteration_mode && e.iteration >= PlannedStart())
        return StopPastStart(e);
      [[fallthrough]];
    case SessionEventKind::kCancel:
      if (state_ == SessionState::kArmed || state_ == SessionState::kWarmUp) {
        outcome_ = Outcome::kCancelled;
        Move(SessionState::kFlushing, Action::kAbort);
        return absl::OkStatus();
      }
      return absl::FailedPreconditionError(
          e.kind == SessionEventKind::kStop ? "no trace is recording" : "no window is waiting to open");
    case SessionEventKind::kFlushed:
      if (state_ != SessionState::kFlushing)
        return absl::FailedPreconditionError("not flushing");
      finished_ = accepted_;
      Move(SessionState::kIdle, Action::kNone);
      return absl::OkStatus();
    case SessionEventKind::kShutdown:
      shut_down_ = true;
      return absl::OkStatus();
    case SessionEventKind::kReopen:
      shut_down_ = false;
      return absl::OkStatus();
  }
  return absl::InternalError("unknown scheduler event");
}

absl::Status Scheduler::Admit() const {
  if (shut_down_) return absl::FailedPreconditionError("kairos is shut down");
  if (busy()) return absl::FailedPreconditionError("profiler busy");
  return absl::OkStatus();
}

bool Scheduler::StartsEarlyAt(int64_t iteration) const {
  // WarmUp too: the runner may tick past the warm-up boundary between the step's increment
  // and its hook (it needs only g_steps.iteration, not the session mutex the hook waits for), and
  // it switches recording on only after every source warmed up; a burst of steps meanwhile would
  // record nothing. StartEarly is idempotent.
  return (state_ == SessionState::kArmed || state_ == SessionState::kWarmUp) &&
         plan_.iteration_mode && iteration >= plan_.warmup_iteration;
}

int64_t Scheduler::hook_iteration() const {
  int64_t at = wake_iteration();
  if (plan_.iteration_mode &&
      (state_ == SessionState::kArmed || state_ == SessionState::kWarmUp ||
       state_ == SessionState::kRecording))
    at = std::min(at, plan_.warmup_iteration);
  return at;
}

int64_t Scheduler::wake_ns() const {
  switch (state_) {
    case SessionState::kArmed:
      return plan_.iteration_mode ? plan_.fallback_at_ns : plan_.warmup_ns;
    case SessionState::kWarmUp:
      return plan_.iteration_mode || !warmed_ ? kNever : plan_.start_ns;
    case SessionState::kRecording:
      return end_ns_;
    default:
      return kNever;
  }
}

int64_t Scheduler::wake_iteration() const {
  if (!plan_.iteration_mode) return kNever;
  switch (state_) {
    case SessionState::kArmed: return plan_.warmup_iteration;
    case SessionState::kWarmUp: return warmed_ ? plan_.start_iteration : kNever;
    case SessionState::kRecording: return end_iteration_;
    default: return kNever;
  }
}

}  // namespace kairos
