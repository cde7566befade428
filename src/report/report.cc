// File: report.cc — see report.h. One pass of Analyze() per trace (with the timeline and
// step series the page needs), then the sections in reading order. Every section is a
// <section id=...> so tests and readers can find it; every chart is pre-aggregated.
#include "report/report.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "analysis/emit_summary.h"
#include "analysis/format.h"
#include "analysis/kernel_class.h"
#include "json/json_shorten.h"
#include "report/cross_rank_html.h"
#include "model/memory_totals.h"
#include "report/html.h"
#include "report/python_flame_html.h"

namespace kairos {
namespace {

using report::Escape;
using report::EscapeShort;
using report::Point;
using report::PythonFlameHtml;

constexpr const char* kCompute = "#4e79a7";
constexpr const char* kComm = "#f28e2b";
constexpr const char* kMemcpy = "#59a14f";
constexpr const char* kMemset = "#76b7b2";
constexpr const char* kIdle = "#d9d9d9";
constexpr const char* kHostWait = "#e15759";
constexpr const char* kKernelWait = "#edc948";
constexpr const char* kOtherIdle = "#bab0ac";
constexpr const char* kLineColors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                       "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};

struct Analysed {
  std::string label;
  const TraceData* data;
  Summary summary;
};

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

std::string Pct1(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", v);
  return b;
}

std::string Prefix(const std::vector<Analysed>& all, const Analysed& a) {
  return all.size() > 1 ? Escape(a.label) + ": " : std::string();
}

const char* kCss = R"CSS(
:root{--fg:#1d2327;--muted:#5f6b76;--line:#e3e7eb;--bg:#fff;--card:#f7f9fb}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:1180px;margin:0 auto;padding:20px 28px 60px}
h1{font-size:26px;margin:0 0 4px}
h2{font-size:20px;margin:34px 0 10px;padding-bottom:6px;border-bottom:2px solid var(--line)}
h3{font-size:16px;margin:18px 0 6px}
.meta{color:var(--muted);margin:0 0 8px}
.verdict{font-size:19px;font-weight:600;padding:14px 18px;border-radius:8px;background:#eef5ee;border-left:6px solid #59a14f}
.verdict.warn{background:#fdf3e8;border-left-color:#f28e2b}
ul.verdicts{margin:8px 0 0;padding-left:20px;color:var(--muted)}
.finding{border:1px solid var(--line);border-radius:8px;padding:12px 16px;margin:12px 0;background:var(--card)}
.finding h3{margin:0 0 6px}
.badge{display:inline-block;font-size:12px;font-weight:600;padding:1px 8px;border-radius:10px;margin-right:6px;background:#e3e7eb}
.badge.high{background:#f8d7d7}.badge.medium{background:#fbe8c8}.badge.low{background:#e3e7eb}
.advice{margin:8px 0 0}
.evidence{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px;color:#333}
table{border-collapse:collapse;width:100%;font-size:14px;margin:6px 0 10px}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.name{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px;word-break:break-all}
.bar{background:#e9eef3;height:12px;border-radius:3px;min-width:120px}
.bar>span{display:block;height:12px;border-radius:3px;background:#4e79a7}
.tag{font-size:11px;color:var(--muted);border:1px solid var(--line);border-radius:8px;padding:0 6px;margin-right:6px;font-family:system-ui,sans-serif}
svg.chart{width:100%;height:auto;display:block;background:#fff}
svg.chart .ct{font-size:15px;font-weight:600;fill:#1d2327}
svg.chart .ax{font-size:13px;fill:#5f6b76}
svg.chart .grid{stroke:#e3e7eb;stroke-width:1}
svg.chart .mark{fill:#e15759;stroke:#fff;stroke-width:1.5}
svg.chart .hbar{fill:#4e79a7}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:13px;color:var(--muted);margin:4px 0 12px}
.legend i{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.sbar{display:flex;height:22px;border-radius:4px;overflow:hidden;background:#eee;margin:4px 0}
.sbar>span{display:block;height:22px}
.note{color:var(--muted);font-size:14px}
.flame{position:relative;margin:6px 0 12px;font-size:12px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.flame>.fl{position:absolute;height:17px;line-height:17px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;box-sizing:border-box;border:1px solid #fff;border-radius:2px;padding:0 3px;background:#c9ced4;color:#1d2327}
.flame>.fl.user{background:#8cb1d9}.flame>.fl.root{background:#e3e7eb}
details>summary{cursor:pointer;font-weight:600;margin:10px 0}
)CSS";

// The top-line compute metric under the verdict when the trace has FLOPs (docs/FLOPS.md):
// achieved TFLOP/s and MFU, or why MFU is unknown.
void ComputeLine(std::string* out, const ComputeSummary& c) {
  if (!c.present) return;
  std::string line = "<p class=\"compute\"><b>Compute:</b> ";
  if (c.mfu >= 0) line += "MFU " + FormatNumber(100 * c.mfu) + "%, ";
  if (c.kernel_tflops >= 0) line += FormatNumber(c.kernel_tflops) + " TFLOP/s in the operators' kernels, ";
  line += (c.window_tflops >= 0 ? FormatNumber(c.window_tflops) : std::string("?")) +
          " TFLOP/s over the window (" + FormatNumber(static_cast<double>(c.total_flops)) +
          " FLOPs in " + std::to_string(c.op_count) + " operators)";
  if (c.mfu < 0 && c.gpu_flops > 0)
    line += "; MFU unknown: " + Escape(c.device_name.empty() ? std::string("no device") : c.device_name) +
            " or a dtype is not in the peak table (KAIROS_PEAK_TFLOPS sets one)";
  *out += line + "</p>";
}

void VerdictSection(std::string* out, const std::vector<Analysed>& all) {
  *out += "<section id=\"verdict\"><h2>Verdict</h2>";
  for (const Analysed& a : all) {
    const bool warn = !a.summary.findings.empty() || a.summary.verdict.rfind("No finding", 0) == 0;
    *out += "<div class=\"verdict" + std::string(warn ? " warn" : "") + "\">" + Prefix(all, a) +
            Escape(a.summary.verdict) + "</div><ul class=\"verdicts\">";
    for (const std::string& v : a.summary.verdicts) *out += "<li>" + Escape(v) + "</li>";
    *out += "</ul>";
    ComputeLine(out, a.summary.compute);
  }
  *out += "</section>";
}

void FindingsSection(std::string* out, const std::vector<Analysed>& all, const ReportOptions& o) {
  char floor[32];
  std::snprintf(floor, sizeof floor, "%.0f%%", 100.0 * o.analysis.min_window_share);
  *out += "<section id=\"findings\"><h2>Findings</h2><p class=\"note\">Largest first. A finding is shown "
          "only when it concerns at least " + std::string(floor) +
          " of the window; confidence says how directly the trace shows the cause.</p>";
  size_t shown = 0;
  for (const Analysed& a : all) {
    for (const Finding& f : a.summary.findings) {
      ++shown;
      *out += "<div class=\"finding\"><h3>" + Prefix(all, a) + Escape(f.title);
      if (f.device >= 0) *out += " &middot; GPU " + std::to_string(f.device);
      *out += "</h3><span class=\"badge " + Escape(f.confidence) + "\">" + Escape(f.confidence) +
              " confidence</span><span class=\"badge\">" + Pct1(100.0 * f.window_share) +
              " of the window (" + Escape(FormatDuration(f.time_ns)) + ")</span><span class=\"tag\">" +
              Escape(f.id) + "</span>";
      std::string ev;
      for (const auto& [k, v] : f.evidence) ev += (ev.empty() ? "" : ", ") + k + "=" + FormatNumber(v);
      *out += "<p class=\"evidence\">" + Escape(ev) + "</p>";
      if (!f.examples.empty()) {
        *out += "<p class=\"note\">Examples: ";
        for (size_t i = 0; i < f.examples.size(); ++i) {
          const EventRef& r = f.examples[i];
          *out += (i ? "; " : "") + EscapeShort(r.name, 80) + " (id " + std::to_string(r.id) + ", +" +
                  Escape(FormatDuration(r.ts_ns - a.summary.window_start_ns)) + ")";
        }
        *out += "</p>";
      }
      *out += "<p class=\"advice\"><b>Advice:</b> " + Escape(f.recommendation) + "</p></div>";
    }
  }
  if (shown == 0) *out += "<p>No finding above the reporting floor.</p>";
  *out += "</section>";
}

void UtilisationSection(std::string* out, const std::vector<Analysed>& all, const ReportOptions& o) {
  *out += "<section id=\"utilisation\"><h2>GPU utilisation over time</h2><p class=\"note\">Share of each "
          "time bin the device was busy, split by priority: compute, then communication not hidden by "
          "compute, then memory copies and sets.</p>";
  size_t charts = 0, skipped = 0;
  for (const Analysed& a : all) {
    const Summary& s = a.summary;
    for (const DeviceTimeline& t : s.timelines) {
      if (charts >= o.max_device_charts) {
        ++skipped;
        continue;
      }
      ++charts;
      std::vector<report::Series> layers(3);
      layers[0] = {"compute", kCompute, std::vector<double>(t.compute.begin(), t.compute.end())};
      layers[1] = {"communication", kComm, std::vector<double>(t.communication.begin(), t.communication.end())};
      layers[2] = {"memcpy / memset", kMemcpy, std::vector<double>(t.memory.begin(), t.memory.end())};
      const std::string title = (all.size() > 1 ? a.label + ", " : std::string()) + "GPU " +
                                std::to_string(t.device) + " (bins of " + FormatDuration(t.bin_ns) + ")";
      *out += report::StackedAreaSvg(layers, 0, Ms(s.window_end_ns - s.window_start_ns), title);
    }
    if (!s.idle_devices.empty()) {
      *out += "<p class=\"note\">" + Prefix(all, a) + (s.idle_devices.size() == 1 ? "GPU " : "GPUs ") +
              DeviceList(s.idle_devices) + ": no GPU work in the window.</p>";
    }
  }
  if (skipped > 0) *out += "<p class=\"note\">" + std::to_string(skipped) + " more devices not drawn.</p>";
  if (charts == 0) *out += "<p>No GPU work in the window.</p>";
  *out += "</section>";
}

void BreakdownSection(std::string* out, const std::vector<Analysed>& all) {
  *out += "<section id=\"breakdown\"><h2>Time and idle breakdown</h2><h3>Where the window went</h3>";
  std::string idle = "<h3>Why the GPU was idle (share of idle time)</h3>";
  for (const Analysed& a : all) {
    for (const DeviceSummary& d : a.summary.devices) {
      const std::string who = "<p class=\"note\">" + Prefix(all, a) + "GPU " + std::to_string(d.device) + "</p>";
      const auto w = static_cast<double>(d.window_ns);
      *out += who + report::StackedBarHtml({{"compute", kCompute, static_cast<double>(d.compute_ns)},
                                            {"communication", kComm, static_cast<double>(d.communication_ns)},
                                            {"memcpy", kMemcpy, static_cast<double>(d.memcpy_ns)},
                                            {"memset", kMemset, static_cast<double>(d.memset_ns)},
                                            {"idle", kIdle, static_cast<double>(d.idle_ns)}},
                                           w);
      idle += who + report::StackedBarHtml({{"host wait", kHostWait, static_cast<double>(d.idle_host_wait_ns)},
                                            {"kernel wait", kKernelWait, static_cast<double>(d.idle_kernel_wait_ns)},
                                            {"other", kOtherIdle, static_cast<double>(d.idle_other_ns)}},
                                           static_cast<double>(d.idle_ns));
      if (!d.host_wait_top_range.empty()) {
        idle += "<p class=\"note\">Host busiest in <code>" + EscapeShort(d.host_wait_top_range, 80) + "</code>";
        if (!d.host_wait_top_python.empty())  // with Python stacks: the user's line
          idle += " (Python: <code>" + EscapeShort(d.host_wait_top_python, 120) + "</code>)";
        idle += " while the GPU waited.</p>";
      }
    }
  }
  *out += idle + "<h3>Kernel time by class</h3><p class=\"note\">Classes from kernel names and launch "
          "shapes (docs/SUMMARY.md); occupancy and concurrency findings skip communication, library "
          "GEMM/attention and persistent kernels.</p><table><tr><th>device</th>";
  for (int c = 0; c < kNumKernelClasses; ++c) *out += std::string("<th class=\"n\">") + KernelClassId(static_cast<KernelClass>(c)) + "</th>";
  *out += "</tr>";
  for (const Analysed& a : all) {
    for (const DeviceSummary& d : a.summary.devices) {
      int64_t total = 0;
      for (int64_t v : d.class_kernel_ns) total += v;
      *out += "<tr><td>" + Prefix(all, a) + "GPU " + std::to_string(d.device) + "</td>";
      for (int64_t v : d.class_kernel_ns) *out += "<td class=\"n\">" + Pct1(Percent(v, total)) + "</td>";
      *out += "</tr>";
    }
  }
  *out += "</table></section>";
}

// Where each step went (docs/SUMMARY.md, "Step phases"): the mean split, then one stacked
// bar per step (the first kMaxPhaseBars), each bar the step's whole duration.
constexpr size_t kMaxPhaseBars = 60;
// Boxes of the Python flame graph per trace (about 250 bytes of page each; the analysis drops
// nodes under 0.2% of all Python time first).
constexpr size_t kReportFlameNodes = 300;
constexpr const char* kPhaseColors[kNumPhases] = {"#e15759", "#59a14f", "#f28e2b", "#4e79a7", "#bab0ac"};
std::vector<report::Segment> PhaseSegments(const std::array<int64_t, kNumPhases>& v) {
  std::vector<report::Segment> s;
  for (int k = 0; k < kNumPhases; ++k)
    s.push_back({std::string(PhaseId(k)), kPhaseColors[k], static_cast<double>(v[static_cast<size_t>(k)])});
  return s;
}
void PhasesBlock(std::string* out, const std::vector<Analysed>& all) {
  bool any = false;
  for (const Analysed& a : all) {
    const PhaseSummary& p = a.summary.phases;
    if (!p.present || !PhasesRecognised(p)) continue;  // all `other`: nothing to split by
    if (!any) *out += "<h3>Where each step went (host)</h3><p class=\"note\">Data loading, optimizer, "
                      "backward, forward, other: each instant of a step in the first that covers it "
                      "(docs/SUMMARY.md).</p>";
    any = true;
    int64_t mean_total = 0;
    for (int64_t v : p.mean_host_ns) mean_total += v;
    *out += "<p class=\"note\">" + Prefix(all, a) + "mean of " + std::to_string(p.steps.size()) +
            " steps</p>" + report::StackedBarHtml(PhaseSegments(p.mean_host_ns), static_cast<double>(mean_total));
    *out += "<details><summary>" + Prefix(all, a) + "per step</summary>";
    for (size_t i = 0; i < p.steps.size() && i < kMaxPhaseBars; ++i) {
      const StepPhases& r = p.steps[i];
      *out += "<p class=\"note\">ProfilerStep#" + std::to_string(r.step) + ": " +
              Escape(FormatDuration(r.duration_ns)) + "</p>" +
              report::StackedBarHtml(PhaseSegments(r.host_ns), static_cast<double>(r.duration_ns));
    }
    *out += "</details>";
  }
}

void StepsSection(std::string* out, const std::vector<Analysed>& all, const ReportOptions& o) {
  *out += "<section id=\"steps\"><h2>Step times</h2>";
  std::vector<std::vector<Point>> lines;
  std::vector<std::string> colors, labels;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const Analysed& a : all) {
    const Summary& s = a.summary;
    if (s.step_series.empty()) continue;
    std::vector<Point> pts;
    pts.reserve(s.step_series.size());
    size_t oi = 0;
    for (const StepSample& st : s.step_series) {
      Point p;
      p.x = static_cast<double>(st.step);
      p.y = Ms(st.duration_ns);
      for (oi = 0; oi < s.steps.outliers.size(); ++oi) {
        if (s.steps.outliers[oi].step == st.step && s.steps.outliers[oi].start_ns == st.start_ns) {
          p.mark = true;
          p.tip = (all.size() > 1 ? a.label + ", " : std::string()) + "ProfilerStep#" + std::to_string(st.step) +
                  ": " + FormatDuration(st.duration_ns) + " (outlier)";
          break;
        }
      }
      pts.push_back(std::move(p));
      lo = std::min(lo, st.duration_ns);
      hi = std::max(hi, st.duration_ns);
    }
    std::stable_sort(pts.begin(), pts.end(), [](const Point& x, const Point& y) { return x.x < y.x; });
    lines.push_back(report::Downsample(pts, o.max_series_points));
    colors.push_back(kLineColors[(lines.size() - 1) % 8]);
    labels.push_back(all.size() > 1 ? a.label : std::string());
    *out += "<p class=\"note\">" + Prefix(all, a) + std::to_string(s.steps.count) + " steps: median " +
            Escape(FormatDuration(s.steps.median_ns)) + ", mean " + Escape(FormatDuration(s.steps.mean_ns)) +
            ", stdev " + Escape(FormatDuration(s.steps.stdev_ns)) + ", min " +
            Escape(FormatDuration(s.steps.min_ns)) + ", max " + Escape(FormatDuration(s.steps.max_ns)) + "; " +
            std::to_string(s.steps.outliers.size()) + " outlier" + (s.steps.outliers.size() == 1 ? "" : "s") +
            " (red).</p>";
  }
  if (lines.empty()) {
    *out += "<p>No complete ProfilerStep ranges in the trace.</p></section>";
    return;
  }
  std::vector<uint64_t> counts(std::max<size_t>(o.histogram_bins, 1), 0);
  const double span = static_cast<double>(hi - lo);
  for (const Analysed& a : all) {
    for (const StepSample& st : a.summary.step_series) {
      size_t b = span > 0 ? static_cast<size_t>(static_cast<double>(st.duration_ns - lo) / span *
                                                static_cast<double>(counts.size()))
                          : 0;
      counts[std::min(b, counts.size() - 1)]++;
    }
  }
  *out += report::LineSvg(lines, colors, labels, "", "ms", "Step duration by step number (outliers in red)") +
          report::HistogramSvg(counts, Ms(lo), Ms(hi == lo ? lo + 1 : hi), "ms", "Step duration histogram");
  PhasesBlock(out, all);
  *out += "</section>";
}

void HotspotTable(std::string* out, const std::vector<Hotspot>& rows, bool kernels) {
  if (rows.empty()) {
    *out += "<p class=\"note\">None in the window.</p>";
    return;
  }
  const int64_t top = std::max<int64_t>(rows.front().stats.total_ns, 1);
  *out += "<table><tr><th>name</th><th class=\"n\">total</th><th></th><th class=\"n\">count</th><th "
          "class=\"n\">mean</th><th class=\"n\">median</th><th class=\"n\">p95</th></tr>";
  for (const Hotspot& h : rows) {
    char w[32];
    std::snprintf(w, sizeof w, "%.1f%%", 100.0 * static_cast<double>(h.stats.total_ns) / static_cast<double>(top));
    *out += "<tr><td class=\"name\" title=\"" + EscapeShort(h.name, 2000) + "\">";
    if (kernels) *out += std::string("<span class=\"tag\">") + KernelClassId(ClassifyKernelName(h.name)) + "</span>";
    *out += EscapeShort(h.name, 140) + "</td><td class=\"n\">" + Escape(FormatDuration(h.stats.total_ns)) +
            "</td><td><div class=\"bar\"><span style=\"width:" + w + "\"></span></div></td><td class=\"n\">" +
            std::to_string(h.stats.count) + "</td><td class=\"n\">" + Escape(FormatDuration(h.stats.mean_ns)) +
            "</td><td class=\"n\">" + Escape(FormatDuration(h.stats.median_ns)) + "</td><td class=\"n\">" +
            Escape(FormatDuration(h.stats.p95_ns)) + "</td></tr>";
  }
  *out += "</table>";
}

// One block per trace: open for the first, collapsed for the others.
template <typename Fn>
void PerTrace(std::string* out, const std::vector<Analysed>& all, Fn body) {
  for (size_t i = 0; i < all.size(); ++i) {
    if (all.size() > 1) *out += std::string("<details") + (i == 0 ? " open" : "") + "><summary>" + Escape(all[i].label) + "</summary>";
    body(all[i]);
    if (all.size() > 1) *out += "</details>";
  }
}

void HotspotSections(std::string* out, const std::vector<Analysed>& all) {
  *out += "<section id=\"kernels\"><h2>Top kernels</h2>";
  PerTrace(out, all, [&](const Analysed& a) { HotspotTable(out, a.summary.top_kernels, true); });
  *out += "<h3>Top memcpys</h3>";
  PerTrace(out, all, [&](const Analysed& a) { HotspotTable(out, a.summary.top_memcpys, false); });
  *out += "</section><section id=\"cpu-ranges\"><h2>Top CPU ranges</h2>";
  PerTrace(out, all, [&](const Analysed& a) { HotspotTable(out, a.summary.top_cpu_ranges, false); });
  *out += "</section>";
  // Python stacks (PROFILE_WITH_STACK): only when a trace has Python frames.
  bool python = false;
  for (const Analysed& a : all) python |= !a.summary.top_python_functions.empty();
  if (!python) return;
  *out += "<section id=\"python\"><h2>Top Python functions</h2><p class=\"note\">By total time "
          "(a recursive function counted once); self = not inside another Python frame; GPU launched = "
          "kernels and copies whose launch call ran under it.</p>";
  PerTrace(out, all, [&](const Analysed& a) {
    if (a.summary.top_python_functions.empty()) {
      *out += "<p class=\"note\">No Python frames in this trace.</p>";
      return;
    }
    const int64_t top = std::max<int64_t>(a.summary.top_python_functions.front().total_ns, 1);
    *out += "<table><tr><th>function</th><th class=\"n\">total</th><th></th><th class=\"n\">self</th>"
            "<th class=\"n\">calls</th><th class=\"n\">GPU launched</th></tr>";
    for (const PythonFunctionStat& p : a.summary.top_python_functions) {
      char w[32];
      std::snprintf(w, sizeof w, "%.1f%%", 100.0 * static_cast<double>(p.total_ns) / static_cast<double>(top));
      *out += "<tr><td class=\"name\" title=\"" + EscapeShort(p.name, 2000) + "\">" + EscapeShort(p.name, 140) +
              "</td><td class=\"n\">" + Escape(FormatDuration(p.total_ns)) +
              "</td><td><div class=\"bar\"><span style=\"width:" + w + "\"></span></div></td><td class=\"n\">" +
              Escape(FormatDuration(p.self_ns)) + "</td><td class=\"n\">" + std::to_string(p.calls) +
              "</td><td class=\"n\">" + Escape(FormatDuration(p.gpu_ns)) + "</td></tr>";
    }
    *out += "</table>";
    PythonFlameHtml(a.summary.python_flame, a.summary.python_flame_cut, out);
  });
  *out += "</section>";
}

// Bucket means of one counter track, at most `max_points` (host samples are regular, so a
// mean per bucket keeps the shape).
std::vector<Point> CounterSeries(const TraceData& data, uint32_t track, int64_t origin, size_t max_points) {
  std::vector<Point> pts;
  for (const CounterSample& s : data.counter_samples) {
    if (s.track == track) pts.push_back({Ms(s.ts_ns - origin), s.value, false, {}});
  }
  if (pts.size() <= max_points || max_points == 0) return pts;
  std::vector<Point> out;
  const size_t per = (pts.size() + max_points - 1) / max_points;
  for (size_t i = 0; i < pts.size(); i += per) {
    const size_t end = std::min(pts.size(), i + per);
    double x = 0, y = 0;
    for (size_t k = i; k < end; ++k) {
      x += pts[k].x;
      y += pts[k].y;
    }
    const double n = static_cast<double>(end - i);
    out.push_back({x / n, y / n, false, {}});
  }
  return out;
}

// Device memory over time (the per-device counter tracks of [memory] events, docs/MEMORY.md)
// and the allocations the window did not free, by site.
void MemorySection(std::string* out, const std::vector<Analysed>& all, const ReportOptions& o) {
  bool any = false;
  for (const Analysed& a : all) any = any || !a.summary.memory.empty();
  if (!any) return;
  *out += "<section id=\"memory\"><h2>Memory</h2>";
  PerTrace(out, all, [&](const Analysed& a) {
    const TraceData& data = *a.data;
    for (const MemorySummary& m : a.summary.memory) {
      const std::string who = (m.device_type == 1 ? "GPU " + std::to_string(m.device) : std::string("Host")) +
                              (m.allocator ? " (allocator)" : "");
      const char* allocated_track = m.allocator ? kAllocatorAllocatedCounter : kMemoryAllocatedCounter;
      const char* reserved_track = m.allocator ? kAllocatorReservedCounter : kMemoryReservedCounter;
      std::vector<std::vector<Point>> lines;
      std::vector<std::string> labels, colors;
      for (uint32_t t = 0; t < data.counter_tracks.size() && m.device_type == 1; ++t) {
        const CounterTrack& c = data.counter_tracks[t];
        if (c.device != m.device || (c.name != allocated_track && c.name != reserved_track)) continue;
        lines.push_back(CounterSeries(data, t, a.summary.window_start_ns, o.max_series_points / 2));
        labels.push_back(c.name);
        colors.push_back(kLineColors[(lines.size() - 1) % 8]);
      }
      *out += "<p class=\"note\">" + Escape(who) + ": peak " +
              Escape(FormatBytes(static_cast<uint64_t>(std::max<int64_t>(0, m.peak_allocated)))) + " allocated";
      if (m.peak_share >= 0) *out += " (" + Pct1(100.0 * m.peak_share) + " of the device)";
      if (m.peak_step >= 0) *out += " in step " + std::to_string(m.peak_step);
      *out += " at &quot;" + Escape(m.peak_site) + "&quot;";
      if (!m.peak_python.empty()) *out += " (Python: " + Escape(m.peak_python) + ")";
      *out += "; " + std::to_string(m.not_freed_count) +
              " allocations (" + Escape(FormatBytes(static_cast<uint64_t>(std::max<int64_t>(0, m.not_freed_bytes)))) +
              ") not freed in the window.</p>";
      if (!lines.empty()) *out += report::LineSvg(lines, colors, labels, "ms", "bytes", who + " memory over time");
      if (!m.not_freed_sites.empty()) {
        *out += "<table><tr><th>Not freed, by site</th><th class=\"n\">Count</th><th class=\"n\">Bytes</th></tr>";
        for (const MemorySite& site : m.not_freed_sites) {
          *out += "<tr><td>" + Escape(site.name) + (site.python.empty() ? "" : " at " + Escape(site.python)) +
                  "</td><td class=\"n\">" + std::to_string(site.count) +
                  "</td><td class=\"n\">" + Escape(FormatBytes(static_cast<uint64_t>(std::max<int64_t>(0, site.bytes)))) +
                  "</td></tr>";
        }
        *out += "</table>";
      }
    }
    if (a.summary.memory_devices_left_out > 0) {
      *out += "<p class=\"note\">" + std::to_string(a.summary.memory_devices_left_out) + " more devices (" +
              std::to_string(a.summary.memory_events_left_out) + " [memory] events) left out; at most " +
              std::to_string(kMaxMemoryDevices) + " are summarised.</p>";
    }
  });
  *out += "</section>";
}

void HostSection(std::string* out, const std::vector<Analysed>& all, const ReportOptions& o) {
  *out += "<section id=\"host\"><h2>Host metrics</h2>";
  struct Group {
    const char* title;
    const char* unit;
    std::vector<const char*> tracks;
  };
  const Group groups[] = {
      {"CPU (all cores) and this process", "%", {"cpu.util", "cpu.iowait", "process.cpu"}},
      {"Memory", "bytes", {"mem.used", "process.rss"}},
      {"Disk", "bytes/s", {"disk.read", "disk.write"}},
      {"Network", "bytes/s", {"net.rx", "net.tx"}},
  };
  PerTrace(out, all, [&](const Analysed& a) {
    const TraceData& data = *a.data;
    size_t drawn = 0;
    std::string charts;
    for (const Group& g : groups) {
      std::vector<std::vector<Point>> lines;
      std::vector<std::string> labels, colors;
      for (const char* name : g.tracks) {
        for (uint32_t t = 0; t < data.counter_tracks.size(); ++t) {
          if (data.counter_tracks[t].name != name) continue;
          lines.push_back(CounterSeries(data, t, a.summary.window_start_ns, o.max_series_points / 2));
          labels.push_back(name);
          colors.push_back(kLineColors[(lines.size() - 1) % 8]);
        }
      }
      if (lines.empty()) continue;
      ++drawn;
      charts += report::LineSvg(lines, colors, labels, "ms", g.unit, g.title);
    }
    if (drawn == 0) {
      *out += "<p>No host metrics in this trace (KAIROS_HOST_METRICS_INTERVAL_MS=0 or a foreign trace).</p>";
    } else {
      *out += charts;
    }
  });
  *out += "</section>";
}

void RanksSection(std::string* out, const std::vector<Analysed>& all) {
  *out += "<section id=\"ranks\"><h2>Per-rank comparison</h2>";
  if (all.size() < 2) {
    *out += "<p class=\"note\">One trace. Pass one trace per rank (kairos report a.json b.json ...) to "
            "compare ranks.</p></section>";
    return;
  }
  *out += "<table><tr><th>trace</th><th class=\"n\">busy</th><th></th><th class=\"n\">compute</th><th "
          "class=\"n\">communication</th><th class=\"n\">idle</th><th class=\"n\">host wait</th><th "
          "class=\"n\">median step</th><th class=\"n\">findings</th></tr>";
  for (const Analysed& a : all) {
    int64_t busy = 0, comp = 0, comm = 0, idle = 0, host = 0, window = 0;
    for (const DeviceSummary& d : a.summary.devices) {
      busy += d.busy_ns;
      comp += d.compute_ns;
      comm += d.communication_ns;
      idle += d.idle_ns;
      host += d.idle_host_wait_ns;
      window += d.window_ns;
    }
    char w[32];
    std::snprintf(w, sizeof w, "%.1f%%", Percent(busy, window));
    *out += "<tr><td>" + Escape(a.label) + "</td><td class=\"n\">" + w +
            "</td><td><div class=\"bar\"><span style=\"width:" + w + "\"></span></div></td><td class=\"n\">" +
            Pct1(Percent(comp, window)) + "</td><td class=\"n\">" + Pct1(Percent(comm, window)) +
            "</td><td class=\"n\">" + Pct1(Percent(idle, window)) + "</td><td class=\"n\">" +
            Pct1(Percent(host, window)) + "</td><td class=\"n\">" +
            (a.summary.steps.count ? Escape(FormatDuration(a.summary.steps.median_ns)) : std::string("-")) +
            "</td><td class=\"n\">" + std::to_string(a.summary.findings.size()) + "</td></tr>";
  }
  *out += "</table><p class=\"note\">Per trace, summed over its GPUs with work. A rank much busier or "
          "slower than the others is where the job waits.</p></section>";
}

// Longest string in the embedded summaries (the page's title attributes use the same bound).
constexpr size_t kMaxEmbeddedStringBytes = 2000;

// Machine-readable copy of each summary. Every '<' is written \u003c (the same string in
// JSON), so no name can close the script element or open a comment inside it.
void EmbeddedSummaries(std::string* out, const std::vector<Analysed>& all) {
  for (size_t i = 0; i < all.size(); ++i) {
    // Valid UTF-8 (kairos_json's escaper); names cut at kMaxEmbeddedStringBytes, so a
    // foreign trace's megabyte names keep the page small (the summary file has them whole).
    const std::string json =
        ShortenJsonStrings(SummaryToJson(all[i].summary), kMaxEmbeddedStringBytes);
    std::string safe;
    safe.reserve(json.size());
    for (char c : json) {
      if (c == '<') safe += "\\u003c";
      else safe += c;
    }
    *out += "<script type=\"application/json\" id=\"kairos-summary-" + std::to_string(i) + "\">" + safe + "</script>";
  }
}

}  // namespace

AnalysisOptions ReportAnalysisOptions(const ReportOptions& options) {
  AnalysisOptions ao = options.analysis;
  ao.timeline_bins = options.timeline_bins;
  ao.keep_step_series = true;
  ao.python_flame_nodes = kReportFlameNodes;
  return ao;
}

std::string RenderHtmlReport(const std::vector<ReportTrace>& traces, const ReportOptions& options) {
  std::vector<Analysed> all;
  const AnalysisOptions ao = ReportAnalysisOptions(options);
  for (const ReportTrace& t : traces) {
    if (t.data == nullptr) continue;
    all.push_back({t.label, t.data, t.summary != nullptr ? *t.summary : Analyze(*t.data, ao)});
  }
  std::string out;
  out.reserve(256 * 1024);
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
         "content=\"width=device-width, initial-scale=1\"><title>" + Escape(options.title) + "</title><style>";
  out += kCss;
  out += "</style></head><body><main><h1>" + Escape(options.title) + "</h1><p class=\"meta\">";
  for (size_t i = 0; i < all.size(); ++i) {
    const Summary& s = all[i].summary;
    out += (i ? " &middot; " : "") + Escape(all[i].label) + ": window " +
           Escape(FormatDuration(s.window_end_ns - s.window_start_ns)) + ", " + std::to_string(s.event_count) +
           " events";
  }
  out += "</p>";
  VerdictSection(&out, all);
  FindingsSection(&out, all, options);
  UtilisationSection(&out, all, options);
  BreakdownSection(&out, all);
  StepsSection(&out, all, options);
  HotspotSections(&out, all);
  HostSection(&out, all, options);
  MemorySection(&out, all, options);
  RanksSection(&out, all);
  {
    std::vector<std::pair<std::string, const TraceData*>> ranks;
    for (const Analysed& a : all) ranks.emplace_back(a.label, a.data);
    out += CrossRankHtmlSection(ranks);
  }
  out += "<p class=\"note\">Generated by kairos. Metric definitions: docs/SUMMARY.md; this page: "
         "docs/REPORT.md.</p></main>";
  EmbeddedSummaries(&out, all);
  // The one script: marks the page as fully parsed, so a headless browser test can tell a
  // complete render from a truncated or broken one.
  out += "<script>document.documentElement.setAttribute('data-kairos-report','ok');</script></body></html>\n";
  return out;
}

}  // namespace kairos
