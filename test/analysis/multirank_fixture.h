// File: multirank_fixture.h
// Layer: tests for the cross-rank analysis and `kairos merge`. Writes the Kineto JSON trace
// of one rank of a simulated data-parallel job, with the multi-rank fields the NCCL
// simulator emits (TEAM.md interface 4): distributedInfo, NCCL-named collective kernels with
// HTA's collective args, ProfilerStep#N ranges, launches correlated with their kernels.
//
// The job's model (true time, before a rank's clock offset): step N starts at S_N on every
// rank. A rank's host works `launch_us` (plus `straggler_delay_us` on the straggler, plus
// its jitter), then its compute kernel runs `compute_us` (+ `extra_compute_us` on the
// imbalanced rank); `gap_us` after that it enqueues the gradient all-reduce, which ends on
// every rank `transfer_us` after the LAST rank enqueued it (as NCCL does); the next step
// starts `tail_us` after the all-reduce ends. With `overlap_us` > 0 an all-gather also runs
// on a second stream during the compute kernel on every rank (no waiting: it starts with the
// compute). Every number the tests assert follows from these on paper.
// Threading: test thread only.
#ifndef KAIROS_TEST_ANALYSIS_MULTIRANK_FIXTURE_H_
#define KAIROS_TEST_ANALYSIS_MULTIRANK_FIXTURE_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace kairos::testing {

struct JobSpec {
  int world = 4;
  int steps = 10;
  int first_step = 5;
  double launch_us = 100, compute_us = 2000, gap_us = 10, transfer_us = 500, tail_us = 200;
  int straggler = -1;
  double straggler_delay_us = 0;
  int heavy_rank = -1;           // rank with extra compute (load imbalance)
  double extra_compute_us = 0;
  double overlap_us = 0;
  double jitter_us = 0;          // uniform [0, jitter) added to every rank's host time per step
  uint32_t seed = 1;
  int64_t base_ns = 1700000000000000000;
  // Clock of each rank: true time + offset_ns[r] (different hosts); empty = shared clock.
  std::vector<int64_t> offset_ns;
  std::vector<std::string> hosts;  // per rank; empty = "node0" for all
  // One collective end on this rank is this far off (an outlier the merge must ignore).
  int outlier_rank = -1;
  double outlier_us = 0;
  int filler_per_step = 0;       // extra small CPU ranges per step (benchmarks)
  // This rank's trace starts late: its first `late_steps` steps are not in it.
  int late_rank = -1;
  int late_steps = 0;
};

struct RankTiming {
  std::vector<double> allreduce_end_us;  // true time, per step
};

inline std::string Us(double us) {
  char b[64];
  std::snprintf(b, sizeof b, "%.3f", us);
  return b;
}

