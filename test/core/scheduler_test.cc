// File: scheduler_test.cc
// Layer: test/core. The pure session scheduler, driven by events with explicit times and
// iteration counts (no threads, no sleeps, no clock): the transition table checked three ways
// (what Handle() does, docs/ARCHITECTURE.md's table, IsLegalTransition), the session policy
// (request planning, refusals, the step hook's rules, the moved start), window planning with
// saturating arithmetic, and ConfigParseInfo (which replaced the session's own re-reading of
// config text).
// Threading: single-threaded.
#include "session/scheduler.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

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

// ---- The transition table, three ways -------------------------------------------------------
// What Handle() does, explored by seeded random walks over every event kind with a small set of
// times, iterations and plans; the rows of docs/ARCHITECTURE.md's table, parsed; and
// IsLegalTransition. Each must agree with the others: a change the code makes that no row
// describes, a row the code never makes, or an edge outside IsLegalTransition fails.

const S kAllStates[] = {S::kIdle, S::kArmed, S::kWarmUp, S::kRecording, S::kFlushing};

// What one event did.
struct Observed {
  S from, to;
  SessionEventKind kind;
  Action action;     // owed to the runner after the event
  Outcome outcome;   // meaningful when `to` is Flushing
  bool ok;
  std::string refusal;  // the message when refused
  bool start_moved;     // start_moved_from() changed
};

// One row of the doc's table.
struct DocRow {
  std::string text;
  std::vector<S> from;
  std::vector<SessionEventKind> kinds;
  bool unchanged = false;
  S to = S::kIdle;
  std::string outcome;  // "closed", "cancelled", "dropped" or "" (to Flushing)
  std::string action;   // "none", "warm-up", "open", "close", "abort", "refused"
  std::string refusal;  // the quoted message of a refusal
  bool moves_start = false;
  bool witnessed = false;
};

std::string Trim(std::string x) {
  const size_t b = x.find_first_not_of(' '), e = x.find_last_not_of(' ');
  return b == std::string::npos ? "" : x.substr(b, e - b + 1);
}

bool StateNamed(const std::string& name, S* out) {
  static const std::pair<const char*, S> kNames[] = {{"Idle", S::kIdle},
                                                     {"Armed", S::kArmed},
                                                     {"WarmUp", S::kWarmUp},
                                                     {"Recording", S::kRecording},
                                                     {"Flushing", S::kFlushing}};
  for (const auto& [n, st] : kNames)
    if (name == n) {
      *out = st;
      return true;
    }
  return false;
}

std::string FirstWord(const std::string& cell) {
  std::string w = cell.substr(0, cell.find(' '));
  while (!w.empty() && (w.back() == ';' || w.back() == ':' || w.back() == ',')) w.pop_back();
  return w;
}

