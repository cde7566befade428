// File: multirank_benchmark.cc
// Layer: bench. `kairos summarize` (cross-rank) and `kairos merge` on an 8-rank job of
// ~200k events per rank (the multi-rank fixture of test/analysis, with small CPU ranges as
// filler): wall time, input throughput and peak RSS of each command, run as a child process
// (peak RSS from wait4), next to two baselines from the same run: read(2) of the same files,
// and `kairos summarize` of one rank's trace.
// Usage: multirank_benchmark [DIR] [RANKS] [EVENTS_PER_RANK]   (default /tmp, 8, 200000)
// Threading: single-threaded; children run one at a time.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../test/analysis/multirank_fixture.h"
#include "bench_headline.h"

namespace {

using kairos::bench::Better;
using kairos::bench::Headline;
using Clock = std::chrono::steady_clock;

struct Run {
  double seconds = 0;
  long max_rss_kb = 0;
  int status = 0;
};

Run Child(const std::vector<std::string>& args) {
  Run r;
  const auto t0 = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  struct rusage ru {};
  wait4(pid, &r.status, 0, &ru);
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.max_rss_kb = ru.ru_maxrss;
  return r;
}

double ReadAll(const std::vector<std::string>& files) {
  std::vector<char> buf(1 << 20);
  const auto t0 = Clock::now();
  for (const std::string& f : files) {
    const int fd = open(f.c_str(), O_RDONLY);
    while (fd >= 0 && read(fd, buf.data(), buf.size()) > 0) {
    }
    if (fd >= 0) close(fd);
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string base = argc > 1 ? argv[1] : "/tmp";
  const int ranks = argc > 2 ? std::atoi(argv[2]) : 8;
  const int events = argc > 3 ? std::atoi(argv[3]) : 200000;
  const std::string dir = base + "/kairos_multirank_bench";
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  kairos::testing::JobSpec j;
  j.world = ranks;
  j.filler_per_step = 195;
  j.steps = events / (j.filler_per_step + 5);  // step + filler + 2 launches + 2 kernels
  j.straggler = ranks / 2;
  j.straggler_delay_us = 1000;
  j.jitter_us = 30;
  std::vector<std::string> files;
  double bytes = 0;
  for (int r = 0; r < ranks; ++r) {
    files.push_back(dir + "/job.rank" + std::to_string(r) + ".json");
    const std::string text = kairos::testing::RankTraceJson(j, r);
    bytes += text.size();
    if (!kairos::testing::WriteFixtureFile(files.back(), text)) {
      std::fprintf(stderr, "cannot write %s\n", files.back().c_str());
      return 1;
    }
  }
  const double total_events = double(ranks) * j.steps * (j.filler_per_step + 5);
  std::printf("multirank_benchmark: %d ranks x %.0f events (%.1f MB JSON in all) in %s\n", ranks,
              total_events / ranks, bytes / 1e6, dir.c_str());
  ReadAll(files);  // warm the page cache, as for every command below
  const double read_s = ReadAll(files);
  std::printf("%-44s %8s %10s %12s %10s\n", "command", "wall s", "MB/s", "Mevents/s", "peak RSS");
  std::printf("%-44s %8.3f %10.1f %12.2f %10s\n", "baseline: read(2) of the 8 files", read_s, bytes / 1e6 / read_s,
              total_events / 1e6 / read_s, "-");
  const std::string cli = KAIROS_CLI_PATH;
  struct Cmd {
    std::string label;
    std::vector<std::string> args;
    double in_bytes, in_events;
  };
  std::vector<Cmd> cmds = {
      {"baseline: kairos summarize (rank 0 only)", {cli, "summarize", files[0]}, bytes / ranks, total_events / ranks},
      {"kairos summarize DIR (cross-rank)", {cli, "summarize", dir}, bytes, total_events},
  };
  for (const char* out : {"merged.json", "merged.json.zst", "merged.pftrace"}) {
    std::vector<std::string> a = {cli, "merge"};
    a.insert(a.end(), files.begin(), files.end());
    a.push_back("-o");
    a.push_back(base + "/kairos_multirank_" + out);
    cmds.push_back({std::string("kairos merge -o ") + out, a, bytes, total_events});
  }
  std::vector<Run> runs;
  for (const Cmd& c : cmds) {
    const Run r = Child(c.args);
    runs.push_back(r);
    if (r.status != 0) {
      std::printf("%-44s failed (status %d)\n", c.label.c_str(), r.status);
      continue;
    }
    std::printf("%-44s %8.3f %10.1f %12.2f %7.1f MB\n", c.label.c_str(), r.seconds, c.in_bytes / 1e6 / r.seconds,
                c.in_events / 1e6 / r.seconds, r.max_rss_kb / 1024.0);
  }
  // Against the in-run baseline, the rank-0 summarize (cmds[0]): speed per input byte and
  // peak RSS (bounded memory: one trace at most); a failed command prints no headline.
  const char* b = "multirank_benchmark";
  const Run& rank0 = runs[0];
  auto against_rank0 = [&](size_t i, const char* speed, const char* rss) {
    if (rank0.status != 0 || runs[i].status != 0) return;
    Headline(b, speed, (cmds[i].in_bytes / runs[i].seconds) / (cmds[0].in_bytes / rank0.seconds),
             Better::kHigher, "x");
    Headline(b, rss,
             static_cast<double>(runs[i].max_rss_kb) / static_cast<double>(rank0.max_rss_kb),
             Better::kLower, "x");
  };
  against_rank0(1, "summarize_dir_speed_vs_rank0", "summarize_dir_rss_vs_rank0");
  against_rank0(2, "merge_json_speed_vs_rank0", "merge_json_rss_vs_rank0");
  against_rank0(4, "merge_pftrace_speed_vs_rank0", "merge_pftrace_rss_vs_rank0");
  std::system(("rm -rf '" + dir + "' " + base + "/kairos_multirank_merged.*").c_str());
  return 0;
}
