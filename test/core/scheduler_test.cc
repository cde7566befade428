// File: scheduler_test.cc
// Layer: test/core. The pure session scheduler: every edge of the transition table driven
// by events with explicit times and iteration counts (no threads, no sleeps, no clock),
// window planning with saturating arithmetic, and ConfigParseInfo (which replaced the
// session's own re-reading of config text).
// Threading: single-threaded.
#include "session/scheduler.h"

#include <catch2/catch.hpp>

#include <limits>

#include "config/config.h"

namespace kairos {
namespace {

using S = SessionState;
constexpr int64_t kMs = 1000000, kSec = 1000000000;
constexpr int64_t kT0 = int64_t{1700000000} * kSec;  // an arbitrary "now"

SchedulerEvent Ev(SessionEventKind kind, int64_t now_ns, int64_t iteration = 0,
                  const WindowPlan* plan = nullptr) {
  SchedulerEvent e;
  e.kind = kind;
  e.now_ns = now_ns;
  e.iteration = iteration;
  e.plan = plan;
  return e;
}

WindowPlan TimePlan(int64_t warmup_ns, int64_t start_ns, int64_t duration_ns) {
  WindowPlan p;
  p.warmup_ns = warmup_ns;
  p.start_ns = start_ns;
  p.duration_ns = duration_ns;
  return p;
}

WindowPlan IterPlan(int64_t warmup_it, int64_t start_it, int64_t iterations) {
  WindowPlan p;
  p.iteration_mode = true;
  p.warmup_iteration = warmup_it;
  p.start_iteration = start_it;
  p.iterations = iterations;
  return p;
}

TEST_CASE("the transition table has exactly the documented edges") {
  const S all[] = {S::kIdle, S::kArmed, S::kWarmUp, S::kRecording, S::kFlushing};
  int legal = 0;
  for (S from : all)
    for (S to : all) legal += IsLegalTransition(from, to) ? 1 : 0;
  CHECK(legal == 7);
  CHECK(IsLegalTransition(S::kIdle, S::kArmed));
  CHECK(IsLegalTransition(S::kArmed, S::kWarmUp));
  CHECK(IsLegalTransition(S::kArmed, S::kFlushing));
  CHECK(IsLegalTransition(S::kWarmUp, S::kRecording));
  CHECK(IsLegalTransition(S::kWarmUp, S::kFlushing));
  CHECK(IsLegalTransition(S::kRecording, S::kFlushing));
  CHECK(IsLegalTransition(S::kFlushing, S::kIdle));
  CHECK_FALSE(IsLegalTransition(S::kRecording, S::kIdle));
  CHECK_FALSE(IsLegalTransition(S::kArmed, S::kIdle));
  CHECK(std::string(SessionStateName(S::kArmed)) == "armed");
}

TEST_CASE("a time window: idle -> armed -> warm-up -> recording -> flushing -> idle") {
  Scheduler s;
  const WindowPlan p = TimePlan(kT0 + 10 * kMs, kT0 + 30 * kMs, 50 * kMs);
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  CHECK(s.state() == S::kArmed);
  CHECK(s.busy());
  CHECK(s.accepted() == 1);
  CHECK(s.TakeAction() == Action::kNone);
  CHECK(s.wake_ns() == kT0 + 10 * kMs);
  CHECK(s.wake_iteration() == kNever);

  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0 + 9 * kMs)).ok());
  CHECK(s.state() == S::kArmed);
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0 + 10 * kMs)).ok());
  CHECK(s.state() == S::kWarmUp);
  CHECK(s.TakeAction() == Action::kWarmUp);
  CHECK(s.TakeAction() == Action::kNone);  // handed out once
  CHECK(s.wake_ns() == kNever);            // warming: the runner sends kSourcesWarm

  REQUIRE(s.Handle(Ev(SessionEventKind::kSourcesWarm, kT0 + 20 * kMs)).ok());
  CHECK(s.state() == S::kWarmUp);  // warm, but the start is later
  CHECK(s.wake_ns() == kT0 + 30 * kMs);
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0 + 31 * kMs)).ok());
  CHECK(s.state() == S::kRecording);
  CHECK(s.TakeAction() == Action::kOpen);
  CHECK(s.opened_ns() == kT0 + 31 * kMs);
  CHECK(s.wake_ns() == kT0 + 81 * kMs);  // duration counts from the actual open

  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0 + 80 * kMs)).ok());
  CHECK(s.state() == S::kRecording);
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0 + 81 * kMs)).ok());
  CHECK(s.state() == S::kFlushing);
  CHECK(s.TakeAction() == Action::kClose);
  CHECK(s.outcome() == Outcome::kClosed);
  CHECK(s.closed_ns() == kT0 + 81 * kMs);
  CHECK(s.finished() == 0);

  REQUIRE(s.Handle(Ev(SessionEventKind::kFlushed, kT0 + 90 * kMs)).ok());
  CHECK(s.state() == S::kIdle);
  CHECK_FALSE(s.busy());
  CHECK(s.finished() == 1);
  CHECK(s.TakeAction() == Action::kNone);
}

