// File: host_metrics.cc
// Layer: kairos_analysis (internal). Reads the host counter tracks (docs/SUMMARY.md) back
// out of TraceData: window means, and means over given intervals (the GPU's host waits).
// Threading: calling thread only.
#include <algorithm>

#include "analysis/analysis_context.h"

namespace kairos::internal {
namespace {

int64_t FindTrack(const TraceData& data, std::string_view name) {
  for (size_t i = 0; i < data.counter_tracks.size(); ++i) {
    if (data.counter_tracks[i].name == name) return static_cast<int64_t>(i);
  }
  return -1;
}

}  // namespace

double CounterMeanIn(const AnalysisContext& ctx, std::string_view track,
                     const std::vector<Interval>& gaps) {
  const int64_t id = FindTrack(*ctx.data, track);
  if (id < 0) return -1.0;
  double sum = 0;
  uint64_t n = 0;
  // A rate sample at ts covers the interval ending at ts (host_sampler.h), so it is counted
  // for an interval when its timestamp falls inside it.
  for (const CounterSample& s : ctx.data->counter_samples) {
    if (s.track != static_cast<uint32_t>(id)) continue;
    auto it = std::upper_bound(gaps.begin(), gaps.end(), s.ts_ns,
                               [](int64_t ts, const Interval& g) { return ts < g.end_ns; });
    if (it == gaps.end() || s.ts_ns < it->start_ns) continue;
    sum += s.value;
    ++n;
  }
  return n > 0 ? sum / static_cast<double>(n) : -1.0;
}

void ComputeHostSummary(const AnalysisContext& ctx, Summary* summary) {
  const std::vector<Interval> window = {{ctx.window_start_ns, ctx.window_end_ns + 1}};
  const double util = CounterMeanIn(ctx, "cpu.util", window);
  if (util < 0) return;
  summary->host.present = true;
  summary->host.cpu_util_mean_pct = util;
  summary->host.cpu_iowait_mean_pct = std::max(0.0, CounterMeanIn(ctx, "cpu.iowait", window));
  summary->host.process_cpu_mean_pct = std::max(0.0, CounterMeanIn(ctx, "process.cpu", window));
}

}  // namespace kairos::internal
