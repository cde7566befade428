// File: profiler_test.cc
// Layer: test/core. The session end to end through the process-root SessionController:
// synchronous sessions, iteration windows (also already passed), duration windows, bad requests,
// unwritable output, 64 threads during flush, fork() while recording, the exit flush, and
// the regressions of issue 12: calls that stalled for seconds on an armed request (flush,
// start, shutdown, exit), a cancel lost while a request waited, busy while armed, a busy
// init that installed its config, a start time far in the future, the exit bound that a
// request could raise, and windows with no events of the process's own; and a session of its
// own, created and destroyed twice beside the root's (issue 24).
// Threading: the test thread plus the threads each case starts; the SessionController is the
// process singleton (but in that last case), so cases run one after another and each leaves it
// idle.
#include "session/controller.h"

#include "sanitizer_skip.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "activity/cpu_recorder.h"
#include "util/clock.h"
#include "core/test_util.h"
#include "session/daemon_glue.h"
#include "session/trace_identity.h"
#include "temp_dir.h"

namespace kairos {
namespace {

using internal::Mark;
using internal::PopRange;
using internal::PushRange;
using testing::CountNames;
using testing::ReadJson;
using testing::TempDir;

std::string Pid() { return std::to_string(getpid()); }

// The names of this process's threads (/proc/self/task/*/comm).
std::vector<std::string> ThreadNames() {
  std::vector<std::string> names;
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string name;
    if (std::getline(f, name)) names.push_back(name);
  }
  closedir(d);
  return names;
}

// Waits for session `n` to complete, flushes it and returns the trace's path (REQUIREs both).
std::string FlushedTracePath(SessionController& p, uint64_t n) {
  REQUIRE(p.WaitForCompletedSessions(n, 10000));
  absl::StatusOr<std::string> path = p.Flush();
  INFO(path.status().ToString());
  REQUIRE(path.ok());
  return *path;
}

// The same, parsed.
nlohmann::json FlushedTrace(SessionController& p, uint64_t n) {
  nlohmann::json j = ReadJson(FlushedTracePath(p, n));
  REQUIRE_FALSE(j.is_discarded());
  return j;
}

// Polls `done` every millisecond until it holds or `deadline` passes; returns its last value.
// Only where the runner waits inside an action for a boundary's hook (no source is called
// there to signal it); elsewhere the gate source below says when the runner warms up or opens.
template <typename Pred>
bool PollUntil(Pred done, std::chrono::steady_clock::time_point deadline) {
  while (!done() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return done();
}

std::map<std::string, int> StepNames(const nlohmann::json& j) {
  std::map<std::string, int> out;
  for (const auto& [name, n] : CountNames(j, "user_annotation"))
    if (name.rfind("ProfilerStep#", 0) == 0) out[name] = n;
  return out;
}

TEST_CASE("synchronous start/stop writes a complete, parseable trace") {
  SessionController& p = SessionController::Get();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  REQUIRE(p.Init("ACTIVITIES_LOG_FILE=" + dir + "/sync.json").ok());
  CHECK(p.state() == SessionState::kIdle);
  CHECK(p.Stop().code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(p.Start().ok());
  CHECK(p.state() == SessionState::kRecording);
  CHECK(p.Start().message() == "profiler busy");
  // The session's runner is named for top -H and perf (thread_name.h). At least one: a thread
  // the runner has just started carries the runner's name until it names itself.
  const std::vector<std::string> names = ThreadNames();
  CHECK(std::count(names.begin(), names.end(), "kairos-session") >= 1);
  for (int i = 0; i < 3; ++i) {
    PushRange("forward");
    PushRange("backward");
    PopRange();
    PopRange();
  }
  Mark("checkpoint");
  REQUIRE(p.SetMetadata("run", "unit").ok());
  REQUIRE(p.Stop().ok());
  absl::StatusOr<std::string> path = p.Flush();
  INFO(path.status().ToString());
  REQUIRE(path.ok());
  CHECK(*path == dir + "/sync_" + Pid() + ".json");
  CHECK(p.state() == SessionState::kIdle);

  nlohmann::json j = ReadJson(*path);
  REQUIRE_FALSE(j.is_discarded());
  for (const char* key : {"traceEvents", "baseTimeNanoseconds", "schemaVersion"})
    CHECK(j.contains(key));
  auto ua = CountNames(j, "user_annotation");
  CHECK(ua["forward"] == 3);
  CHECK(ua["backward"] == 3);
  CHECK(ua.size() == 2);
  CHECK(CountNames(j, "cpu_instant_event")["checkpoint"] == 1);
  // Time-ordered output: ts never decreases among X events.
  double last = -1;
  for (const auto& e : j["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    const double ts = e["ts"].is_string() ? std::stod(e["ts"].get<std::string>()) : e["ts"].get<double>();
    CHECK(ts >= last);
    last = ts;
  }
  // Flush with nothing active returns the last trace.
  absl::StatusOr<std::string> again = p.Flush();
  REQUIRE(again.ok());
  CHECK(*again == *path);
}

TEST_CASE("an iteration window records exactly its iterations as ProfilerStep#N") {
  SessionController& p = SessionController::Get();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  const int64_t cur = g_steps.iteration.load();
  const uint64_t n = p.completed_sessions() + 1;
  REQUIRE(p.Init("PROFILE_START_ITERATION=" + std::to_string(cur + 3) +
                 "\nACTIVITIES_ITERATIONS=2\nACTIVITIES_WARMUP_ITERATIONS=1\n"
                 "ACTIVITIES_LOG_FILE=" + dir + "/iter.json")
              .ok());
  for (int i = 0; i < 8; ++i) {
    PushRange("iter");
    PopRange();
    StepHook();
  }
  nlohmann::json j = FlushedTrace(p, n);
  CHECK(StepNames(j) == std::map<std::string, int>{{"ProfilerStep#" + std::to_string(cur + 3), 1},
                                                   {"ProfilerStep#" + std::to_string(cur + 4), 1}});
  CHECK(CountNames(j, "user_annotation")["iter"] == 2);
}

// A source that can hold the runner inside its warm-up (registered last, so the cpu source has
// warmed up before it blocks). Open, it passes through and records nothing.
class WarmUpGate final : public TraceSource {
 public:
  const char* name() const override { return "test_warmup_gate"; }
  absl::Status StartWarmup(const Config&) override {
    std::unique_lock<std::mutex> lock(mu_);
    entered_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return !closed_; });
    // As the CUDA source does: ready when its warm-up returns (when the test asks it to).
    ready_raw_ = report_ready_ ? ReadRawClock() : 0;
    left_ = true;
    cv_.notify_all();
    return absl::OkStatus();
  }
  uint64_t ReadyRaw() const override { return ready_raw_; }
  void StartRecording(int64_t) override {
    std::lock_guard<std::mutex> lock(mu_);
    opened_ = true;
    cv_.notify_all();
  }
  void StopRecording(int64_t) override {}
  void Collect(TraceData&) override {}
  void Reset() override {}

  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    entered_ = left_ = opened_ = false;
  }
  // Forgets the events of earlier sessions; stays open (the runner passes through).
  void Arm() {
    std::lock_guard<std::mutex> lock(mu_);
    entered_ = left_ = opened_ = false;
  }
  // Whether the runner opened the window (StartRecording), waiting at most `timeout_ms`.
  bool WaitOpened(int64_t timeout_ms) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return opened_; });
  }
  // Whether StartWarmup reports when it returned as the source's ready time.
  void ReportReady(bool on) {
    std::lock_guard<std::mutex> lock(mu_);
    report_ready_ = on;
  }
  // Whether the runner left StartWarmup (after Open), waiting at most `timeout_ms`.
  bool WaitLeft(int64_t timeout_ms) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return left_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = false;
    cv_.notify_all();
  }
  // Whether the runner reached StartWarmup while closed, waiting at most `timeout_ms`.
  bool WaitEntered(int64_t timeout_ms) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return entered_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false, entered_ = false, left_ = false, opened_ = false, report_ready_ = false;
  uint64_t ready_raw_ = 0;  // written by the runner in StartWarmup, read by it after
};

