// File: sm_metrics.cc
// Layer: kairos_analysis (internal). SM-level proxy metrics from kernel records alone:
// blocks per SM and Kineto's estimated achieved occupancy, both weighted by kernel time,
// and kernel time per kernel class.
// Threading: calling thread only.
#include "analysis/analysis_context.h"
#include "analysis/sm_metrics.h"
#include "occupancy.h"

namespace kairos::internal {

KernelShape ShapeOf(const TraceData& data, const Event& e, const DeviceInfo* dev) {
  KernelShape s;
  if (e.detail == kNoDetail || e.detail >= data.kernels.size()) return s;
  const KernelDetail& k = data.kernels[e.detail];
  s.blocks = static_cast<uint64_t>(k.grid[0]) * k.grid[1] * k.grid[2];
  if (dev == nullptr || dev->num_sms <= 0) return s;
  s.sm_count = dev->num_sms;
  s.blocks_per_sm = static_cast<double>(s.blocks) / dev->num_sms;
  const uint32_t threads = k.block[0] * k.block[1] * k.block[2];
  const OccupancyResult occ = ComputeOccupancy(
      *dev, threads, k.registers_per_thread,
      static_cast<uint64_t>(k.static_shared_memory) + k.dynamic_shared_memory);
  if (occ.valid) {
    s.occupancy_valid = true;
    s.theoretical_pct = 100.0 * occ.theoretical;
    s.est_achieved_pct = EstimatedAchievedOccupancyPercent(occ, s.blocks_per_sm);
    s.limiting = occ.limiting;
  }
  return s;
}

void ComputeSmProxies(const AnalysisContext& ctx, Summary* summary) {
  for (size_t i = 0; i < ctx.devices.size(); ++i) {
    const DeviceWork& dw = ctx.devices[i];
    const DeviceInfo* dev = ctx.Device(dw.device);
    double occ_weighted = 0, occ_time = 0, bps_weighted = 0, bps_time = 0;
    ShapeCache shapes(*ctx.data, dev);
    DeviceSummary& d = summary->devices[i];
    for (const GpuOp& op : dw.ops) {
      if (op.event->kind != EventKind::kKernel) continue;
      const KernelShape s = shapes.Get(*op.event);
      const double t = static_cast<double>(op.end_ns - op.start_ns);
      d.class_kernel_ns[static_cast<size_t>(RefineKernelClass(op.name_class, s.blocks, s.sm_count))] +=
          op.end_ns - op.start_ns;
      if (s.sm_count > 0) {
        bps_weighted += s.blocks_per_sm * t;
        bps_time += t;
      }
      if (s.occupancy_valid) {
        occ_weighted += s.est_achieved_pct * t;
        occ_time += t;
      }
    }
    if (bps_time > 0) d.blocks_per_sm = bps_weighted / bps_time;
    if (occ_time > 0) d.est_occupancy_pct = occ_weighted / occ_time;
  }
}

}  // namespace kairos::internal
