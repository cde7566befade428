// File: collectives.cc
// Layer: kairos_analysis (internal). NCCL operations per device and kind: calls, bytes moved,
// kernel time, algorithm and bus bandwidth (summary.h, CollectiveSummary; docs/SUMMARY.md).
// Threading: calling thread only.
#include <algorithm>
#include <map>
#include <tuple>

#include "analysis/analysis_context.h"

namespace kairos::internal {
namespace {

// nccl-tests' bus factor: what each rank's link carries relative to the message size.
double BusFactor(CollectiveFunc func, int32_t n) {
  if (n <= 1) return 1.0;
  const double r = static_cast<double>(n - 1) / n;
  switch (func) {
    case CollectiveFunc::kAllReduce: return 2.0 * r;
    case CollectiveFunc::kAllGather:
    case CollectiveFunc::kReduceScatter:
    case CollectiveFunc::kAllToAll: return r;
    default: return 1.0;
  }
}

struct Acc {
  CollectiveFunc func = CollectiveFunc::kUnknown;
  std::vector<uint64_t> sizes;
  uint64_t calls = 0, bytes = 0;
  int64_t time_ns = 0;
  double best_bytes_per_ns = 0;
  bool sized = true;
};

}  // namespace

void ComputeCollectives(const AnalysisContext& ctx, Summary* summary) {
  const TraceData& data = *ctx.data;
  if (data.collectives.empty()) return;
  // (device, name, dtype, group size) -> totals; std::map keeps the output deterministic.
  std::map<std::tuple<uint32_t, std::string, std::string, int32_t>, Acc> groups;
  for (const DeviceWork& dw : ctx.devices) {
    for (const GpuOp& op : dw.ops) {
      const Event& e = *op.event;
      if (e.kind != EventKind::kKernel || e.correlation == 0) continue;
      const CollectiveRecord* c = data.FindCollective(e.correlation);
      if (c == nullptr) continue;
      Acc& a = groups[{dw.device, CollectiveTraceName(c->func, c->coalesced),
                       CollectiveDtypeTraceName(c->dtype), c->comm_size}];
      a.func = c->coalesced > 1 ? CollectiveFunc::kUnknown : c->func;
      // The message: what one rank's buffer holds at its largest (the gathered output of an
      // all-gather, the input of a reduce-scatter), as nccl-tests sizes it.
      const uint64_t size = std::max(c->in_nelems, c->out_nelems) * CollectiveDtypeBytes(c->dtype);
      if (CollectiveDtypeBytes(c->dtype) == 0) a.sized = false;
      a.sizes.push_back(size);
      a.bytes += size;
      ++a.calls;
      a.time_ns += e.end_ns - e.start_ns;  // the whole kernel, not its clipped part
      if (e.end_ns > e.start_ns) {
        a.best_bytes_per_ns = std::max(a.best_bytes_per_ns, static_cast<double>(size) / (e.end_ns - e.start_ns));
      }
    }
  }
  for (auto& [key, a] : groups) {
    CollectiveSummary s;
    std::tie(s.device, s.name, s.dtype, s.group_size) = key;
    s.calls = a.calls;
    s.time_ns = a.time_ns;
    if (a.sized) {
      s.bytes = a.bytes;
      std::sort(a.sizes.begin(), a.sizes.end());
      s.median_bytes = a.sizes[(a.sizes.size() - 1) / 2];  // nearest rank, lower middle
      if (a.time_ns > 0) {
        s.algbw_gbps = static_cast<double>(a.bytes) / static_cast<double>(a.time_ns);  // B/ns = GB/s
        s.busbw_gbps = s.algbw_gbps * BusFactor(a.func, s.group_size);
      }
      if (a.best_bytes_per_ns > 0) s.best_busbw_gbps = a.best_bytes_per_ns * BusFactor(a.func, s.group_size);
    }
    summary->collectives.push_back(std::move(s));
  }
  std::stable_sort(summary->collectives.begin(), summary->collectives.end(),
                   [](const CollectiveSummary& x, const CollectiveSummary& y) {
                     if (x.device != y.device) return x.device < y.device;
                     return x.time_ns > y.time_ns;
                   });
}

}  // namespace kairos::internal