// The table under "## Session states" (parse errors REQUIRE-fail with the row).
std::vector<DocRow> ParseDocTable() {
  const std::string path = std::string(KAIROS_SOURCE_DIR) + "/docs/ARCHITECTURE.md";
  std::ifstream f(path);
  REQUIRE(f.good());
  std::vector<DocRow> rows;
  std::string line;
  bool in_section = false;
  while (std::getline(f, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line.rfind("## Session states", 0) == 0;
    if (!in_section || line.rfind("| ", 0) != 0 || line.rfind("| from ", 0) == 0) continue;
    std::vector<std::string> cells;
    for (size_t at = 1; at < line.size();) {
      const size_t bar = line.find(" | ", at);
      const size_t len = bar == std::string::npos ? line.size() - at - 1 : bar - at;
      cells.push_back(Trim(line.substr(at, len)));
      if (bar == std::string::npos) break;
      at = bar + 2;
    }
    INFO(line);
    REQUIRE(cells.size() == 4);
    DocRow r;
    r.text = line;
    if (cells[0] == "any") {
      r.from.assign(std::begin(kAllStates), std::end(kAllStates));
    } else {
      for (size_t at = 0; at <= cells[0].size();) {
        const size_t comma = cells[0].find(',', at);
        S st;
        REQUIRE(StateNamed(Trim(cells[0].substr(at, comma - at)), &st));
        r.from.push_back(st);
        if (comma == std::string::npos) break;
        at = comma + 1;
      }
    }
    for (size_t at = cells[1].find('`'); at != std::string::npos;) {
      const size_t end = cells[1].find('`', at + 1);
      REQUIRE(end != std::string::npos);
      const std::string span = cells[1].substr(at + 1, end - at - 1);
      for (int k = 0; k < kSessionEventKindCount; ++k)
        if (span == SessionEventKindName(static_cast<SessionEventKind>(k)))
          r.kinds.push_back(static_cast<SessionEventKind>(k));
      at = cells[1].find('`', end + 1);
    }
    REQUIRE_FALSE(r.kinds.empty());
    const std::string to = FirstWord(cells[2]);
    r.unchanged = to == "unchanged";
    if (!r.unchanged) REQUIRE(StateNamed(to, &r.to));
    if (r.to == S::kFlushing && !r.unchanged) {
      const size_t open = cells[2].find('(');
      REQUIRE(open != std::string::npos);
      r.outcome = cells[2].substr(open + 1, cells[2].find(')') - open - 1);
    }
    r.moves_start = cells[2].find("the start moves") != std::string::npos;
    r.action = FirstWord(cells[3]);
    if (r.action == "refused") {
      const size_t q = cells[3].find('"');
      REQUIRE(q != std::string::npos);
      r.refusal = cells[3].substr(q + 1, cells[3].find('"', q + 1) - q - 1);
    }
    rows.push_back(r);
  }
  return rows;
}

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kClosed: return "closed";
    case Outcome::kCancelled: return "cancelled";
    case Outcome::kDropped: return "dropped";
    case Outcome::kNone: return "";
  }
  return "?";
}

bool Matches(const DocRow& r, const Observed& o) {
  if (std::find(r.from.begin(), r.from.end(), o.from) == r.from.end()) return false;
  if (std::find(r.kinds.begin(), r.kinds.end(), o.kind) == r.kinds.end()) return false;
  if (!o.ok) return r.action == "refused" && r.refusal == o.refusal;
  if (r.action == "refused" || r.moves_start != o.start_moved) return false;
  if (r.unchanged) return o.to == o.from && r.action == ActionName(o.action);
  return o.to == r.to && r.action == ActionName(o.action) &&
         (r.to != S::kFlushing || r.outcome == OutcomeName(o.outcome));
}

// Seeded random walks: every event kind, with times around a time plan's edges, iterations
// around an iteration plan's, ready iterations before and after the start, and five plans.
std::vector<Observed> ExploreHandle() {
  WindowPlan plans[5] = {TimePlan(kT0 + 10 * kMs, kT0 + 30 * kMs, 50 * kMs), IterPlan(2, 3, 2),
                         IterPlan(3, 3, 2), IterPlan(3, 3, 2), WindowPlan{}};
  plans[2].fallback_at_ns = plans[3].fallback_at_ns = kT0 + 100 * kMs;
  plans[2].fallback_duration_ns = 40 * kMs;  // plans[3]: duration 0, dropped
  plans[4].sync = true;
  plans[4].warmup_ns = plans[4].start_ns = kT0;
  plans[4].duration_ns = kNever;
  const int64_t times[] = {kT0, kT0 + 20 * kMs, kT0 + 40 * kMs, kT0 + 200 * kMs};
  const int64_t iterations[] = {0, 1, 2, 3, 4, 5, 8};
  const int64_t ready[] = {-1, -1, 2, 3, 4};
  std::mt19937 rng(24);
  auto pick = [&](auto& a) { return a[rng() % (sizeof(a) / sizeof(a[0]))]; };
  std::vector<Observed> out;
  for (int walk = 0; walk < 4000; ++walk) {
    Scheduler s;
    for (int step = 0; step < 16; ++step) {
      const unsigned k = rng() % (kSessionEventKindCount + 3);
      if (k >= static_cast<unsigned>(kSessionEventKindCount)) {  // the runner takes its action
        s.TakeAction();
        continue;
      }
      SchedulerEvent e = Ev(static_cast<SessionEventKind>(k), pick(times), pick(iterations),
                            &plans[rng() % 5]);
      e.ready_iteration = pick(ready);
      Observed o{s.state(), s.state(), e.kind, Action::kNone, Outcome::kNone, true, "", false};
      const int64_t moved_before = s.start_moved_from();
      Scheduler before = s;
      const Action owed_before = before.TakeAction();
      const absl::Status st = s.Handle(e);
      Scheduler probe = s;
      o.to = s.state();
      // The action this event owes (one owed before it and still owed is not its doing).
      o.action = probe.TakeAction();
      if (o.action == owed_before && o.to == o.from) o.action = Action::kNone;
      o.outcome = s.outcome();
      o.ok = st.ok();
      o.refusal = std::string(st.message());
      o.start_moved = s.start_moved_from() != moved_before && s.start_moved_from() != 0;
      out.push_back(o);
      if (rng() % 2 == 0) s.TakeAction();  // as the runner does, half of the time at once
    }
  }
  return out;
}

