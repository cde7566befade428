// File: footprint_benchmark.cc
// Layer: bench. Memory and start-up cost of kairos, each against a baseline measured in the
// same run:
//   idle:   peak RSS of /bin/sleep with LD_PRELOAD=libkairos.so and nothing configured (a
//           launcher that inherits LD_PRELOAD) vs the same without (target: under 16 MB);
//   idle with a window: the same launcher with a window configured from process start
//           must write no file (no trace for a process that recorded nothing; the run
//           fails otherwise);
//   process start-up: wall time of /bin/true without kairos, with LD_PRELOAD, and with
//           LD_PRELOAD and a window from start (medians);
//   trace:  peak RSS of the simulated training loop (examples/cuda/train_loop on the
//           simulator, <steps> steps, default 2000) traced from start to exit vs untraced;
//   start:  how long kairos_start() blocks its caller, in-process through libkairos.so,
//           in a CPU-only process and (re-executed with the simulator first on the library
//           path and libcudart loaded) in a CUDA process with CUPTI (target: under 10 ms).
// Peak RSS is the child's ru_maxrss from wait4().
// Usage: footprint_benchmark [steps=2000] [start_repetitions=10]
// Threading: single-threaded; workloads run in child processes, one at a time.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_headline.h"
#include "spawn_util.h"

namespace {

using kairos::bench::Better;
using kairos::bench::BuildDir;
using kairos::bench::Child;
using kairos::bench::Exists;
using kairos::bench::Headline;
using kairos::bench::Median;
using kairos::bench::Spawn;

void RemoveAll(const std::string& dir) { kairos::bench::RemoveAll(dir); }

// Child mode: times kairos_start() through libkairos.so; prints "start <median> <max>" in ms.
int StartMode(const std::string& lib, bool cuda, int reps, const std::string& dir) {
  if (cuda && dlopen("libcudart.so.13", RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    std::printf("no libcudart: %s\n", dlerror());
    return 1;
  }
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    std::printf("dlopen: %s\n", dlerror());
    return 1;
  }
  using InitFn = int (*)(const char*);
  using IntFn = int (*)();
  using PushFn = void (*)(const char*);
  using VoidFn = void (*)();
  using FlushFn = const char* (*)();
  auto init = reinterpret_cast<InitFn>(dlsym(h, "kairos_init"));
  auto start = reinterpret_cast<IntFn>(dlsym(h, "kairos_start"));
  auto stop = reinterpret_cast<IntFn>(dlsym(h, "kairos_stop"));
  auto push = reinterpret_cast<PushFn>(dlsym(h, "kairos_range_push"));
  auto pop = reinterpret_cast<VoidFn>(dlsym(h, "kairos_range_pop"));
  auto flush = reinterpret_cast<FlushFn>(dlsym(h, "kairos_flush"));
  auto last_error = reinterpret_cast<FlushFn>(dlsym(h, "kairos_last_error"));
  if (!init || !start || !stop || !push || !pop || !flush || !last_error) return 1;
  const std::string cfg = "ACTIVITIES_LOG_FILE=" + dir + "/start.json\nKAIROS_SUMMARY=off";
  if (init(cfg.c_str()) != 0) {
    std::printf("kairos_init: %s\n", last_error());
    return 1;
  }
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (start() != 0) {
      std::printf("kairos_start: %s\n", last_error());
      return 1;
    }
    const auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    push("step");
    pop();
    stop();
    flush();
    RemoveAll(dir);
  }
  std::printf("start %.3f %.3f %.3f\n", Median(ms), *std::max_element(ms.begin(), ms.end()),
              ms.front());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string build = BuildDir();
  const std::string lib = build + "/lib/libkairos.so";
  const std::string sim = build + "/sim/lib";
  if (argc > 1 && std::strcmp(argv[1], "--start-child") == 0) {
    // Never falls through to the parent's code (which spawns this mode again).
    if (argc != 5) return 2;
    return StartMode(lib, std::strcmp(argv[2], "cuda") == 0, std::atoi(argv[3]), argv[4]);
  }
  const int steps = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int start_reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 10;
  if (!Exists(lib)) {
    std::printf("footprint_benchmark: SKIPPED: needs %s\n", lib.c_str());
    return 0;
  }
  char tmpl[] = "/tmp/kairos_footprint_XXXXXX";
  const char* dir = mkdtemp(tmpl);
  if (dir == nullptr) return 1;
  std::printf("footprint_benchmark (peak RSS = child's ru_maxrss)\n");

  // Idle: a launcher that inherits LD_PRELOAD and never records.
  const std::vector<std::string> idle_cmd = {"/bin/sleep", "0.2"};
  const std::vector<std::string> no_config = {"KAIROS_CONFIG=", "KAIROS_CONFIG_TEXT=",
                                              "KINETO_CONFIG="};
  std::vector<std::string> idle_env = no_config;
  idle_env.push_back("LD_PRELOAD=" + lib);
  const Child ib = Spawn(idle_cmd, no_config), il = Spawn(idle_cmd, idle_env);
  if (!ib.ok || !il.ok) {
    std::printf("  idle: FAILED (baseline ok=%d, loaded ok=%d)\n", ib.ok, il.ok);
    return 1;
  }
  std::printf("  idle /bin/sleep: baseline %6.1f MB  with libkairos.so %6.1f MB  (+%.1f MB; "
              "target < 16 MB total)\n", ib.max_rss_kb / 1024.0, il.max_rss_kb / 1024.0,
              (il.max_rss_kb - ib.max_rss_kb) / 1024.0);
  Headline("footprint_benchmark", "idle_rss_mb", il.max_rss_kb / 1024.0, Better::kLower, "MB", 16);