TEST_CASE("an iteration window follows the iteration counter, not the clock") {
  Scheduler s;
  const WindowPlan p = IterPlan(5, 7, 3);
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 2, &p)).ok());
  CHECK(s.wake_iteration() == 5);
  CHECK(s.wake_ns() == kNever);  // no fallback in this plan
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0 + 1000 * kSec, 4)).ok());
  CHECK(s.state() == S::kArmed);
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 5)).ok());
  CHECK(s.TakeAction() == Action::kWarmUp);
  REQUIRE(s.Handle(Ev(SessionEventKind::kSourcesWarm, kT0, 6)).ok());
  CHECK(s.state() == S::kWarmUp);
  CHECK(s.wake_iteration() == 7);
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 7)).ok());
  CHECK(s.state() == S::kRecording);
  CHECK(s.TakeAction() == Action::kOpen);
  CHECK(s.opened_at_iteration_boundary());
  CHECK(s.wake_iteration() == 10);
  CHECK(s.wake_ns() == kNever);
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0 + 1000 * kSec, 9)).ok());
  CHECK(s.state() == S::kRecording);
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 10)).ok());
  CHECK(s.state() == S::kFlushing);
  CHECK(s.TakeAction() == Action::kClose);
}

TEST_CASE("warm-up with zero iterations opens at the boundary once the sources are warm") {
  Scheduler s;
  const WindowPlan p = IterPlan(4, 4, 1);
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 3, &p)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 4)).ok());
  CHECK(s.TakeAction() == Action::kWarmUp);
  REQUIRE(s.Handle(Ev(SessionEventKind::kSourcesWarm, kT0, 4)).ok());
  CHECK(s.state() == S::kRecording);
  CHECK(s.TakeAction() == Action::kOpen);
}

TEST_CASE("a tick never skips an owed action; a stop may turn an owed open into a close") {
  Scheduler s;
  const WindowPlan p = IterPlan(2, 3, 2);
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 8)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 8)).ok());  // kWarmUp still owed
  CHECK(s.state() == S::kWarmUp);
  CHECK(s.TakeAction() == Action::kWarmUp);
  REQUIRE(s.Handle(Ev(SessionEventKind::kSourcesWarm, kT0, 8)).ok());
  CHECK(s.state() == S::kRecording);
  // The iteration is already past the end, but the open has not been performed yet.
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 8)).ok());
  CHECK(s.state() == S::kRecording);
  CHECK(s.TakeAction() == Action::kOpen);
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 8)).ok());
  CHECK(s.state() == S::kFlushing);
  CHECK(s.TakeAction() == Action::kClose);
  REQUIRE(s.Handle(Ev(SessionEventKind::kFlushed, kT0)).ok());

  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 8, &p)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 8)).ok());
  CHECK(s.TakeAction() == Action::kWarmUp);
  REQUIRE(s.Handle(Ev(SessionEventKind::kSourcesWarm, kT0, 8)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kStop, kT0 + 1)).ok());  // before the runner opened
  CHECK(s.state() == S::kFlushing);
  CHECK(s.TakeAction() == Action::kClose);
}

