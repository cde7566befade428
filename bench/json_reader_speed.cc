// File: json_reader_speed.cc
// Layer: bench (not part of bench_all: it needs a trace file). Issue 18 item 3: reads one
// Kineto JSON trace three ways in the same run and prints the ratios:
//   read      read(2) in 64 KiB chunks (the I/O floor)
//   kairos    ReadKinetoJsonFile, touching ph/cat/ts/dur/args.correlation of every event
//   python3   json.load of the same file in a child python3 (the baseline of the target)
// Each pass is timed in wall and CPU seconds (getrusage: user + sys); the ratios are per CPU
// second. Peak RSS of the kairos pass is this process's ru_maxrss (the read pass uses 64 KiB);
// the python3 figures are the child's. Usage (trace from bench/gen_kineto_trace.py, in /tmp):
//   build/bench/json_reader_speed /tmp/trace.json [--no-python]
// A .gz or .zst file works too (rates then count the decompressed JSON; python3 reads only
// plain files: pass --no-python).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "output/json_reader.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// User + system CPU seconds of `who` so far: the machine these runs share is loaded, so wall
// time measures the scheduler; CPU time is what the reader costs.
double CpuSeconds(int who) {
  rusage ru{};
  getrusage(who, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

double PeakRssMb(int who) {
  rusage ru{};
  getrusage(who, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is KiB on Linux
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: json_reader_speed TRACE.json [--no-python]\n");
    return 2;
  }
  const std::string path = argv[1];
  const bool python = !(argc > 2 && std::string(argv[2]) == "--no-python");

  // read(2) floor. The file may or may not be in the page cache; the first pass warms it so
  // all three passes read from the same cache state.
  uint64_t bytes = 0;
  double read_s = 0, read_cpu = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      std::perror(path.c_str());
      return 1;
    }
    std::unique_ptr<char[]> buf(new char[64 * 1024]);
    bytes = 0;
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = CpuSeconds(RUSAGE_SELF);
    for (ssize_t n; (n = read(fd, buf.get(), 64 * 1024)) > 0;) bytes += static_cast<uint64_t>(n);
    read_s = Seconds(t0);
    read_cpu = CpuSeconds(RUSAGE_SELF) - c0;
    close(fd);
  }

  uint64_t events = 0, kernels = 0, corr_sum = 0;
  int64_t dur_sum = 0;
  kairos::KinetoJsonCallbacks cb;
  cb.on_event = [&](const kairos::KinetoEvent& ev) {
    ++events;
    if (ev.cat == "kernel") ++kernels;
    dur_sum += ev.dur_ns;
    if (const kairos::JsonValue* c = ev.args.Find("correlation")) corr_sum += c->AsUint();
  };
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = CpuSeconds(RUSAGE_SELF);
  kairos::KinetoJsonStats stats;
  const absl::Status st = kairos::ReadKinetoJsonFile(path, cb, &stats);
  const double kairos_s = Seconds(t0);
  const double kairos_cpu = CpuSeconds(RUSAGE_SELF) - c0;
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", std::string(st.message()).c_str());
    return 1;
  }
  const double kairos_rss = PeakRssMb(RUSAGE_SELF);

  double python_s = 0, python_rss = 0, python_cpu = 0;
  if (python) {
    const auto p0 = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
      execlp("python3", "python3", "-c", "import json,sys; json.load(open(sys.argv[1]))",
             path.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    python_s = Seconds(p0);
    python_cpu = CpuSeconds(RUSAGE_CHILDREN);
    python_rss = PeakRssMb(RUSAGE_CHILDREN);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "python3 json.load failed\n");
      python_s = 0;
    }
  }

  const double mb = static_cast<double>(bytes) / 1e6;
  // A gzip or zstd file: the reader's rate counts the JSON bytes it parsed.
  const double json_mb = static_cast<double>(stats.bytes) / 1e6;
  std::printf("file: %.1f MB (%.1f MB of JSON), %llu events (%llu kernels), checksum %lld/%llu\n",
              mb, json_mb, static_cast<unsigned long long>(events),
              static_cast<unsigned long long>(kernels), static_cast<long long>(dur_sum),
              static_cast<unsigned long long>(corr_sum));
  // Ratios use CPU seconds (user + sys); wall seconds are printed for reference.
  std::printf("read(2)        %8.3f s wall %8.3f CPU s %8.0f MB per CPU s\n", read_s, read_cpu,
              mb / read_cpu);
  std::printf(
      "kairos reader  %8.3f s wall %8.3f CPU s %8.0f MB per CPU s (target >= 500)  "
      "peak RSS %.0f MB  %.1fx read(2)'s CPU\n",
      kairos_s, kairos_cpu, json_mb / kairos_cpu, kairos_rss, kairos_cpu / read_cpu);
  if (python_s > 0)
    std::printf(
        "python3 json   %8.3f s wall %8.3f CPU s %8.0f MB per CPU s  peak RSS %.0f MB  "
        "kairos = %.1fx python3 per CPU s (target >= 15x), %.1fx wall\n",
        python_s, python_cpu, mb / python_cpu, python_rss, python_cpu / kairos_cpu,
        python_s / kairos_s);
  return 0;
}
