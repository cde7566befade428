// File: perfetto_writer_benchmark.cc
// Layer: bench. Perfetto protobuf writer vs the JSON writer on the same TraceData, in the
// same run: events/s, bytes per event (lean ranges; kernels with all args and flows), and
// peak RSS while flushing a large trace relative to the memory its events occupy.
// Results: docs/PERFORMANCE.md ("Output"). Usage: perfetto_writer_benchmark [N] [BIG_N]
// (defaults 2,000,000 and 10,000,000; BIG_N 0 skips the RSS run).
// Threading: single-threaded.
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "bench_clock.h"
#include "bench_headline.h"
#include "output/json_writer.h"
#include "output/perfetto_writer.h"
#include "model/trace_data.h"

namespace kairos {
namespace {

class CountingSink : public ByteSink {
 public:
  absl::Status Write(const void* data, size_t size) override {
    bytes += size;
    // Touch the data so the writer's work cannot be optimized away.
    if (size) checksum += static_cast<const unsigned char*>(data)[size - 1];
    return absl::OkStatus();
  }
  absl::Status Finish() override { return absl::OkStatus(); }
  uint64_t bytes = 0;
  uint64_t checksum = 0;
};

// `n` lean ranges on 8 threads (nested two deep, 10 names) or `n` kernels on 8 streams
// (64 launch configurations, each with a flow-linked launch id and External id).
TraceData Build(size_t n, bool kernels) {
  TraceData d;
  d.pid = 1000;
  d.base_time_ns = 1790857026000000000LL;
  d.window_start_ns = d.base_time_ns + 1000;
  DeviceInfo dev;
  dev.num_sms = 132;
  dev.warp_size = 32;
  dev.max_threads_per_block = 1024;
  dev.max_threads_per_multiprocessor = 2048;
  dev.regs_per_block = 65536;
  dev.regs_per_multiprocessor = 65536;
  dev.shared_mem_per_block = 49152;
  dev.shared_mem_per_multiprocessor = 233472;
  dev.shared_mem_per_block_optin = 232448;
  dev.max_blocks_per_multiprocessor = 32;
  d.devices.push_back(dev);
  const int kTracks = 8;
  for (int t = 0; t < kTracks; ++t) {
    if (kernels) d.AddTrack({TrackType::kGpuStream, 0, 7 + t, 0, uint32_t(7 + t), ""});
    else d.AddTrack({TrackType::kThread, 1000, 1000 + t, 0, 0, "worker"});
  }
  StringId names[10];
  for (int i = 0; i < 10; ++i)
    names[i] = d.strings.Intern((kernels ? "void gemm_kernel<" : "range_") + std::to_string(i) + (kernels ? ">(float*)" : ""));
  for (int c = 0; c < 64; ++c) {
    KernelDetail k{};
    k.grid[0] = 1024 + c; k.grid[1] = 1; k.grid[2] = 1;
    k.block[0] = 128; k.block[1] = 1; k.block[2] = 1;
    k.context = 1; k.stream = 7 + c % kTracks;
    k.registers_per_thread = 32 + c % 8;
    k.static_shared_memory = 1024;
    d.kernels.push_back(k);
  }
  for (auto& v : d.events_by_track) v.reserve(n / kTracks + 1);
  for (size_t i = 0; i < n; ++i) {
    uint32_t t = static_cast<uint32_t>(i % kTracks);
    size_t j = i / kTracks;
    Event e{};
    e.track = t;
    e.detail = kNoDetail;
    e.name = names[j % 10];
    if (kernels) {
      e.start_ns = d.window_start_ns + int64_t(j) * 3000;
      e.end_ns = e.start_ns + 1500 + int64_t(j % 13) * 7;
      e.kind = EventKind::kKernel;
      e.correlation = static_cast<uint32_t>(i + 1);
      e.external_id = static_cast<uint32_t>(i / 4 + 1);
      e.flags = kFlagFlowIn;
      e.detail = static_cast<uint32_t>(j % 64 / kTracks * kTracks + t);
    } else {
      // Pairs: an outer range and one nested inside it.
      int64_t base = d.window_start_ns + int64_t(j / 2) * 2000;
      e.kind = EventKind::kUserAnnotation;
      e.start_ns = (j % 2) ? base + 100 : base;
      e.end_ns = (j % 2) ? base + 900 + int64_t(j % 11) : base + 1500;
    }
    d.events_by_track[t].push_back(e);
  }
  d.window_end_ns = d.window_start_ns + int64_t(n) * 3000;
  d.SortTracks();
  return d;
}

// A training-loop-like trace: per launch a cpu_op (aten::*) on the main thread enclosing a
// cudaLaunchKernel (cbid 211, correlation, External id, flow out) and the kernel on one of 4
// streams (flow in, one of 64 launch configurations); a ProfilerStep user annotation every
// 64 launches. Counters as the host sampler and PM sampling record them: 6 host tracks
// every 1 ms (CPU % with a fractional part, RSS bytes, ...) and 4 GPU metrics every 100 us
// (percentages with 2 decimals). One launch every 6 us, so `n` launches span 6n us.
TraceData BuildTrainingLoop(size_t n) {
  TraceData d = Build(0, true);  // device and 64 kernel configurations
  d.tracks.clear();
  d.events_by_track.clear();
  uint32_t cpu = d.AddTrack({TrackType::kThread, 1000, 1000, 0, 0, "python"});
  uint32_t streams[4];
  for (int s = 0; s < 4; ++s) streams[s] = d.AddTrack({TrackType::kGpuStream, 0, 7 + s, 0, uint32_t(7 + s), ""});
  StringId ops[6], kernels[6];
  const char* op_names[6] = {"aten::mm", "aten::add", "aten::relu", "aten::softmax", "aten::layer_norm", "aten::copy_"};
  for (int i = 0; i < 6; ++i) {
    ops[i] = d.strings.Intern(op_names[i]);
    kernels[i] = d.strings.Intern(std::string("void at::native::kernel_") + std::to_string(i) + "<float, 4>(float*, float const*, int)");
  }
  StringId launch = d.strings.Intern("cudaLaunchKernel");
  StringId step = d.strings.Intern("ProfilerStep#");
  const int64_t t0 = d.window_start_ns;
  for (size_t i = 0; i < n; ++i) {
    int64_t t = t0 + int64_t(i) * 6000;
    uint32_t corr = uint32_t(i + 1), ext = uint32_t(i + 1);
    if (i % 64 == 0) {
      Event st{t, t + 64 * 6000 - 10, step, cpu, 0, 0, kNoDetail, EventKind::kUserAnnotation, 0, 0};
      d.events_by_track[cpu].push_back(st);
    }
    Event op{t + 100, t + 3900 + int64_t(i % 7) * 13, ops[i % 6], cpu, 0, ext, kNoDetail, EventKind::kCpuOp, 0, 0};
    Event rt{t + 700, t + 2700 + int64_t(i % 5) * 11, launch, cpu, corr, ext, kNoDetail, EventKind::kRuntime, kFlagFlowOut, 211};
    uint32_t s = uint32_t(i % 4);
    Event k{t + 5000, t + 5000 + 4000 + int64_t(i % 13) * 17, kernels[i % 6], streams[s], corr, ext,
            uint32_t(i % 64), EventKind::kKernel, kFlagFlowIn, 0};
    d.events_by_track[cpu].push_back(op);
    d.events_by_track[cpu].push_back(rt);
    d.events_by_track[streams[s]].push_back(k);
  }
  const char* host[6] = {"cpu.util", "cpu.util.core0", "cpu.util.core1", "memory.rss", "io.read", "net.rx"};
  const char* host_units[6] = {"%", "%", "%", "bytes", "bytes/s", "bytes/s"};
  for (int h = 0; h < 6; ++h) d.counter_tracks.push_back({host[h], host_units[h], "Host"});
  const char* gpu[4] = {"sm__throughput", "dram__throughput", "sm__warps_active", "gr__cycles_active"};
  for (int g = 0; g < 4; ++g) d.counter_tracks.push_back({gpu[g], "%", "GPU 0"});
  const int64_t span = int64_t(n) * 6000 + 10000;
  for (int64_t ts = 0, k = 0; ts < span; ts += 100000, ++k) {
    for (uint32_t g = 0; g < 4; ++g)
      d.counter_samples.push_back({t0 + ts, double((k * 37 + g * 11) % 10000) / 100.0, 6 + g});
    if (k % 10 == 0)
      for (uint32_t h = 0; h < 6; ++h) {
        double v = h < 3 ? double((k * 13 + h) % 1000) / 10.0 + 0.25
                         : h == 3 ? double(1200000000 + (k * 4096) % 100000000) : double((k * 7919) % 5000000);
        d.counter_samples.push_back({t0 + ts, v, h});
      }
  }
  d.window_end_ns = t0 + span;
  d.SortTracks();
  return d;
}

struct Result {
  double seconds;  // CPU time of this thread: the shared build machine is heavily loaded, and
                   // wall time there measures the scheduler, not the writer
  double wall_seconds;
  uint64_t bytes;
};

Result Time(TraceWriter& w, const TraceData& d) {
  CountingSink sink;
  auto t0 = std::chrono::steady_clock::now();
  double c0 = kairos::bench::ThreadCpuSeconds();
  absl::Status st = w.Write(d, sink);
  double c1 = kairos::bench::ThreadCpuSeconds();
  auto t1 = std::chrono::steady_clock::now();
  if (!st.ok()) fprintf(stderr, "write failed: %s\n", std::string(st.message()).c_str());
  asm volatile("" : : "r"(sink.checksum) : "memory");
  return {c1 - c0, std::chrono::duration<double>(t1 - t0).count(), sink.bytes};
}

long ProcStatusKb(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return atol(line.c_str() + strlen(key));
  return -1;
}

void Compare(const char* label, size_t n, int workload) {
  TraceData d = workload == 2 ? BuildTrainingLoop(n) : Build(n, workload == 1);
  PerfettoTraceWriter pw;
  JsonTraceWriter jw;
  Result p = Time(pw, d), j = Time(jw, d);
  p = Time(pw, d);  // second run: warm caches for both
  j = Time(jw, d);
  if (workload == 2) n = d.EventCount() + d.counter_samples.size();  // per event or sample
  double pe = n / p.seconds / 1e6, je = n / j.seconds / 1e6;
  double pb = double(p.bytes) / n, jb = double(j.bytes) / n;
  printf("%-8s n=%zu  perfetto: %.1f M events/s, %.1f B/event | json: %.1f M events/s, %.1f B/event"
         " | ratio speed %.2fx, size %.3fx (CPU time; wall: perfetto %.2f s, json %.2f s)\n",
         label, n, pe, pb, je, jb, pe / je, pb / jb, p.wall_seconds, j.wall_seconds);
  const std::string l = label;
  const char* b = "perfetto_writer_benchmark";
  bench::Headline(b, (l + "_events_per_s").c_str(), pe, bench::Better::kHigher, "M/s", 40);
  bench::Headline(b, (l + "_speed_vs_json").c_str(), pe / je, bench::Better::kHigher, "x");
  // The per-event byte targets of the summary table; the training trace's is on the file size.
  if (workload == 2)
    bench::Headline(b, (l + "_size_vs_json").c_str(), pb / jb, bench::Better::kLower, "x", 1.0 / 6);
  else
    bench::Headline(b, (l + "_bytes_per_event").c_str(), pb, bench::Better::kLower, "B",
                    workload == 1 ? 40 : 20);
}

}  // namespace
}  // namespace kairos

