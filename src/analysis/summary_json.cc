// File: summary_json.cc
// Layer: kairos_analysis. SummaryToJson: the schema in docs/SUMMARY.md (schema_version 2).
// Numbers are written deterministically (integral values as integers, others with 6
// significant digits) so the in-process summary and `kairos summarize` compare byte-equal.
// Threading: pure function.
#include <cmath>
#include <cstdio>
#include <string>

#include "analysis/summary.h"
#include "json/json_writer.h"

namespace kairos {
namespace {

// The summary's view of THE JSON writer (kairos_json): its number spelling (see the file
// comment) on top of the shared escaper and comma placement.
class Json {
 public:
  std::string out() const { return w_.str(); }
  Json& Key(const char* k) {
    w_.Key(k);
    return *this;
  }
  Json& Str(std::string_view v) {
    w_.String(v);
    return *this;
  }
  Json& Int(int64_t v) {
    w_.Int(v);
    return *this;
  }
  Json& Num(double v) {
    if (!std::isfinite(v)) {
      w_.Null();
    } else if (v == std::floor(v) && std::fabs(v) < 9.0e15) {
      w_.Int(static_cast<int64_t>(v));
    } else {
      char b[32];
      std::snprintf(b, sizeof b, "%.6g", v);
      w_.RawValue(b);
    }
    return *this;
  }
  Json& NumOrNull(double v, bool known) {
    if (known) return Num(v);
    w_.Null();
    return *this;
  }
  Json& Open(char c) {
    if (c == '{') w_.BeginObject(); else w_.BeginArray();
    return *this;
  }
  Json& Close(char c) {
    if (c == '}') w_.EndObject(); else w_.EndArray();
    return *this;
  }

