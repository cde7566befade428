// File: summary_markdown.cc
// Layer: kairos_analysis. SummaryToMarkdown: the summary as GitHub-flavoured markdown for an
// issue or a pull request: verdict first, per-GPU table, steps, hotspot tables, findings.
// Names are put in code spans with pipes escaped so a kernel name cannot break a table.
// Threading: pure function.
#include <cstdio>
#include <string>

#include "analysis/format.h"
#include "analysis/summary.h"

namespace kairos {
namespace {

std::string Code(const std::string& name) {
  std::string out = "`";
  size_t n = 0;
  for (char c : name) {
    if (++n > 100) {
      out += "...";
      break;
    }
    if (c == '|') out += "\\|";
    else if (c == '`') out += '\'';
    else if (c == '\n' || c == '\r' || c == '\t') out += ' ';
    else out += c;
  }
  return out + "`";
}

std::string Pct1(int64_t part, int64_t whole) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", Percent(part, whole));
  return b;
}

void Table(std::string* out, const char* title, const std::vector<Hotspot>& rows) {
  if (rows.empty()) return;
  *out += std::string("\n### ") + title + "\n\n| total | count | mean | median | p95 | name |\n"
          "|---:|---:|---:|---:|---:|---|\n";
  for (const Hotspot& h : rows) {
    *out += "| " + FormatDuration(h.stats.total_ns) + " | " + std::to_string(h.stats.count) + " | " +
            FormatDuration(h.stats.mean_ns) + " | " + FormatDuration(h.stats.median_ns) + " | " +
            FormatDuration(h.stats.p95_ns) + " | " + Code(h.name) + " |\n";
  }
}

// Every finding: title, id, share, evidence, examples, advice.
void FindingsMarkdown(const Summary& s, std::string* out) {
  *out += "\n### Findings (" + std::to_string(s.findings.size()) + ")\n";
  if (s.findings.empty()) *out += "\nNone above the reporting floor.\n";
  for (const Finding& f : s.findings) {
    *out += "\n#### " + f.title;
    if (f.device >= 0) *out += " (GPU " + std::to_string(f.device) + ")";
    char share[64];
    std::snprintf(share, sizeof share, "%.1f%%", 100.0 * f.window_share);
    *out += "\n\n`" + f.id + "` · concerns " + FormatDuration(f.time_ns) + " (" + share +
           " of the window) · confidence " + f.confidence + "\n\n";
    std::string ev;
    for (const auto& [k, v] : f.evidence) ev += (ev.empty() ? "" : ", ") + k + "=" + FormatNumber(v);
    *out += "- evidence: " + ev + "\n";
    for (const EventRef& r : f.examples) {
      *out += "- e.g. id " + std::to_string(r.id) + " at +" + FormatDuration(r.ts_ns - s.window_start_ns) + ": " +
             Code(r.name) + "\n";
    }
    *out += "- advice: " + f.recommendation + "\n";
  }
}

// NCCL collectives with their bandwidths.
void CollectivesMarkdown(const Summary& s, std::string* out) {
  if (!s.collectives.empty()) {
    *out += "\n### NCCL collectives\n\n| GPU | collective | dtype | group | calls | time | per call | algbw GB/s | busbw GB/s | best busbw |\n"
           "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const CollectiveSummary& c : s.collectives) {
      const bool sized = c.busbw_gbps >= 0;
      *out += "| " + std::to_string(c.device) + " | " + c.name + " | " + c.dtype + " | " +
             std::to_string(c.group_size) + " | " + std::to_string(c.calls) + " | " +
             FormatDuration(c.time_ns) + " | " + (sized ? FormatBytes(c.median_bytes) : "?") + " | " +
             (sized ? FormatNumber(c.algbw_gbps) : "?") + " | " + (sized ? FormatNumber(c.busbw_gbps) : "?") + " | " +
             (c.best_busbw_gbps >= 0 ? FormatNumber(c.best_busbw_gbps) : "?") + " |\n";
    }
    *out += "\nA collective kernel's time includes waiting for the slowest rank: on a rank that waits, "
           "these bandwidths are lower bounds.\n";
  }
}