// The gate, registered once for this process's later sessions (open, it changes nothing).
WarmUpGate* Gate() {
  static WarmUpGate* gate = [] {
    auto g = std::make_unique<WarmUpGate>();
    WarmUpGate* raw = g.get();
    SessionController::Get().RegisterTraceSource(std::move(g));
    return raw;
  }();
  return gate;
}

// Without configured warm-up iterations the sources still warm up one iteration ahead of the
// start: the GPU source is switched on by the runner, and a warm-up at the start boundary lost
// the first traced iteration's first kernels. The window itself is unchanged.
TEST_CASE("with no warm-up iterations the sources warm up one iteration before the start") {
  SessionController& p = SessionController::Get();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  if (g_steps.iteration.load() == 0) StepHook();  // a process that never stepped stays Armed
  const int64_t cur = g_steps.iteration.load();
  const uint64_t n = p.completed_sessions() + 1;
  WarmUpGate* gate = Gate();  // open: tells when the runner warms the sources up
  gate->Arm();
  REQUIRE(p.Init("PROFILE_START_ITERATION=" + std::to_string(cur + 3) +
                 "\nACTIVITIES_ITERATIONS=2\nACTIVITIES_WARMUP_ITERATIONS=0\n"
                 "ACTIVITIES_LOG_FILE=" + dir + "/early.json")
              .ok());
  StepHook();  // cur + 1
  CHECK(p.state() == SessionState::kArmed);
  StepHook();  // cur + 2: one before the start, the warm-up begins
  CHECK(gate->WaitEntered(10000));
  CHECK(p.state() == SessionState::kWarmUp);  // the start (cur + 3) has not come
  for (int i = 0; i < 4; ++i) {  // cur + 3 .. cur + 6
    PushRange("iter");
    PopRange();
    StepHook();
  }
  nlohmann::json j = FlushedTrace(p, n);
  CHECK(StepNames(j) == std::map<std::string, int>{{"ProfilerStep#" + std::to_string(cur + 3), 1},
                                                   {"ProfilerStep#" + std::to_string(cur + 4), 1}});
  CHECK(CountNames(j, "user_annotation")["iter"] == 2);
}


