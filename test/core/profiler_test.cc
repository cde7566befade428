// File: profiler_test.cc
// Layer: test/core. The session end to end through the process-root Profiler: synchronous
// sessions, iteration windows (also already passed), duration windows, bad requests,
// unwritable output, 64 threads during flush, fork() while recording, the exit flush.
// Threading: the test thread plus the threads each case starts; the Profiler is the process
// singleton, so cases run one after another and each leaves it idle.
#include "session/profiler.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "activity/cpu_recorder.h"
#include "clock.h"
#include "core/test_util.h"

namespace kairos {
namespace {

using internal::Mark;
using internal::PopRange;
using internal::PushRange;
using testing::CountNames;
using testing::MakeTempDir;
using testing::ReadJson;

std::string Pid() { return std::to_string(getpid()); }

std::map<std::string, int> StepNames(const nlohmann::json& j) {
  std::map<std::string, int> out;
  for (const auto& [name, n] : CountNames(j, "user_annotation"))
    if (name.rfind("ProfilerStep#", 0) == 0) out[name] = n;
  return out;
}

TEST_CASE("synchronous start/stop writes a complete, parseable trace") {
  Profiler& p = Profiler::Get();
  const std::string dir = MakeTempDir();
  REQUIRE(p.Init("ACTIVITIES_LOG_FILE=" + dir + "/sync.json").ok());
  CHECK(p.state() == SessionState::kIdle);
  CHECK(p.Stop().code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(p.Start().ok());
  CHECK(p.state() == SessionState::kRecording);
  CHECK(p.Start().message() == "profiler busy");
  for (int i = 0; i < 3; ++i) {
    PushRange("forward");
    PushRange("backward");
    PopRange();
    PopRange();
  }
  Mark("checkpoint");
  p.SetMetadata("run", "unit");
  REQUIRE(p.Stop().ok());
  absl::StatusOr<std::string> path = p.Flush();
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
  Profiler& p = Profiler::Get();
  const std::string dir = MakeTempDir();
  const int64_t cur = g_iteration.load();
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
  REQUIRE(p.WaitForCompletedSessions(n, 10000));
  absl::StatusOr<std::string> path = p.Flush();
  REQUIRE(path.ok());
  nlohmann::json j = ReadJson(*path);
  REQUIRE_FALSE(j.is_discarded());
  CHECK(StepNames(j) == std::map<std::string, int>{{"ProfilerStep#" + std::to_string(cur + 3), 1},
                                                   {"ProfilerStep#" + std::to_string(cur + 4), 1}});
  CHECK(CountNames(j, "user_annotation")["iter"] == 2);
}

TEST_CASE("an iteration window whose start has passed moves to the next rounded-up iteration") {
  Profiler& p = Profiler::Get();
  const std::string dir = MakeTempDir();
  for (int i = 0; i < 5; ++i) StepHook();
  const int64_t cur = g_iteration.load();
  const int64_t start = (cur + 1 + 3) / 4 * 4;
  const uint64_t n = p.completed_sessions() + 1;
  REQUIRE(p.Init("PROFILE_START_ITERATION=1\nPROFILE_START_ITERATION_ROUNDUP=4\n"
                 "ACTIVITIES_ITERATIONS=2\nACTIVITIES_WARMUP_ITERATIONS=0\n"
                 "ACTIVITIES_LOG_FILE=" + dir + "/passed.json")
              .ok());
  for (int i = 0; i < 12; ++i) StepHook();
  REQUIRE(p.WaitForCompletedSessions(n, 10000));
  absl::StatusOr<std::string> path = p.Flush();
  REQUIRE(path.ok());
  nlohmann::json j = ReadJson(*path);
  CHECK(StepNames(j) == std::map<std::string, int>{{"ProfilerStep#" + std::to_string(start), 1},
                                                   {"ProfilerStep#" + std::to_string(start + 1), 1}});
}

TEST_CASE("a duration window opens and closes by itself; requests meanwhile are busy") {
  Profiler& p = Profiler::Get();
  const std::string dir = MakeTempDir();
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
  REQUIRE(path.ok());
  nlohmann::json j = ReadJson(*path);
  CHECK(CountNames(j, "user_annotation")["timed"] > 0);
}

TEST_CASE("bad requests are rejected and the previous config stays") {
  Profiler& p = Profiler::Get();
  const std::string dir = MakeTempDir();
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
  Profiler& p = Profiler::Get();
  for (const std::string bad : {"/nonexistent_kairos_dir/x.json", "/proc/version/x.json"}) {
    REQUIRE(p.Init("ACTIVITIES_LOG_FILE=" + bad).ok());
    REQUIRE(p.Start().ok());
    PushRange("lost");
    PopRange();
    REQUIRE(p.Stop().ok());
    absl::StatusOr<std::string> path = p.Flush();
    CHECK_FALSE(path.ok());
    CHECK_FALSE(path.status().message().empty());
    CHECK(p.state() == SessionState::kIdle);
  }
  // The next trace works.
  const std::string dir = MakeTempDir();
  REQUIRE(p.Init("ACTIVITIES_LOG_FILE=" + dir + "/after.json").ok());
  REQUIRE(p.Start().ok());
  REQUIRE(p.Flush().ok());
}

TEST_CASE("64 threads keep calling in while the trace is flushed") {
  constexpr int kThreads = 64, kPhase1 = 100;
  Profiler& p = Profiler::Get();
  const std::string dir = MakeTempDir();
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
  Profiler& p = Profiler::Get();
  const std::string dir = MakeTempDir();
  REQUIRE(p.Init("ACTIVITIES_LOG_FILE=" + dir + "/parent.json").ok());
  REQUIRE(p.Start().ok());
  PushRange("parent_range");
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int code = 0;
    Profiler& c = Profiler::Get();
    if (&c == &p) code |= 1;
    if (c.state() != SessionState::kIdle) code |= 2;
    if (internal::g_cpu_epoch.load() != 0) code |= 4;
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

TEST_CASE("a window still open at exit() is closed and written") {
  const std::string dir = MakeTempDir();
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    Profiler& c = Profiler::Get();
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

}  // namespace
}  // namespace kairos