TEST_CASE("a stop after an iteration window's start boundary closes it, not cancels") {
  Scheduler s;
  const WindowPlan p = IterPlan(2, 4, 3);
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 2)).ok());
  CHECK(s.TakeAction() == Action::kWarmUp);
  REQUIRE(s.Handle(Ev(SessionEventKind::kSourcesWarm, kT0, 3)).ok());
  CHECK(s.state() == S::kWarmUp);  // boundary 4 not reached yet
  // The job passed boundary 4 (and 5); the runner has not ticked since. A flush arrives.
  REQUIRE(s.Handle(Ev(SessionEventKind::kStop, kT0 + 7, 5)).ok());
  CHECK(s.state() == S::kFlushing);
  CHECK(s.outcome() == Outcome::kClosed);
  CHECK(s.opened_at_iteration_boundary());
  CHECK(s.closed_ns() == kT0 + 7);
  CHECK(s.TakeAction() == Action::kClose);  // the runner opens at the boundary, then closes
  REQUIRE(s.Handle(Ev(SessionEventKind::kFlushed, kT0 + 8)).ok());

  // Past the boundary with the sources still warming (a slow CUPTI load): the stop is kept and
  // closes the window the moment they are warm; a second stop is refused meanwhile.
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 2)).ok());
  CHECK(s.TakeAction() == Action::kWarmUp);
  REQUIRE(s.Handle(Ev(SessionEventKind::kStop, kT0 + 20, 7)).ok());
  CHECK(s.state() == S::kWarmUp);
  CHECK(s.busy());
  CHECK_FALSE(s.Handle(Ev(SessionEventKind::kStop, kT0 + 21, 7)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kSourcesWarm, kT0 + 30, 8)).ok());
  CHECK(s.state() == S::kFlushing);
  CHECK(s.outcome() == Outcome::kClosed);
  CHECK(s.closed_ns() == kT0 + 20);
  CHECK(s.TakeAction() == Action::kClose);
  REQUIRE(s.Handle(Ev(SessionEventKind::kFlushed, kT0 + 31)).ok());

  // Still Armed (the runner never ran since the request) with the job past the start boundary:
  // the stop owes the warm-up, then closes.
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kStop, kT0 + 40, 5)).ok());
  CHECK(s.state() == S::kWarmUp);
  CHECK(s.TakeAction() == Action::kWarmUp);
  REQUIRE(s.Handle(Ev(SessionEventKind::kSourcesWarm, kT0 + 50, 5)).ok());
  CHECK(s.outcome() == Outcome::kClosed);
  CHECK(s.closed_ns() == kT0 + 40);
  CHECK(s.TakeAction() == Action::kClose);
  REQUIRE(s.Handle(Ev(SessionEventKind::kFlushed, kT0 + 51)).ok());

  // Before the start boundary a stop is still a cancel, warm or not.
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 2)).ok());
  CHECK(s.TakeAction() == Action::kWarmUp);
  REQUIRE(s.Handle(Ev(SessionEventKind::kStop, kT0, 3)).ok());
  CHECK(s.outcome() == Outcome::kCancelled);
  CHECK(s.TakeAction() == Action::kAbort);
  CHECK_FALSE(s.Handle(Ev(SessionEventKind::kSourcesWarm, kT0, 4)).ok());  // refused, no change
  CHECK(s.state() == S::kFlushing);
}

TEST_CASE("cancel while armed ends the session; it cannot be lost or undone") {
  Scheduler s;
  const WindowPlan p = IterPlan(100, 100, 2);
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kCancel, kT0)).ok());
  CHECK(s.state() == S::kFlushing);
  CHECK(s.outcome() == Outcome::kCancelled);
  CHECK(s.busy());  // until the runner released the sources
  // Later ticks, even past the start, do not revive it.
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 100)).ok());
  CHECK(s.state() == S::kFlushing);
  CHECK(s.TakeAction() == Action::kAbort);
  CHECK_FALSE(s.Handle(Ev(SessionEventKind::kCancel, kT0)).ok());  // already cancelled
  REQUIRE(s.Handle(Ev(SessionEventKind::kFlushed, kT0)).ok());
  CHECK(s.state() == S::kIdle);
  CHECK(s.finished() == 1);
}

TEST_CASE("stop while armed is a cancel; stop while recording closes at that instant") {
  Scheduler s;
  const WindowPlan p = TimePlan(kT0 + kSec, kT0 + kSec, kSec);
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kStop, kT0)).ok());
  CHECK(s.state() == S::kFlushing);
  CHECK(s.outcome() == Outcome::kCancelled);
  CHECK(s.TakeAction() == Action::kAbort);
  REQUIRE(s.Handle(Ev(SessionEventKind::kFlushed, kT0)).ok());

  WindowPlan sync;
  sync.sync = true;
  sync.warmup_ns = sync.start_ns = kT0;
  sync.duration_ns = kNever;
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &sync)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0)).ok());
  CHECK(s.TakeAction() == Action::kWarmUp);
  REQUIRE(s.Handle(Ev(SessionEventKind::kSourcesWarm, kT0 + 1)).ok());
  CHECK(s.TakeAction() == Action::kOpen);
  CHECK(s.wake_ns() == kNever);  // a synchronous window closes only on stop
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, std::numeric_limits<int64_t>::max() - 1)).ok());
  CHECK(s.state() == S::kRecording);
  CHECK_FALSE(s.Handle(Ev(SessionEventKind::kCancel, kT0 + 2)).ok());  // an open window is not cancelled
  CHECK(s.state() == S::kRecording);
  REQUIRE(s.Handle(Ev(SessionEventKind::kStop, kT0 + 5)).ok());
  CHECK(s.state() == S::kFlushing);
  CHECK(s.outcome() == Outcome::kClosed);
  CHECK(s.closed_ns() == kT0 + 5);
  CHECK(s.TakeAction() == Action::kClose);
  CHECK_FALSE(s.Handle(Ev(SessionEventKind::kStop, kT0 + 6)).ok());  // nothing records any more
}

