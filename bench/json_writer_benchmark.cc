// File: json_writer_benchmark.cc
// Layer: benchmarks. JSON trace writing throughput to a real file (fsync and rename
// included): lean range events, kernel events, and JSON+zstd level 1. Baselines measured in
// the same run: writing the same number of bytes raw (64 KiB write(2) calls, the I/O floor)
// and a naive snprintf formatter producing the same lean lines.
// Usage: json_writer_benchmark [events (default 2000000)] [dir (default /tmp)]
// Threading: single-threaded.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_headline.h"
#include "output/writer.h"
#include "model/trace_data.h"

namespace kairos {
namespace {

constexpr int64_t kBase = 1790857026000000000LL;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// CPU time of this process: on a shared, busy machine wall time mostly measures waiting for
// a core, so the report gives rates from both clocks.
double CpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

uint64_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

void Identity(TraceData* d, const std::string& path) {
  d->pid = 4242;
  d->process_name = "bench";
  d->host_name = "host";
  d->base_time_ns = kBase;
  d->window_start_ns = kBase;
  d->trace_name = path;
}

// n lean ranges ("user_annotation", no args) spread over 8 threads, 64 distinct names.
void BuildLean(TraceData* d, size_t n) {
  std::vector<StringId> names;
  for (int i = 0; i < 64; ++i) names.push_back(d->strings.Intern("range_" + std::to_string(i)));
  for (int t = 0; t < 8; ++t) {
    Track tr;
    tr.pid = 4242;
    tr.tid = 5000 + t;
    tr.name = "worker";
    d->AddTrack(tr);
  }
  for (size_t i = 0; i < n; ++i) {
    const uint32_t track = static_cast<uint32_t>(i % 8);
    Event e{};
    e.start_ns = kBase + 1000 + static_cast<int64_t>(i) * 137;
    e.end_ns = e.start_ns + 500 + static_cast<int64_t>(i % 7) * 31;
    e.name = names[i % names.size()];
    e.track = track;
    e.detail = kNoDetail;
    e.kind = EventKind::kUserAnnotation;
    d->events_by_track[track].push_back(e);
  }
  d->window_end_ns = kBase + 1000 + static_cast<int64_t>(n) * 137 + 10000;
}

// n kernels over 4 streams of one H100, 16 launch configurations, linked and correlated.
void BuildKernels(TraceData* d, size_t n) {
  DeviceInfo dev;
  dev.id = 0;
  dev.name = "NVIDIA H100 80GB HBM3";
  dev.max_threads_per_block = 1024;
  dev.max_threads_per_multiprocessor = 2048;
  dev.warp_size = 32;
  dev.num_sms = 132;
  dev.regs_per_multiprocessor = 65536;
  dev.shared_mem_per_multiprocessor = 233472;
  dev.shared_mem_per_block_optin = 232448;
  dev.max_blocks_per_multiprocessor = 32;
  d->devices.push_back(dev);
  for (int c = 0; c < 16; ++c) {
    KernelDetail k{};
    k.grid[0] = 132 * (c + 1);
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = 64 * (1 + c % 4);
    k.block[1] = k.block[2] = 1;
    k.context = 1;
    k.stream = 7 + c % 4;
    k.registers_per_thread = 32 + c;
    k.static_shared_memory = 1024 * (c % 3);
    d->kernels.push_back(k);
  }
  std::vector<StringId> names;
  for (int i = 0; i < 16; ++i) {
    names.push_back(d->strings.Intern(
        "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_" + std::to_string(i) +
        "_128x128_32x3_nn_align4>(Params)"));
  }
  for (int s = 0; s < 4; ++s) {
    Track tr;
    tr.type = TrackType::kGpuStream;
    tr.pid = 0;
    tr.tid = 7 + s;
    tr.stream = 7 + s;
    d->AddTrack(tr);
  }
  for (size_t i = 0; i < n; ++i) {
    const uint32_t cfg = static_cast<uint32_t>(i % 16);
    const uint32_t track = cfg % 4;
    Event e{};
    e.start_ns = kBase + 1000 + static_cast<int64_t>(i) * 211;
    e.end_ns = e.start_ns + 2000 + static_cast<int64_t>(i % 13) * 17;
    e.name = names[cfg];
    e.track = track;
    e.correlation = static_cast<uint32_t>(i + 1);
    e.external_id = static_cast<uint32_t>(i / 4 + 1);
    e.detail = cfg;
    e.kind = EventKind::kKernel;
    d->events_by_track[track].push_back(e);
  }
  d->window_end_ns = kBase + 1000 + static_cast<int64_t>(n) * 211 + 10000;
}

// The I/O floor: `bytes` bytes in 64 KiB write(2) calls, then fsync, like the sink.
double RawWriteSeconds(const std::string& path, uint64_t bytes) {
  std::vector<char> chunk(64 * 1024, 'x');
  const double t0 = Now();
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) return 0;
  uint64_t left = bytes;
  while (left > 0) {
    const size_t n = left < chunk.size() ? left : chunk.size();
    if (write(fd, chunk.data(), n) < 0) break;
    left -= n;
  }
  fsync(fd);
  close(fd);
  const double t = Now() - t0;
  unlink(path.c_str());
  return t;
}

// A naive formatter: one snprintf per lean event, fwrite through stdio.
double NaiveSnprintfSeconds(const std::string& path, const TraceData& d, double* cpu) {
  const double t0 = Now(), c0 = CpuNow();
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return 0;
  std::fputs("{\"traceEvents\":[\n", f);
  EventMerger merger(d);
  const Event* e;
  uint32_t track;
  char line[512];
  bool first = true;
  while (merger.Next(&e, &track)) {
    const Track& t = d.tracks[track];
    const int64_t ts = e->start_ns - d.base_time_ns, dur = e->end_ns - e->start_ns;
    const std::string name(d.strings.Get(e->name));
    const int n = std::snprintf(
        line, sizeof(line),
        "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%lld,\"tid\":%lld,"
        "\"ts\":%lld.%03lld,\"dur\":%lld.%03lld}",
        first ? "" : ",\n", kEventCategory[static_cast<int>(e->kind)], name.c_str(),
        static_cast<long long>(t.pid), static_cast<long long>(t.tid),
        static_cast<long long>(ts / 1000), static_cast<long long>(ts % 1000),
        static_cast<long long>(dur / 1000), static_cast<long long>(dur % 1000));
    first = false;
    std::fwrite(line, 1, static_cast<size_t>(n), f);
  }
  std::fputs("\n]}\n", f);
  std::fflush(f);
  fsync(fileno(f));
  std::fclose(f);
  const double t = Now() - t0;
  *cpu = CpuNow() - c0;
  unlink(path.c_str());
  return t;
}

struct Result {
  double seconds = 0;
  double cpu_seconds = 0;
  uint64_t bytes = 0;
};

Result TimeWrite(const TraceData& d, const std::string& path, int reps) {
  Result best;
  for (int r = 0; r < reps; ++r) {
    const double t0 = Now(), c0 = CpuNow();
    const absl::Status s = WriteTraceFile(d, {path, TraceFormat::kAuto, 1, {}});
    const double t = Now() - t0, c = CpuNow() - c0;
    if (!s.ok()) {
      std::fprintf(stderr, "write failed: %s\n", std::string(s.message()).c_str());
      std::exit(1);
    }
    if (best.seconds == 0 || t < best.seconds) best.seconds = t;
    if (best.cpu_seconds == 0 || c < best.cpu_seconds) best.cpu_seconds = c;
    best.bytes = FileSize(path);
    unlink(path.c_str());
  }
  return best;
}

void Report(const char* what, size_t n, const Result& r) {
  std::printf("%-26s wall %6.2f M ev/s (%.3f s)  cpu %6.2f M ev/s (%.3f s)  %6.1f B/event\n",
              what, n / r.seconds / 1e6, r.seconds, n / r.cpu_seconds / 1e6, r.cpu_seconds,
              static_cast<double>(r.bytes) / n);
}

}  // namespace
}  // namespace kairos

