// File: report_benchmark.cc
// Layer: benchmarks. HTML report generation against `kairos summarize` on the same large
// trace. Both start from the same TraceData (reading the JSON file is the same streaming
// reader for both and is timed separately): summarize = Analyze + SummaryToText +
// SummaryToJson; report = RenderHtmlReport (Analyze with the 500-bin timeline and step
// series, then every section and the embedded JSON summary). Prints both times, the
// ratio and the page size. The trace: a training-like run on 8 streams of one GPU (GEMM,
// attention, elementwise and NCCL kernels, copies), host ranges and launches, ProfilerStep
// every 2000 kernels, host counters every 100 ms.
// Usage: report_benchmark [events (default 4000000)] [dir for the JSON round trip (default
//        /tmp; "-" = skip the file read)]
// Threading: single-threaded.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "analysis/summary.h"
#include "bench_headline.h"
#include "bench_trace.h"
#include "output/json_reader.h"
#include "output/writer.h"
#include "report/report.h"

namespace kairos {
namespace {

using bench::kBase;
using bench::Now;

Event Make(int64_t s, int64_t e, StringId name, uint32_t track, EventKind kind, uint32_t corr, uint32_t detail) {
  Event ev{};
  ev.start_ns = s;
  ev.end_ns = e;
  ev.name = name;
  ev.track = track;
  ev.kind = kind;
  ev.correlation = corr;
  ev.detail = detail;
  return ev;
}

// About `n` events: per unit a cpu_op enclosing a launch and its GPU op (3 events).
void Build(TraceData* d, size_t n) {
  d->pid = 4242;
  d->base_time_ns = kBase;
  d->window_start_ns = kBase;
  for (uint32_t id = 0; id < 8; ++id) d->devices.push_back(bench::BenchDevice(id, 132, 233472, 232448));
  const uint32_t host = bench::AddHostTrack(d);
  uint32_t streams[8];
  for (uint32_t s = 0; s < 8; ++s) streams[s] = bench::AddStreamTrack(d, 7 + s);
  const char* kernel_names[] = {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", "void flash::flash_fwd_kernel<128>",
                                "void at::native::vectorized_elementwise_kernel<4, add>",
                                "void at::native::reduce_kernel<512, 1>", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
                                "fused_user_kernel"};
  std::vector<StringId> names, ops;
  for (const char* k : kernel_names) {
    for (int v = 0; v < 20; ++v) names.push_back(d->strings.Intern(std::string(k) + "_" + std::to_string(v)));
  }
  for (int i = 0; i < 32; ++i) ops.push_back(d->strings.Intern("aten::op_" + std::to_string(i)));
  const StringId launch = d->strings.Intern("cudaLaunchKernel");
  const StringId copy = d->strings.Intern("Memcpy HtoD (Pinned -> Device)");
  for (int i = 0; i < 8; ++i) {
    KernelDetail k{};
    k.grid[0] = 66u << i;
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = 128u << (i % 3);
    k.block[1] = k.block[2] = 1;
    k.registers_per_thread = 32 + 24 * (i % 6);
    d->kernels.push_back(k);
  }
  MemcpyDetail m{};
  m.bytes = 1 << 20;
  m.copy_kind = 1;
  m.src_kind = 2;
  m.dst_kind = 3;
  d->memcpys.push_back(m);
  const size_t units = n / 3;
  int64_t t = kBase + 1000, gpu_free[8] = {};
  int64_t step_start = t, step = 0;
  for (size_t u = 0; u < units; ++u) {
    const auto corr = static_cast<uint32_t>(u + 1);
    d->events_by_track[host].push_back(Make(t, t + 9000, ops[u % ops.size()], host, EventKind::kCpuOp, 0, kNoDetail));
    d->events_by_track[host].push_back(Make(t + 1000, t + 6000, launch, host, EventKind::kRuntime, corr, kNoDetail));
    const size_t s = u % 8;
    const int64_t gs = std::max(t + 8000, gpu_free[s]);
    const int64_t ge = gs + 40000 + static_cast<int64_t>(u % 17) * 3000;
    if (u % 16 == 15) {
      d->events_by_track[streams[s]].push_back(Make(gs, ge, copy, streams[s], EventKind::kMemcpy, corr, 0));
    } else {
      d->events_by_track[streams[s]].push_back(Make(gs, ge, names[(u * 7) % names.size()], streams[s],
                                                    EventKind::kKernel, corr, static_cast<uint32_t>(u % 8)));
    }
    gpu_free[s] = ge;
    t += 7000 + (u % 500 == 0 ? 300000 : 0);
    if (u % 2000 == 1999) {
      d->events_by_track[host].push_back(Make(step_start, t, d->strings.Intern("ProfilerStep#" + std::to_string(step++)),
                                              host, EventKind::kUserAnnotation, 0, kNoDetail));
      step_start = t;
    }
  }
  d->window_end_ns = t + 100000;
  d->counter_tracks.push_back({"cpu.util", "%", "Host CPU"});
  d->counter_tracks.push_back({"process.rss", "bytes", "Host memory"});
  for (int64_t ts = kBase; ts <= d->window_end_ns; ts += 100000000) {
    d->counter_samples.push_back({ts, 40.0 + static_cast<double>((ts / 100000000) % 7), 0});
    d->counter_samples.push_back({ts, 6e9, 1});
  }
  d->SortTracks();
}

template <typename Fn>
double Best(int reps, Fn fn) {
  double best = 1e9;
  for (int i = 0; i < reps; ++i) {
    const double t0 = Now();
    fn();
    best = std::min(best, Now() - t0);
  }
  return best;
}

}  // namespace
}  // namespace kairos

int main(int argc, char** argv) {
  using namespace kairos;
  const size_t events = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 4000000;
  const std::string dir = argc > 2 ? argv[2] : "/tmp";
  TraceData built;
  Build(&built, events);
  const TraceData* data = &built;
  TraceData read_back;
  if (dir != "-") {
    // Through a real JSON file, as `kairos summarize` and `kairos report` see it.
    const std::string path = dir + "/kairos_report_bench.json";
    OutputOptions req;
    req.path = path;
    if (!WriteTraceFile(built, req).ok()) return 1;
    const double t0 = Now();
    absl::StatusOr<TraceData> r = ReadKinetoJsonTrace(path);
    const double read_s = Now() - t0;
    std::remove(path.c_str());
    if (!r.ok()) return 1;
    read_back = std::move(*r);
    data = &read_back;
    std::printf("read JSON trace (both commands): %.2f s\n", read_s);
  }
  size_t summary_bytes = 0, page_bytes = 0;
  const double summarize_s = Best(3, [&] {
    const Summary s = Analyze(*data);
    summary_bytes = SummaryToText(s).size() + SummaryToJson(s).size();
  });
  const double report_s = Best(3, [&] {
    page_bytes = RenderHtmlReport({{"rank 0", data}}).size();
  });
  std::printf("events %zu\n", data->EventCount());
  std::printf("summarize (analyze + text + json): %.3f s (%zu bytes)\n", summarize_s, summary_bytes);
  std::printf("report (analyze + timeline + html): %.3f s (%zu bytes page)\n", report_s, page_bytes);
  std::printf("ratio report/summarize: %.2f\n", report_s / summarize_s);
  bench::Headline("report_benchmark", "report_vs_summarize", report_s / summarize_s,
                  bench::Better::kLower, "x");
  bench::Headline("report_benchmark", "page_kb", page_bytes / 1e3, bench::Better::kLower, "KB");
  return 0;
}