int main(int argc, char** argv) {
  size_t n = argc > 1 ? strtoull(argv[1], nullptr, 10) : 2000000;
  size_t big = argc > 2 ? strtoull(argv[2], nullptr, 10) : 10000000;
  kairos::Compare("ranges", n, 0);
  kairos::Compare("kernels", n, 1);
  // A file-size ratio over a whole trace, counters included (issue 18: >= 6x smaller).
  kairos::Compare("training", n / 4, 2);
  if (big) {
    kairos::TraceData d = kairos::Build(big, false);
    long rss_before = kairos::ProcStatusKb("VmRSS:");
    std::ofstream("/proc/self/clear_refs") << "5";  // reset VmHWM to the current RSS
    kairos::PerfettoTraceWriter pw;
    kairos::Result r = kairos::Time(pw, d);
    long hwm = kairos::ProcStatusKb("VmHWM:");
    double events_mb = double(big) * sizeof(kairos::Event) / 1048576.0;
    printf("rss      n=%zu  events occupy %.1f MiB; RSS before flush %.1f MiB, peak during flush "
           "%.1f MiB (+%.1f MiB, %.4fx of the events); %.1f M events/s, %.1f B/event\n",
           big, events_mb, rss_before / 1024.0, hwm / 1024.0, (hwm - rss_before) / 1024.0,
           (hwm - rss_before) / 1024.0 / events_mb, big / r.seconds / 1e6, double(r.bytes) / big);
    kairos::bench::Headline("perfetto_writer_benchmark", "flush_peak_rss_vs_events",
                            hwm / 1024.0 / events_mb, kairos::bench::Better::kLower, "x", 1.2);
  }
  return 0;
}