  // No trace for idle processes: a launcher that inherits LD_PRELOAD *and* a window from
  // process start (KAIROS_CONFIG_TEXT) records no event of its own, so it must write
  // nothing. Also its start-up cost: wall time of `/bin/true` with and without kairos.
  {
    // (getenv takes the first of duplicate names: no empty KAIROS_CONFIG_TEXT here.)
    std::vector<std::string> armed_env = {"KAIROS_CONFIG=", "KINETO_CONFIG=", "LD_PRELOAD=" + lib};
    armed_env.push_back(std::string("KAIROS_CONFIG_TEXT=ACTIVITIES_WARMUP_PERIOD_SECS=0;"
                                    "ACTIVITIES_DURATION_MSECS=3600000;ACTIVITIES_LOG_FILE=") +
                        dir + "/idle.json");
    const Child ia = Spawn(idle_cmd, armed_env);
    const int written = kairos::bench::RemoveAll(dir).without_marker;
    if (!ia.ok || written != 0) {
      std::printf("  idle with a window configured: FAILED (ok=%d, files written=%d; want 0)\n",
                  ia.ok, written);
      return 1;
    }
    std::printf("  idle /bin/sleep with a window from start: %6.1f MB, files written: %d "
                "(rule: no trace for a process that recorded nothing)\n",
                ia.max_rss_kb / 1024.0, written);
    std::vector<double> base_ms, loaded_ms, armed_ms;
    for (int i = 0; i < 2 * start_reps; ++i) {
      base_ms.push_back(Spawn({"/bin/true"}, no_config).wall_ms);
      loaded_ms.push_back(Spawn({"/bin/true"}, idle_env).wall_ms);
      armed_ms.push_back(Spawn({"/bin/true"}, armed_env).wall_ms);
    }
    kairos::bench::RemoveAll(dir);
    const double b = Median(base_ms), l = Median(loaded_ms), a = Median(armed_ms);
    std::printf("  process start-up to exit, /bin/true (medians of %d): baseline %6.2f ms  "
                "LD_PRELOAD %6.2f ms (%.2fx)  LD_PRELOAD + window from start %6.2f ms (%.2fx)\n",
                2 * start_reps, b, l, l / b, a, a / b);
    // Issue 29 item 1: /bin/true with the library preloaded within 1.5x the time without it.
    Headline("footprint_benchmark", "true_preload_vs_bare", l / b, Better::kLower, "x", 1.5);
    Headline("footprint_benchmark", "true_window_vs_bare", a / b, Better::kLower, "x");
  }

  // A traced simulated training loop.
  const std::string workload = build + "/examples/cuda/train_loop";
  if (Exists(workload) && Exists(sim)) {
    const std::vector<std::string> cmd = {workload, std::to_string(steps)};
    const std::vector<std::string> base_env = {"LD_LIBRARY_PATH=" + sim};
    std::vector<std::string> traced_env = base_env;
    traced_env.push_back("LD_PRELOAD=" + lib);
    traced_env.push_back(std::string("KAIROS_CONFIG_TEXT=ACTIVITIES_WARMUP_PERIOD_SECS=0;"
                                     "ACTIVITIES_DURATION_MSECS=3600000;ACTIVITIES_LOG_FILE=") +
                         dir + "/trace.json");
    const Child tb = Spawn(cmd, base_env);
    const Child tt = Spawn(cmd, traced_env);
    RemoveAll(dir);
    if (!tb.ok || !tt.ok) {
      std::printf("  trace: FAILED (baseline ok=%d, traced ok=%d)\n", tb.ok, tt.ok);
      return 1;
    }
    std::printf("  %d-step simulated training loop traced start to exit: baseline %6.1f MB  "
                "traced %6.1f MB  (+%.1f MB)\n", steps, tb.max_rss_kb / 1024.0,
                tt.max_rss_kb / 1024.0, (tt.max_rss_kb - tb.max_rss_kb) / 1024.0);
    // Target: libkineto's +13 MB on the same loop (summary table; issue 29 item 2).
    Headline("footprint_benchmark", "train_loop_rss_extra_mb",
             (tt.max_rss_kb - tb.max_rss_kb) / 1024.0, Better::kLower, "MB", 13);
  } else {
    std::printf("  trace: SKIPPED (needs %s and the simulator in %s)\n", workload.c_str(),
                sim.c_str());
  }

  // Window start-up as seen by the caller of kairos_start().
  const std::string self = build + "/bench/footprint_benchmark";
  for (const bool cuda : {false, true}) {
    if (cuda && !Exists(sim)) continue;
    std::vector<std::string> env = no_config;
    if (cuda) env.push_back("LD_LIBRARY_PATH=" + sim);
    const Child c = Spawn({self, "--start-child", cuda ? "cuda" : "cpu",
                           std::to_string(start_reps), dir}, env);
    double med = 0, max = 0, first = 0;
    if (!c.ok || std::sscanf(c.out.c_str(), "start %lf %lf %lf", &med, &max, &first) != 3) {
      std::printf("  start (%s): FAILED: %s\n", cuda ? "CUDA" : "CPU-only", c.out.c_str());
      return 1;
    }
    std::printf("  kairos_start() %-24s median %6.2f ms  max %6.2f ms  first %6.2f ms "
                "(%d starts; target < 10 ms)\n",
                cuda ? "(CUDA process, CUPTI):" : "(CPU-only process):", med, max, first,
                start_reps);
    Headline("footprint_benchmark", cuda ? "start_cuda_median_ms" : "start_cpu_median_ms", med,
             Better::kLower, "ms", 10);
    Headline("footprint_benchmark", cuda ? "start_cuda_max_ms" : "start_cpu_max_ms", max,
             Better::kLower, "ms", 10);
  }
  RemoveAll(dir);
  rmdir(dir);
  return 0;
}