TEST_CASE("cancel during warm-up: the late 'sources warm' is refused and changes nothing") {
  Scheduler s;
  const WindowPlan p = TimePlan(kT0, kT0 + kSec, kSec);
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0)).ok());
  CHECK(s.TakeAction() == Action::kWarmUp);
  REQUIRE(s.Handle(Ev(SessionEventKind::kCancel, kT0 + 1)).ok());
  CHECK(s.state() == S::kFlushing);
  CHECK_FALSE(s.Handle(Ev(SessionEventKind::kSourcesWarm, kT0 + 2 * kSec)).ok());
  CHECK(s.state() == S::kFlushing);
  CHECK(s.TakeAction() == Action::kAbort);
}

TEST_CASE("a request is refused in every busy state (request-while-flushing included)") {
  Scheduler s;
  const WindowPlan p = TimePlan(kT0, kT0, 10 * kMs);
  auto busy_refused = [&] {
    absl::Status st = s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p));
    return st.code() == absl::StatusCode::kFailedPrecondition && st.message() == "profiler busy";
  };
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  CHECK(busy_refused());  // armed
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0)).ok());
  CHECK(busy_refused());  // warm-up
  CHECK(s.TakeAction() == Action::kWarmUp);
  REQUIRE(s.Handle(Ev(SessionEventKind::kSourcesWarm, kT0)).ok());
  CHECK(s.state() == S::kRecording);
  CHECK(busy_refused());  // recording
  CHECK(s.TakeAction() == Action::kOpen);
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0 + 10 * kMs)).ok());
  CHECK(s.state() == S::kFlushing);
  CHECK(busy_refused());  // flushing
  CHECK(s.accepted() == 1);
  CHECK(s.state() == S::kFlushing);  // the refused request changed nothing
  REQUIRE(s.Handle(Ev(SessionEventKind::kFlushed, kT0)).ok());
  CHECK(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  CHECK(s.accepted() == 2);
}

TEST_CASE("shutdown refuses requests until reopened") {
  Scheduler s;
  const WindowPlan p = TimePlan(kT0, kT0, kMs);
  REQUIRE(s.Handle(Ev(SessionEventKind::kShutdown, kT0)).ok());
  CHECK(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).message() == "kairos is shut down");
  CHECK(s.state() == S::kIdle);
  REQUIRE(s.Handle(Ev(SessionEventKind::kReopen, kT0)).ok());
  CHECK(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
}

TEST_CASE("an iteration request in a process that never steps falls back or is dropped") {
  Scheduler s;
  WindowPlan p = IterPlan(3, 3, 2);
  p.fallback_at_ns = kT0 + 100 * kMs;
  p.fallback_duration_ns = 40 * kMs;
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  CHECK(s.wake_ns() == kT0 + 100 * kMs);
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0 + 100 * kMs, 0)).ok());
  CHECK(s.state() == S::kWarmUp);
  CHECK(s.fell_back());
  CHECK(s.TakeAction() == Action::kWarmUp);
  REQUIRE(s.Handle(Ev(SessionEventKind::kSourcesWarm, kT0 + 101 * kMs, 0)).ok());
  CHECK(s.TakeAction() == Action::kOpen);
  CHECK(s.wake_ns() == kT0 + 141 * kMs);
  CHECK(s.wake_iteration() == kNever);
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0 + 141 * kMs, 0)).ok());
  CHECK(s.TakeAction() == Action::kClose);
  REQUIRE(s.Handle(Ev(SessionEventKind::kFlushed, kT0)).ok());

  p.fallback_duration_ns = 0;  // nothing to fall back to: dropped
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0 + 100 * kMs, 0)).ok());
  CHECK(s.state() == S::kFlushing);
  CHECK(s.outcome() == Outcome::kDropped);
  CHECK(s.TakeAction() == Action::kAbort);
  REQUIRE(s.Handle(Ev(SessionEventKind::kFlushed, kT0)).ok());

  // Stepping began just at the deadline: keep waiting for the boundary, with no deadline.
  p.fallback_duration_ns = 40 * kMs;
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0 + 100 * kMs, 1)).ok());
  CHECK(s.state() == S::kArmed);
  CHECK(s.wake_ns() == kNever);
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0 + 200 * kMs, 3)).ok());
  CHECK(s.TakeAction() == Action::kWarmUp);
}

