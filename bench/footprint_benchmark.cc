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
//        footprint_benchmark --startup [runs=200] [reference.so]   (issue 29 item 1: only the
//        start-up part, runs of /bin/true alternated bare / LD_PRELOAD / LD_PRELOAD + a window
//        (and LD_PRELOAD of reference.so, e.g. an empty library: the floor of any preload),
//        medians and p10, and what the dynamic loader does for libkairos: objects it
//        initialises, relocations, and the static initialisers of the kairos libraries)
// Threading: single-threaded; workloads run in child processes, one at a time.
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench_headline.h"
#include "spawn_util.h"
#include "temp_dir.h"

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

// Entries of the .init_array of an ELF64 shared object: the functions the loader runs when
// it loads the file (static initialisers of every translation unit, constructors). -1 when
// the file cannot be read.
int InitArrayEntries(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st{};
  if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) {
    close(fd);
    return -1;
  }
  void* m = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return -1;
  const auto* base = static_cast<const unsigned char*>(m);
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(base);
  int entries = -1;
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
      eh->e_shoff + eh->e_shnum * sizeof(Elf64_Shdr) <= static_cast<uint64_t>(st.st_size)) {
    const auto* sh = reinterpret_cast<const Elf64_Shdr*>(base + eh->e_shoff);
    entries = 0;
    for (int i = 0; i < eh->e_shnum; ++i)
      if (sh[i].sh_type == SHT_INIT_ARRAY) entries += static_cast<int>(sh[i].sh_size / 8);
  }
  munmap(m, static_cast<size_t>(st.st_size));
  return entries;
}

// What the dynamic loader does to run /bin/true with `env`: the objects it initialises
// (LD_DEBUG=files "calling init:" lines; the objects of the process, libc included) and its
// relocations ("final number of relocations"), both from LD_DEBUG_OUTPUT files.
struct LoaderWork {
  int objects = -1;
  long relocations = -1;
};
LoaderWork MeasureLoader(const std::vector<std::string>& env, const std::string& dir) {
  LoaderWork w;
  for (const char* what : {"files", "statistics"}) {
    RemoveAll(dir);
    std::vector<std::string> e = env;
    e.push_back(std::string("LD_DEBUG=") + what);
    e.push_back("LD_DEBUG_OUTPUT=" + dir + "/ld");
    if (!Spawn({"/bin/true"}, e).ok) return w;
    std::string text;
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* ent = readdir(d)) {
        if (std::strncmp(ent->d_name, "ld.", 3) != 0) continue;
        std::ifstream in(dir + "/" + ent->d_name);
        std::stringstream ss;
        ss << in.rdbuf();
        text += ss.str();
      }
      closedir(d);
    }
    std::istringstream lines(text);
    std::string line;
    if (std::strcmp(what, "files") == 0) w.objects = 0;
    while (std::getline(lines, line)) {
      if (std::strcmp(what, "files") == 0 && line.find("calling init:") != std::string::npos) {
        ++w.objects;
      }
      const size_t k = line.find("final number of relocations:");
      if (k != std::string::npos) w.relocations = std::atol(line.c_str() + k + 28);
    }
  }
  RemoveAll(dir);
  return w;
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

