// File: compute.cc
// Layer: kairos_analysis. Compute efficiency (docs/FLOPS.md, "From operators to kernels"):
// the FLOPs of the trace's operators (their "flops" arg, else their "Input Dims" through the
// shape formulas of src/model/flops.h), attributed to the GPU kernels each operator launched, as
// achieved TFLOP/s and MFU (achieved / the device's dense datasheet peak for the op's dtype)
// for the window, per top operator, per kernel class and per step.
// Threading: pure function of the context.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/analysis_context.h"
#include "model/flops.h"

namespace kairos::internal {
namespace {

// One operator whose FLOPs count: the outermost with FLOPs on its thread (a counted
// operator's descendants are its decomposition: aten::linear's aten::addmm).
struct CountedOp {
  const Event* op;
  int64_t flops;
  Precision precision;
  std::vector<const Event*> kernels;  // launched by it or its descendants
};

// The op's dtype from "Input type": its first tensor dtype.
Precision PrecisionOf(std::string_view types) {
  struct Name {
    std::string_view text;
    Precision p;
  };
  static constexpr Name kNames[] = {
      {"\"float\"", Precision::kFp32},           {"\"c10::Half\"", Precision::kFp16},
      {"\"c10::BFloat16\"", Precision::kBf16},   {"\"c10::Float8_e4m3fn\"", Precision::kFp8},
      {"\"c10::Float8_e5m2\"", Precision::kFp8}, {"\"double\"", Precision::kUnknown}};
  size_t best = std::string_view::npos;
  Precision p = Precision::kUnknown;
  for (const Name& n : kNames) {
    const size_t at = types.find(n.text);
    if (at < best) {
      best = at;
      p = n.p;
    }
  }
  return p;
}

double Tflops(double flops, int64_t ns) {
  return ns > 0 ? flops / static_cast<double>(ns) / 1e3 : -1;
}

}  // namespace
}  // namespace kairos::internal

namespace kairos {

const char* PrecisionId(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kTf32:
      return "tf32";
    case Precision::kFp16:
      return "fp16";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp8:
      return "fp8";
    case Precision::kUnknown:
      break;
  }
  return "unknown";
}

// Dense datasheet peaks in TFLOP/s (no structured sparsity), by device model; 0 = the model
// has no such tensor-core path. docs/FLOPS.md lists the sources.
double PeakTflops(const DeviceInfo& dev, Precision p) {
  struct Row {
    const char* name;      // substring of deviceProperties' name
    const char* not_name;  // and not this one (PCIe variants)
    int major, minor;
    double fp32, tf32, fp16, bf16, fp8;
  };
  static constexpr Row kRows[] = {
      {"V100", nullptr, 7, 0, 15.7, 0, 125, 0, 0},
      {"A100", nullptr, 8, 0, 19.5, 156, 312, 312, 0},
      {"H100", "PCIe", 9, 0, 67, 494.7, 989.4, 989.4, 1978.9},  // SXM
      {"H100 PCIe", nullptr, 9, 0, 51, 378, 756, 756, 1513},
      {"H800", "PCIe", 9, 0, 67, 494.7, 989.4, 989.4, 1978.9},
      {"H200", nullptr, 9, 0, 67, 494.7, 989.4, 989.4, 1978.9},
      {"B200", nullptr, 10, 0, 75, 1100, 2250, 2250, 4500},
      {"L40S", nullptr, 8, 9, 91.6, 183, 362, 362, 733},
      {"L4", "L40", 8, 9, 30.3, 60, 121, 121, 242},
  };
  for (const Row& r : kRows) {
    if (dev.name.find(r.name) == std::string::npos) continue;
    if (r.not_name != nullptr && dev.name.find(r.not_name) != std::string::npos) continue;
    if (dev.compute_major != 0 && (dev.compute_major != r.major || dev.compute_minor != r.minor))
      return -1;  // the name matched, the architecture did not: not this table's device
    double v = 0;
    switch (p) {
      case Precision::kFp32:
        v = r.fp32;
        break;
      case Precision::kTf32:
        v = r.tf32;
        break;
      case Precision::kFp16:
        v = r.fp16;
        break;
      case Precision::kBf16:
        v = r.bf16;
        break;
      case Precision::kFp8:
        v = r.fp8;
        break;
      case Precision::kUnknown:
        v = 0;
        break;
    }
    return v > 0 ? v : -1;
  }
  return -1;
}

}  // namespace kairos