// The trace of rank `r` as Kineto JSON text. Times are written relative to base_ns + the
// rank's clock offset, so the absolute times carry the offset.
inline std::string RankTraceJson(const JobSpec& j, int r) {
  std::mt19937 rng(j.seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const int64_t off = j.offset_ns.empty() ? 0 : j.offset_ns[r];
  const std::string host = j.hosts.empty() ? "node0" : j.hosts[r];
  const int pid = 1000 + r;
  std::string out;
  out += "{\"schemaVersion\":1,\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":" + std::to_string(r) +
         ",\"world_size\":" + std::to_string(j.world) + ",\"local_rank\":" + std::to_string(r % 8) +
         "},\"host_name\":\"" + host + "\",\"baseTimeNanoseconds\":" + std::to_string(j.base_ns + off) +
         ",\"traceEvents\":[\n";
  bool first = true;
  auto ev = [&](const std::string& s) {
    if (!first) out += ",\n";
    first = false;
    out += s;
  };
  auto cpu = [&](const char* cat, const std::string& name, double ts, double dur, const std::string& args) {
    ev("{\"ph\":\"X\",\"cat\":\"" + std::string(cat) + "\",\"name\":\"" + name + "\",\"pid\":" +
       std::to_string(pid) + ",\"tid\":" + std::to_string(pid) + ",\"ts\":" + Us(ts) + ",\"dur\":" + Us(dur) +
       (args.empty() ? "" : ",\"args\":{" + args + "}") + "}");
  };
  auto gpu = [&](const std::string& name, int stream, double ts, double dur, int corr, const std::string& extra) {
    ev("{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" + name + "\",\"pid\":0,\"tid\":" + std::to_string(stream) +
       ",\"ts\":" + Us(ts) + ",\"dur\":" + Us(dur) + ",\"args\":{\"device\":0,\"stream\":" + std::to_string(stream) +
       ",\"correlation\":" + std::to_string(corr) + ",\"grid\":[64,1,1],\"block\":[256,1,1]" + extra + "}}");
  };
  ev("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(pid) +
     ",\"tid\":0,\"args\":{\"name\":\"python\"}}");
  ev("{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":" + std::to_string(pid) +
     ",\"tid\":0,\"args\":{\"labels\":\"CPU\"}}");
  std::string ranks_list = "[";
  for (int k = 0; k < j.world; ++k) ranks_list += (k ? ", " : "") + std::to_string(k);
  ranks_list += "]";
  const std::string coll_args = ",\"Collective name\":\"allreduce\",\"In msg nelems\":1048576,"
                                "\"Out msg nelems\":1048576,\"dtype\":\"Float\",\"Group size\":" +
                                std::to_string(j.world) + ",\"Process Group Ranks\":\"" + ranks_list + "\"";
  double s_n = 1000;  // true time of the first step start, us after base
  int corr = 1;
  for (int n = 0; n < j.steps; ++n) {
    // Every rank draws the same random sequence and takes its own entries, so all ranks
    // agree on every other rank's arrival (needed for the common all-reduce end).
    std::vector<double> arrive(j.world), compute_start(j.world), compute_dur(j.world);
    for (int k = 0; k < j.world; ++k) {
      const double host = j.launch_us + j.jitter_us * u(rng) + (k == j.straggler ? j.straggler_delay_us : 0);
      compute_start[k] = s_n + host;
      compute_dur[k] = j.compute_us + (k == j.heavy_rank ? j.extra_compute_us : 0);
      arrive[k] = compute_start[k] + compute_dur[k] + j.gap_us;
    }
    const double end = *std::max_element(arrive.begin(), arrive.end()) + j.transfer_us;
    const double next = end + j.tail_us;
    if (r == j.late_rank && n < j.late_steps) {
      s_n = next;
      continue;
    }
    cpu("user_annotation", "ProfilerStep#" + std::to_string(j.first_step + n), s_n, next - s_n, "");
    for (int f = 0; f < j.filler_per_step; ++f) {
      cpu("cpu_op", "aten::fill_" + std::to_string(f % 7), s_n + 1 + f * 0.01, 0.005, "");
    }
    const int c1 = corr++;
    cpu("cuda_runtime", "cudaLaunchKernel", compute_start[r] - 5, 4, "\"correlation\":" + std::to_string(c1));
    gpu("sm80_xmma_gemm_f16f16_f32_tn_n", 7, compute_start[r], compute_dur[r], c1, "");
    if (j.overlap_us > 0) {
      const int c2 = corr++;
      cpu("cuda_runtime", "cudaLaunchKernel", compute_start[r] - 3, 2, "\"correlation\":" + std::to_string(c2));
      gpu("ncclDevKernel_AllGather_RING_LL", 13, compute_start[r], j.overlap_us, c2,
          ",\"Collective name\":\"allgather\",\"In msg nelems\":4096,\"Out msg nelems\":" +
              std::to_string(4096 * j.world) + ",\"dtype\":\"Float\",\"Group size\":" + std::to_string(j.world) +
              ",\"Process Group Ranks\":\"" + ranks_list + "\"");
    }
    const int c3 = corr++;
    cpu("cuda_runtime", "cudaLaunchKernel", arrive[r] - 5, 4, "\"correlation\":" + std::to_string(c3));
    const double my_end = end + (r == j.outlier_rank && n == 1 ? j.outlier_us : 0);
    gpu("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 13, arrive[r], my_end - arrive[r], c3, coll_args);
    s_n = next;
  }
  out += "\n]}\n";
  return out;
}

inline bool WriteFixtureFile(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace kairos::testing

#endif  // KAIROS_TEST_ANALYSIS_MULTIRANK_FIXTURE_H_
