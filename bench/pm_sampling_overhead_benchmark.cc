// File: pm_sampling_overhead_benchmark.cc
// Layer: bench. Cost of GPU hardware counters (docs/COUNTERS.md) and of always-on telemetry
// (docs/TELEMETRY.md) on the simulated training loop: the unmodified nvcc-built
// examples/cuda/train_loop runs, interleaved in the same benchmark run, as
//   baseline     no kairos (twice per repetition: the second copy measures the noise)
//   trace        LD_PRELOAD=libkairos.so, a window covering the run, default activities
//   trace+pm N   the same plus PM sampling (default metrics) every N ms, N = 1, 10, 100
//   idle         libkairos.so preloaded, nothing configured
//   telemetry    libkairos.so preloaded, KAIROS_TELEMETRY_INTERVAL_SECS=1, no window
// Each repetition runs every configuration once, in an order rotated per repetition (so no
// configuration always runs right after another), and each run is divided by the baseline
// of the same repetition: the reported ratio is the median of those paired ratios, with
// their min..max. Two clocks: the program's own loop time (wall) and the child's CPU time
// (user + sys from wait4: the process's total work, kairos threads included, which load
// on a shared machine disturbs less than wall time). The "baseline again" row is the noise
// floor: a configuration whose ratio lies inside that row's spread is not distinguishable
// from no kairos. PM rows are also divided by the trace without PM sampling (what the
// counters add). A PM run must write a trace with pm_samples > 0, a telemetry run at least
// one line with steps counted, else that row says why.
// Per thread: while a child runs, its threads' on-CPU time (/proc/PID/task/TID/schedstat, ns)
// is sampled every 10 ms; threads named kairos-* (src/util/thread_name.h) are kairos' own. Their
// share of the child's CPU time is the part of the cost kairos' threads add; the rest of a
// configuration's extra CPU is the application thread's callbacks and the simulated CUPTI's
// own threads (producing and delivering records: a real driver's cost, which the simulator
// only models). The last <= 10 ms of each thread before exit are not seen.
// Usage: pm_sampling_overhead_benchmark [steps=2000] [repetitions=7] [workload]
//   (2000 steps run over 1 s on the simulator, so telemetry writes lines)
// Threading: single-threaded; the workload runs in child processes, one at a time.
#include <dirent.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench_headline.h"
#include "temp_dir.h"

extern char** environ;

namespace {

using kairos::bench::Better;
using kairos::bench::Headline;

std::string BuildDir() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string exe(buf, static_cast<size_t>(n));
  exe = exe.substr(0, exe.rfind('/'));
  return exe.substr(0, exe.rfind('/'));
}

bool Exists(const std::string& p) { return access(p.c_str(), F_OK) == 0; }

struct Timing {
  double loop_ms = -1;  // the program's own "N steps in X ms"
  double cpu_ms = -1;   // user + sys of the child, all its threads
  double kairos_ms = 0; // on-CPU time of the child's kairos-* threads (last sample)
};

// Latest on-CPU ns and name of each thread of `pid` seen so far.
struct ThreadSample {
  std::string name;
  unsigned long long cpu_ns = 0;
};
void SampleThreads(pid_t pid, std::map<long, ThreadSample>* threads) {
  const std::string task = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(task.c_str());
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string dir = task + "/" + e->d_name;
    std::ifstream sched(dir + "/schedstat"), comm(dir + "/comm");
    unsigned long long ns = 0;
    std::string name;
    if (!(sched >> ns) || !std::getline(comm, name)) continue;  // exited meanwhile
    ThreadSample& t = (*threads)[std::atol(e->d_name)];
    t.name = name;
    t.cpu_ns = std::max(t.cpu_ns, ns);
  }
  closedir(d);
}

// One run of the workload; loop_ms < 0 when it failed.
Timing Run(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env) {
  std::vector<std::string> env(extra_env);
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  std::vector<char*> envp, args;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> a(argv);
  for (auto& s : a) args.push_back(s.data());
  args.push_back(nullptr);
  int out[2];
  if (pipe(out) != 0) return {};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  std::string text;
  char buf[4096];
  std::map<long, ThreadSample> threads;
  for (;;) {
    pollfd pfd{out[0], POLLIN, 0};
    if (rc == 0) SampleThreads(pid, &threads);
    if (poll(&pfd, 1, 10) == 0) continue;
    const ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  if (rc != 0) return {};
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  const size_t at = text.find(" steps in ");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || at == std::string::npos) return {};
  Timing t;
  t.loop_ms = std::atof(text.c_str() + at + std::strlen(" steps in "));
  auto ms = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) * 1e3 + static_cast<double>(tv.tv_usec) / 1e3; };
  t.cpu_ms = ms(ru.ru_utime) + ms(ru.ru_stime);
  for (const auto& [tid, th] : threads)
    if (th.name.rfind("kairos-", 0) == 0) t.kairos_ms += static_cast<double>(th.cpu_ns) / 1e6;
  return t;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Reads and removes every file in `dir`: the concatenated text of traces (not summaries).