// The flake of an iteration window stepped as a burst: the runner, woken by the request, ticked
// into warm-up between the warm-up step's increment and that step's hook, which then found
// WarmUp instead of Armed and left recording off; the runner switched it on only after every
// source had warmed up, after the burst, and the window closed with no events (NOT_FOUND) or no
// ProfilerSteps. Here the step is split where that happened, and the gate keeps the runner in
// warm-up while the window's steps pass, so the interleaving is forced, not waited for.
TEST_CASE("a step whose hook finds the runner already warming up still records the window") {
  SessionController& p = SessionController::Get();
  WarmUpGate* gate = Gate();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  const int64_t cur = g_steps.iteration.load();
  const uint64_t n = p.completed_sessions() + 1;
  REQUIRE(p.Init("PROFILE_START_ITERATION=" + std::to_string(cur + 2) +
                 "\nACTIVITIES_ITERATIONS=2\nACTIVITIES_WARMUP_ITERATIONS=1\n"
                 "ACTIVITIES_LOG_FILE=" + dir + "/raced.json")
              .ok());
  gate->Close();  // the runner cannot warm up before the step below: nothing else steps
  // The warm-up step (cur + 1), first half: StepHook's increment, its hook not yet run.
  const uint64_t raw = ReadRawClock();
  REQUIRE(g_steps.iteration.fetch_add(1) + 1 == cur + 1);
  // Wake the runner as an earlier boundary's hook would (a boundary before the window, which
  // neither opens nor closes it): it ticks at cur + 1 and warms up; the gate holds it there
  // with the session mutex released.
  p.OnStepBoundary(cur, raw - 1);
  const bool entered = gate->WaitEntered(10000);
  if (!entered) gate->Open();
  REQUIRE(entered);
  CHECK(p.state() == SessionState::kWarmUp);
  // Second half of the warm-up step, as StepHook does it when recording was off.
  p.OnStepBoundary(cur + 1, raw);
  internal::RecordStep(cur + 1, raw);
  // The window's iterations (cur + 2, cur + 3) and the boundary that ends it, while the runner
  // still warms up.
  for (int i = 0; i < 4; ++i) {
    PushRange("iter");
    PopRange();
    StepHook();
  }
  gate->Open();
  nlohmann::json j = FlushedTrace(p, n);
  CHECK(StepNames(j) == std::map<std::string, int>{{"ProfilerStep#" + std::to_string(cur + 2), 1},
                                                   {"ProfilerStep#" + std::to_string(cur + 3), 1}});
  CHECK(CountNames(j, "user_annotation")["iter"] == 2);
}

// With the runner held in `gate`'s warm-up (the caller just stepped over the warm-up
// boundary), steps twice while the source is not ready (the planned start and the iteration
// after), then lets the runner go: the source is ready in the second of them. False when the
// runner never reached the gate.
bool StepTwiceBeforeReady(WarmUpGate* gate) {
  if (!gate->WaitEntered(10000)) {
    gate->Open();
    return false;
  }
  StepHook();
  StepHook();
  gate->Open();
  const bool left = gate->WaitLeft(10000);
  gate->ReportReady(false);
  return left;
}

// A source that must be on at the start (CUPTI, whose first enable can take long) was ready
// only after the start boundary: the window starts at the first boundary after it instead,
// with the requested number of iterations, and says so. The gate holds the runner in that
// source's warm-up while the start passes, so the order is forced, not waited for.
TEST_CASE("a source ready only after the start boundary moves the window's start") {
  SessionController& p = SessionController::Get();
  WarmUpGate* gate = Gate();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  const int64_t cur = g_steps.iteration.load();
  const uint64_t n = p.completed_sessions() + 1;
  REQUIRE(p.Init("PROFILE_START_ITERATION=" + std::to_string(cur + 2) +
                 "\nACTIVITIES_ITERATIONS=2\nACTIVITIES_WARMUP_ITERATIONS=1\n"
                 "ACTIVITIES_LOG_FILE=" + dir + "/moved.json")
              .ok());
  gate->Close();
  gate->ReportReady(true);
  StepHook();  // cur + 1: the warm-up boundary; the runner warms up and waits at the gate
  REQUIRE(StepTwiceBeforeReady(gate));  // cur + 2 (the planned start), cur + 3: ready in it
  for (int i = 0; i < 4; ++i) {  // cur + 4 (the moved start) .. cur + 7
    PushRange("iter");
    PopRange();
    StepHook();
  }
  nlohmann::json j = FlushedTrace(p, n);
  CHECK(StepNames(j) == std::map<std::string, int>{{"ProfilerStep#" + std::to_string(cur + 4), 1},
                                                   {"ProfilerStep#" + std::to_string(cur + 5), 1}});
  CHECK(CountNames(j, "user_annotation")["iter"] == 2);
  CHECK(j["kairos_stats"].value("window_start_moved_iterations", 0) == 2);
  const std::string want = "the window starts at iteration " + std::to_string(cur + 4) +
                           " instead of " + std::to_string(cur + 2);
  int said = 0;
  for (const auto& w : j.value("kairos_warnings", nlohmann::json::array()))
    said += w.get<std::string>().rfind(want, 0) == 0 ? 1 : 0;
  CHECK(said == 1);
}

// The same late source in a job-wide window (a daemon request planned from its poll tick):
// every rank must cover the same iterations, so the start stays, and the trace says which of
// its iterations the late source's data lacks instead of leaving the gap unexplained.
TEST_CASE("a job-wide window keeps its start when a source is ready late, and says so") {
  SessionController& p = SessionController::Get();
  WarmUpGate* gate = Gate();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  if (g_steps.iteration.load() == 0) StepHook();  // a job-wide plan needs a counted step
  const int64_t cur = g_steps.iteration.load();
  const uint64_t n = p.completed_sessions() + 1;
  Config c;
  c.profile_start_iteration = cur + 3;
  c.iterations = 2;
  c.warmup_iterations = 1;
  c.log_file = dir + "/shared.json";
  gate->Close();
  gate->ReportReady(true);
  REQUIRE(p.RequestTrace(c, ConfigSource::kDaemon, ReadRawClock()).ok());
  StepHook();  // cur + 1
  StepHook();  // cur + 2: the warm-up boundary; the runner warms up and waits at the gate
  REQUIRE(StepTwiceBeforeReady(gate));  // cur + 3 (the planned start), cur + 4: ready in it
  for (int i = 0; i < 2; ++i) StepHook();  // cur + 5 ends the window
  nlohmann::json j = FlushedTrace(p, n);
  CHECK(StepNames(j) == std::map<std::string, int>{{"ProfilerStep#" + std::to_string(cur + 3), 1},
                                                   {"ProfilerStep#" + std::to_string(cur + 4), 1}});
  CHECK(j["kairos_stats"].value("window_start_incomplete_iterations", 0) == 2);
  CHECK_FALSE(j["kairos_stats"].contains("window_start_moved_iterations"));
  const std::string want = "source test_warmup_gate was recording only from iteration " +
                           std::to_string(cur + 4) + " on: the window keeps its start at iteration " +
                           std::to_string(cur + 3) + " (a job-wide window";
  int said = 0;
  for (const auto& w : j.value("kairos_warnings", nlohmann::json::array()))
    said += w.get<std::string>().rfind(want, 0) == 0 ? 1 : 0;
  CHECK(said == 1);
}

