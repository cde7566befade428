// File: attach_overhead_benchmark.cc
// Layer: bench. Tracing overhead of attach-without-code-change on a simulated training loop:
// the unmodified nvcc-built examples/cuda/train_loop runs alternately without kairos
// (baseline) and with LD_PRELOAD=libkairos.so and a window covering the whole run, in the
// same benchmark run. Two ratios (traced / baseline, medians of the repetitions):
//   loop:    the program's own "N steps in X ms" (steady state; target <= 1.03);
//   process: wall time of the whole process, which adds kairos' fixed costs (warm-up with
//            buffer prefault before main, collection and trace writing at exit).
// With the simulator, a third configuration runs the simulator's own minimal CUPTI client
// (<build>/sim/test/libksim_cupti_dump.so, via CUDA_INJECTION64_PATH) when it is built: the
// cost of CUPTI activity itself on the simulated runtime, which no CUPTI client avoids.
// Each traced run must write a trace file, else the benchmark fails.
// Usage: attach_overhead_benchmark [steps=400] [repetitions=7] [workload]
//   Paths default to the build tree this binary lives in (<build>/bench/..): the workload
//   <build>/examples/cuda/train_loop, <build>/lib/libkairos.so, and the simulator in
//   <build>/sim/lib (unless KAIROS_BENCH_REAL_CUDA=1, to measure on a real GPU).
// Threading: single-threaded; the workload runs in child processes, one at a time.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_headline.h"
#include "spawn_util.h"
#include "temp_dir.h"

namespace {

using kairos::bench::Better;
using kairos::bench::BuildDir;
using kairos::bench::Exists;
using kairos::bench::Headline;
using kairos::bench::Median;

struct RunResult {
  bool ok = false;
  double loop_ms = 0;  // the program's own measurement
  double wall_ms = 0;  // spawn to exit
};

// Runs `argv` with `extra_env`; parses the workload's "N steps in X ms" line from its stdout.
RunResult Run(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env) {
  RunResult r;
  const kairos::bench::Child c = kairos::bench::Spawn(argv, extra_env);
  r.wall_ms = c.wall_ms;
  const size_t at = c.out.find(" steps in ");
  if (!c.ok || at == std::string::npos) return r;
  r.loop_ms = std::atof(c.out.c_str() + at + std::strlen(" steps in "));
  r.ok = r.loop_ms > 0;
  return r;
}

// Number of trace files (not summaries) in `dir`; removes everything it finds.
int TakeTraces(const std::string& dir) {
  return kairos::bench::RemoveAll(dir, ".summary.").without_marker;
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 400;
  const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 7;
  const std::string build = BuildDir();
  const std::string workload = argc > 3 ? argv[3] : build + "/examples/cuda/train_loop";
  const std::string lib = build + "/lib/libkairos.so";
  const std::string sim = build + "/sim/lib";
  const char* real = std::getenv("KAIROS_BENCH_REAL_CUDA");
  const bool use_sim = !(real != nullptr && std::strcmp(real, "1") == 0);
  if (!Exists(workload) || !Exists(lib) || (use_sim && !Exists(sim))) {
    std::printf("attach_overhead_benchmark: SKIPPED: needs %s, %s%s (a CUDA build with "
                "KAIROS_BUILD_EXAMPLES=ON)\n",
                workload.c_str(), lib.c_str(), use_sim ? (" and " + sim).c_str() : "");
    return 0;
  }
  const kairos::testing::TempDir temp("kairos_attach_bench_");  // removed on every return
  const std::string& dir = temp.path();
  std::vector<std::string> base_env;
  if (use_sim) base_env.push_back("LD_LIBRARY_PATH=" + sim);
  std::vector<std::string> traced_env = base_env;
  traced_env.push_back("LD_PRELOAD=" + lib);
  traced_env.push_back(std::string("KAIROS_CONFIG_TEXT=ACTIVITIES_WARMUP_PERIOD_SECS=0;"
                                   "ACTIVITIES_DURATION_MSECS=3600000;ACTIVITIES_LOG_FILE=") +
                       dir + "/trace.json");
  const std::vector<std::string> cmd = {workload, std::to_string(steps)};
  const std::string dump = build + "/sim/test/libksim_cupti_dump.so";
  const bool with_ref = use_sim && Exists(dump);
  std::vector<std::string> ref_env = base_env;
  ref_env.push_back("KSIM_DUMP_QUIET=1");
  ref_env.push_back("CUDA_INJECTION64_PATH=" + dump);
  std::vector<double> ref_loop;

  std::vector<double> base_loop, base_wall, traced_loop, traced_wall;
  Run(cmd, base_env);  // page cache and simulator warm-up, not counted
  bool ok = true;
  for (int i = 0; i < reps && ok; ++i) {
    const RunResult b = Run(cmd, base_env);
    const RunResult t = Run(cmd, traced_env);
    const int traces = TakeTraces(dir);
    const RunResult r = with_ref ? Run(cmd, ref_env) : RunResult{true, 1, 1};
    ok = b.ok && t.ok && traces == 1 && r.ok;
    if (!ok) {
      std::printf("attach_overhead_benchmark: FAILED at repetition %d (baseline ok=%d, traced "
                  "ok=%d, traces written=%d)\n", i, b.ok, t.ok, traces);
      break;
    }
    base_loop.push_back(b.loop_ms);
    base_wall.push_back(b.wall_ms);
    traced_loop.push_back(t.loop_ms);
    traced_wall.push_back(t.wall_ms);
    ref_loop.push_back(r.loop_ms);
  }
  if (!ok) return 1;
  const double bl = Median(base_loop), tl = Median(traced_loop);
  const double bw = Median(base_wall), tw = Median(traced_wall);
  std::printf("attach_overhead_benchmark: %s, %d steps, %d repetitions (medians)%s\n",
              workload.c_str(), steps, reps, use_sim ? ", simulator" : "");
  std::printf("  loop (program's own timing): baseline %8.1f ms  traced %8.1f ms  ratio %.3f "
              "(target <= 1.03)\n", bl, tl, tl / bl);
  Headline("attach_overhead_benchmark", "loop_traced_vs_untraced", tl / bl, Better::kLower, "x",
           1.03);
  if (with_ref) {
    const double rl = Median(ref_loop);
    std::printf("  reference: minimal CUPTI client (ksim_cupti_dump) %8.1f ms  ratio %.3f; "
                "kairos / reference %.3f\n", rl, rl / bl, tl / rl);
    Headline("attach_overhead_benchmark", "loop_traced_vs_minimal_cupti_client", tl / rl,
             Better::kLower, "x");
  }
  std::printf("  whole process (wall):        baseline %8.1f ms  traced %8.1f ms  ratio %.3f "
              "(+%.0f ms fixed: warm-up, collection, trace write)\n",
              bw, tw, tw / bw, (tw - bw) - (tl - bl));
  std::printf("  per-repetition loop ratios:");
  for (size_t i = 0; i < base_loop.size(); ++i) std::printf(" %.3f", traced_loop[i] / base_loop[i]);
  std::printf("\n");
  return 0;
}