TEST_CASE("saturating arithmetic") {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  CHECK(SatAdd(kMax, 1) == kMax);
  CHECK(SatAdd(kMin, -1) == kMin);
  CHECK(SatAdd(2, 3) == 5);
  CHECK(SatMul(kMax / 2, 3) == kMax);
  CHECK(SatMul(kMax / 2, -3) == kMin);
  CHECK(SatMul(-7, 6) == -42);
}

TEST_CASE("PROFILE_START_TIME far in the future saturates and stays armed") {
  Config c;
  c.profile_start_time_ms = int64_t{9000000000000000};  // ~ year 287000: ms * 1e6 overflows
  c.duration_ms = 500;
  auto plan = PlanWindow(c, false, kT0, 0, nullptr);
  REQUIRE(plan.ok());
  CHECK(plan->start_ns == std::numeric_limits<int64_t>::max());
  CHECK(plan->warmup_ns > kT0);
  Scheduler s;
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &*plan)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0 + 365 * 24 * 3600 * kSec)).ok());  // a year on
  CHECK(s.state() == S::kArmed);
  CHECK(s.TakeAction() == Action::kNone);
  CHECK(s.wake_ns() > kT0 + 365 * 24 * 3600 * kSec);
}

TEST_CASE("PlanWindow: time checks, warm-up, passed iterations rounded up") {
  Config c;
  c.profile_start_time_ms = kT0 / kMs - 1000;
  auto past = PlanWindow(c, false, kT0, 0, nullptr);
  CHECK(past.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(past.status().message().find("start timestamp is in the past") != std::string::npos);
  c.profile_start_time_ms = kT0 / kMs + 1000;
  c.warmup_secs = 2;
  auto tight = PlanWindow(c, false, kT0, 0, nullptr);
  CHECK(tight.status().message().find("insufficient time for warmup") != std::string::npos);
  c.warmup_secs = 1;
  auto ok = PlanWindow(c, false, kT0, 0, nullptr);
  REQUIRE(ok.ok());
  CHECK(ok->start_ns == kT0 + kSec);
  CHECK(ok->warmup_ns == kT0);

  Config it;
  it.profile_start_iteration = 1;
  it.profile_start_iteration_roundup = 4;
  it.iterations = 2;
  it.warmup_iterations = 0;
  std::string note;
  auto moved = PlanWindow(it, false, kT0, 5, &note);
  REQUIRE(moved.ok());
  CHECK(moved->start_iteration == 8);
  CHECK(moved->warmup_iteration == 8);
  CHECK(moved->fallback_at_ns == kNever);  // the process has stepped
  CHECK(note.find("the window starts at 8") != std::string::npos);
}

TEST_CASE("ConfigParseInfo says which keys were set and whether a window was named") {
  auto names = [](const char* text) {
    ConfigParseInfo info;
    auto c = ParseConfig(text, Config{}, ParseOptions{ConfigSource::kApi, 0}, nullptr, &info);
    REQUIRE(c.ok());
    return info;
  };
  CHECK(names("ACTIVITIES_ITERATIONS=3").names_window);
  CHECK(names("  ACTIVITIES_DURATION_MSECS = 5 \n").names_window);
  const ConfigParseInfo two = names("ACTIVITIES_LOG_FILE=/x.json\nACTIVITIES_WARMUP_ITERATIONS=1");
  CHECK(two.names_window);
  CHECK(two.keys_set == std::vector<std::string>{"ACTIVITIES_LOG_FILE", "ACTIVITIES_WARMUP_ITERATIONS"});
  CHECK_FALSE(names("ACTIVITIES_LOG_FILE=/x.json").names_window);
  CHECK_FALSE(names("# ACTIVITIES_ITERATIONS=3").names_window);
  CHECK_FALSE(names("ACTIVITIES_LOG_FILE=/ACTIVITIES_ITERATIONS").names_window);
  CHECK(names("").keys_set.empty());
}

}  // namespace
}  // namespace kairos