// The same race at the window's end: the runner ticked past the end boundary between the
// step's increment and its hook, closed before the hook had delivered that boundary's time,
// and ended the window at its own clock, so the trace had one ProfilerStep too many (seen in
// the daemon-request cases as {N, N+1, N+2} for a 2-iteration window).
TEST_CASE("a window whose end boundary is counted before its hook ran ends at that boundary") {
  SessionController& p = SessionController::Get();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  const int64_t cur = g_steps.iteration.load();
  const uint64_t n = p.completed_sessions() + 1;
  Gate()->Arm();
  REQUIRE(p.Init("PROFILE_START_ITERATION=" + std::to_string(cur + 1) +
                 "\nACTIVITIES_ITERATIONS=2\nACTIVITIES_WARMUP_ITERATIONS=0\n"
                 "ACTIVITIES_LOG_FILE=" + dir + "/end.json")
              .ok());
  StepHook();  // cur + 1: the window's start
  REQUIRE(Gate()->WaitOpened(10000));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  PushRange("iter");
  PopRange();
  StepHook();  // cur + 2
  // The end boundary (cur + 3), first half, as StepHook does it while recording: increment,
  // then the step record.
  const uint64_t raw = ReadRawClock();
  REQUIRE(g_steps.iteration.fetch_add(1) + 1 == cur + 3);
  internal::RecordStep(cur + 3, raw);
  // Wake the runner as an earlier boundary's hook would; it ticks at cur + 3 and closes. It
  // then waits (bounded) for that boundary's hook inside its close, where no source is called:
  // the state is the only sign, polled.
  p.OnStepBoundary(cur, raw - 1);
  PollUntil([&] { return p.state() != SessionState::kRecording; }, deadline);
  // The hook's second half arrives after the runner began to close.
  p.OnStepBoundary(cur + 3, raw);
  PushRange("after");
  PopRange();
  nlohmann::json j = FlushedTrace(p, n);
  CHECK(StepNames(j) == std::map<std::string, int>{{"ProfilerStep#" + std::to_string(cur + 1), 1},
                                                   {"ProfilerStep#" + std::to_string(cur + 2), 1}});
  CHECK(CountNames(j, "user_annotation")["iter"] == 1);
  CHECK(CountNames(j, "user_annotation")["after"] == 0);
}