std::string TakeFiles(const std::string& dir) {
  std::string all;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      const std::string path = dir + "/" + name;
      if (name.find(".summary.") == std::string::npos) {
        std::ifstream in(path);
        std::stringstream ss;
        ss << in.rdbuf();
        all += ss.str();
      }
      unlink(path.c_str());
    }
    closedir(d);
  }
  return all;
}

struct Config {
  std::string name;
  std::vector<std::string> env;
  enum Check { kNone, kTrace, kPm, kTelemetry } check = kNone;
  std::vector<Timing> runs;  // by repetition; loop_ms < 0 = failed
  std::string problem;       // why the row's check failed, if it did
};

struct Ratio {
  double median = 0, min = 0, max = 0;
  int n = 0;
};

// Paired ratios a[i] / b[i] over the repetitions where both ran.
Ratio Paired(const Config& a, const Config& b, bool cpu) {
  std::vector<double> r;
  for (size_t i = 0; i < a.runs.size() && i < b.runs.size(); ++i) {
    const double x = cpu ? a.runs[i].cpu_ms : a.runs[i].loop_ms;
    const double y = cpu ? b.runs[i].cpu_ms : b.runs[i].loop_ms;
    if (a.runs[i].loop_ms > 0 && b.runs[i].loop_ms > 0 && y > 0) r.push_back(x / y);
  }
  Ratio out;
  if (r.empty()) return out;
  out.median = Median(r);
  out.min = *std::min_element(r.begin(), r.end());
  out.max = *std::max_element(r.begin(), r.end());
  out.n = static_cast<int>(r.size());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 7;
  const std::string build = BuildDir();
  const std::string workload = argc > 3 ? argv[3] : build + "/examples/cuda/train_loop";
  const std::string lib = build + "/lib/libkairos.so";
  const std::string sim = build + "/sim/lib";
  if (!Exists(workload) || !Exists(lib) || !Exists(sim)) {
    std::printf("pm_sampling_overhead_benchmark: SKIPPED: needs %s, %s and %s\n", workload.c_str(),
                lib.c_str(), sim.c_str());
    return 0;
  }
  const kairos::testing::TempDir temp("kairos_pm_bench_");  // removed when main returns
  const std::string& d = temp.path();
  const std::string window = "KAIROS_CONFIG_TEXT=ACTIVITIES_WARMUP_PERIOD_SECS=0;"
                             "ACTIVITIES_DURATION_MSECS=3600000;KAIROS_SUMMARY=off;"
                             "ACTIVITIES_LOG_FILE=" + d + "/trace.json";
  const std::string sim_env = "LD_LIBRARY_PATH=" + sim;
  const std::string preload = "LD_PRELOAD=" + lib;
  std::vector<Config> configs;
  configs.push_back({"baseline (no kairos)", {sim_env}, Config::kNone, {}, ""});
  configs.push_back({"baseline again (noise)", {sim_env}, Config::kNone, {}, ""});
  configs.push_back({"trace, no PM sampling", {sim_env, preload, window}, Config::kTrace, {}, ""});
  for (int ms : {1, 10, 100}) {
    configs.push_back({"trace + PM sampling " + std::to_string(ms) + " ms",
                       {sim_env, preload,
                        window + ";ACTIVITY_TYPES=cpu_op,user_annotation,gpu_user_annotation,"
                                 "gpu_memcpy,gpu_memset,kernel,cuda_runtime,cuda_driver,"
                                 "cuda_sync,hardware_counters;KAIROS_PM_SAMPLING_INTERVAL_US=" +
                            std::to_string(ms * 1000)},
                       Config::kPm, {}, ""});
  }
  configs.push_back({"kairos preloaded, idle", {sim_env, preload}, Config::kNone, {}, ""});
  configs.push_back({"telemetry mode (1 s)",
                     {sim_env, preload,
                      "KAIROS_CONFIG_TEXT=KAIROS_TELEMETRY_INTERVAL_SECS=1;KAIROS_TELEMETRY_FILE=" +
                          d + "/telemetry.jsonl"},
                     Config::kTelemetry, {}, ""});
  const std::vector<std::string> cmd = {workload, std::to_string(steps)};
  Run(cmd, {sim_env});  // warm the page cache and the simulator
  for (int i = 0; i < reps; ++i) {
    for (size_t j = 0; j < configs.size(); ++j) {
      Config& c = configs[(j + static_cast<size_t>(i)) % configs.size()];
      const Timing t = Run(cmd, c.env);
      const std::string files = TakeFiles(d);
      c.runs.push_back(t);
      if (t.loop_ms < 0) {
        c.problem = "run failed";
        continue;
      }
      if (c.check == Config::kTrace && files.find("\"traceEvents\"") == std::string::npos)
        c.problem = "no trace written";
      const size_t pm = files.find("\"pm_samples\": ");
      if (c.check == Config::kPm && (pm == std::string::npos || files[pm + 14] == '0'))
        c.problem = "no PM samples (the CUPTI in use does not implement PM sampling)";
      // A telemetry line has the interval's GPU figures and its step count (train_loop marks
      // its steps with kairos_step when kairos is preloaded, so the count is not 0: checking for
      // "steps":0, as this did before, found no line and dropped the telemetry headlines).
      if (c.check == Config::kTelemetry && (files.find("\"gpu_busy_pct\":") == std::string::npos ||
                                            files.find("\"steps\":") == std::string::npos))
        c.problem = "no telemetry line written";
    }
  }
  std::printf("pm_sampling_overhead_benchmark: %s, %d steps, %d repetitions (interleaved, rotated)\n",
              workload.c_str(), steps, reps);
  std::printf("  ratios: median of per-repetition ratios to that repetition's baseline [min..max]\n");
  std::printf("  kairos thr: on-CPU time of the kairos-* threads, median ms and share of the run's CPU\n");
  std::printf("  %-28s %9s %9s %16s  %-24s %-24s %s\n", "configuration", "loop ms", "cpu ms", "kairos thr",
              "wall vs baseline", "cpu vs baseline", "vs trace (wall / cpu)");
  auto fmt = [](const Ratio& r) {
    char b[64];
    std::snprintf(b, sizeof b, "%.3f [%.3f..%.3f]", r.median, r.min, r.max);
    return std::string(b);
  };
  double telemetry_share = 0;
  for (const Config& c : configs) {
    std::vector<double> loop, cpu, kairos, share;
    for (const Timing& t : c.runs) {
      if (t.loop_ms <= 0) continue;
      loop.push_back(t.loop_ms), cpu.push_back(t.cpu_ms), kairos.push_back(t.kairos_ms);
      if (t.cpu_ms > 0) share.push_back(100.0 * t.kairos_ms / t.cpu_ms);
    }
    char thr[32];
    std::snprintf(thr, sizeof thr, "%.1f %.2f%%", Median(kairos), Median(share));
    if (c.check == Config::kTelemetry) telemetry_share = Median(share);
    std::printf("  %-28s %9.1f %9.1f %16s  %-24s %-24s", c.name.c_str(), Median(loop), Median(cpu), thr,
                fmt(Paired(c, configs[0], false)).c_str(), fmt(Paired(c, configs[0], true)).c_str());
    if (c.check == Config::kPm)
      std::printf(" %.3f / %.3f", Paired(c, configs[2], false).median, Paired(c, configs[2], true).median);
    if (!c.problem.empty()) std::printf("  [%s]", c.problem.c_str());
    std::printf("\n");
  }
  // A configuration with a problem (a failed run, no PM samples) prints no headline: its
  // ratio would not measure what the name says.
  const char* b = "pm_sampling_overhead_benchmark";
  const int pm_ms[] = {1, 10, 100};  // configs[3..5], added in this order above
  for (int k = 0; k < 3; ++k) {
    const Config& c = configs[3 + k];
    if (!c.problem.empty()) continue;
    const std::string metric = "pm_" + std::to_string(pm_ms[k]) + "ms_cpu_vs_trace";
    Headline(b, metric.c_str(), Paired(c, configs[2], true).median, Better::kLower, "x", 1.02);
  }
  const Config& telemetry = configs[7];
  if (telemetry.problem.empty()) {
    Headline(b, "telemetry_kairos_threads_pct", telemetry_share, Better::kLower, "%", 0.5);
    Headline(b, "telemetry_cpu_vs_baseline", Paired(telemetry, configs[0], true).median,
             Better::kLower, "x", 1.005);
  }
  return 0;
}
