// File: summary.cc
// Layer: kairos_analysis. Analyze(): builds the index once and runs the sub-modules in
// order (breakdowns first: the host-wait attribution and detectors read their gaps), then
// writes the one-line verdict per device.
// Threading: calling thread only.
#include "analysis/summary.h"

#include <cstdio>

#include "analysis/analysis_context.h"
#include "analysis/antipatterns.h"

namespace kairos {
namespace internal {
namespace {

double Pct(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

void WriteVerdicts(const AnalysisOptions& options, Summary* summary) {
  char buf[512];
  for (DeviceSummary& d : summary->devices) {
    if (d.busy_ns == 0) {
      std::snprintf(buf, sizeof buf, "GPU %u: no GPU work in the window", d.device);
    } else if (d.window_ns <= 0 ||
               static_cast<double>(d.idle_ns) < options.idle_min_fraction * static_cast<double>(d.window_ns)) {
      std::snprintf(buf, sizeof buf,
                    "GPU %u busy %.0f%% of the window: compute %.0f%%, communication %.0f%%, "
                    "memory copies and sets %.0f%%",
                    d.device, Pct(d.busy_ns, d.window_ns), Pct(d.compute_ns, d.window_ns),
                    Pct(d.communication_ns, d.window_ns), Pct(d.memcpy_ns + d.memset_ns, d.window_ns));
    } else {
      std::string cause;
      if (d.idle_host_wait_ns >= d.idle_kernel_wait_ns && d.idle_host_wait_ns >= d.idle_other_ns) {
        cause = "waiting for the host";
        if (!d.host_wait_top_range.empty()) cause += " in \"" + d.host_wait_top_range + "\"";
      } else if (d.idle_kernel_wait_ns >= d.idle_other_ns) {
        cause = "waiting on other GPU work or synchronisation";
      } else {
        cause = "with no work queued (cause unknown)";
      }
      std::snprintf(buf, sizeof buf, "GPU %u idle %.0f%% of the window, mostly %s", d.device,
                    Pct(d.idle_ns, d.window_ns), cause.c_str());
    }
    d.verdict = buf;
  }
}

}  // namespace internal

Summary Analyze(const TraceData& data, const AnalysisOptions& options) {
  Summary summary;
  internal::AnalysisContext ctx = internal::BuildContext(data, options);
  summary.window_start_ns = ctx.window_start_ns;
  summary.window_end_ns = ctx.window_end_ns;
  summary.event_count = data.EventCount();
  internal::ComputeBreakdowns(ctx, &summary);
  internal::ComputeSmProxies(ctx, &summary);
  internal::AttributeHostWaits(ctx, &summary);
  internal::ComputeHotspots(ctx, &summary);
  internal::ComputeSteps(ctx, &summary);
  internal::ComputeHostSummary(ctx, &summary);
  internal::DetectAntipatterns(ctx, &summary);
  internal::WriteVerdicts(options, &summary);
  return summary;
}

}  // namespace kairos