int main(int argc, char** argv) {
  using namespace kairos;
  const size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2000000;
  const std::string dir = argc > 2 ? argv[2] : "/tmp";
  const std::string base = dir + "/kairos_json_bench_" + std::to_string(getpid());
  const int reps = 3;
  std::printf("json_writer_benchmark: %zu events per run, best of %d, files in %s\n", n, reps,
              dir.c_str());

  TraceData lean;
  Identity(&lean, base + "_lean.json");
  BuildLean(&lean, n);
  const Result lean_json = TimeWrite(lean, base + "_lean.json", reps);
  const Result lean_zst = TimeWrite(lean, base + "_lean.json.zst", reps);
  const double raw = RawWriteSeconds(base + "_raw", lean_json.bytes);
  double naive_cpu = 0;
  const double naive = NaiveSnprintfSeconds(base + "_naive.json", lean, &naive_cpu);

  TraceData kernels;
  Identity(&kernels, base + "_kernels.json");
  BuildKernels(&kernels, n);
  const Result kern_json = TimeWrite(kernels, base + "_kernels.json", reps);
  const Result kern_zst = TimeWrite(kernels, base + "_kernels.json.zst", reps);

  Report("lean ranges, JSON", n, lean_json);
  Report("lean ranges, JSON+zstd 1", n, lean_zst);
  Report("kernels, JSON", n, kern_json);
  Report("kernels, JSON+zstd 1", n, kern_zst);
  std::printf("baseline raw write of the lean JSON bytes: %.3f s (%.1f MB/s)\n", raw,
              lean_json.bytes / raw / 1e6);
  std::printf("baseline naive snprintf formatter (lean):  %.3f s wall, %.3f s cpu (%.2f M ev/s cpu)\n",
              naive, naive_cpu, n / naive_cpu / 1e6);
  std::printf("ratio lean JSON time / raw write time:      %.2fx\n", lean_json.seconds / raw);
  std::printf("ratio naive snprintf / lean JSON, cpu time:  %.2fx (higher = kairos faster)\n",
              naive_cpu / lean_json.cpu_seconds);
  std::printf("ratio lean JSON+zstd / lean JSON, cpu time: %.2fx; zstd size ratio %.1fx\n",
              lean_zst.cpu_seconds / lean_json.cpu_seconds,
              static_cast<double>(lean_json.bytes) / lean_zst.bytes);
  std::printf("targets: lean >= 4 M/s at <= 120 B/event; JSON+zstd >= 2.5 M/s "
              "(Kineto reference ~0.45 M/s at ~270 B/event)\n");
  using bench::Better;
  using bench::Headline;
  const char* b = "json_writer_benchmark";
  Headline(b, "lean_json_cpu_events_per_s", n / lean_json.cpu_seconds / 1e6, Better::kHigher, "M/s",
           4);
  Headline(b, "lean_json_bytes_per_event", static_cast<double>(lean_json.bytes) / n, Better::kLower,
           "B", 120);
  Headline(b, "lean_zstd_cpu_events_per_s", n / lean_zst.cpu_seconds / 1e6, Better::kHigher, "M/s",
           2.5);
  Headline(b, "naive_snprintf_vs_lean_json", naive_cpu / lean_json.cpu_seconds, Better::kHigher,
           "x");
  Headline(b, "lean_zstd_vs_lean_json", lean_zst.cpu_seconds / lean_json.cpu_seconds,
           Better::kLower, "x");
  Headline(b, "kernels_json_bytes_per_event", static_cast<double>(kern_json.bytes) / n,
           Better::kLower, "B");
  return 0;
}
