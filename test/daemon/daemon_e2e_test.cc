// File: daemon_e2e_test.cc
// Layer: test (daemon). End to end on loopback with the real binaries: `kairos daemon`, a job
// linked with libkairos and started with KINETO_USE_DAEMON (no kairos calls beyond ranges and
// kairos_step), and `kairos trace`. Checks the trace files that appear, their window, the
// iteration alignment and process_limit across three processes.
// Threading: single-threaded; waits are poll(2)/inotify with deadlines (no sleeps).
#include <sys/inotify.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "daemon_process_util.h"
#include "temp_dir.h"

namespace kairos::testing {
namespace {

struct Env {
  const TempDir temp{"kairos-e2e-"};  // destroyed last: after the relay has been stopped
  std::string dir = temp.path(), endpoint, job;
  Child relay;
  int port = 0;
  int inotify = -1;

  Env() {
    endpoint = "kairos-e2e-" + std::to_string(getpid()) + "-" + dir.substr(dir.size() - 6);
    job = std::to_string(4000000000LL + getpid());  // above 2^31 on purpose
    inotify = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    REQUIRE(inotify_add_watch(inotify, dir.c_str(), IN_CLOSE_WRITE | IN_MOVED_TO) >= 0);
    relay = Spawn({KAIROS_CLI, "daemon", "--port", "0", "--endpoint", endpoint, "--verbose"}, {},
                  /*pipe_stderr=*/true);
    REQUIRE(relay.pid > 0);
    bool ok = false;
    const std::string line = relay.ReadLine(10000, &ok);
    REQUIRE(ok);
    std::smatch m;
    REQUIRE(std::regex_search(line, m, std::regex("rpc 127\\.0\\.0\\.1:([0-9]+)")));
    port = std::stoi(m[1]);
  }
  ~Env() {
    if (relay.pid > 0) {
      kill(relay.pid, SIGTERM);
      relay.Wait(5000);
    }
    close(inotify);
  }