// And at the start: the runner counted the start boundary before its hook ran and opened the
// window at its own clock, so what the job did right after the boundary was lost.
TEST_CASE("a window whose start boundary is counted before its hook ran starts at that boundary") {
  SessionController& p = SessionController::Get();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  const int64_t cur = g_steps.iteration.load();
  const uint64_t n = p.completed_sessions() + 1;
  REQUIRE(p.Init("PROFILE_START_ITERATION=" + std::to_string(cur + 2) +
                 "\nACTIVITIES_ITERATIONS=2\nACTIVITIES_WARMUP_ITERATIONS=1\n"
                 "ACTIVITIES_LOG_FILE=" + dir + "/start.json")
              .ok());
  StepHook();  // cur + 1: warm-up, recording switched on by its hook
  // The start boundary (cur + 2), first half as StepHook does it while recording; a range
  // follows, all before the hook's second half.
  const uint64_t raw = ReadRawClock();
  REQUIRE(g_steps.iteration.fetch_add(1) + 1 == cur + 2);
  internal::RecordStep(cur + 2, raw);
  PushRange("first");
  PopRange();
  // Wake the runner as an earlier boundary's hook would; it opens the window at cur + 2.
  p.OnStepBoundary(cur, raw - 1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  REQUIRE(PollUntil([&] { return p.state() == SessionState::kRecording; }, deadline));
  p.OnStepBoundary(cur + 2, raw);  // the hook's second half, after the runner began to open
  StepHook();                      // cur + 3
  StepHook();                      // cur + 4: the end
  nlohmann::json j = FlushedTrace(p, n);
  CHECK(StepNames(j) == std::map<std::string, int>{{"ProfilerStep#" + std::to_string(cur + 2), 1},
                                                   {"ProfilerStep#" + std::to_string(cur + 3), 1}});
  CHECK(CountNames(j, "user_annotation")["first"] == 1);
}

TEST_CASE("an iteration window whose start has passed moves to the next rounded-up iteration") {
  SessionController& p = SessionController::Get();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  for (int i = 0; i < 5; ++i) StepHook();
  const int64_t cur = g_steps.iteration.load();
  const int64_t start = (cur + 1 + 3) / 4 * 4;
  const uint64_t n = p.completed_sessions() + 1;
  REQUIRE(p.Init("PROFILE_START_ITERATION=1\nPROFILE_START_ITERATION_ROUNDUP=4\n"
                 "ACTIVITIES_ITERATIONS=2\nACTIVITIES_WARMUP_ITERATIONS=0\n"
                 "ACTIVITIES_LOG_FILE=" + dir + "/passed.json")
              .ok());
  for (int i = 0; i < 12; ++i) StepHook();
  nlohmann::json j = FlushedTrace(p, n);
  CHECK(StepNames(j) == std::map<std::string, int>{{"ProfilerStep#" + std::to_string(start), 1},
                                                   {"ProfilerStep#" + std::to_string(start + 1), 1}});
}

// Job-wide requests (issue 16): every rank gets the request on the same poll tick but handles
// it a little later, so the window is planned from the iteration of the tick.
TEST_CASE("IterationAtRaw finds the iteration current at a past instant") {
  for (int i = 0; i < 3; ++i) StepHook();
  const int64_t at_tick = g_steps.iteration.load();
  const uint64_t tick = ReadRawClock();
  CHECK(IterationAtRaw(tick) == at_tick);
  for (int i = 0; i < 5; ++i) StepHook();
  CHECK(IterationAtRaw(tick) == at_tick);
  CHECK(IterationAtRaw(ReadRawClock()) == at_tick + 5);
  // Older than the 64 boundaries kept: the oldest known.
  for (int i = 0; i < 100; ++i) StepHook();
  CHECK(IterationAtRaw(tick) == g_steps.iteration.load() - 63);
}

std::vector<int64_t> TracedSteps(const std::string& path) {
  std::vector<int64_t> out;
  for (const auto& [name, n] : StepNames(ReadJson(path)))
    for (int i = 0; i < n; ++i) out.push_back(std::stoll(name.substr(13)));
  std::sort(out.begin(), out.end());
  return out;
}

// Sends `c` as the daemon client would (poll instant `poll_raw`), steps 12 times, and returns
// the ProfilerStep numbers of the trace written. The steps come as a burst: from the warm-up
// boundary on every boundary reaches the session through its hook, so the window's edges are
// the same however late the runner runs (no sleep stands in for the runner's progress). The
// planning itself (which start from which tick) is tested without threads in scheduler_test.
std::vector<int64_t> DaemonWindowSteps(const Config& c, uint64_t poll_raw) {
  SessionController& p = SessionController::Get();
  const uint64_t n = p.completed_sessions() + 1;
  REQUIRE(p.RequestTrace(c, ConfigSource::kDaemon, poll_raw).ok());
  for (int i = 0; i < 12; ++i) StepHook();
  return TracedSteps(FlushedTracePath(p, n));
}

Config DaemonIterationRequest(const std::string& path) {
  Config c;
  c.profile_start_iteration = 0;
  c.profile_start_iteration_roundup = 8;
  c.iterations = 2;
  c.warmup_iterations = 0;
  c.log_file = path;
  return c;
}

TEST_CASE("a daemon request rounds up from its poll tick's iteration, one iteration ahead") {
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  // At the tick, 1 iteration short of a multiple of 8: planned from the tick (+1), the start is
  // the next multiple of 8 after that; the request is handled one step after its tick.
  while ((g_steps.iteration.load() + 2) % 8 != 0) StepHook();
  const uint64_t tick = ReadRawClock();
  const int64_t then = g_steps.iteration.load();
  StepHook();
  CHECK(DaemonWindowSteps(DaemonIterationRequest(dir + "/tick.json"), tick) ==
        std::vector<int64_t>{then + 2, then + 3});
}

TEST_CASE("a daemon request stamped with its request time is planned from that instant") {
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  while ((g_steps.iteration.load() + 2) % 8 != 0) StepHook();
  const int64_t then = g_steps.iteration.load();
  // The stamp falls between two boundaries (ms resolution), the poll after the next one: the
  // stamp decides (planned from the poll, the start would be then + 10).
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  Config c = DaemonIterationRequest(dir + "/stamp.json");
  c.request_time_ms = UnixNowNs() / 1000000;
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  StepHook();
  CHECK(DaemonWindowSteps(c, ReadRawClock()) == std::vector<int64_t>{then + 2, then + 3});
}

TEST_CASE("a daemon request handled after its planned start is planned from the current iteration") {
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  while ((g_steps.iteration.load() + 2) % 8 != 0) StepHook();
  const uint64_t tick = ReadRawClock();
  const int64_t then = g_steps.iteration.load();
  for (int i = 0; i < 3; ++i) StepHook();  // past then + 2, the start planned from the tick
  CHECK(DaemonWindowSteps(DaemonIterationRequest(dir + "/late.json"), tick) ==
        std::vector<int64_t>{then + 10, then + 11});
}

TEST_CASE("distributedInfo.backend is nccl only when an NCCL library is loaded") {
  CHECK(BackendFromLoadedObjects({"/usr/lib/libc.so.6", "/opt/nccl/lib/libnccl.so.2"}) == "nccl");
  CHECK(BackendFromLoadedObjects({"librccl.so.1"}) == "nccl");
  CHECK(BackendFromLoadedObjects({"/usr/lib/libc.so.6", "/opt/x/libnccl_net.so"}).empty());
  CHECK(BackendFromLoadedObjects({"/opt/libnccl.so.2/libfoo.so"}).empty());
  CHECK(BackendFromLoadedObjects({}).empty());
  CHECK(DistributedFromEnv(nullptr).backend.empty());  // this test links no NCCL
}

TEST_CASE("a process registers with the daemon once it steps, joins NCCL or loads the driver") {
  CHECK_FALSE(ProcessLooksLikeTrainingJob(0, false, false));  // a launcher, a shell tool
  CHECK(ProcessLooksLikeTrainingJob(1, false, false));
  CHECK(ProcessLooksLikeTrainingJob(0, true, false));
  CHECK(ProcessLooksLikeTrainingJob(0, false, true));
}

TEST_CASE("rank and world size come from the launcher, else from the largest NCCL communicator") {
  auto same = [](const DistributedInfo& d, int64_t rank, int64_t world, int64_t local,
                 const char* backend) {
    return d.rank == rank && d.world_size == world && d.local_rank == local && d.backend == backend;
  };
  CHECK(same(ResolveDistributed(3, 8, 1, 5, 16, ""), 3, 8, 1, "nccl"));  // variables win
  CHECK(same(ResolveDistributed(-1, -1, -1, 5, 16, ""), 5, 16, 0, "nccl"));
  CHECK(same(ResolveDistributed(-1, 8, -1, 5, 16, "nccl"), 5, 8, 0, "nccl"));
  CHECK(same(ResolveDistributed(-1, -1, -1, -1, 0, ""), 0, 1, 0, ""));  // no communicator
  CHECK(same(ResolveDistributed(-1, -1, -1, 7, 4, ""), 0, 1, 0, ""));   // inconsistent: ignored
  CHECK(same(ResolveDistributed(2, 4, 2, -1, 0, "nccl"), 2, 4, 2, "nccl"));
}

TEST_CASE("a duration window opens and closes by itself; requests meanwhile are busy") {
  SessionController& p = SessionController::Get();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  const uint64_t n = p.completed_sessions() + 1;
  REQUIRE(p.Init("ACTIVITIES_WARMUP_PERIOD_SECS=0\nACTIVITIES_DURATION_MSECS=50\n"
                 "ACTIVITIES_LOG_FILE=" + dir + "/timed.json")
              .ok());
  CHECK(p.RequestTrace(Config{}, ConfigSource::kDaemon).message() == "profiler busy");
  do {
    PushRange("timed");
    PopRange();
  } while (!p.WaitForCompletedSessions(n, 1));
  absl::StatusOr<std::string> path = p.Flush();
  INFO(path.status().ToString());
  REQUIRE(path.ok());
  nlohmann::json j = ReadJson(*path);
  CHECK(CountNames(j, "user_annotation")["timed"] > 0);
}

TEST_CASE("bad requests are rejected and the previous config stays") {
  SessionController& p = SessionController::Get();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  REQUIRE(p.Init("ACTIVITIES_LOG_FILE=" + dir + "/keep.json").ok());
  Config c;
  c.profile_start_time_ms = UnixNowNs() / 1000000 - 3600 * 1000;  // an hour ago
  absl::Status s = p.RequestTrace(c, ConfigSource::kDaemon);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(s.message().find("start timestamp is in the past") != absl::string_view::npos);
  CHECK(p.state() == SessionState::kIdle);
  // The parser rejects it too (far in the past), and the old config survives.
  CHECK_FALSE(p.Init("PROFILE_START_TIME=1000\nACTIVITIES_LOG_FILE=/elsewhere.json").ok());
  CHECK(p.base_config().log_file == dir + "/keep.json");
}

TEST_CASE("a missing or unwritable output directory fails the flush, not the process") {
  SessionController& p = SessionController::Get();
  // Flush after Stop answers the same whether the failed write finished first or not (it used
  // to return an older trace's path, this one, when the runner finished before the flush came).
  const TempDir temp_before("kairos_core_test_");
  const std::string& before = temp_before.path();
  REQUIRE(p.Init("ACTIVITIES_LOG_FILE=" + before + "/before.json").ok());
  REQUIRE(p.Start().ok());
  PushRange("kept");
  PopRange();
  REQUIRE(p.Flush().ok());
  for (const bool wait_for_write : {false, true}) {
    for (const std::string bad : {"/nonexistent_kairos_dir/x.json", "/proc/version/x.json"}) {
      REQUIRE(p.Init("ACTIVITIES_LOG_FILE=" + bad).ok());
      const uint64_t n = p.completed_sessions() + 1;
      REQUIRE(p.Start().ok());
      PushRange("lost");
      PopRange();
      REQUIRE(p.Stop().ok());
      if (wait_for_write) REQUIRE(p.WaitForCompletedSessions(n, 10000));
      absl::StatusOr<std::string> path = p.Flush();
      CHECK_FALSE(path.ok());
      CHECK_FALSE(path.status().message().empty());
      CHECK(p.state() == SessionState::kIdle);
    }
  }
  // The next trace works.
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  REQUIRE(p.Init("ACTIVITIES_LOG_FILE=" + dir + "/after.json").ok());
  REQUIRE(p.Start().ok());
  REQUIRE(p.Flush().ok());
}

TEST_CASE("64 threads keep calling in while the trace is flushed") {
  constexpr int kThreads = 64, kPhase1 = 100;
  SessionController& p = SessionController::Get();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  REQUIRE(p.Init("ACTIVITIES_LOG_FILE=" + dir + "/many.json").ok());
  REQUIRE(p.Start().ok());
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  std::vector<std::string> flushed(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPhase1; ++i) {
        PushRange("phase1");
        PopRange();
      }
      {
        std::unique_lock<std::mutex> lock(mu);
        if (++arrived == kThreads) cv.notify_all();
        cv.wait(lock, [&] { return arrived == kThreads; });
      }
      if (t % 8 == 0) {
        absl::StatusOr<std::string> path = p.Flush();
        flushed[t] = path.ok() ? *path : "error: " + std::string(path.status().message());
      } else {
        for (int i = 0; i < 2000; ++i) {
          PushRange("phase2");
          Mark("m");
          PopRange();
          if (i % 500 == 0) (void)p.Stop();
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  const std::string expected = dir + "/many_" + Pid() + ".json";
  for (int t = 0; t < kThreads; t += 8) CHECK(flushed[t] == expected);
  nlohmann::json j = ReadJson(expected);
  REQUIRE_FALSE(j.is_discarded());
  CHECK(CountNames(j, "user_annotation")["phase1"] == kThreads * kPhase1);
  CHECK(p.state() == SessionState::kIdle);
}

TEST_CASE("fork() while recording: the child has a clean, idle profiler") {
  // GCC 12's libasan does not hold its allocator lock across fork(): when another thread of
  // the parent allocates at that instant, the child's first allocation (its runner thread)
  // deadlocks inside ASan (7 of 255 full runs, stacks in AsanThread::Init). glibc's malloc
  // takes its locks around fork, so the normal build runs this case.
  KAIROS_SKIP_UNDER_SANITIZER("fork() in a multithreaded process can deadlock ASan's allocator");
  SessionController& p = SessionController::Get();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  REQUIRE(p.Init("ACTIVITIES_LOG_FILE=" + dir + "/parent.json").ok());
  REQUIRE(p.Start().ok());
  PushRange("parent_range");
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int code = 0;
    SessionController& c = SessionController::Get();
    if (&c == &p) code |= 1;
    if (c.state() != SessionState::kIdle) code |= 2;
    if (internal::g_recorder.epoch.load() != 0) code |= 4;
    if (internal::CurrentCpuRangeId() != 0) code |= 8;
    if (c.Flush().status().code() != absl::StatusCode::kNotFound) code |= 16;
    PopRange();  // harmless
    if (!c.Init("ACTIVITIES_LOG_FILE=" + dir + "/child.json").ok() || !c.Start().ok()) code |= 32;
    PushRange("child_range");
    PopRange();
    absl::StatusOr<std::string> path = c.Flush();
    if (!path.ok() || *path != dir + "/child_" + std::to_string(getpid()) + ".json") code |= 64;
    _exit(code);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  PopRange();
  absl::StatusOr<std::string> path = p.Flush();
  INFO(path.status().ToString());
  REQUIRE(path.ok());
  nlohmann::json j = ReadJson(*path);
  auto ua = CountNames(j, "user_annotation");
  CHECK(ua["parent_range"] == 1);
  CHECK(ua.count("child_range") == 0);
  nlohmann::json cj = ReadJson(dir + "/child_" + std::to_string(child) + ".json");
  CHECK(CountNames(cj, "user_annotation")["child_range"] == 1);
#ifdef KAIROS_HAVE_CUPTI
  // The child's fresh root has the built-in "cuda" source too: its trace carries either the
  // CUPTI stats or the reason GPU data is missing.
  CHECK((cj.contains("gpu_data_missing_reason") || cj["kairos_stats"].contains("cupti_dropped")));
#endif
}

// Milliseconds taken by `f`.
template <typename F>
int64_t ElapsedMs(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                t0)
      .count();
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

// An iteration window far ahead of the counter: the request stays Armed.
std::string FarIterationWindow(const std::string& dir) {
  return "PROFILE_START_ITERATION=" + std::to_string(g_steps.iteration.load() + 1000000) +
         "\nACTIVITIES_ITERATIONS=2\nKAIROS_EXIT_FLUSH_TIMEOUT_MS=30000\nACTIVITIES_LOG_FILE=" +
         dir + "/armed.json";
}

TEST_CASE("flush right after an init that armed an iteration window returns at once") {
  // Regression: the cancel was cleared when the runner took the request, and Flush waited
  // its full 60 s bound, then failed with UNAVAILABLE.
  SessionController& p = SessionController::Get();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  const uint64_t before = p.completed_sessions();
  REQUIRE(p.Init(FarIterationWindow(dir)).ok());
  CHECK(p.state() == SessionState::kArmed);
  CHECK(p.busy());  // the daemon glue's Busy(): a waiting request is busy
  CHECK(p.RequestTrace(Config{}, ConfigSource::kDaemon).message() == "profiler busy");
  absl::StatusOr<std::string> path;
  const int64_t ms = ElapsedMs([&] { path = p.Flush(); });
  CHECK(path.status().code() == absl::StatusCode::kNotFound);
  CHECK(path.status().message() == "trace cancelled before its window opened");
  CHECK(ms < 5000);
  CHECK(p.state() == SessionState::kIdle);
  CHECK(p.completed_sessions() == before + 1);
  CHECK(ListDir(dir).empty());
}

TEST_CASE("start cancels an armed request and opens its own window at once") {
  // Regression: kairos_start waited 10 s for a cancel that was lost, then failed.
  SessionController& p = SessionController::Get();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  REQUIRE(p.Init(FarIterationWindow(dir)).ok());
  REQUIRE(p.state() == SessionState::kArmed);
  absl::Status st;
  const int64_t ms = ElapsedMs([&] { st = p.Start(); });
  REQUIRE(st.ok());
  CHECK(ms < 5000);
  CHECK(p.state() == SessionState::kRecording);
  PushRange("after_start");
  PopRange();
  absl::StatusOr<std::string> path = p.Flush();
  INFO(path.status().ToString());
  REQUIRE(path.ok());
  CHECK(CountNames(ReadJson(*path), "user_annotation")["after_start"] == 1);
}

TEST_CASE("shutdown with an armed request returns at once and refuses until init") {
  // Regression: shutdown waited KAIROS_EXIT_FLUSH_TIMEOUT_MS (here 30 s) for a lost cancel.
  SessionController& p = SessionController::Get();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  REQUIRE(p.Init(FarIterationWindow(dir)).ok());
  REQUIRE(p.state() == SessionState::kArmed);
  const int64_t ms = ElapsedMs([&] { p.Shutdown(); });
  CHECK(ms < 10000);
  CHECK(p.state() == SessionState::kIdle);
  CHECK(p.Start().message() == "kairos is shut down");
  REQUIRE(p.Init("ACTIVITIES_LOG_FILE=" + dir + "/reopened.json").ok());
  REQUIRE(p.Start().ok());
  REQUIRE(p.Flush().ok());
}

TEST_CASE("exit with an armed request does not wait for it") {
  // Regression: exit() waited KAIROS_EXIT_FLUSH_TIMEOUT_MS (here 30 s).
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  int64_t ms = 0;
  int status = 0;
  ms = ElapsedMs([&] {
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      SessionController& c = SessionController::Get();
      if (!c.Init(FarIterationWindow(dir)).ok()) _exit(3);
      if (c.state() != SessionState::kArmed) _exit(4);
      exit(0);
    }
    REQUIRE(waitpid(child, &status, 0) == child);
  });
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(ms < 10000);
  CHECK(ListDir(dir).empty());
}

TEST_CASE("an init rejected as busy leaves the previous config in force") {
  SessionController& p = SessionController::Get();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  REQUIRE(p.Init("ACTIVITIES_LOG_FILE=" + dir + "/kept.json").ok());
  REQUIRE(p.Start().ok());
  absl::Status st = p.Init("ACTIVITIES_DURATION_MSECS=10\nACTIVITIES_LOG_FILE=" + dir + "/no.json");
  CHECK(st.message() == "profiler busy");
  CHECK(p.base_config().log_file == dir + "/kept.json");
  absl::StatusOr<std::string> path = p.Flush();
  INFO(path.status().ToString());
  REQUIRE(path.ok());
  CHECK(*path == dir + "/kept_" + Pid() + ".json");
}

TEST_CASE("PROFILE_START_TIME far in the future stays armed instead of starting now") {
  // Regression: ms * 1e6 overflowed (undefined; release builds started at once).
  SessionController& p = SessionController::Get();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  Config c;
  c.profile_start_time_ms = int64_t{9000000000000000};
  c.duration_ms = 100;
  c.log_file = dir + "/future.json";
  REQUIRE(p.RequestTrace(c, ConfigSource::kApi).ok());
  // Give a wrongly started window every chance to leave Armed.
  CHECK_FALSE(p.WaitForCompletedSessions(p.completed_sessions() + 1, 300));
  CHECK(p.state() == SessionState::kArmed);
  CHECK(p.Flush().status().code() == absl::StatusCode::kNotFound);
  CHECK(p.state() == SessionState::kIdle);
}

TEST_CASE("the exit bound comes from the base config only, capped") {
  SessionController& p = SessionController::Get();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  REQUIRE(p.Init("KAIROS_EXIT_FLUSH_TIMEOUT_MS=600000\nACTIVITIES_LOG_FILE=" + dir + "/b.json").ok());
  CHECK(p.ExitFlushBoundMs() == kMaxExitFlushMs);
  REQUIRE(p.Init("KAIROS_EXIT_FLUSH_TIMEOUT_MS=2000\nACTIVITIES_LOG_FILE=" + dir + "/b.json").ok());
  Config request;
  request.exit_flush_timeout_ms = 600000;  // a request's own value never counts
  request.duration_ms = 60000;
  request.log_file = dir + "/req.json";
  REQUIRE(p.RequestTrace(request, ConfigSource::kDaemon).ok());
  CHECK(p.ExitFlushBoundMs() == 2000);
  (void)p.Flush();
  CHECK(p.state() == SessionState::kIdle);
}

TEST_CASE("a window in which the process recorded nothing writes no files") {
  SessionController& p = SessionController::Get();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  Config c;
  c.duration_ms = 20;
  c.log_file = dir + "/idle.json";
  const uint64_t n = p.completed_sessions() + 1;
  REQUIRE(p.RequestTrace(c, ConfigSource::kEnv).ok());  // like a launcher's environment
  REQUIRE(p.WaitForCompletedSessions(n, 20000));
  CHECK(ListDir(dir).empty());
  // The same window with one range of the process's own is written.
  REQUIRE(p.RequestTrace(c, ConfigSource::kEnv).ok());
  do {
    PushRange("own");
    PopRange();
  } while (!p.WaitForCompletedSessions(n + 1, 1));
  CHECK(ListDir(dir).size() == 2);  // trace + summary
}

TEST_CASE("a window still open at exit() is closed and written") {
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    SessionController& c = SessionController::Get();
    if (!c.Init("ACTIVITIES_LOG_FILE=" + dir + "/exit.json").ok() || !c.Start().ok()) _exit(3);
    PushRange("open_at_exit");
    exit(0);  // atexit closes the window and writes the trace
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  nlohmann::json j = ReadJson(dir + "/exit_" + std::to_string(child) + ".json");
  REQUIRE_FALSE(j.is_discarded());
  int found = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e.value("name", "") != "open_at_exit") continue;
    ++found;
    REQUIRE(e.contains("args"));
    CHECK(e["args"].value("finished", true) == false);
  }
  CHECK(found == 1);
}