std::string Describe(const Observed& o) {
  return std::string(SessionStateName(o.from)) + " --" + SessionEventKindName(o.kind) + "--> " +
         SessionStateName(o.to) + " action " + ActionName(o.action) + " outcome " +
         OutcomeName(o.outcome) + (o.ok ? "" : " refused: " + o.refusal) +
         (o.start_moved ? " (start moved)" : "");
}

TEST_CASE("the transition table: Handle, docs/ARCHITECTURE.md and IsLegalTransition agree") {
  std::vector<DocRow> rows = ParseDocTable();
  REQUIRE(rows.size() >= 20);
  const std::vector<Observed> seen = ExploreHandle();
  bool edge_seen[kSessionStateCount][kSessionStateCount] = {};
  std::set<std::string> reported;
  for (const Observed& o : seen) {
    const bool documented_kind = !o.ok || o.from != o.to || o.start_moved;
    if (o.from != o.to) {
      INFO(Describe(o));
      CHECK(IsLegalTransition(o.from, o.to));
      edge_seen[static_cast<int>(o.from)][static_cast<int>(o.to)] = true;
    }
    bool described = false;
    for (DocRow& r : rows)
      if (Matches(r, o)) described = r.witnessed = true;
    if (documented_kind && !described && reported.insert(Describe(o)).second) {
      // Reported once per distinct observation.
      INFO("Handle() did this and no row of ARCHITECTURE.md's table says so: " << Describe(o));
      CHECK(described);
    }
  }
  for (const DocRow& r : rows) {
    INFO("no event explored does what this row says: " << r.text);
    CHECK(r.witnessed);
  }
  for (S from : kAllStates)
    for (S to : kAllStates) {
      INFO(SessionStateName(from) << " -> " << SessionStateName(to));
      CHECK(edge_seen[static_cast<int>(from)][static_cast<int>(to)] == IsLegalTransition(from, to));
      bool in_doc = false;
      for (const DocRow& r : rows)
        in_doc |= !r.unchanged && r.to == to && from != to &&
                  std::find(r.from.begin(), r.from.end(), from) != r.from.end();
      CHECK(in_doc == IsLegalTransition(from, to));
    }
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

Config IterationConfig(int64_t start, int64_t roundup, int64_t iterations, int64_t warmup) {
  Config c;
  c.profile_start_iteration = start;
  c.profile_start_iteration_roundup = roundup;
  c.iterations = iterations;
  c.warmup_iterations = warmup;
  return c;
}

RequestInstant At(int64_t iteration, int64_t reference_iteration = -1) {
  RequestInstant at;
  at.now_ns = kT0;
  at.iteration = iteration;
  at.reference_iteration = reference_iteration;
  return at;
}

// Job-wide requests (issue 16): every rank gets the request on the same poll tick but handles
// it a little later, so the window is planned from the tick's iteration, one further.
TEST_CASE("PlanRequest: a job-wide request is planned from its poll's iteration, one further") {
  const Config c = IterationConfig(0, 8, 2, 0);
  std::string note;
  // The poll tick came in iteration 15. Ranks that handle the reply before and after the next
  // boundary (still 15, or 16 already) must pick the same start: planned from 15 + 1, both
  // start at 24 (from their own iteration, the first would pick 16).
  CHECK(PlanRequest(c, false, At(15, 15), &note)->start_iteration == 24);
  CHECK(PlanRequest(c, false, At(16, 15), &note)->start_iteration == 24);
  CHECK(PlanRequest(c, false, At(15), &note)->start_iteration == 16);
  CHECK(PlanRequest(c, false, At(15, 15), &note)->start_shared);  // never moved by a late source
  CHECK_FALSE(PlanRequest(c, false, At(15), &note)->start_shared);
  // Tick in 14: planned from 15, start 16 with its warm-up (one early) at 15; a rank that
  // handles the reply still in 15 keeps it.
  auto tick = PlanRequest(c, false, At(15, 14), &note);
  REQUIRE(tick.ok());
  CHECK(tick->start_iteration == 16);
  CHECK(tick->warmup_iteration == 15);
  // Handled after that warm-up began (17 > 15): from the current iteration instead.
  note.clear();
  auto late = PlanRequest(c, false, At(17, 14), &note);
  REQUIRE(late.ok());
  CHECK(late->start_iteration == 24);
  CHECK(late->warmup_iteration == 23);
  CHECK(note.find("request handled 3 iterations after its poll") != std::string::npos);
  // A process that never stepped keeps the plain plan (its fallback decides).
  auto never = PlanRequest(c, false, At(0, 0), &note);
  REQUIRE(never.ok());
  CHECK(never->start_iteration == 8);
  CHECK(never->warmup_iteration == 7);
}

TEST_CASE("PlanRequest: without warm-up iterations the warm-up begins one iteration early") {
  std::string note;
  auto p = PlanRequest(IterationConfig(10, 1, 2, 0), false, At(3), &note);
  REQUIRE(p.ok());
  CHECK(p->start_iteration == 10);
  CHECK(p->warmup_iteration == 9);
  // Configured warm-up iterations are kept as they are.
  p = PlanRequest(IterationConfig(10, 1, 2, 3), false, At(3), &note);
  CHECK(p->warmup_iteration == 7);
  // Never to iteration 0: a start of 1 warms up at 1 (a process that has not stepped stays
  // Armed and can fall back to a time window).
  p = PlanRequest(IterationConfig(1, 1, 2, 0), false, At(0), &note);
  CHECK(p->start_iteration == 1);
  CHECK(p->warmup_iteration == 1);
  // Time and synchronous windows are untouched.
  Config t;
  t.duration_ms = 5;
  t.warmup_secs = 0;
  p = PlanRequest(t, false, At(3), &note);
  CHECK_FALSE(p->iteration_mode);
  CHECK(p->start_ns == kT0);
  CHECK(p->duration_ns == 5 * kMs);
  p = PlanRequest(IterationConfig(10, 1, 2, 0), true, At(3, 2), &note);
  CHECK(p->sync);
  CHECK_FALSE(p->iteration_mode);
}

TEST_CASE("Admit: the refusals of a request, asked before planning") {
  Scheduler s;
  CHECK(s.Admit().ok());
  const WindowPlan p = IterPlan(5, 5, 1);
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  CHECK(s.Admit().message() == "profiler busy");
  CHECK(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).message() == "profiler busy");
  REQUIRE(s.Handle(Ev(SessionEventKind::kShutdown, kT0)).ok());
  CHECK(s.Admit().message() == "kairos is shut down");
}