// --startup: issue 29 item 1 on its own (target: LD_PRELOAD with nothing configured within
// 1.5x the bare process, or within 1 ms of it).
int StartupMode(const std::string& build, int runs, const std::string& dir,
                const std::string& reference) {
  const std::string lib = build + "/lib/libkairos.so";
  const std::string core = build + "/lib/libkairos_core.so";
  const std::vector<std::string> no_config = {"KAIROS_CONFIG=", "KAIROS_CONFIG_TEXT=",
                                              "KINETO_CONFIG="};
  std::vector<std::string> idle_env = no_config;
  idle_env.push_back("LD_PRELOAD=" + lib);
  std::vector<std::string> armed_env = {"KAIROS_CONFIG=", "KINETO_CONFIG=", "LD_PRELOAD=" + lib};
  armed_env.push_back(std::string("KAIROS_CONFIG_TEXT=ACTIVITIES_WARMUP_PERIOD_SECS=0;"
                                  "ACTIVITIES_DURATION_MSECS=3600000;ACTIVITIES_LOG_FILE=") +
                      dir + "/idle.json");
  const LoaderWork wb = MeasureLoader(no_config, dir), wl = MeasureLoader(idle_env, dir),
                   wa = MeasureLoader(armed_env, dir);
  std::printf("  loader, /bin/true: objects initialised %d bare, %d LD_PRELOAD (+%d), %d with "
              "a window (+%d); relocations %ld bare, %ld LD_PRELOAD (+%ld), %ld with a window "
              "(+%ld)\n", wb.objects, wl.objects, wl.objects - wb.objects, wa.objects,
              wa.objects - wb.objects, wb.relocations, wl.relocations,
              wl.relocations - wb.relocations, wa.relocations, wa.relocations - wb.relocations);
  std::printf("  static initialisers (.init_array entries): libkairos.so %d", InitArrayEntries(lib));
  if (Exists(core)) std::printf(", libkairos_core.so %d", InitArrayEntries(core));
  std::printf("\n");
  std::vector<std::string> ref_env = no_config;
  ref_env.push_back("LD_PRELOAD=" + reference);
  // A setting that makes the shim load the core at start but opens no window: the core's load
  // and root on their own.
  std::vector<std::string> core_env = idle_env;
  core_env.push_back("KAIROS_TRACE_DIR=" + dir);
  const LoaderWork wc = MeasureLoader(core_env, dir);
  std::vector<double> base_ms, loaded_ms, armed_ms, ref_ms, core_ms;
  for (int i = 0; i < runs; ++i) {
    base_ms.push_back(Spawn({"/bin/true"}, no_config).wall_ms);
    loaded_ms.push_back(Spawn({"/bin/true"}, idle_env).wall_ms);
    armed_ms.push_back(Spawn({"/bin/true"}, armed_env).wall_ms);
    core_ms.push_back(Spawn({"/bin/true"}, core_env).wall_ms);
    if (!reference.empty()) ref_ms.push_back(Spawn({"/bin/true"}, ref_env).wall_ms);
  }
  RemoveAll(dir);
  std::printf("  /bin/true with LD_PRELOAD and KAIROS_TRACE_DIR (the core loaded, no window): median "
              "%.3f ms (p10 %.3f); loader +%d objects, +%ld relocations\n", Median(core_ms),
              Percentile(core_ms, 0.1), wc.objects - wb.objects, wc.relocations - wb.relocations);
  if (!reference.empty()) {
    std::printf("  /bin/true with LD_PRELOAD=%s: median %.3f ms (p10 %.3f)\n", reference.c_str(),
                Median(ref_ms), Percentile(ref_ms, 0.1));
  }
  const double b = Median(base_ms), l = Median(loaded_ms), a = Median(armed_ms);
  std::printf("  /bin/true, %d runs each, alternated: bare median %.3f ms (p10 %.3f)  "
              "LD_PRELOAD %.3f ms (p10 %.3f; %.2fx, +%.3f ms)  LD_PRELOAD + window from start "
              "%.3f ms (p10 %.3f; %.2fx)\n", runs, b, Percentile(base_ms, 0.1), l,
              Percentile(loaded_ms, 0.1), l / b, l - b, a, Percentile(armed_ms, 0.1), a / b);
  std::printf("  target: LD_PRELOAD within 1.5x bare or within 1 ms: %s\n",
              (l <= 1.5 * b || l - b <= 1.0) ? "met" : "missed");
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
  if (argc > 1 && std::strcmp(argv[1], "--startup") == 0) {
    if (!Exists(lib)) {
      std::printf("footprint_benchmark: SKIPPED: needs %s\n", lib.c_str());
      return 0;
    }
    const kairos::testing::TempDir temp("kairos_startup_");  // removed on return
    const std::string& dir = temp.path();
    std::printf("footprint_benchmark --startup\n");
    return StartupMode(build, argc > 2 ? std::max(1, std::atoi(argv[2])) : 200, dir,
                       argc > 3 ? argv[3] : "");
  }
  const int steps = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int start_reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 10;
  if (!Exists(lib)) {
    std::printf("footprint_benchmark: SKIPPED: needs %s\n", lib.c_str());
    return 0;
  }
  const kairos::testing::TempDir temp("kairos_footprint_");  // removed on every return
  const std::string& dir = temp.path();
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
    // 100 runs each: a millisecond process on a shared VM needs that many for a stable median
    // (20 gave 0.6x-2.1x for the same libraries).
    constexpr int kTrueRuns = 100;
    std::vector<double> base_ms, loaded_ms, armed_ms;
    for (int i = 0; i < kTrueRuns; ++i) {
      base_ms.push_back(Spawn({"/bin/true"}, no_config).wall_ms);
      loaded_ms.push_back(Spawn({"/bin/true"}, idle_env).wall_ms);
      armed_ms.push_back(Spawn({"/bin/true"}, armed_env).wall_ms);
    }
    kairos::bench::RemoveAll(dir);
    const double b = Median(base_ms), l = Median(loaded_ms), a = Median(armed_ms);
    std::printf("  process start-up to exit, /bin/true (medians of %d): baseline %6.2f ms  "
                "LD_PRELOAD %6.2f ms (%.2fx)  LD_PRELOAD + window from start %6.2f ms (%.2fx)\n",
                kTrueRuns, b, l, l / b, a, a / b);
    // Issue 29 item 1: /bin/true with the library preloaded within 1.5x the time without it.
    Headline("footprint_benchmark", "true_preload_vs_bare", l / b, Better::kLower, "x", 1.5);
    // The load-independent part of it: what the loader does for the preloaded shim (objects
    // beyond the bare process's, relocations). Exact, so bench_check flags any dependency
    // that creeps back into libkairos.so.
    const LoaderWork wb = MeasureLoader(no_config, dir), wl = MeasureLoader(idle_env, dir);
    std::printf("  loader for LD_PRELOAD, nothing configured: +%d objects, +%ld relocations\n",
                wl.objects - wb.objects, wl.relocations - wb.relocations);
    Headline("footprint_benchmark", "true_preload_extra_objects", wl.objects - wb.objects,
             Better::kLower, "objects", 1);
    Headline("footprint_benchmark", "true_preload_extra_relocations",
             static_cast<double>(wl.relocations - wb.relocations), Better::kLower, "relocations");
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
  return 0;
}
