// File: timeline.cc
// Layer: kairos_analysis (internal). Per-device utilisation over the window in a fixed
// number of bins, for the HTML report's stacked area chart: the temporal breakdown's
// priority attribution (compute, then communication, then memory), applied per bin. Linear
// in ops plus bins: each union interval adds its length to the bins it covers.
// Threading: calling thread only.
#include <algorithm>

#include "analysis/analysis_context.h"

namespace kairos::internal {
namespace {

// Adds the covered length of the union of the ops in `mask` to `cover[bin]`.
void CoverBins(const AnalysisContext& ctx, const std::vector<GpuOp>& ops, unsigned mask, int64_t origin,
               int64_t bin_ns, std::vector<double>* cover) {
  const auto add = [&](int64_t s, int64_t e) {
    if (e <= s) return;
    auto b = static_cast<size_t>((s - origin) / bin_ns);
    while (s < e && b < cover->size()) {
      const int64_t bin_end = origin + static_cast<int64_t>(b + 1) * bin_ns;
      const int64_t piece_end = std::min(e, bin_end);
      (*cover)[b] += static_cast<double>(piece_end - s);
      s = piece_end;
      ++b;
    }
  };
  int64_t cur_start = 0, cur_end = INT64_MIN;
  for (const GpuOp& op : ops) {
    if (!(mask & (1u << static_cast<unsigned>(op.category)))) continue;
    const int64_t start = ctx.Start(op);
    if (start > cur_end) {
      if (cur_end != INT64_MIN) add(cur_start, cur_end);
      cur_start = start;
      cur_end = ctx.End(op);
    } else {
      cur_end = std::max(cur_end, ctx.End(op));
    }
  }
  if (cur_end != INT64_MIN) add(cur_start, cur_end);
}

}  // namespace

void ComputeTimelines(const AnalysisContext& ctx, Summary* summary) {
  const size_t want = ctx.options->timeline_bins;
  const int64_t window = ctx.window_ns();
  if (want == 0 || window <= 0) return;
  // Never bins shorter than 1 ns; the last bin may be partly outside the window.
  const size_t bins = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(want), window));
  const int64_t bin_ns = (window + static_cast<int64_t>(bins) - 1) / static_cast<int64_t>(bins);
  constexpr unsigned kC = 1u << static_cast<unsigned>(GpuCategory::kCompute);
  constexpr unsigned kN = 1u << static_cast<unsigned>(GpuCategory::kCommunication);
  constexpr unsigned kAll = kC | kN | (1u << static_cast<unsigned>(GpuCategory::kMemcpy)) |
                            (1u << static_cast<unsigned>(GpuCategory::kMemset));
  for (const DeviceWork& dw : ctx.devices) {
    std::vector<double> c(bins, 0.0), cn(bins, 0.0), all(bins, 0.0);
    CoverBins(ctx, dw.ops, kC, ctx.window_start_ns, bin_ns, &c);
    CoverBins(ctx, dw.ops, kC | kN, ctx.window_start_ns, bin_ns, &cn);
    CoverBins(ctx, dw.ops, kAll, ctx.window_start_ns, bin_ns, &all);
    DeviceTimeline t;
    t.device = dw.device;
    t.bin_ns = bin_ns;
    t.compute.resize(bins);
    t.communication.resize(bins);
    t.memory.resize(bins);
    for (size_t b = 0; b < bins; ++b) {
      // The last bin is shorter when the window is not a multiple of bin_ns.
      const int64_t start = ctx.window_start_ns + static_cast<int64_t>(b) * bin_ns;
      const double len = static_cast<double>(std::min(bin_ns, ctx.window_end_ns - start));
      if (len <= 0) continue;
      t.compute[b] = static_cast<float>(c[b] / len);
      t.communication[b] = static_cast<float>((cn[b] - c[b]) / len);
      t.memory[b] = static_cast<float>((all[b] - cn[b]) / len);
    }
    summary->timelines.push_back(std::move(t));
  }
}

}  // namespace kairos::internal