 private:
  JsonWriter w_;
};

void Stats(Json& j, const Hotspot& h) {
  j.Open('{').Key("name").Str(h.name).Key("count").Int(static_cast<int64_t>(h.stats.count));
  j.Key("total_ns").Int(h.stats.total_ns).Key("mean_ns").Int(h.stats.mean_ns);
  j.Key("median_ns").Int(h.stats.median_ns).Key("p95_ns").Int(h.stats.p95_ns);
  j.Key("max_ns").Int(h.stats.max_ns).Close('}');
}

// Kernel rows carry the measured values next to the launch-configuration estimate.
void KernelStats(Json& j, const Hotspot& h) {
  j.Open('{').Key("name").Str(h.name).Key("count").Int(static_cast<int64_t>(h.stats.count));
  j.Key("total_ns").Int(h.stats.total_ns).Key("mean_ns").Int(h.stats.mean_ns);
  j.Key("median_ns").Int(h.stats.median_ns).Key("p95_ns").Int(h.stats.p95_ns);
  j.Key("max_ns").Int(h.stats.max_ns);
  j.Key("est_occupancy_pct").NumOrNull(h.est_occupancy_pct, h.est_occupancy_pct >= 0);
  j.Key("measured_sm_active_pct").NumOrNull(h.measured_sm_active_pct, h.measured_sm_active_pct >= 0);
  j.Key("measured_occupancy_pct").NumOrNull(h.measured_occupancy_pct, h.measured_occupancy_pct >= 0);
  j.Close('}');
}

// "compute": null without FLOPs, else docs/SUMMARY.md's object (docs/FLOPS.md).
void Compute(Json& j, const ComputeSummary& c) {
  j.Key("compute");
  if (!c.present) {
    j.NumOrNull(0, false);
    return;
  }
  j.Open('{').Key("flops").Int(c.total_flops).Key("ops").Int(static_cast<int64_t>(c.op_count));
  j.Key("gpu_flops").Int(c.gpu_flops).Key("kernel_ns").Int(c.kernel_ns);
  j.Key("window_tflops").NumOrNull(c.window_tflops, c.window_tflops >= 0);
  j.Key("kernel_tflops").NumOrNull(c.kernel_tflops, c.kernel_tflops >= 0);
  j.Key("mfu").NumOrNull(c.mfu, c.mfu >= 0);
  j.Key("device").Str(c.device_name).Key("peak_source").Str(c.peak_source);
  j.Key("kernel_classes").Open('{');
  for (int k = 0; k < kNumKernelClasses; ++k) {
    const size_t i = static_cast<size_t>(k);
    if (c.class_ns[i] == 0 && c.class_flops[i] == 0) continue;
    j.Key(KernelClassId(static_cast<KernelClass>(k))).Open('{');
    j.Key("flops").Num(std::round(c.class_flops[i])).Key("kernel_ns").Int(c.class_ns[i]);
    const double t = c.class_ns[i] > 0 ? c.class_flops[i] / static_cast<double>(c.class_ns[i]) / 1e3 : -1;
    j.Key("tflops").NumOrNull(t, t >= 0);
    const bool mk = c.class_ns[i] > 0 && !c.class_peak_unknown[i];
    j.Key("mfu").NumOrNull(mk ? c.class_peak_ns[i] / static_cast<double>(c.class_ns[i]) : 0, mk).Close('}');
  }
  j.Close('}').Key("top_ops").Open('[');
  for (const OpCompute& o : c.top_ops) {
    j.Open('{').Key("name").Str(o.name).Key("precision").Str(o.precision);
    j.Key("count").Int(static_cast<int64_t>(o.count)).Key("flops").Int(o.flops);
    j.Key("kernel_ns").Int(o.kernel_ns).Key("tflops").NumOrNull(o.tflops, o.tflops >= 0);
    j.Key("mfu").NumOrNull(o.mfu, o.mfu >= 0).Close('}');
  }
  j.Close(']').Key("steps").Open('[');
  for (const StepCompute& st : c.steps) {
    j.Open('{').Key("step").Int(st.step).Key("flops").Int(st.flops);
    j.Key("tflops").NumOrNull(st.tflops, st.tflops >= 0);
    j.Key("mfu").NumOrNull(st.mfu, st.mfu >= 0).Close('}');
  }
  j.Close(']').Close('}');
}

// "phases": null without steps, else the per-phase means and (at most kMaxPhaseSteps) steps.
constexpr size_t kMaxPhaseSteps = 1000;
void PhaseObject(Json& j, const char* key, const std::array<int64_t, kNumPhases>& v) {
  j.Key(key).Open('{');
  for (int k = 0; k < kNumPhases; ++k) j.Key(PhaseId(k)).Int(v[static_cast<size_t>(k)]);
  j.Close('}');
}
void Phases(Json& j, const PhaseSummary& p) {
  j.Key("phases");
  if (!p.present) {
    j.NumOrNull(0, false);
    return;
  }
  j.Open('{');
  PhaseObject(j, "mean_host_ns", p.mean_host_ns);
  PhaseObject(j, "mean_gpu_ns", p.mean_gpu_ns);
  j.Key("steps_total").Int(static_cast<int64_t>(p.steps.size())).Key("steps").Open('[');
  for (size_t i = 0; i < p.steps.size() && i < kMaxPhaseSteps; ++i) {
    const StepPhases& r = p.steps[i];
    j.Open('{').Key("step").Int(r.step).Key("duration_ns").Int(r.duration_ns);
    PhaseObject(j, "host_ns", r.host_ns);
    PhaseObject(j, "gpu_ns", r.gpu_ns);
    j.Close('}');
  }
  j.Close(']').Close('}');
}

void Hotspots(Json& j, const char* key, const std::vector<Hotspot>& rows) {
  j.Key(key).Open('[');
  const bool kernels = std::string_view(key) == "kernels";
  for (const Hotspot& h : rows) kernels ? KernelStats(j, h) : Stats(j, h);
  j.Close(']');
}

void Devices(Json& j, const std::vector<DeviceSummary>& devices) {
  j.Key("devices").Open('[');
  for (const DeviceSummary& d : devices) {
    j.Open('{').Key("device").Int(d.device).Key("verdict").Str(d.verdict);
    j.Key("window_ns").Int(d.window_ns).Key("busy_ns").Int(d.busy_ns).Key("busy_fraction").Num(d.busy_fraction);
    j.Key("temporal_breakdown_ns").Open('{').Key("compute").Int(d.compute_ns);
    j.Key("communication").Int(d.communication_ns).Key("memcpy").Int(d.memcpy_ns);
    j.Key("memset").Int(d.memset_ns).Key("idle").Int(d.idle_ns).Close('}');
    j.Key("idle_breakdown_ns").Open('{').Key("host_wait").Int(d.idle_host_wait_ns);
    j.Key("kernel_wait").Int(d.idle_kernel_wait_ns).Key("other").Int(d.idle_other_ns).Close('}');
    j.Key("host_wait_top_range").Str(d.host_wait_top_range);
    // Only in a trace with Python stacks (older consumers see the schema they know).
    if (!d.host_wait_top_python.empty()) j.Key("host_wait_top_python").Str(d.host_wait_top_python);
    j.Key("kernels").Int(static_cast<int64_t>(d.kernel_count));
    j.Key("memcpys").Int(static_cast<int64_t>(d.memcpy_count));
    j.Key("memsets").Int(static_cast<int64_t>(d.memset_count));
    j.Key("est_occupancy_pct").NumOrNull(d.est_occupancy_pct, d.est_occupancy_pct >= 0);
    j.Key("blocks_per_sm").NumOrNull(d.blocks_per_sm, d.blocks_per_sm >= 0);
    // PM sampling (docs/COUNTERS.md): null where the metric was not sampled.
    j.Key("measured").Open('{');
    j.Key("sm_efficiency_pct").NumOrNull(d.measured_sm_active_pct, d.measured_sm_active_pct >= 0);
    j.Key("achieved_occupancy_pct").NumOrNull(d.measured_occupancy_pct, d.measured_occupancy_pct >= 0);
    j.Key("tensor_active_pct").NumOrNull(d.measured_tensor_active_pct, d.measured_tensor_active_pct >= 0);
    j.Key("dram_throughput_pct").NumOrNull(d.measured_dram_throughput_pct, d.measured_dram_throughput_pct >= 0);
    j.Key("samples").Int(static_cast<int64_t>(d.pm_samples));
    j.Close('}');
    j.Key("kernel_class_ns").Open('{');
    for (int c = 0; c < kNumKernelClasses; ++c) {
      j.Key(KernelClassId(static_cast<KernelClass>(c))).Int(d.class_kernel_ns[static_cast<size_t>(c)]);
    }
    j.Close('}');
    j.Close('}');
  }
  j.Close(']');
}

void Collectives(Json& j, const std::vector<CollectiveSummary>& collectives) {
  j.Key("collectives").Open('[');
  for (const CollectiveSummary& c : collectives) {
    j.Open('{').Key("device").Int(c.device).Key("name").Str(c.name).Key("dtype").Str(c.dtype);
    j.Key("group_size").Int(c.group_size).Key("calls").Int(static_cast<int64_t>(c.calls));
    j.Key("bytes").Int(static_cast<int64_t>(c.bytes));
    j.Key("median_bytes").Int(static_cast<int64_t>(c.median_bytes)).Key("time_ns").Int(c.time_ns);
    j.Key("algbw_gbps").NumOrNull(c.algbw_gbps, c.algbw_gbps >= 0);
    j.Key("busbw_gbps").NumOrNull(c.busbw_gbps, c.busbw_gbps >= 0);
    j.Key("best_busbw_gbps").NumOrNull(c.best_busbw_gbps, c.best_busbw_gbps >= 0).Close('}');
  }
  j.Close(']');
}

void Steps(Json& j, const StepSummary& st) {
  j.Key("steps").Open('{').Key("count").Int(static_cast<int64_t>(st.count));
  j.Key("mean_ns").Int(st.mean_ns).Key("median_ns").Int(st.median_ns).Key("stdev_ns").Int(st.stdev_ns);
  j.Key("min_ns").Int(st.min_ns).Key("max_ns").Int(st.max_ns).Key("outliers").Open('[');
  for (const StepOutlier& o : st.outliers) {
    j.Open('{').Key("step").Int(o.step).Key("start_ns").Int(o.start_ns);
    j.Key("duration_ns").Int(o.duration_ns).Key("sigma").Num(o.sigma).Close('}');
  }
  j.Close(']').Close('}');
}

void Findings(Json& j, const std::vector<Finding>& findings) {
  j.Key("findings").Open('[');
  for (const Finding& f : findings) {
    j.Open('{').Key("id").Str(f.id).Key("title").Str(f.title);
    j.Key("device").NumOrNull(static_cast<double>(f.device), f.device >= 0);
    j.Key("confidence").Str(f.confidence).Key("time_ns").Int(f.time_ns);
    j.Key("window_share").Num(f.window_share);
    j.Key("evidence").Open('{');
    for (const auto& [k, v] : f.evidence) j.Key(k.c_str()).Num(v);
    j.Close('}').Key("examples").Open('[');
    for (const EventRef& r : f.examples) {
      j.Open('{').Key("id").Int(static_cast<int64_t>(r.id)).Key("ts_ns").Int(r.ts_ns);
      j.Key("name").Str(r.name).Close('}');
    }
    j.Close(']').Key("recommendation").Str(f.recommendation).Close('}');
  }
  j.Close(']');
}

void Memory(Json& j, const std::vector<MemorySummary>& memory) {
  // [memory] events (docs/MEMORY.md): one entry per (Device Type, Device Id).
  j.Key("memory").Open('[');
  for (const MemorySummary& m : memory) {
    j.Open('{').Key("device_type").Str(m.device_type == 1 ? "cuda" : "cpu").Key("device").Int(m.device);
    j.Key("source").Str(m.allocator ? "allocator" : "cupti");
    j.Key("allocs").Int(static_cast<int64_t>(m.allocs)).Key("frees").Int(static_cast<int64_t>(m.frees));
    j.Key("allocated_bytes").Int(m.allocated_bytes).Key("freed_bytes").Int(m.freed_bytes);
    j.Key("start_allocated_bytes").Int(m.start_allocated).Key("end_allocated_bytes").Int(m.end_allocated);
    j.Key("peak_allocated_bytes").Int(m.peak_allocated).Key("peak_reserved_bytes").Int(m.peak_reserved);
    j.Key("peak_ts_ns").Int(m.peak_ts_ns);
    j.Key("peak_step").NumOrNull(static_cast<double>(m.peak_step), m.peak_step >= 0);
    j.Key("peak_site").Str(m.peak_site);
    if (!m.peak_python.empty()) j.Key("peak_python").Str(m.peak_python);  // only with Python stacks
    j.Key("device_total_bytes").NumOrNull(static_cast<double>(m.device_total_bytes), m.device_total_bytes > 0);
    j.Key("peak_pct_of_device").NumOrNull(100.0 * m.peak_share, m.peak_share >= 0);
    j.Key("frees_before_window").Int(static_cast<int64_t>(m.frees_before_window));
    j.Key("not_freed_count").Int(static_cast<int64_t>(m.not_freed_count));
    j.Key("not_freed_bytes").Int(m.not_freed_bytes);
    j.Key("not_freed_sites").Open('[');
    for (const MemorySite& site : m.not_freed_sites) {
      j.Open('{').Key("name").Str(site.name).Key("count").Int(static_cast<int64_t>(site.count));
      j.Key("bytes").Int(site.bytes);
      if (!site.python.empty()) j.Key("python").Str(site.python);
      j.Close('}');
    }
    j.Close(']').Key("step_growth_bytes").Open('[');
    for (const auto& [step, bytes] : m.step_growth) {
      j.Open('{').Key("step").Int(step).Key("bytes").Int(bytes).Close('}');
    }
    j.Close(']');
    j.Key("sync_alloc_calls_in_steps").Int(static_cast<int64_t>(m.sync_alloc_calls_in_steps)).Close('}');
  }
  j.Close(']');
}

}  // namespace

std::string SummaryToJson(const Summary& s) {
  Json j;
  j.Open('{').Key("schema_version").Int(2);
  j.Key("window").Open('{').Key("start_ns").Int(s.window_start_ns).Key("end_ns").Int(s.window_end_ns);
  j.Key("duration_ns").Int(s.window_end_ns - s.window_start_ns).Close('}');
  j.Key("event_count").Int(static_cast<int64_t>(s.event_count));
  j.Key("verdict").Str(s.verdict);
  j.Key("verdicts").Open('[');
  for (const std::string& v : s.verdicts) j.Str(v);
  j.Close(']');
  j.Key("idle_devices").Open('[');
  for (uint32_t id : s.idle_devices) j.Int(id);
  j.Close(']');
  Devices(j, s.devices);
  j.Key("hotspots").Open('{');
  Hotspots(j, "kernels", s.top_kernels);
  Hotspots(j, "memcpys", s.top_memcpys);
  Hotspots(j, "cpu_ranges", s.top_cpu_ranges);
  if (!s.top_python_functions.empty()) {  // only with Python stacks
    j.Key("python_functions").Open('[');
    for (const PythonFunctionStat& p : s.top_python_functions) {
      j.Open('{').Key("name").Str(p.name).Key("calls").Int(static_cast<int64_t>(p.calls));
      j.Key("total_ns").Int(p.total_ns).Key("self_ns").Int(p.self_ns).Key("gpu_ns").Int(p.gpu_ns);
      j.Close('}');
    }
    j.Close(']');
  }
  j.Close('}');
  Collectives(j, s.collectives);
  Steps(j, s.steps);
  j.Key("host");
  if (s.host.present) {
    j.Open('{').Key("cpu_util_mean_pct").Num(s.host.cpu_util_mean_pct);
    j.Key("cpu_iowait_mean_pct").Num(s.host.cpu_iowait_mean_pct);
    j.Key("process_cpu_mean_pct").Num(s.host.process_cpu_mean_pct).Close('}');
  } else {
    j.NumOrNull(0, false);
  }
  Compute(j, s.compute);
  Phases(j, s.phases);
  Findings(j, s.findings);
  Memory(j, s.memory);
  if (s.memory_devices_left_out > 0) {  // only a read trace naming > kMaxMemoryDevices devices
    j.Key("memory_devices_left_out").Int(static_cast<int64_t>(s.memory_devices_left_out));
    j.Key("memory_events_left_out").Int(static_cast<int64_t>(s.memory_events_left_out));
  }
  j.Close('}');
  return j.out();
}

}  // namespace kairos