TEST_CASE("stop-recording (kairos_stop) closes a recording window and never cancels") {
  Scheduler s;
  const WindowPlan p = IterPlan(2, 3, 2);
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  // Armed past the start boundary: a flush would close the window, kairos_stop is refused.
  CHECK(s.Handle(Ev(SessionEventKind::kStopRecording, kT0, 5)).message() ==
        "no trace is recording");
  CHECK(s.state() == S::kArmed);
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 3)).ok());
  CHECK(s.TakeAction() == Action::kWarmUp);
  CHECK_FALSE(s.Handle(Ev(SessionEventKind::kStopRecording, kT0, 3)).ok());
  CHECK(s.state() == S::kWarmUp);
  REQUIRE(s.Handle(Ev(SessionEventKind::kSourcesWarm, kT0, 3)).ok());
  CHECK(s.TakeAction() == Action::kOpen);
  REQUIRE(s.Handle(Ev(SessionEventKind::kStopRecording, kT0 + 9, 4)).ok());
  CHECK(s.state() == S::kFlushing);
  CHECK(s.outcome() == Outcome::kClosed);
  CHECK(s.closed_ns() == kT0 + 9);
}

TEST_CASE("the step hook's policy: early start from the warm-up boundary, hooks while live") {
  Scheduler s;
  CHECK_FALSE(s.StartsEarlyAt(100));
  CHECK(s.hook_iteration() == kNever);
  const WindowPlan p = IterPlan(4, 6, 2);
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 1, &p)).ok());
  CHECK_FALSE(s.StartsEarlyAt(3));
  CHECK(s.StartsEarlyAt(4));
  CHECK(s.StartsEarlyAt(7));  // a boundary passed while the runner slept
  CHECK(s.hook_iteration() == 4);
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 4)).ok());
  CHECK(s.TakeAction() == Action::kWarmUp);
  // WarmUp: still started early by the hook (the runner may have ticked past the boundary
  // before the step's hook ran), and every boundary from the warm-up on reaches the session.
  CHECK(s.StartsEarlyAt(4));
  CHECK(s.hook_iteration() == 4);
  REQUIRE(s.Handle(Ev(SessionEventKind::kSourcesWarm, kT0, 6)).ok());
  CHECK(s.TakeAction() == Action::kOpen);
  CHECK_FALSE(s.StartsEarlyAt(6));  // open: the runner has switched every source on
  CHECK(s.hook_iteration() == 4);
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 8)).ok());
  CHECK(s.TakeAction() == Action::kClose);
  CHECK(s.hook_iteration() == kNever);  // flushing: no boundary matters any more
  // A time window never needs the hook.
  REQUIRE(s.Handle(Ev(SessionEventKind::kFlushed, kT0)).ok());
  const WindowPlan t = TimePlan(kT0 + kSec, kT0 + kSec, kSec);
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 8, &t)).ok());
  CHECK_FALSE(s.StartsEarlyAt(100));
  CHECK(s.hook_iteration() == kNever);
}