// Issue 24: a whole session (its sources, its runner thread) is created and destroyed inside
// one process, independent of the process root's. The first is stopped and flushed before it
// goes; the second is destroyed with its window open, which the destructor closes and writes.
TEST_CASE("a session of its own is created, records and is destroyed, twice in one process") {
  auto runners = [] {
    const std::vector<std::string> n = ThreadNames();
    return std::count(n.begin(), n.end(), std::string("kairos-session"));
  };
  const auto before = runners();
  const TempDir temp("kairos_core_test_");
  const std::string& dir = temp.path();
  for (int round = 0; round < 2; ++round) {
    const std::string name = "own" + std::to_string(round);
    {
      SessionController s;
      s.RegisterTraceSource(std::make_unique<internal::CpuRecorder>());
      REQUIRE(s.Init("ACTIVITIES_LOG_FILE=" + dir + "/" + name + ".json").ok());
      REQUIRE(s.Start().ok());
      CHECK(s.state() == SessionState::kRecording);
      CHECK(runners() >= before + 1);
      PushRange(name.c_str());
      PopRange();
      if (round == 0) {
        REQUIRE(s.Stop().ok());
        absl::StatusOr<std::string> path = s.Flush();
        INFO(path.status().ToString());
        REQUIRE(path.ok());
        CHECK(s.completed_sessions() == 1);
      }
    }
    CHECK(runners() == before);  // its runner was joined
    nlohmann::json j = ReadJson(dir + "/" + name + "_" + Pid() + ".json");
    REQUIRE_FALSE(j.is_discarded());
    const auto ua = CountNames(j, "user_annotation");
    CHECK(ua.size() == 1);
    CHECK(ua.count(name) == 1);
    CHECK(ua.at(name) == 1);
  }
}

}  // namespace
}  // namespace kairos
