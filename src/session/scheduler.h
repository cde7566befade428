// File: scheduler.h
// Layer: kairos_session. The session state machine, as a pure value: it decides when a
// recording window warms up, opens and closes, from events that carry the time and the
// iteration count. It owns no thread, reads no clock and calls no source; the session runner
// (runner.cc) feeds it events under the session mutex and performs the actions it hands out.
// All session policy is here, as pure functions and transitions: how a request is planned
// (PlanRequest), who may request (Admit), when the step hook switches recording on and must
// reach the session (StartsEarlyAt, hook_iteration), and when an iteration window's start
// moves because a source was ready late (kSourcesWarm). Unit-tested without threads or sleeps
// (test/core/scheduler_test.cc), which also checks the transition table against Handle() and
// against docs/ARCHITECTURE.md's table.
//
// States (docs/ARCHITECTURE.md has the full table):
//   Idle       no request.
//   Armed      a request was accepted; waiting for its warm-up time or iteration.
//   WarmUp     the sources are being (or have been) warmed up; waiting for the start.
//   Recording  the window is open.
//   Flushing   the window closed (or the request was cancelled): the runner stops the
//              sources and writes the trace (or only releases them). Then Idle.
// "Busy" is every state but Idle. Cancel is an edge to Flushing with outcome kCancelled; it
// cannot be undone or lost.
// Threading: not synchronised; the owner serialises calls (the session mutex).
#ifndef KAIROS_SRC_SESSION_SCHEDULER_H_
#define KAIROS_SRC_SESSION_SCHEDULER_H_

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kairos {

struct Config;

inline constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// Saturating arithmetic for times and iteration numbers (a start time far in the future must
// stay far in the future, never wrap into the past).
int64_t SatAdd(int64_t a, int64_t b);
int64_t SatMul(int64_t a, int64_t b);

enum class SessionState : uint8_t { kIdle = 0, kArmed, kWarmUp, kRecording, kFlushing };
inline constexpr int kSessionStateCount = 5;
const char* SessionStateName(SessionState s);
// The transition table (docs/ARCHITECTURE.md "Session states"): true for a legal edge. Move()
// DCHECKs every transition against it.
bool IsLegalTransition(SessionState from, SessionState to);

// What a request asks for, fixed when it is accepted (see PlanWindow).
struct WindowPlan {
  bool sync = false;            // kairos_start: open now, close on Stop only
  bool iteration_mode = false;
  // Time windows (Unix ns): warm-up begins at warmup_ns, the window opens at start_ns and
  // lasts duration_ns.
  int64_t warmup_ns = 0, start_ns = 0, duration_ns = 0;
  // Iteration windows: warm-up begins when iteration warmup_iteration begins, the window
  // opens at start_iteration and closes at start_iteration + iterations.
  int64_t warmup_iteration = 0, start_iteration = 0, iterations = 0;
  // A job-wide (daemon) request: every rank planned the same start from one shared instant,
  // so the start stays where it is even when a source becomes ready late (a rank that moved
  // it alone would trace other iterations than the rest of the job); the late source is
  // reported instead (cupti_enabled_late_us).
  bool start_shared = false;
  // A process that has never stepped falls back to a time window of fallback_duration_ns at
  // this instant (kNever = no fallback); with fallback_duration_ns <= 0 the request is dropped.
  int64_t fallback_at_ns = kNever;
  int64_t fallback_duration_ns = 0;
};

// Turns a config into a plan at `now_ns` with the iteration counter at `iteration`. Rejects a
// PROFILE_START_TIME in the past or too close for its warm-up (INVALID_ARGUMENT). An
// iteration start that has already begun moves to the next reachable iteration (rounded up
// to PROFILE_START_ITERATION_ROUNDUP); `note` then says so. Pure; saturating arithmetic.
absl::StatusOr<WindowPlan> PlanWindow(const Config& c, bool sync, int64_t now_ns,
                                      int64_t iteration, std::string* note);

// The instant a request is planned from, as the caller read it.
struct RequestInstant {
  int64_t now_ns = 0;
  int64_t iteration = 0;  // the iteration counter now
  // A job-wide (daemon) request: the iteration current at the instant every rank of the job
  // shares (the poll tick, or the daemon's stamp); -1 = none.
  int64_t reference_iteration = -1;
};

// The whole planning policy of a request (PlanWindow plus what the session learned on jobs):
// - a job-wide request is planned from its reference iteration, counted one further (every
//   rank then picks the same start, also one that handles the reply just after a boundary);
//   if that start's warm-up has already begun here, from the current iteration instead;
// - without warm-up iterations the warm-up begins one iteration before the start (the runner,
//   not the step hook, switches the GPU source on; a warm-up at the start boundary lost the
//   first traced iteration's first kernels), never at iteration 0 (a process that has not
//   stepped stays Armed, to fall back to a time window).
// A process that never stepped keeps PlanWindow's plan (its fallback decides). Pure.
absl::StatusOr<WindowPlan> PlanRequest(const Config& c, bool sync, const RequestInstant& at,
                                       std::string* note);

// How a session ended.
enum class Outcome : uint8_t { kNone = 0, kClosed, kCancelled, kDropped };

// What the runner must do after an event. Each action is handed out once (TakeAction).
enum class Action : uint8_t {
  kNone = 0,
  kWarmUp,  // Armed -> WarmUp: warm the sources up, then send kSourcesWarm
  kOpen,    // WarmUp -> Recording: open the window in every source
  kClose,   // Recording -> Flushing: stop the sources, assemble and write, then kFlushed
  kAbort,   // -> Flushing (cancelled/dropped): release the sources, then kFlushed
};
const char* ActionName(Action a);

enum class SessionEventKind : uint8_t {
  kRequest,      // a request with `plan` (rejected when busy or shut down)
  kTick,         // time passed or the iteration counter moved
  kSourcesWarm,  // the runner finished warming the sources up
  kStop,         // close the window now (Recording); cancel before it (Armed, WarmUp)
  kStopRecording,  // kairos_stop: close a recording window; refused in every other state
  kCancel,       // cancel a window that is not open yet (Armed, WarmUp)
  kFlushed,      // the runner finished Flushing
  kShutdown,     // refuse requests (kairos_shutdown) until kReopen
  kReopen,       // accept requests again (kairos_init)
};

inline constexpr int kSessionEventKindCount = 9;
// The event's name in docs/ARCHITECTURE.md's table ("request", "tick", "sources-warm", ...).
const char* SessionEventKindName(SessionEventKind k);

struct SchedulerEvent {
  SessionEventKind kind = SessionEventKind::kTick;
  int64_t now_ns = 0;
  int64_t iteration = 0;
  const WindowPlan* plan = nullptr;  // kRequest only
  // kSourcesWarm only: the iteration that was current when the last source that must be on
  // before an iteration window's start became ready (TraceSource::ReadyRaw); -1 = none.
  int64_t ready_iteration = -1;
};

class Scheduler {
 public:
  // The one event handler. Returns OK, or why the event was refused (a request while busy:
  // FAILED_PRECONDITION "profiler busy"; a stop with nothing recording, ...). A refused event
  // changes nothing.
  absl::Status Handle(const SchedulerEvent& e);
  // Why a request would be refused now ("kairos is shut down", "profiler busy"), else OK.
  // The caller asks before planning, so a busy profiler says so rather than a planning error.
  absl::Status Admit() const;

  // The action the last events owe the runner (kNone if none); cleared by the call. While
  // one is owed, ticks do not advance. A caller's stop may replace an owed kOpen by kClose
  // (the runner then opens and closes at once); a cancel may replace an owed kWarmUp.
  Action TakeAction();
  // What the runner waits for next: an instant (Unix ns, kNever = none) and an iteration
  // (kNever = none). The runner also wakes on any event.
  int64_t wake_ns() const;
  int64_t wake_iteration() const;

  SessionState state() const { return state_; }
  bool busy() const { return state_ != SessionState::kIdle; }
  bool shut_down() const { return shut_down_; }
  const WindowPlan& plan() const { return plan_; }
  // Sessions accepted / finished so far; the current session is number accepted().
  uint64_t accepted() const { return accepted_; }
  uint64_t finished() const { return finished_; }
  // Of the current (or last) session.
  Outcome outcome() const { return outcome_; }
  bool opened_at_iteration_boundary() const { return open_at_boundary_; }
  int64_t opened_ns() const { return opened_ns_; }
  int64_t closed_ns() const { return closed_ns_; }
  // A window that fell back from iterations to time (the runner records a warning).
  bool fell_back() const { return fell_back_; }
  // The start iteration the request planned, when a source became ready only after it and
  // the start moved to the first boundary after (plan().start_iteration); 0 = not moved.
  int64_t start_moved_from() const { return start_moved_from_; }
  // The iteration in which that source became ready when the start stayed where it was
  // planned after all (a job-wide window, WindowPlan::start_shared: every rank must cover the
  // same iterations; or a stop before the moved start): the source's data of the iterations
  // from the start to this one is incomplete, and the runner says so. -1 = none.
  int64_t start_incomplete_until() const { return start_incomplete_until_; }

  // Step-hook policy (the hook takes the session mutex only where these say so).
  // Whether the hook of boundary `iteration` switches early recording on (TraceSource::
  // StartEarly): an iteration window not yet open whose warm-up boundary it is, or later.
  bool StartsEarlyAt(int64_t iteration) const;
  // The first boundary whose hook must reach the session (g_steps.wake_at): the next one the
  // runner waits for, and every one from the warm-up boundary on while an iteration window is
  // live, so the exact boundaries that open and close it are known however late the runner
  // runs. kNever = none.
  int64_t hook_iteration() const;
  // The start the request planned (before any move by kSourcesWarm).
  int64_t PlannedStart() const;

 private:
  void Move(SessionState to, Action action);
  void Advance(int64_t now_ns, int64_t iteration);
  void CloseWarmUpAtStop();  // WarmUp -> Flushing (closed) at closed_ns_
  // kStop in Armed/WarmUp of an iteration window whose planned start has passed.
  absl::Status StopPastStart(const SchedulerEvent& e);
  absl::Status SourcesWarm(const SchedulerEvent& e);  // kSourcesWarm

  SessionState state_ = SessionState::kIdle;
  Action action_ = Action::kNone;
  bool shut_down_ = false;
  WindowPlan plan_;
  bool warmed_ = false;  // WarmUp only: kSourcesWarm arrived
  // WarmUp only: a stop arrived after the iteration window's start boundary while the sources
  // were still warming; the window closes as soon as they are warm.
  bool close_when_warm_ = false;
  uint64_t accepted_ = 0, finished_ = 0;
  Outcome outcome_ = Outcome::kNone;
  bool open_at_boundary_ = false, fell_back_ = false;
  int64_t opened_ns_ = 0, closed_ns_ = 0;
  int64_t end_ns_ = kNever, end_iteration_ = kNever;
  int64_t start_moved_from_ = 0;
  int64_t start_incomplete_until_ = -1;
};

}  // namespace kairos

#endif  // KAIROS_SRC_SESSION_SCHEDULER_H_