// Peak memory per device and what was not freed.
void MemoryMarkdown(const Summary& s, std::string* out) {
  if (!s.memory.empty()) {  // [memory] events (docs/MEMORY.md)
    *out += "\n### Memory\n\n| memory | peak allocated | of device | peak reserved | step | at | not freed |\n"
           "|---|---:|---:|---:|---:|---|---:|\n";
    for (const MemorySummary& m : s.memory) {
      const auto bytes = [](int64_t b) { return FormatBytes(static_cast<uint64_t>(b > 0 ? b : 0)); };
      *out += "| " + (m.device_type == 1 ? "GPU " + std::to_string(m.device) : std::string("host")) +
             (m.allocator ? " (allocator)" : "") + " | " +
             bytes(m.peak_allocated) + " | " +
             (m.peak_share >= 0 ? FormatNumber(100.0 * m.peak_share) + "%" : std::string("?")) + " | " +
             bytes(m.peak_reserved) + " | " + (m.peak_step >= 0 ? std::to_string(m.peak_step) : std::string("-")) +
             " | " + Code(m.peak_site) + " | " + std::to_string(m.not_freed_count) + " (" +
             bytes(m.not_freed_bytes) + ") |\n";
    }
    if (s.memory_devices_left_out > 0) {
      *out += "\n" + std::to_string(s.memory_devices_left_out) + " more devices (" +
             std::to_string(s.memory_events_left_out) + " [memory] events) left out; at most " +
             std::to_string(kMaxMemoryDevices) + " are summarised.\n";
    }
  }
}

}  // namespace

std::string SummaryToMarkdown(const Summary& s) {
  std::string out = "## kairos summary\n\n**" + s.verdict + "**\n\n";
  out += "Window " + FormatDuration(s.window_end_ns - s.window_start_ns) + ", " +
         std::to_string(s.event_count) + " events.\n\n";
  for (const std::string& v : s.verdicts) out += "- " + v + "\n";
  if (s.compute.present) {  // docs/FLOPS.md
    const ComputeSummary& c = s.compute;
    out += "\n**Compute:** MFU " + (c.mfu >= 0 ? FormatNumber(100 * c.mfu) + "%" : std::string("unknown")) +
           ", " + (c.kernel_tflops >= 0 ? FormatNumber(c.kernel_tflops) : std::string("?")) +
           " TFLOP/s in the operators' kernels, " +
           (c.window_tflops >= 0 ? FormatNumber(c.window_tflops) : std::string("?")) +
           " TFLOP/s over the window.\n";
  }
  if (!s.devices.empty()) {
    out += "\n| GPU | busy | compute | communication | memcpy | memset | idle | host wait | kernel wait | kernels |\n"
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const DeviceSummary& d : s.devices) {
      out += "| " + std::to_string(d.device) + " | " + Pct1(d.busy_ns, d.window_ns) + " | " +
             Pct1(d.compute_ns, d.window_ns) + " | " + Pct1(d.communication_ns, d.window_ns) + " | " +
             Pct1(d.memcpy_ns, d.window_ns) + " | " + Pct1(d.memset_ns, d.window_ns) + " | " +
             Pct1(d.idle_ns, d.window_ns) + " | " + Pct1(d.idle_host_wait_ns, d.window_ns) + " | " +
             Pct1(d.idle_kernel_wait_ns, d.window_ns) + " | " + std::to_string(d.kernel_count) + " |\n";
    }
    for (const DeviceSummary& d : s.devices) {
      if (d.pm_samples == 0) continue;
      auto pct = [](double v) {
        char b[32];
        std::snprintf(b, sizeof b, "%.1f%%", v);
        return v >= 0 ? std::string(b) : std::string("?");
      };
      out += "\nGPU " + std::to_string(d.device) + " measured (PM sampling): SM efficiency " +
             pct(d.measured_sm_active_pct) + ", achieved occupancy " + pct(d.measured_occupancy_pct) +
             " (estimate from launch configurations " + pct(d.est_occupancy_pct) + "), tensor active " +
             pct(d.measured_tensor_active_pct) + ", DRAM throughput " +
             pct(d.measured_dram_throughput_pct) + ".\n";
    }
  }
  if (s.steps.count > 0) {
    out += "\n**Steps:** " + std::to_string(s.steps.count) + ", median " + FormatDuration(s.steps.median_ns) +
           ", mean " + FormatDuration(s.steps.mean_ns) + ", stdev " + FormatDuration(s.steps.stdev_ns) +
           ", min " + FormatDuration(s.steps.min_ns) + ", max " + FormatDuration(s.steps.max_ns) + "\n";
    for (const StepOutlier& o : s.steps.outliers) {
      out += "- outlier: `ProfilerStep#" + std::to_string(o.step) + "` took " + FormatDuration(o.duration_ns) + "\n";
    }
  }
  FindingsMarkdown(s, &out);
  Table(&out, "Top kernels", s.top_kernels);
  CollectivesMarkdown(s, &out);
  Table(&out, "Top memcpys", s.top_memcpys);
  Table(&out, "Top CPU ranges", s.top_cpu_ranges);
  MemoryMarkdown(s, &out);
  return out;
}

}  // namespace kairos
