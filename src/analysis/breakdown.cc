// File: breakdown.cc
// Layer: kairos_analysis (internal). Per-device temporal breakdown (compute, communication,
// memcpy, memset, idle; sums to the window) and HTA-style idle breakdown (host wait, kernel
// wait, other; sums to idle). Linear in the number of GPU ops: the ops are already sorted.
// Threading: calling thread only.
#include <algorithm>

#include "analysis/analysis_context.h"

namespace kairos::internal {
namespace {

// Length of the union of the ops whose category bit is in `mask`.
int64_t UnionLength(const AnalysisContext& ctx, const std::vector<GpuOp>& ops, unsigned mask) {
  int64_t total = 0, cur_start = 0, cur_end = INT64_MIN;
  for (const GpuOp& op : ops) {
    if (!(mask & (1u << static_cast<unsigned>(op.category)))) continue;
    const int64_t start = ctx.Start(op);
    if (start > cur_end) {
      if (cur_end != INT64_MIN) total += cur_end - cur_start;
      cur_start = start;
      cur_end = ctx.End(op);
    } else {
      cur_end = std::max(cur_end, ctx.End(op));
    }
  }
  if (cur_end != INT64_MIN) total += cur_end - cur_start;
  return total;
}

// Splits gap `g` (g.next nullptr: the trailing gap) into its causes: sets g.host_wait_ns
// and adds the three parts to `d`. The GPU waited for the host while the call that enqueued
// `next` had not returned; after that the work was queued and the GPU waited on something
// else (a dependency on another stream or event, a synchronisation, launch latency).
void ClassifyGap(const AnalysisContext& ctx, IdleGap& g, DeviceSummary& d) {
  const int64_t len = g.End(ctx.window_end_ns) - g.start_ns;
  const Launch* launch =
      g.next != nullptr && g.next->correlation != 0 ? ctx.launches.Find(g.next->correlation) : nullptr;
  if (launch == nullptr) {
    g.host_wait_ns = 0;
    d.idle_other_ns += len;
    return;
  }
  g.host_wait_ns = std::clamp<int64_t>(launch->end_ns - g.start_ns, 0, len);
  d.idle_host_wait_ns += g.host_wait_ns;
  d.idle_kernel_wait_ns += len - g.host_wait_ns;
}

}  // namespace

void ComputeBreakdowns(AnalysisContext& ctx, Summary* summary) {
  constexpr unsigned kC = 1u << static_cast<unsigned>(GpuCategory::kCompute);
  constexpr unsigned kN = 1u << static_cast<unsigned>(GpuCategory::kCommunication);
  constexpr unsigned kM = 1u << static_cast<unsigned>(GpuCategory::kMemcpy);
  constexpr unsigned kS = 1u << static_cast<unsigned>(GpuCategory::kMemset);
  const int64_t window = ctx.window_ns();
  for (DeviceWork& dw : ctx.devices) {
    DeviceSummary d;
    d.device = dw.device;
    d.window_ns = window;
    for (const GpuOp& op : dw.ops) {
      if (op.event->kind == EventKind::kKernel) ++d.kernel_count;
      else if (op.event->kind == EventKind::kMemcpy) ++d.memcpy_count;
      else ++d.memset_count;
    }
    // Priority attribution through nested unions: |C|, |C u N| - |C|, ...
    const int64_t c = UnionLength(ctx, dw.ops, kC);
    const int64_t cn = UnionLength(ctx, dw.ops, kC | kN);
    const int64_t cnm = UnionLength(ctx, dw.ops, kC | kN | kM);
    const int64_t all = UnionLength(ctx, dw.ops, kC | kN | kM | kS);
    d.compute_ns = c;
    d.communication_ns = cn - c;
    d.memcpy_ns = cnm - cn;
    d.memset_ns = all - cnm;
    d.busy_ns = all;
    d.idle_ns = window - all;
    d.busy_fraction = window > 0 ? static_cast<double>(all) / static_cast<double>(window) : 0.0;

    // Idle gaps: the complement of the union inside the window; classified below, once
    // the launches they need are resolved.
    dw.gaps.clear();
    dw.gaps.reserve(dw.ops.size() + 1);  // at most one before each op and a trailing one
    int64_t cursor = ctx.window_start_ns;
    for (const GpuOp& op : dw.ops) {
      if (ctx.Start(op) > cursor) dw.gaps.push_back(IdleGap{cursor, 0, op.event});
      cursor = std::max(cursor, ctx.End(op));
    }
    if (ctx.window_end_ns > cursor) dw.gaps.push_back(IdleGap{cursor, 0, nullptr});
    summary->devices.push_back(std::move(d));
  }
  ResolveLaunches(ctx);
  for (size_t i = 0; i < ctx.devices.size(); ++i) {
    DeviceSummary& d = summary->devices[i];
    for (IdleGap& g : ctx.devices[i].gaps) ClassifyGap(ctx, g, d);
  }
}

}  // namespace kairos::internal