SchedulerEvent Warm(int64_t iteration, int64_t ready_iteration, int64_t now = kT0) {
  SchedulerEvent e = Ev(SessionEventKind::kSourcesWarm, now, iteration);
  e.ready_iteration = ready_iteration;
  return e;
}

TEST_CASE("a source ready only after the start boundary moves the start, same length") {
  Scheduler s;
  const WindowPlan p = IterPlan(4, 5, 3);
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 4)).ok());
  CHECK(s.TakeAction() == Action::kWarmUp);
  // CUPTI was on only in iteration 7: boundaries 5, 6 and 7 came before it.
  REQUIRE(s.Handle(Warm(7, 7)).ok());
  CHECK(s.state() == S::kWarmUp);
  CHECK(s.start_moved_from() == 5);
  CHECK(s.plan().start_iteration == 8);
  CHECK(s.wake_iteration() == 8);
  CHECK(s.TakeAction() == Action::kNone);
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 7)).ok());
  CHECK(s.state() == S::kWarmUp);
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 8)).ok());
  CHECK(s.TakeAction() == Action::kOpen);
  CHECK(s.opened_at_iteration_boundary());
  CHECK(s.wake_iteration() == 11);  // 8, 9, 10: the 3 iterations asked for
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 11)).ok());
  CHECK(s.TakeAction() == Action::kClose);
  CHECK(s.start_moved_from() == 5);  // the runner writes it into the trace
  REQUIRE(s.Handle(Ev(SessionEventKind::kFlushed, kT0)).ok());

  // A job-wide plan keeps its start: every rank picked it from one shared instant.
  WindowPlan shared = p;
  shared.start_shared = true;
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &shared)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 4)).ok());
  CHECK(s.TakeAction() == Action::kWarmUp);
  CHECK(s.start_incomplete_until() == -1);
  REQUIRE(s.Handle(Warm(7, 7)).ok());
  CHECK(s.start_moved_from() == 0);
  CHECK(s.plan().start_iteration == 5);
  CHECK(s.start_incomplete_until() == 7);  // the trace says iterations 5-7 are incomplete
  CHECK(s.TakeAction() == Action::kOpen);  // late, at its planned start
  REQUIRE(s.Handle(Ev(SessionEventKind::kStop, kT0)).ok());
  CHECK(s.TakeAction() == Action::kClose);
  REQUIRE(s.Handle(Ev(SessionEventKind::kFlushed, kT0)).ok());

  // Ready before the start boundary (the usual case), however late the runner reports it:
  // nothing moves, the window opens at its planned boundary.
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  CHECK(s.start_moved_from() == 0);
  CHECK(s.start_incomplete_until() == -1);  // a new request starts clean
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 4)).ok());
  s.TakeAction();
  REQUIRE(s.Handle(Warm(9, 4)).ok());
  CHECK(s.start_moved_from() == 0);
  CHECK(s.TakeAction() == Action::kOpen);
  CHECK(s.plan().start_iteration == 5);
  CHECK(s.wake_iteration() == 8);
  REQUIRE(s.Handle(Ev(SessionEventKind::kStop, kT0)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kFlushed, kT0)).ok());

  // No source cares (-1: a CPU-only process): nothing moves either.
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 4)).ok());
  s.TakeAction();
  REQUIRE(s.Handle(Warm(6, -1)).ok());
  CHECK(s.start_moved_from() == 0);
  CHECK(s.TakeAction() == Action::kOpen);
}