namespace kairos::internal {
namespace {

// Counted operators, and every CPU range id inside one (its kernels are the op's), with the
// kernels each launched.
std::vector<CountedOp> FindCountedOps(const AnalysisContext& ctx) {
  const TraceData& data = *ctx.data;
  std::vector<CountedOp> ops;
  absl::flat_hash_map<uint32_t, uint32_t> op_of_range;  // external id -> ops index
  flops::Shapes shapes;
  for (const auto& track : data.events_by_track) {
    int64_t open_end = INT64_MIN;  // end of the counted op being scanned
    uint32_t open = 0;
    for (const Event& e : track) {
      if (!IsCpuRange(e.kind)) continue;
      const bool inside = e.start_ns < open_end;
      if (inside) {
        if (e.external_id != 0) op_of_range[e.external_id] = open;
        continue;
      }
      if (e.kind != EventKind::kCpuOp || e.detail >= data.cpu_args.size()) continue;
      if (e.start_ns < ctx.window_start_ns || e.start_ns >= ctx.window_end_ns) continue;
      const CpuArgs& a = data.cpu_args[e.detail];
      // The "flops" arg, else (an in-process trace with shapes) the shape formula, as the
      // trace reader does for `kairos summarize`.
      int64_t f = a.flops;
      if (f < 0 && a.input_dims != 0 &&
          flops::ParseInputDims(data.strings.Get(a.input_dims), &shapes))
        f = flops::FromShapes(flops::ShapeRuleOf(data.strings.Get(e.name)), shapes);
      if (f < 0) continue;
      open = static_cast<uint32_t>(ops.size());
      open_end = e.end_ns;
      ops.push_back({&e, f, PrecisionOf(data.strings.Get(a.input_types)), {}});
      if (e.external_id != 0) op_of_range[e.external_id] = open;
    }
  }
  if (ops.empty()) return ops;
  for (const DeviceWork& dw : ctx.devices) {
    for (const GpuOp& g : dw.ops) {
      if (g.event->kind != EventKind::kKernel || g.event->external_id == 0) continue;
      auto it = op_of_range.find(g.event->external_id);
      if (it != op_of_range.end()) ops[it->second].kernels.push_back(g.event);
    }
  }
  return ops;
}

// The op's kernel time; an fp32 op whose kernels use TF32 tensor cores counts as TF32.
int64_t KernelNs(const TraceData& data, CountedOp& op) {
  int64_t kernel_ns = 0;
  bool tf32 = false;
  for (const Event* k : op.kernels) {
    kernel_ns = SaturatingAdd(kernel_ns, k->end_ns - k->start_ns);
    if (data.strings.Get(k->name).find("tf32") != std::string_view::npos) tf32 = true;
  }
  if (op.precision == Precision::kFp32 && tf32) op.precision = Precision::kTf32;
  return kernel_ns;
}

// The op's FLOPs shared among its kernels' classes in proportion to their durations
// (equally when all are 0 ns); `pk` is the op's peak (TFLOP/s, <= 0 unknown).
void AddToKernelClasses(const TraceData& data, const CountedOp& op, int64_t kernel_ns, double pk,
                        ComputeSummary& out) {
  for (const Event* k : op.kernels) {
    const double share = kernel_ns > 0 ? static_cast<double>(k->end_ns - k->start_ns) / kernel_ns
                                       : 1.0 / static_cast<double>(op.kernels.size());
    const size_t c = static_cast<size_t>(ClassifyKernelName(data.strings.Get(k->name)));
    out.class_flops[c] += static_cast<double>(op.flops) * share;
    out.class_ns[c] = SaturatingAdd(out.class_ns[c], k->end_ns - k->start_ns);
    if (pk > 0) {
      out.class_peak_ns[c] += static_cast<double>(op.flops) * share / pk / 1e3;
    } else {
      out.class_peak_unknown[c] = true;
    }
  }
}

// The op into its operator-name row (`by_name`: name -> top_ops index).
void AddToOpRow(const TraceData& data, const CountedOp& op, int64_t kernel_ns, double pk,
                absl::flat_hash_map<std::string, size_t>& by_name, ComputeSummary& out) {
  const std::string name(data.strings.Get(op.op->name));
  auto [it, fresh] = by_name.try_emplace(name, out.top_ops.size());
  if (fresh) {
    out.top_ops.push_back({});
    out.top_ops.back().name = name;
    out.top_ops.back().precision = PrecisionId(op.precision);
  }
  OpCompute& row = out.top_ops[it->second];
  ++row.count;
  row.flops = SaturatingAdd(row.flops, op.flops);
  row.kernel_ns = SaturatingAdd(row.kernel_ns, kernel_ns);
  if (row.precision != PrecisionId(op.precision)) row.precision = "mixed";
  if (pk > 0 && !op.kernels.empty()) {
    row.peak_ns += static_cast<double>(op.flops) / pk / 1e3;
  } else if (!op.kernels.empty()) {
    row.peak_known = false;
  }
}

// The op into the step it started in (steps are sorted and disjoint), if any.
void AddToStep(const AnalysisContext& ctx, const CountedOp& op, double pk, ComputeSummary& out) {
  auto st = std::upper_bound(ctx.steps.begin(), ctx.steps.end(), op.op->start_ns,
                             [](int64_t v, const Step& s) { return v < s.start_ns; });
  if (st == ctx.steps.begin() || op.op->start_ns >= std::prev(st)->end_ns) return;
  const size_t s = static_cast<size_t>(st - ctx.steps.begin()) - 1;
  if (out.step_flops.size() < ctx.steps.size()) {
    out.step_flops.assign(ctx.steps.size(), 0);
    out.step_peak_ns.assign(ctx.steps.size(), 0);
    out.step_peak_unknown.assign(ctx.steps.size(), 0);
  }
  out.step_flops[s] = SaturatingAdd(out.step_flops[s], op.flops);
  if (!op.kernels.empty()) {
    if (pk > 0) {
      out.step_peak_ns[s] += static_cast<double>(op.flops) / pk / 1e3;
    } else {
      out.step_peak_unknown[s] = 1;
    }
  }
}

// Rates from the sums: window and kernel TFLOP/s and MFU, the top operators (sorted, cut
// to top_n) and the per-step rows.
void FinishRates(const AnalysisContext& ctx, double peak_ns, bool all_peaks, ComputeSummary& out) {
  out.window_tflops = Tflops(static_cast<double>(out.total_flops), ctx.window_ns());
  out.kernel_tflops = Tflops(static_cast<double>(out.gpu_flops), out.kernel_ns);
  out.mfu = out.gpu_flops > 0 && all_peaks && ctx.window_ns() > 0
                ? peak_ns / static_cast<double>(ctx.window_ns())
                : -1;
  for (OpCompute& r : out.top_ops) {
    r.tflops = Tflops(static_cast<double>(r.flops), r.kernel_ns);
    r.mfu = r.kernel_ns > 0 && r.peak_known ? r.peak_ns / static_cast<double>(r.kernel_ns) : -1;
  }
  std::sort(out.top_ops.begin(), out.top_ops.end(), [](const OpCompute& a, const OpCompute& b) {
    return a.flops != b.flops ? a.flops > b.flops : a.name < b.name;
  });
  if (out.top_ops.size() > ctx.options->top_n) out.top_ops.resize(ctx.options->top_n);
  for (size_t s = 0; s < out.step_flops.size(); ++s) {
    const int64_t d = ctx.steps[s].end_ns - ctx.steps[s].start_ns;
    // MFU of a step: its GPU operators' time at peak over the step; unknown when one of
    // them has no peak, and when it has no GPU work at all.
    const double mfu = !out.step_peak_unknown[s] && out.step_peak_ns[s] > 0 && d > 0
                           ? out.step_peak_ns[s] / static_cast<double>(d)
                           : -1;
    out.steps.push_back({ctx.steps[s].number, out.step_flops[s],
                         Tflops(static_cast<double>(out.step_flops[s]), d), mfu});
  }
}

}  // namespace

void ComputeEfficiency(const AnalysisContext& ctx, Summary* summary) {
  const TraceData& data = *ctx.data;
  ComputeSummary& out = summary->compute;
  std::vector<CountedOp> ops = FindCountedOps(ctx);
  if (ops.empty()) return;
  out.present = true;
  // Peak: KAIROS_PEAK_TFLOPS (options.peak_tflops, every dtype), else the first GPU
  // device's table row.
  const double override_peak = ctx.options->peak_tflops > 0 ? ctx.options->peak_tflops : -1;
  const DeviceInfo* dev = ctx.devices.empty() ? nullptr : ctx.Device(ctx.devices.front().device);
  out.device_name = dev != nullptr ? dev->name : "";
  out.peak_source = override_peak > 0 ? "KAIROS_PEAK_TFLOPS" : "table";
  auto peak = [&](Precision p) {
    if (override_peak > 0) return override_peak;
    return dev != nullptr ? PeakTflops(*dev, p) : -1.0;
  };
  // Attribution: an operator's FLOPs go to its kernels in proportion to their durations
  // (equally when all are 0 ns); an op with no kernel ran on the CPU and counts in the
  // window's FLOPs but in no kernel class.
  absl::flat_hash_map<std::string, size_t> by_name;
  double peak_ns = 0;  // sum over ops of flops / peak: time at peak
  bool all_peaks = true;
  for (CountedOp& op : ops) {
    out.total_flops = SaturatingAdd(out.total_flops, op.flops);  // a read trace's counts can be anything
    ++out.op_count;
    const int64_t kernel_ns = KernelNs(data, op);
    const double pk = op.kernels.empty() ? -1 : peak(op.precision);
    if (!op.kernels.empty()) {
      out.gpu_flops = SaturatingAdd(out.gpu_flops, op.flops);
      out.kernel_ns = SaturatingAdd(out.kernel_ns, kernel_ns);
      if (pk > 0) {
        peak_ns += static_cast<double>(op.flops) / pk / 1e3;
      } else {
        all_peaks = false;
      }
    }
    AddToKernelClasses(data, op, kernel_ns, pk, out);
    AddToOpRow(data, op, kernel_ns, pk, by_name, out);
    AddToStep(ctx, op, pk, out);
  }
  FinishRates(ctx, peak_ns, all_peaks, out);
}

}  // namespace kairos::internal
