// File: sm_metrics.cc
// Layer: kairos_analysis (internal). SM-level proxy metrics from kernel records alone:
// blocks per SM and Kineto's estimated achieved occupancy, both weighted by kernel time,
// and kernel time per kernel class; beside them the values measured by PM sampling.
// Threading: calling thread only.
#include "analysis/analysis_context.h"
#include "analysis/sm_metrics.h"
#include "model/occupancy.h"

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
      const int64_t ns = ctx.End(op) - ctx.Start(op);
      const double t = static_cast<double>(ns);
      d.class_kernel_ns[static_cast<size_t>(RefineKernelClass(op.name_class, s.blocks, s.sm_count))] += ns;
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

void ComputeMeasuredCounters(const AnalysisContext& ctx, Summary* summary) {
  for (DeviceSummary& d : summary->devices) {
    const DeviceCounterMeans m = MeanDeviceCounters(*ctx.data, static_cast<int32_t>(d.device));
    d.measured_sm_active_pct = m.sm_active_pct;
    d.measured_occupancy_pct = m.occupancy_pct;
    d.measured_tensor_active_pct = m.tensor_active_pct;
    d.measured_dram_throughput_pct = m.dram_throughput_pct;
    d.pm_samples = m.samples;
  }
  if (summary->top_kernels.empty()) return;
  // Per top kernel name: time-weighted sums of the measured and estimated values.
  struct Acc {
    double sm = 0, sm_t = 0, occ = 0, occ_t = 0, est = 0, est_t = 0;
  };
  absl::flat_hash_map<std::string_view, size_t> row_of;
  for (size_t i = 0; i < summary->top_kernels.size(); ++i) row_of[summary->top_kernels[i].name] = i;
  std::vector<Acc> acc(summary->top_kernels.size());
  // Row by name id, looked up once per name (a string hash per kernel was most of this pass).
  constexpr int32_t kUnseen = -2, kNoRow = -1;
  std::vector<int32_t> row_by_name(ctx.data->strings.size(), kUnseen);
  for (const DeviceWork& dw : ctx.devices) {
    ShapeCache shapes(*ctx.data, ctx.Device(dw.device));
    for (const GpuOp& op : dw.ops) {
      if (op.event->kind != EventKind::kKernel) continue;
      int32_t row = kNoRow;
      const StringId name = op.event->name;
      if (name < row_by_name.size() && row_by_name[name] != kUnseen) {
        row = row_by_name[name];
      } else {
        auto it = row_of.find(ctx.Name(*op.event));
        row = it == row_of.end() ? kNoRow : static_cast<int32_t>(it->second);
        if (name < row_by_name.size()) row_by_name[name] = row;
      }
      if (row == kNoRow) continue;
      Acc& a = acc[static_cast<size_t>(row)];
      const double t = static_cast<double>(ctx.End(op) - ctx.Start(op));
      const KernelShape s = shapes.Get(*op.event);
      if (s.occupancy_valid) {
        a.est += s.est_achieved_pct * t;
        a.est_t += t;
      }
      if (const KernelCounters* k = ctx.Measured(op.event->correlation)) {
        if (k->sm_active_pct >= 0) {
          a.sm += k->sm_active_pct * t;
          a.sm_t += t;
        }
        if (k->occupancy_pct >= 0) {
          a.occ += k->occupancy_pct * t;
          a.occ_t += t;
        }
      }
    }
  }
  for (size_t i = 0; i < acc.size(); ++i) {
    Hotspot& h = summary->top_kernels[i];
    if (acc[i].sm_t > 0) h.measured_sm_active_pct = acc[i].sm / acc[i].sm_t;
    if (acc[i].occ_t > 0) h.measured_occupancy_pct = acc[i].occ / acc[i].occ_t;
    if (acc[i].est_t > 0) h.est_occupancy_pct = acc[i].est / acc[i].est_t;
  }
}

}  // namespace kairos::internal