  // step_us 0: a process that never steps (daemon_traced_program.c); `extra_env` is added.
  Child StartJob(int max_ms, int step_us = 200, const std::vector<std::string>& extra_env = {}) {
    std::vector<std::string> job_env = {"KINETO_USE_DAEMON=1", "KAIROS_DAEMON_ENDPOINT=" + endpoint,
                                        "KAIROS_JOB_ID=" + job, "KINETO_ONDEMAND_TRACE_DIR=" + dir,
                                        "KAIROS_CONFIG_TEXT=KAIROS_DAEMON_POLL_MS=50",
                                        "KAIROS_LOG_LEVEL=info"};
    job_env.insert(job_env.end(), extra_env.begin(), extra_env.end());
    Child job_proc = Spawn({KAIROS_TRACED_PROGRAM, std::to_string(max_ms), std::to_string(step_us),
                            dir + "/stop"},
                           job_env, /*pipe_stderr=*/false, dir + "/job.log");
    REQUIRE(job_proc.pid > 0);
    bool ok = false;
    REQUIRE(job_proc.ReadLine(10000, &ok) == "ready " + std::to_string(job_proc.pid));
    return job_proc;
  }
  // The relay logs every poll with --verbose: wait until this pid has registered.
  void WaitRegistered(pid_t pid) {
    REQUIRE(relay.WaitFor("job " + job + " pid " + std::to_string(pid) + " type", 10000));
  }
  Child Trace(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {KAIROS_CLI, "trace", "--port", std::to_string(port),
                                     "--job-id", job, "--log-file", dir + "/trace.json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return Spawn(argv, {}, /*pipe_stderr=*/false);
  }
  void StopJobs() { std::ofstream(dir + "/stop") << "stop\n"; }
};

nlohmann::json Load(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
}

std::vector<nlohmann::json> Named(const nlohmann::json& trace, const std::string& name) {
  std::vector<nlohmann::json> out;
  for (const auto& e : trace["traceEvents"]) {
    if (e.contains("name") && e["name"] == name && e.value("ph", "") == "X") out.push_back(e);
  }
  return out;
}

TEST_CASE("e2e: kairos trace -> a time-window trace file from an unmodified job") {
  Env env;
  Child job = env.StartJob(20000);
  env.WaitRegistered(job.pid);
  Child trace = env.Trace({"--duration-ms", "300", "--warmup-secs", "0"});
  REQUIRE(trace.Wait(10000) == 0);
  const std::string pid = std::to_string(job.pid);
  CHECK(trace.all.find("Matched 1 processes") != std::string::npos);
  CHECK(trace.all.find("Triggered: " + pid) != std::string::npos);
  CHECK(trace.all.find(env.dir + "/trace_" + pid + ".json") != std::string::npos);
  const auto files = WaitForFiles(env.inotify, "trace_[0-9]+\\.json", 1, 15000);
  env.StopJobs();
  REQUIRE(job.Wait(10000) == 0);
  REQUIRE(files == std::vector<std::string>{"trace_" + pid + ".json"});
  const nlohmann::json t = Load(env.dir + "/" + files[0]);
  REQUIRE(t.is_object());
  const auto steps = Named(t, "train_step");
  REQUIRE(steps.size() >= 100);  // 300 ms of 200 us steps
  double first = 1e300, last = 0;
  for (const auto& e : steps) {
    first = std::min(first, e["ts"].get<double>());
    last = std::max(last, e["ts"].get<double>() + e["dur"].get<double>());
  }
  // The requested 300 ms window (us in the trace), within scheduling slack.
  CHECK(last - first >= 250000.0);
  CHECK(last - first <= 400000.0);
  CHECK(t["trace_id"].is_string());
  CHECK(!t["trace_id"].get<std::string>().empty());  // REQUEST_TRACE_ID from the relay
  CHECK(t["traceName"] == env.dir + "/" + files[0]);
}

TEST_CASE("e2e: a process that never steps registers only with KAIROS_DAEMON_REGISTER=always") {
  // Both are linked with kairos and told to use the daemon, and neither steps, joins an NCCL
  // communicator or loads the CUDA driver: a launcher. By default it never takes a trigger
  // slot; KAIROS_DAEMON_REGISTER=always restores libkineto's register-at-start behaviour.
  Env env;
  Child launcher = env.StartJob(20000, /*step_us=*/0);
  Child always = env.StartJob(20000, /*step_us=*/0, {"KAIROS_DAEMON_REGISTER=always"});
  env.WaitRegistered(always.pid);
  // 1 s more is 20 of the launcher's 50 ms ticks: it would have polled by now.
  CHECK_FALSE(env.relay.WaitFor("pid " + std::to_string(launcher.pid) + " type", 1000));
  CHECK(env.relay.all.find("pid " + std::to_string(launcher.pid) + " ") == std::string::npos);
  env.StopJobs();
  CHECK(launcher.Wait(10000) == 0);
  CHECK(always.Wait(10000) == 0);
}

std::set<int64_t> ProfilerSteps(const nlohmann::json& trace) {
  std::set<int64_t> steps;
  for (const auto& e : trace["traceEvents"]) {
    const std::string name = e.value("name", "");
    if (name.rfind("ProfilerStep#", 0) == 0) steps.insert(std::stoll(name.substr(13)));
  }
  return steps;
}

TEST_CASE("e2e: iteration mode starts at the next multiple of the round-up") {
  Env env;
  Child job = env.StartJob(20000);
  env.WaitRegistered(job.pid);
  Child trace = env.Trace({"--iterations", "5", "--profile-start-iteration-roundup", "500",
                           "--warmup-iterations", "2"});
  REQUIRE(trace.Wait(10000) == 0);
  CHECK(trace.all.find("\nACTIVITIES_WARMUP_ITERATIONS=2\n") != std::string::npos);
  const auto files = WaitForFiles(env.inotify, "trace_[0-9]+\\.json", 1, 15000);
  env.StopJobs();
  REQUIRE(job.Wait(10000) == 0);
  REQUIRE(files.size() == 1);
  const nlohmann::json t = Load(env.dir + "/" + files[0]);
  const std::set<int64_t> steps = ProfilerSteps(t);
  REQUIRE(steps.size() == 5);
  CHECK(*steps.begin() % 500 == 0);
  CHECK(*steps.rbegin() == *steps.begin() + 4);
  CHECK(Named(t, "train_step").size() == 5);
}

TEST_CASE("e2e: three processes of one job, process_limit 2 -> exactly two traces") {
  Env env;
  std::vector<Child> jobs;
  for (int i = 0; i < 3; ++i) jobs.push_back(env.StartJob(20000));
  for (Child& j : jobs) env.WaitRegistered(j.pid);
  Child trace = env.Trace({"--duration-ms", "100", "--warmup-secs", "0", "--process-limit", "2"});
  REQUIRE(trace.Wait(10000) == 0);
  CHECK(trace.all.find("Matched 3 processes") != std::string::npos);
  std::smatch m;
  REQUIRE(std::regex_search(trace.all, m, std::regex("Triggered: ([0-9]+), ([0-9]+)\n")));
  const std::set<std::string> triggered = {m[1], m[2]};
  REQUIRE(std::regex_search(trace.all, m,
                            std::regex("Not triggered \\(process limit reached or a request "
                                       "already pending\\): ([0-9]+)\n")));
  const std::string untriggered = m[1];
  CHECK(triggered.count(untriggered) == 0);
  auto files = WaitForFiles(env.inotify, "trace_[0-9]+\\.json", 2, 15000);
  env.StopJobs();
  for (Child& j : jobs) REQUIRE(j.Wait(10000) == 0);
  std::sort(files.begin(), files.end());
  std::vector<std::string> expected;
  for (const std::string& pid : triggered) expected.push_back("trace_" + pid + ".json");
  CHECK(files == expected);
  CHECK(access((env.dir + "/trace_" + untriggered + ".json").c_str(), F_OK) != 0);
}

TEST_CASE("e2e: a log file outside the allowed directory or on a symlink is redirected") {
  Env env;
  Child job = env.StartJob(20000);
  env.WaitRegistered(job.pid);
  const std::string pid = std::to_string(job.pid);
  SECTION("outside") {
    Child trace = Spawn({KAIROS_CLI, "trace", "--port", std::to_string(env.port), "--job-id",
                         env.job, "--log-file", "/proc/outside.json", "--duration-ms", "50",
                         "--warmup-secs", "0"},
                        {}, false);
    REQUIRE(trace.Wait(10000) == 0);
  }
  SECTION("symlink") {
    REQUIRE(symlink("/proc/self/status", (env.dir + "/link_" + pid + ".json").c_str()) == 0);
    Child trace = Spawn({KAIROS_CLI, "trace", "--port", std::to_string(env.port), "--job-id",
                         env.job, "--log-file", env.dir + "/link.json", "--duration-ms", "50",
                         "--warmup-secs", "0"},
                        {}, false);
    REQUIRE(trace.Wait(10000) == 0);
  }
  const auto files =
      WaitForFiles(env.inotify, "libkineto_activities_[0-9]+\\.json", 1, 15000);
  env.StopJobs();
  REQUIRE(job.Wait(10000) == 0);
  CHECK(files == std::vector<std::string>{"libkineto_activities_" + pid + ".json"});
  std::ifstream log(env.dir + "/job.log");
  std::stringstream ss;
  ss << log.rdbuf();
  CHECK(ss.str().find("libkineto_activities_" + pid + ".json") != std::string::npos);
}

}  // namespace
}  // namespace kairos::testing

namespace kairos::testing {
namespace {

TEST_CASE("e2e: kairos trace --hosts: two hosts' daemons, one host down, same iterations") {
  Env env;  // host 1: its daemon on 127.0.0.1
  // Host 2: another daemon on another loopback address with its own IPC endpoint and job.
  const std::string endpoint2 = env.endpoint + "-h2";
  Child relay2 = Spawn({KAIROS_CLI, "daemon", "--port", "0", "--bind", "127.0.0.2", "--endpoint",
                        endpoint2, "--verbose"},
                       {}, /*pipe_stderr=*/true);
  bool ok = false;
  std::smatch m;
  const std::string line = relay2.ReadLine(10000, &ok);
  REQUIRE(ok);
  REQUIRE(std::regex_search(line, m, std::regex("rpc 127\\.0\\.0\\.2:([0-9]+)")));
  const std::string port2 = m[1];
  Child job1 = env.StartJob(20000);
  std::vector<std::string> job2_env = {"KINETO_USE_DAEMON=1", "KAIROS_DAEMON_ENDPOINT=" + endpoint2,
                                       "KAIROS_JOB_ID=" + env.job, "KINETO_ONDEMAND_TRACE_DIR=" + env.dir,
                                       "KAIROS_CONFIG_TEXT=KAIROS_DAEMON_POLL_MS=50"};
  Child job2 = Spawn({KAIROS_TRACED_PROGRAM, "20000", "200", env.dir + "/stop"}, job2_env,
                     /*pipe_stderr=*/false, env.dir + "/job2.log");
  REQUIRE(job2.ReadLine(10000, &ok) == "ready " + std::to_string(job2.pid));
  env.WaitRegistered(job1.pid);
  REQUIRE(relay2.WaitFor("job " + env.job + " pid " + std::to_string(job2.pid) + " type", 10000));
  // Host 3 is down: 127.0.0.3 with nothing listening on host 1's port.
  const std::string hosts = "127.0.0.1:" + std::to_string(env.port) + ",127.0.0.2:" + port2 +
                            ",127.0.0.3:" + std::to_string(env.port);
  Child trace = Spawn({KAIROS_CLI, "trace", "--hosts", hosts, "--job-id", env.job, "--log-file",
                       env.dir + "/trace.json", "--iterations", "5",
                       "--profile-start-iteration-roundup", "200", "--timeout-ms", "3000"},
                      {}, /*pipe_stderr=*/false);
  REQUIRE(trace.Wait(10000) == 0);
  INFO(trace.all);
  const std::string p1 = std::to_string(job1.pid), p2 = std::to_string(job2.pid);
  CHECK(trace.all.find("== host 127.0.0.1:" + std::to_string(env.port) + ": \nMatched 1 processes\nTriggered: " + p1 + "\n") != std::string::npos);
  CHECK(trace.all.find("== host 127.0.0.2:" + port2 + ": \nMatched 1 processes\nTriggered: " + p2 + "\n") != std::string::npos);
  CHECK(trace.all.find("== host 127.0.0.3:" + std::to_string(env.port) + ": UNREACHABLE (cannot connect to 127.0.0.3:") != std::string::npos);
  CHECK(trace.all.find("Hosts: 2 answered, 1 unreachable: 127.0.0.3:" + std::to_string(env.port) + "; 2 processes matched\n") != std::string::npos);
  CHECK(trace.all.find(env.dir + "/trace_" + p2 + ".json") != std::string::npos);
  auto files = WaitForFiles(env.inotify, "trace_[0-9]+\\.json", 2, 15000);
  env.StopJobs();
  REQUIRE(job1.Wait(10000) == 0);
  REQUIRE(job2.Wait(10000) == 0);
  kill(relay2.pid, SIGTERM);
  relay2.Wait(5000);
  std::sort(files.begin(), files.end());
  std::vector<std::string> expected = {"trace_" + p1 + ".json", "trace_" + p2 + ".json"};
  std::sort(expected.begin(), expected.end());
  REQUIRE(files == expected);
  // The same request on both hosts: five iterations from a multiple of 200 in each.
  for (const std::string& f : files) {
    const std::set<int64_t> steps = ProfilerSteps(Load(env.dir + "/" + f));
    REQUIRE(steps.size() == 5);
    CHECK(*steps.begin() % 200 == 0);
    CHECK(*steps.rbegin() == *steps.begin() + 4);
  }
  // The warehouse rows of the job's traces: one per trace, the job id (above 2^31) and pid the
  // processes ran with.
  Child rows = Spawn({KAIROS_CLI, "summarize", "--format", "jsonl", env.dir}, {}, false);
  REQUIRE(rows.Wait(20000) == 0);
  std::istringstream lines(rows.all);
  std::set<int64_t> pids;
  for (std::string row; std::getline(lines, row);) {
    const nlohmann::json r = nlohmann::json::parse(row, nullptr, false);
    REQUIRE(r.is_object());
    CHECK(r["schema_version"] == 1);
    CHECK(r["job_id"] == std::stoll(env.job));
    pids.insert(r["pid"].get<int64_t>());
  }
  CHECK(pids == std::set<int64_t>{job1.pid, job2.pid});
}

}  // namespace
}  // namespace kairos::testing
