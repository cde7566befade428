// File: summary_text.cc
// Layer: kairos_analysis. SummaryToText: the readable end-of-session report (verdicts
// first, then breakdowns, steps, hotspots and findings).
// Threading: pure function.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>

#include "analysis/format.h"
#include "analysis/summary.h"

namespace kairos {
namespace {

void Append(std::string* out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void Append(std::string* out, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  *out += buf;
}

std::string Time(int64_t ns) { return FormatDuration(ns); }
std::string Number(double v) { return FormatNumber(v); }
double Pct(int64_t part, int64_t whole) { return Percent(part, whole); }

void Table(std::string* out, const char* title, const std::vector<Hotspot>& rows) {
  if (rows.empty()) return;
  Append(out, "%s (by total time):\n", title);
  Append(out, "  %10s %8s %10s %10s %10s  %s\n", "total", "count", "mean", "median", "p95", "name");
  for (const Hotspot& h : rows) {
    std::string name = h.name.size() > 80 ? h.name.substr(0, 77) + "..." : h.name;
    Append(out, "  %10s %8llu %10s %10s %10s  %s\n", Time(h.stats.total_ns).c_str(),
           static_cast<unsigned long long>(h.stats.count), Time(h.stats.mean_ns).c_str(),
           Time(h.stats.median_ns).c_str(), Time(h.stats.p95_ns).c_str(), name.c_str());
    if (h.measured_sm_active_pct >= 0 || h.measured_occupancy_pct >= 0) {
      Append(out, "  %10s measured: SM active %s%%, achieved occupancy %s%% (est. %s%%)\n", "",
             h.measured_sm_active_pct >= 0 ? Number(h.measured_sm_active_pct).c_str() : "?",
             h.measured_occupancy_pct >= 0 ? Number(h.measured_occupancy_pct).c_str() : "?",
             h.est_occupancy_pct >= 0 ? Number(h.est_occupancy_pct).c_str() : "?");
    }
  }
}

// One paragraph per GPU: counts, time split, idle split, SM figures, kernel classes.
void DevicesText(const Summary& s, std::string* out) {
  for (const DeviceSummary& d : s.devices) {
    Append(out, "\nGPU %u: %llu kernels, %llu memcpys, %llu memsets\n", d.device,
           static_cast<unsigned long long>(d.kernel_count), static_cast<unsigned long long>(d.memcpy_count),
           static_cast<unsigned long long>(d.memset_count));
    Append(out, "  time:  compute %.1f%%  communication %.1f%%  memcpy %.1f%%  memset %.1f%%  idle %.1f%%\n",
           Pct(d.compute_ns, d.window_ns), Pct(d.communication_ns, d.window_ns),
           Pct(d.memcpy_ns, d.window_ns), Pct(d.memset_ns, d.window_ns), Pct(d.idle_ns, d.window_ns));
    Append(out, "  idle:  host wait %.1f%%  kernel wait %.1f%%  other %.1f%%  (of the window)\n",
           Pct(d.idle_host_wait_ns, d.window_ns), Pct(d.idle_kernel_wait_ns, d.window_ns),
           Pct(d.idle_other_ns, d.window_ns));
    if (d.est_occupancy_pct >= 0 || d.blocks_per_sm >= 0) {
      Append(out, "  SM:    est. achieved occupancy %s%%, blocks per SM %s (kernel-time weighted)\n",
             d.est_occupancy_pct >= 0 ? Number(d.est_occupancy_pct).c_str() : "?",
             d.blocks_per_sm >= 0 ? Number(d.blocks_per_sm).c_str() : "?");
    }
    if (d.pm_samples > 0) {
      auto pct = [](double v) { return v >= 0 ? Number(v) + "%" : std::string("?"); };
      Append(out, "  SM:    measured SM efficiency %s, achieved occupancy %s, tensor active %s, "
             "DRAM throughput %s (PM sampling, %llu samples)\n",
             pct(d.measured_sm_active_pct).c_str(), pct(d.measured_occupancy_pct).c_str(),
             pct(d.measured_tensor_active_pct).c_str(), pct(d.measured_dram_throughput_pct).c_str(),
             static_cast<unsigned long long>(d.pm_samples));
    }
    std::string classes;
    for (int c = 0; c < kNumKernelClasses; ++c) {
      const int64_t ns = d.class_kernel_ns[static_cast<size_t>(c)];
      if (ns > 0) classes += std::string(classes.empty() ? "" : ", ") + KernelClassId(static_cast<KernelClass>(c)) + " " + Time(ns);
    }
    if (!classes.empty()) Append(out, "  kernel time by class: %s\n", classes.c_str());
  }
}

// Step statistics, mean phases and outliers.
void StepsText(const Summary& s, std::string* out) {
  if (s.steps.count > 0) {
    Append(out, "\nSteps: %llu, mean %s, median %s, stdev %s, min %s, max %s\n",
           static_cast<unsigned long long>(s.steps.count), Time(s.steps.mean_ns).c_str(),
           Time(s.steps.median_ns).c_str(), Time(s.steps.stdev_ns).c_str(),
           Time(s.steps.min_ns).c_str(), Time(s.steps.max_ns).c_str());
    if (s.phases.present && !PhasesRecognised(s.phases)) {
      Append(out, "  step phases: not split (no time in PyTorch's DataLoader, Optimizer.step, "
                  "autograd or operator ranges)\n");
    } else if (s.phases.present) {
      std::string line;
      for (int k = 0; k < kNumPhases; ++k)
        line += std::string(k ? ", " : "") + PhaseId(k) + " " + Time(s.phases.mean_host_ns[static_cast<size_t>(k)]);
      Append(out, "  mean step phases: %s\n", line.c_str());
    }
    for (const StepOutlier& o : s.steps.outliers) {
      Append(out, "  outlier: ProfilerStep#%lld took %s\n", static_cast<long long>(o.step),
             Time(o.duration_ns).c_str());
    }
  }
}

// Top Python functions (traces with Python stacks only).
void PythonFunctionsText(const Summary& s, std::string* out) {
  if (!s.top_python_functions.empty()) {
    Append(out, "Top Python functions (by total time; self = not inside another Python frame; GPU = "
           "kernels and copies launched under it):\n");
    Append(out, "  %10s %10s %10s %8s  %s\n", "total", "self", "GPU", "calls", "function");
    for (const PythonFunctionStat& p : s.top_python_functions) {
      std::string name = p.name.size() > 100 ? "..." + p.name.substr(p.name.size() - 97) : p.name;
      Append(out, "  %10s %10s %10s %8llu  %s\n", Time(p.total_ns).c_str(), Time(p.self_ns).c_str(),
             Time(p.gpu_ns).c_str(), static_cast<unsigned long long>(p.calls), name.c_str());
    }
  }
}

// NCCL collectives with their bandwidths.
void CollectivesText(const Summary& s, std::string* out) {
  if (!s.collectives.empty()) {
    Append(out, "\nNCCL collectives (kernel time includes waiting for other ranks):\n");
    for (const CollectiveSummary& c : s.collectives) {
      std::string what = c.name + (c.dtype.empty() ? "" : " " + c.dtype);
      Append(out, "  GPU %u %-22s x%-6llu group %-4d %10s", c.device, what.c_str(),
             static_cast<unsigned long long>(c.calls), c.group_size, Time(c.time_ns).c_str());
      if (c.busbw_gbps >= 0) {
        Append(out, "  %s per call, algbw %s GB/s, busbw %s GB/s (best call %s)",
               FormatBytes(c.median_bytes).c_str(), Number(c.algbw_gbps).c_str(),
               Number(c.busbw_gbps).c_str(), Number(c.best_busbw_gbps).c_str());
      }
      *out += '\n';
    }
  }
}

// Peak memory and what was not freed, per device.
void MemoryText(const Summary& s, std::string* out) {
  for (const MemorySummary& m : s.memory) {
    if (m.device_type == 1) Append(out, "\nMemory, GPU %d%s:", m.device, m.allocator ? " (allocator)" : "");
    else Append(out, "\nMemory, host%s:", m.allocator ? " (allocator)" : "");
    Append(out, " peak %s allocated", FormatBytes(static_cast<uint64_t>(std::max<int64_t>(0, m.peak_allocated))).c_str());
    if (m.peak_share >= 0) Append(out, " (%.1f%% of %s)", 100.0 * m.peak_share, FormatBytes(m.device_total_bytes).c_str());
    if (m.peak_step >= 0) Append(out, " in step %lld", static_cast<long long>(m.peak_step));
    Append(out, " at \"%s\"%s%s; %llu allocs, %llu frees; not freed: %llu (%s)\n", m.peak_site.c_str(),
           m.peak_python.empty() ? "" : " (Python: ", m.peak_python.empty() ? "" : (m.peak_python + ")").c_str(),
           static_cast<unsigned long long>(m.allocs), static_cast<unsigned long long>(m.frees),
           static_cast<unsigned long long>(m.not_freed_count),
           FormatBytes(static_cast<uint64_t>(std::max<int64_t>(0, m.not_freed_bytes))).c_str());
    for (const MemorySite& site : m.not_freed_sites) {
      Append(out, "    not freed: %llu x %s from \"%s\"%s%s\n", static_cast<unsigned long long>(site.count),
             FormatBytes(static_cast<uint64_t>(std::max<int64_t>(0, site.bytes))).c_str(), site.name.c_str(),
             site.python.empty() ? "" : " at ", site.python.c_str());
    }
  }
  if (s.memory_devices_left_out > 0) {
    Append(out, "\nMemory: %llu more devices (%llu [memory] events) left out; at most %zu are summarised\n",
           static_cast<unsigned long long>(s.memory_devices_left_out),
           static_cast<unsigned long long>(s.memory_events_left_out), kMaxMemoryDevices);
  }
}

// Every finding with its evidence, examples and advice.
void FindingsText(const Summary& s, std::string* out) {
  Append(out, "\nFindings: %zu\n", s.findings.size());
  for (const Finding& f : s.findings) {
    if (f.device >= 0) Append(out, "* [%s] GPU %lld: %s\n", f.id.c_str(), static_cast<long long>(f.device), f.title.c_str());
    else Append(out, "* [%s] %s\n", f.id.c_str(), f.title.c_str());
    Append(out, "    concerns %s (%.1f%% of the window), confidence %s\n", Time(f.time_ns).c_str(),
           100.0 * f.window_share, f.confidence.c_str());
    std::string ev;
    for (const auto& [k, v] : f.evidence) ev += (ev.empty() ? "" : ", ") + k + "=" + Number(v);
    *out += "    evidence: " + ev + "\n";
    for (const EventRef& r : f.examples) {
      Append(out, "    e.g. id %llu at %s: %s\n", static_cast<unsigned long long>(r.id),
             Time(r.ts_ns - s.window_start_ns).c_str(), r.name.substr(0, 100).c_str());
    }
    *out += "    advice: " + f.recommendation + "\n";
  }
}

}  // namespace

std::string SummaryToText(const Summary& s) {
  std::string out;
  Append(&out, "=== kairos summary: window %s, %llu events ===\n",
         Time(s.window_end_ns - s.window_start_ns).c_str(), static_cast<unsigned long long>(s.event_count));
  Append(&out, "%s\n", s.verdict.c_str());
  for (const std::string& v : s.verdicts) Append(&out, "  %s\n", v.c_str());
  if (s.compute.present) {  // docs/FLOPS.md: the top-line compute metric
    const ComputeSummary& c = s.compute;
    Append(&out, "Compute: %s FLOPs in %llu ops, %s TFLOP/s over the window, %s TFLOP/s in their "
           "kernels, MFU %s\n", Number(static_cast<double>(c.total_flops)).c_str(),
           static_cast<unsigned long long>(c.op_count),
           c.window_tflops >= 0 ? Number(c.window_tflops).c_str() : "?",
           c.kernel_tflops >= 0 ? Number(c.kernel_tflops).c_str() : "?",
           c.mfu >= 0 ? (Number(100 * c.mfu) + "%").c_str() : "unknown (device or dtype not in the peak table)");
  }
  DevicesText(s, &out);
  StepsText(s, &out);
  if (s.host.present) {
    Append(&out, "\nHost: CPU %.0f%%, iowait %.0f%%, this process %.0f%% of one core (window means)\n",
           s.host.cpu_util_mean_pct, s.host.cpu_iowait_mean_pct, s.host.process_cpu_mean_pct);
  }
  out += '\n';
  Table(&out, "Top kernels", s.top_kernels);
  Table(&out, "Top memcpys", s.top_memcpys);
  Table(&out, "Top CPU ranges", s.top_cpu_ranges);
  PythonFunctionsText(s, &out);
  CollectivesText(s, &out);
  MemoryText(s, &out);
  FindingsText(s, &out);
  return out;
}

}  // namespace kairos