TEST_CASE("a moved start: the job may already be past it, a stop before it keeps the plan") {
  Scheduler s;
  const WindowPlan p = IterPlan(4, 5, 3);
  // The job crossed the moved start (7) before the runner reported: open at once, at 7.
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 4)).ok());
  s.TakeAction();
  REQUIRE(s.Handle(Warm(8, 6)).ok());
  CHECK(s.plan().start_iteration == 7);
  CHECK(s.TakeAction() == Action::kOpen);
  CHECK(s.wake_iteration() == 10);
  REQUIRE(s.Handle(Ev(SessionEventKind::kStop, kT0)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kFlushed, kT0)).ok());

  // A flush (exit) between the planned start (5) and the moved one (8): the window closes with
  // its planned start, as before the move, rather than being cancelled and lost.
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 4)).ok());
  s.TakeAction();
  REQUIRE(s.Handle(Warm(7, 7)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kStop, kT0 + 3, 7)).ok());
  CHECK(s.state() == S::kFlushing);
  CHECK(s.outcome() == Outcome::kClosed);
  CHECK(s.plan().start_iteration == 5);
  CHECK(s.start_moved_from() == 0);
  CHECK(s.start_incomplete_until() == 7);  // the late source's iterations 5-7 are incomplete
  CHECK(s.TakeAction() == Action::kClose);
  REQUIRE(s.Handle(Ev(SessionEventKind::kFlushed, kT0)).ok());

  // A stop pending while the sources warmed up closes as soon as they are: no move.
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &p)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 4)).ok());
  s.TakeAction();
  REQUIRE(s.Handle(Ev(SessionEventKind::kStop, kT0 + 3, 6)).ok());
  REQUIRE(s.Handle(Warm(9, 9)).ok());
  CHECK(s.outcome() == Outcome::kClosed);
  CHECK(s.start_moved_from() == 0);
  CHECK(s.plan().start_iteration == 5);
  CHECK(s.start_incomplete_until() == 9);
  REQUIRE(s.Handle(Ev(SessionEventKind::kFlushed, kT0)).ok());

  // Time windows have no boundary to move to.
  const WindowPlan t = TimePlan(kT0, kT0 + kMs, kSec);
  REQUIRE(s.Handle(Ev(SessionEventKind::kRequest, kT0, 0, &t)).ok());
  REQUIRE(s.Handle(Ev(SessionEventKind::kTick, kT0, 0)).ok());
  s.TakeAction();
  REQUIRE(s.Handle(Warm(50, 50, kT0 + 2 * kMs)).ok());
  CHECK(s.start_moved_from() == 0);
  CHECK(s.TakeAction() == Action::kOpen);
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
