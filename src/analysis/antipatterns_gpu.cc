// File: antipatterns_gpu.cc
// Layer: kairos_analysis (internal). Detectors that look at the shape of GPU work: too
// little work per kernel/memcpy (launch-bound), many small host-device copies, pageable
// copies, grids too small for the device, low theoretical occupancy.
// Threading: calling thread only.
#include <string>

#include "absl/strings/str_cat.h"
#include "analysis/antipatterns.h"
#include "analysis/kernel_class.h"
#include "analysis/sm_metrics.h"
#include "model/occupancy.h"

namespace kairos::internal {
namespace {

constexpr uint8_t kCopyHtoD = 1, kCopyDtoH = 2;  // CUpti_ActivityMemcpyKind
constexpr uint8_t kMemoryPageable = 1;           // CUpti_ActivityMemoryKind

double Fraction(double a, double b) { return b > 0 ? a / b : 0.0; }

const MemcpyDetail* CopyOf(const TraceData& data, const Event& e) {
  return e.detail < data.memcpys.size() ? &data.memcpys[e.detail] : nullptr;
}

void LaunchBound(const AnalysisContext& ctx, const DeviceWork& dw, Summary* out) {
  const AnalysisOptions& o = *ctx.options;
  FindingBuilder b(ctx, "launch_bound", "Too little work per kernel or memcpy", dw.device);
  uint64_t small = 0;
  int64_t small_ns = 0;
  std::vector<int64_t> durations;
  for (const GpuOp& op : dw.ops) {
    const int64_t d = op.event->end_ns - op.event->start_ns;
    if (d >= o.small_op_ns) continue;
    ++small;
    small_ns += d;
    durations.push_back(d);
    b.Example(*op.event);
  }
  const double frac = Fraction(static_cast<double>(small), static_cast<double>(dw.ops.size()));
  if (small < o.small_op_min_count || frac < o.small_op_min_fraction) return;
  // The time at stake: the small ops and the idle gaps that end in one (the launch queue
  // not keeping up shows as those gaps).
  int64_t gap_ns = 0;
  for (const IdleGap& g : dw.gaps) {
    if (g.next != nullptr && g.next->end_ns - g.next->start_ns < o.small_op_ns)
      gap_ns += g.End(ctx.window_end_ns) - g.start_ns;
  }
  b.Impact(small_ns + gap_ns, frac >= 0.8 ? "high" : "medium");
  b.Evidence("gpu_ops", static_cast<double>(dw.ops.size()))
      .Evidence("small_ops", static_cast<double>(small))
      .Evidence("small_fraction", frac)
      .Evidence("small_ops_time_ns", static_cast<double>(small_ns))
      .Evidence("small_op_median_ns", static_cast<double>(NearestRank(durations, 0.5)))
      .Evidence("threshold_ns", static_cast<double>(o.small_op_ns));
  out->findings.push_back(b.Done(
      "Most GPU work items finish in less time than it takes the host to launch them, so the "
      "GPU runs at the speed of the launch queue. Fuse small operations (torch.compile, fused "
      "optimizers and kernels), use larger batches, or capture the step in a CUDA graph."));
}

void SmallCopies(const AnalysisContext& ctx, const DeviceWork& dw, Summary* out) {
  const AnalysisOptions& o = *ctx.options;
  FindingBuilder b(ctx, "small_copies", "Many small host-device copies", dw.device);
  uint64_t n = 0, htod = 0, dtoh = 0, bytes = 0;
  int64_t ns = 0;
  for (const GpuOp& op : dw.ops) {
    if (op.event->kind != EventKind::kMemcpy) continue;
    const MemcpyDetail* m = CopyOf(*ctx.data, *op.event);
    if (m == nullptr || (m->copy_kind != kCopyHtoD && m->copy_kind != kCopyDtoH)) continue;
    if (m->bytes >= o.small_copy_bytes) continue;
    ++n;
    (m->copy_kind == kCopyHtoD ? htod : dtoh) += 1;
    bytes += m->bytes;
    ns += op.event->end_ns - op.event->start_ns;
    b.Example(*op.event);
  }
  if (n < o.small_copy_min_count) return;
  // Each small copy costs mostly its fixed latency: count the copies and the idle gaps that
  // end in one.
  int64_t gap_ns = 0;
  for (const IdleGap& g : dw.gaps) {
    if (g.next == nullptr || g.next->kind != EventKind::kMemcpy) continue;
    const MemcpyDetail* m = CopyOf(*ctx.data, *g.next);
    if (m != nullptr && (m->copy_kind == kCopyHtoD || m->copy_kind == kCopyDtoH) && m->bytes < o.small_copy_bytes) {
      gap_ns += g.End(ctx.window_end_ns) - g.start_ns;
    }
  }
  b.Impact(ns + gap_ns, "high");
  b.Evidence("small_copies", static_cast<double>(n))
      .Evidence("htod", static_cast<double>(htod))
      .Evidence("dtoh", static_cast<double>(dtoh))
      .Evidence("bytes", static_cast<double>(bytes))
      .Evidence("time_ns", static_cast<double>(ns))
      .Evidence("threshold_bytes", static_cast<double>(o.small_copy_bytes));
  out->findings.push_back(b.Done(
      "Many copies between host and device move less than " +
      std::to_string(o.small_copy_bytes / 1024) +
      " KiB each; each pays a fixed launch and transfer cost. Batch them into one larger copy "
      "(stack tensors first, or keep the data on the GPU)."));
}

void PageableCopies(const AnalysisContext& ctx, const DeviceWork& dw, Summary* out) {
  const AnalysisOptions& o = *ctx.options;
  FindingBuilder b(ctx, "pageable_copies", "Copies from or to pageable host memory", dw.device);
  uint64_t n = 0, bytes = 0;
  int64_t ns = 0;
  for (const GpuOp& op : dw.ops) {
    if (op.event->kind != EventKind::kMemcpy) continue;
    const MemcpyDetail* m = CopyOf(*ctx.data, *op.event);
    if (m == nullptr || (m->src_kind != kMemoryPageable && m->dst_kind != kMemoryPageable)) continue;
    ++n;
    bytes += m->bytes;
    ns += op.event->end_ns - op.event->start_ns;
    b.Example(*op.event);
  }
  const double frac = Fraction(static_cast<double>(ns), static_cast<double>(ctx.window_ns()));
  if (n == 0 || (n < o.pageable_min_count && frac < o.pageable_min_window_fraction)) return;
  b.Impact(ns, "high");  // the memory kind is recorded by CUPTI, not inferred
  b.Evidence("pageable_copies", static_cast<double>(n))
      .Evidence("bytes", static_cast<double>(bytes))
      .Evidence("time_ns", static_cast<double>(ns))
      .Evidence("window_fraction", frac);
  out->findings.push_back(b.Done(
      "Copies use pageable host memory, which the driver stages through a pinned bounce "
      "buffer and which cannot overlap with compute. Allocate the host side pinned "
      "(DataLoader pin_memory=True, tensor.pin_memory(), cudaHostAlloc) and copy with "
      "non_blocking=True."));
}

// What KernelShapes counts over one device's kernels for its two findings.
struct ShapeTally {
  int64_t kernel_ns = 0, few_ns = 0, low_ns = 0, low_measured_ns = 0;
  uint64_t few_n = 0, low_n = 0, by_regs = 0, by_smem = 0, by_warps = 0, by_blocks = 0;
  std::vector<int64_t> few_blocks, low_pct, low_measured_pct;
  double few_sm_sum = 0;
  uint64_t few_sm_n = 0;
};

// insufficient_concurrency: grids smaller than the SM count for a share of kernel time.
void FewBlocksFinding(const AnalysisOptions& o, const DeviceInfo* dev, ShapeTally& t,
                      FindingBuilder& few, Summary* out) {
  const double few_frac = Fraction(static_cast<double>(t.few_ns), static_cast<double>(t.kernel_ns));
  if (t.few_n >= o.kernel_min_count && few_frac >= o.kernel_time_min_fraction) {
    const int64_t median_blocks = NearestRank(t.few_blocks, 0.5);
    // A grid of a quarter of the SMs or less leaves most of the GPU empty; one just short of
    // the SM count loses little and may be a deliberate budget.
    few.Impact(t.few_ns, median_blocks * 4 <= dev->num_sms ? "high" : "medium");
    few.Evidence("kernels", static_cast<double>(t.few_n))
        .Evidence("time_ns", static_cast<double>(t.few_ns))
        .Evidence("kernel_time_fraction", few_frac)
        .Evidence("sm_count", dev->num_sms)
        .Evidence("median_blocks", static_cast<double>(median_blocks));
    if (t.few_sm_n > 0) few.Evidence("mean_measured_sm_active_pct", t.few_sm_sum / t.few_sm_n);
    out->findings.push_back(few.Done(
        "These kernels launch fewer blocks than the GPU has SMs (" + std::to_string(dev->num_sms) +
        "), so part of the GPU sits idle while they run. Give them more parallel work: larger "
        "batches, a smaller block size with more blocks, or run independent work concurrently on "
        "other streams."));
  }
}

// low_occupancy: kernels that keep few warps resident (measured, else theoretical).
void LowOccupancyFinding(const AnalysisOptions& o, ShapeTally& t, FindingBuilder& low,
                         Summary* out) {
  const double low_frac = Fraction(static_cast<double>(t.low_ns), static_cast<double>(t.kernel_ns));
  if (t.low_n >= o.kernel_min_count && low_frac >= o.kernel_time_min_fraction) {
    const char* limiter = "the block size";
    uint64_t top = t.by_warps + t.by_blocks;
    if (t.by_regs > top) { limiter = "registers per thread"; top = t.by_regs; }
    if (t.by_smem > top) limiter = "shared memory per block";
    // Measured for most of the time: high confidence. Theoretical only: without hardware
    // counters the latency hiding is inferred.
    const bool measured = 2 * t.low_measured_ns >= t.low_ns;
    low.Impact(t.low_ns, measured ? "high" : "medium");
    low.Evidence("kernels", static_cast<double>(t.low_n))
        .Evidence("time_ns", static_cast<double>(t.low_ns))
        .Evidence("kernel_time_fraction", low_frac);
    if (!t.low_measured_pct.empty())
      low.Evidence("median_measured_occupancy_pct",
                   static_cast<double>(NearestRank(t.low_measured_pct, 0.5)));
    if (!t.low_pct.empty())
      low.Evidence("median_theoretical_occupancy_pct", static_cast<double>(NearestRank(t.low_pct, 0.5)));
    low
        .Evidence("limited_by_registers", static_cast<double>(t.by_regs))
        .Evidence("limited_by_shared_memory", static_cast<double>(t.by_smem))
        .Evidence("limited_by_block_size", static_cast<double>(t.by_warps + t.by_blocks));
    out->findings.push_back(low.Done(
        std::string("These kernels can keep only a small share of each SM's warps resident, "
                    "mostly limited by ") + limiter +
        ", which leaves little parallelism to hide memory latency. Reduce register or shared "
        "memory use (launch bounds, smaller tiles) or use larger thread blocks."));
  }
}

void KernelShapes(const AnalysisContext& ctx, const DeviceWork& dw, Summary* out) {
  const AnalysisOptions& o = *ctx.options;
  const DeviceInfo* dev = ctx.Device(dw.device);
  if (dev == nullptr || dev->num_sms <= 0) return;  // limits unknown: nothing to judge
  FindingBuilder few(ctx, "insufficient_concurrency", "Kernels with too few blocks for the device", dw.device);
  FindingBuilder low(ctx, "low_occupancy", "Kernels with low theoretical occupancy", dw.device);
  ShapeTally t;
  ShapeCache shapes(*ctx.data, dev);
  for (const GpuOp& op : dw.ops) {
    if (op.event->kind != EventKind::kKernel) continue;
    const int64_t d = op.event->end_ns - op.event->start_ns;
    t.kernel_ns += d;
    const KernelShape s = shapes.Get(*op.event);
    // Communication, library GEMM/attention and persistent kernels use few blocks or low
    // occupancy by design (one CTA per SM, a fixed SM budget); judging them would give
    // advice that makes them slower.
    if (!ShapeFindingsApply(RefineKernelClass(op.name_class, s.blocks, s.sm_count))) continue;
    // Measured values (PM sampling) overrule the launch-configuration estimate: a small grid
    // whose SMs are measured busy (other streams fill them) is not flagged, and occupancy is
    // judged by what was achieved rather than what the limits allow.
    const KernelCounters* m = ctx.Measured(op.event->correlation);
    const bool sm_measured = m != nullptr && m->sm_active_pct >= 0;
    if (s.blocks > 0 && s.blocks < static_cast<uint64_t>(s.sm_count) &&
        !(sm_measured && m->sm_active_pct >= o.measured_busy_sm_pct)) {
      if (sm_measured) {
        t.few_sm_sum += m->sm_active_pct;
        ++t.few_sm_n;
      }
      ++t.few_n;
      t.few_ns += d;
      t.few_blocks.push_back(static_cast<int64_t>(s.blocks));
      few.Example(*op.event);
    }
    const bool occ_measured = m != nullptr && m->occupancy_pct >= 0;
    const bool low_occ = occ_measured ? m->occupancy_pct < o.low_occupancy_pct
                                      : s.occupancy_valid && s.theoretical_pct < o.low_occupancy_pct;
    if (low_occ) {
      ++t.low_n;
      t.low_ns += d;
      if (occ_measured) {
        t.low_measured_ns += d;
        t.low_measured_pct.push_back(static_cast<int64_t>(m->occupancy_pct + 0.5));
      }
      if (s.occupancy_valid) t.low_pct.push_back(static_cast<int64_t>(s.theoretical_pct + 0.5));
      t.by_regs += (s.limiting & kLimitRegisters) != 0;
      t.by_smem += (s.limiting & kLimitSharedMem) != 0;
      t.by_warps += (s.limiting & kLimitWarps) != 0;
      t.by_blocks += (s.limiting & kLimitBlocks) != 0;
      low.Example(*op.event);
    }
  }
  FewBlocksFinding(o, dev, t, few, out);
  LowOccupancyFinding(o, t, low, out);
}

}  // namespace

void DetectGpuAntipatterns(const AnalysisContext& ctx, Summary* summary) {
  for (const DeviceWork& dw : ctx.devices) {
    LaunchBound(ctx, dw, summary);
    SmallCopies(ctx, dw, summary);
    PageableCopies(ctx, dw, summary);
    KernelShapes(ctx, dw, summary);
    TensorCoresIdle(ctx, dw, summary);  // tensor_cores.cc
  }
}

}  // namespace kairos::internal
