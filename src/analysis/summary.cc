// File: summary.cc
// Layer: kairos_analysis. Analyze(): builds the index once and runs the sub-modules in
// order (hotspots, then breakdowns: the host-wait attribution and detectors read their
// gaps), then writes the verdicts: one line per device with work, one for all devices
// without, and one for the whole trace.
// Threading: calling thread only.
#include "analysis/summary.h"

#include <algorithm>
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

std::string OverallVerdict(const AnalysisOptions& options, const Summary& s);

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
        if (!d.host_wait_top_python.empty()) cause += " (Python: " + d.host_wait_top_python + ")";
      } else if (d.idle_kernel_wait_ns >= d.idle_other_ns) {
        cause = "waiting on other GPU work or synchronisation";
      } else {
        cause = "with no work queued (cause unknown)";
      }
      std::snprintf(buf, sizeof buf, "GPU %u idle %.0f%% of the window, mostly %s", d.device,
                    Pct(d.idle_ns, d.window_ns), cause.c_str());
    }
    d.verdict = buf;
    summary->verdicts.push_back(d.verdict);
  }
  if (!summary->idle_devices.empty()) {
    const bool one = summary->idle_devices.size() == 1;
    summary->verdicts.push_back(std::string(one ? "GPU " : "GPUs ") + DeviceList(summary->idle_devices) +
                                ": no GPU work in the window");
  }
  summary->verdict = OverallVerdict(options, *summary);
}

std::string OverallVerdict(const AnalysisOptions& options, const Summary& s) {
  char buf[512];
  const double floor_pct = 100.0 * options.min_window_share;
  if (s.devices.empty()) return "No GPU work in the window";
  if (!s.findings.empty()) {
    const Finding& f = s.findings.front();
    std::string where = f.device >= 0 ? "GPU " + std::to_string(f.device) + ", " : std::string();
    std::snprintf(buf, sizeof buf, "%zu finding%s; the largest: %s (%s%.0f%% of the window, %s confidence)",
                  s.findings.size(), s.findings.size() == 1 ? "" : "s", f.title.c_str(), where.c_str(),
                  100.0 * f.window_share, f.confidence.c_str());
    return buf;
  }
  const DeviceSummary* idlest = &s.devices.front();
  double lo = 1.0, hi = 0.0;
  int64_t comm = 0, window = 0;
  for (const DeviceSummary& d : s.devices) {
    if (d.idle_ns > idlest->idle_ns) idlest = &d;
    lo = std::min(lo, d.busy_fraction);
    hi = std::max(hi, d.busy_fraction);
    comm += d.communication_ns;
    window += d.window_ns;
  }
  if (static_cast<double>(idlest->idle_ns) >= options.well_tuned_max_idle * static_cast<double>(idlest->window_ns)) {
    std::snprintf(buf, sizeof buf,
                  "No finding above %.0f%% of the window, but GPU %u is idle %.0f%% of it (host wait "
                  "%.0f%%, kernel wait %.0f%%, other %.0f%%)",
                  floor_pct, idlest->device, Pct(idlest->idle_ns, idlest->window_ns),
                  Pct(idlest->idle_host_wait_ns, idlest->window_ns), Pct(idlest->idle_kernel_wait_ns, idlest->window_ns),
                  Pct(idlest->idle_other_ns, idlest->window_ns));
    return buf;
  }
  std::string busy = std::to_string(static_cast<int>(100.0 * lo + 0.5));
  if (s.devices.size() > 1 && static_cast<int>(100.0 * hi + 0.5) != static_cast<int>(100.0 * lo + 0.5)) {
    busy += "-" + std::to_string(static_cast<int>(100.0 * hi + 0.5));
  }
  std::snprintf(buf, sizeof buf,
                "Well tuned: no finding above %.0f%% of the window; GPU%s busy %s%% of the window, "
                "communication %.0f%% on top of compute",
                floor_pct, s.devices.size() > 1 ? "s" : "", busy.c_str(), Pct(comm, window));
  return buf;
}

}  // namespace internal

std::string DeviceList(const std::vector<uint32_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ids[i]);
    if (j > i) out += (j == i + 1 ? "," : "-") + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

Summary Analyze(const TraceData& data, const AnalysisOptions& options) {
  Summary summary;
  internal::AnalysisContext ctx = internal::BuildContext(data, options);
  summary.window_start_ns = ctx.window_start_ns;
  summary.window_end_ns = ctx.window_end_ns;
  summary.event_count = data.EventCount();
  summary.idle_devices = ctx.idle_devices;
  // Hotspots first: its per-name durations (8 bytes per GPU op and CPU range) are freed
  // before the breakdowns build the idle gaps and launches, so the two are never held at once.
  internal::ComputeHotspots(ctx, &summary);
  internal::ComputeBreakdowns(ctx, &summary);
  internal::ComputeSmProxies(ctx, &summary);
  internal::AttributeHostWaits(ctx, &summary);
  internal::ComputePythonFunctions(ctx, &summary);
  internal::ComputePythonFlame(ctx, &summary);
  internal::ComputeCollectives(ctx, &summary);
  internal::ComputeMeasuredCounters(ctx, &summary);
  internal::ComputeSteps(ctx, &summary);
  internal::ComputeEfficiency(ctx, &summary);
  internal::ComputePhases(ctx, &summary);
  internal::ComputeHostSummary(ctx, &summary);
  internal::DetectAntipatterns(ctx, &summary);
  internal::ComputeMemory(ctx, &summary);
  internal::ComputeTimelines(ctx, &summary);
  internal::WriteVerdicts(options, &summary);
  return summary;
}

}  // namespace kairos
