// File: analysis_context.cc — see analysis_context.h.
#include "analysis/analysis_context.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace kairos::internal {
namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// No recorded window (e.g. a foreign trace): the span of the events.
void WindowFromEvents(const TraceData& data, AnalysisContext* ctx) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const auto& v : data.events_by_track) {
    if (v.empty()) continue;
    lo = std::min(lo, v.front().start_ns);
    for (const Event& e : v) hi = std::max(hi, e.end_ns);
  }
  ctx->window_start_ns = lo == INT64_MAX ? 0 : lo;
  ctx->window_end_ns = hi == INT64_MIN ? 0 : hi;
}

// Each device's ops in time order, into ctx->devices (ctx->idle_devices when it has none).
void MergeStreamRuns(std::map<uint32_t, DeviceWork>& devices,
                     std::map<uint32_t, std::vector<size_t>>& run_ends, AnalysisContext* ctx) {
  // Each stream's ops are already sorted; merge the runs pairwise (n log streams). The order
  // is by the clipped interval: earlier start first, on a tie the longer first.
  const auto op_before = [ctx](const GpuOp& a, const GpuOp& b) {
    const int64_t as = ctx->Start(a), bs = ctx->Start(b);
    if (as != bs) return as < bs;
    return ctx->End(a) > ctx->End(b);
  };
  for (auto& [id, dw] : devices) {
    auto& ends = run_ends[id];
    size_t begin_of_merged = 0;
    size_t merged_end = 0;
    for (size_t end : ends) {
      if (merged_end > begin_of_merged && end > merged_end) {
        std::inplace_merge(dw.ops.begin(), dw.ops.begin() + merged_end, dw.ops.begin() + end, op_before);
      }
      merged_end = end;
    }
    // A device with nothing in the window gets one shared line, not a block of zeros (a
    // rank's trace names every GPU of the node in deviceProperties).
    if (dw.ops.empty()) ctx->idle_devices.push_back(id);
    else ctx->devices.push_back(std::move(dw));
  }
}

}  // namespace

const DeviceInfo* AnalysisContext::Device(uint32_t id) const {
  for (const auto& d : data->devices) {
    if (d.id == id) return &d;
  }
  return nullptr;
}

bool ParseStepName(std::string_view name, int64_t* number) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!StartsWith(name, kPrefix) || name.size() == kPrefix.size() || name.size() > kPrefix.size() + 18) {
    return false;
  }
  int64_t n = 0;
  for (char c : name.substr(kPrefix.size())) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + (c - '0');
  }
  *number = n;
  return true;
}

EventRef MakeRef(const AnalysisContext& ctx, const Event& e) {
  EventRef r;
  r.id = e.correlation != 0 ? e.correlation : e.external_id;
  r.ts_ns = e.start_ns;
  r.name = std::string(ctx.Name(e));
  return r;
}

int64_t NearestRank(std::vector<int64_t>& values, double q) {
  if (values.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  rank = std::clamp<size_t>(rank, 1, values.size());
  std::nth_element(values.begin(), values.begin() + (rank - 1), values.end());
  return values[rank - 1];
}

DurationStats StatsOf(std::vector<int64_t>& d) {
  DurationStats s;
  s.count = d.size();
  if (d.empty()) return s;
  for (int64_t v : d) {
    s.total_ns += v;
    s.max_ns = std::max(s.max_ns, v);
  }
  s.mean_ns = s.total_ns / static_cast<int64_t>(d.size());
  s.median_ns = NearestRank(d, 0.5);
  s.p95_ns = NearestRank(d, 0.95);
  return s;
}

const KernelCounters* AnalysisContext::Measured(uint32_t correlation) const {
  if (measured.empty() || correlation == 0) return nullptr;
  auto it = std::lower_bound(measured.begin(), measured.end(), correlation,
                             [](const KernelCounters& k, uint32_t c) { return k.correlation < c; });
  return it != measured.end() && it->correlation == correlation ? &*it : nullptr;
}

AnalysisContext BuildContext(const TraceData& data, const AnalysisOptions& options) {
  AnalysisContext ctx;
  ctx.data = &data;
  ctx.options = &options;
  ctx.window_start_ns = data.window_start_ns;
  ctx.window_end_ns = data.window_end_ns;
  ctx.measured = data.kernel_counters.empty() ? AttributeKernelCounters(data) : data.kernel_counters;
  if (ctx.window_end_ns <= ctx.window_start_ns) WindowFromEvents(data, &ctx);
  const int64_t ws = ctx.window_start_ns, we = ctx.window_end_ns;

  std::map<uint32_t, std::vector<size_t>> run_ends;  // device -> end offset of each sorted run
  std::map<uint32_t, DeviceWork> devices;
  for (const auto& d : data.devices) devices[d.id].device = d.id;
  ctx.is_step_name.assign(data.strings.size(), 0);
  for (StringId id = 0; id < data.strings.size(); ++id) {
    int64_t n;
    ctx.is_step_name[id] = ParseStepName(data.strings.Get(id), &n) ? 1 : 0;
  }

  // Kernel name classes, memoised per name: a million launches share a few hundred names.
  constexpr uint8_t kUnknown = 0xFF;
  std::vector<uint8_t> name_class(data.strings.size(), kUnknown);
  auto class_of = [&](const Event& e) {
    if (e.name >= name_class.size()) return ClassifyKernelName(ctx.Name(e));
    if (name_class[e.name] == kUnknown) name_class[e.name] = static_cast<uint8_t>(ClassifyKernelName(ctx.Name(e)));
    return static_cast<KernelClass>(name_class[e.name]);
  };
  // Each device's ops reserved at once (its streams' event counts, an upper bound): grown by
  // doubling, the old and the new array (one op per GPU event) were held at once.
  for (size_t t = 0; t < data.tracks.size() && t < data.events_by_track.size(); ++t) {
    if (data.tracks[t].type != TrackType::kGpuStream) continue;
    run_ends[data.tracks[t].device].push_back(data.events_by_track[t].size());
  }
  for (auto& [id, sizes] : run_ends) {
    size_t n = 0;
    for (size_t s : sizes) n += s;
    devices[id].ops.reserve(n);
    sizes.clear();
  }
  for (size_t t = 0; t < data.tracks.size() && t < data.events_by_track.size(); ++t) {
    const Track& track = data.tracks[t];
    const auto& events = data.events_by_track[t];
    if (track.type == TrackType::kGpuStream) {
      DeviceWork& dw = devices[track.device];
      dw.device = track.device;
      for (const Event& e : events) {
        GpuCategory cat;
        KernelClass kc = KernelClass::kOther;
        if (e.kind == EventKind::kKernel) {
          kc = class_of(e);
          cat = IsCommunicationClass(kc) ? GpuCategory::kCommunication : GpuCategory::kCompute;
        } else if (e.kind == EventKind::kMemcpy) {
          cat = GpuCategory::kMemcpy;
        } else if (e.kind == EventKind::kMemset) {
          cat = GpuCategory::kMemset;
        } else {
          continue;
        }
        const int64_t s = std::max(e.start_ns, ws), en = std::min(e.end_ns, we);
        if (en < s) continue;  // outside the window
        dw.ops.push_back(GpuOp{&e, cat, kc});
      }
      run_ends[track.device].push_back(dw.ops.size());
    } else if (track.type == TrackType::kThread) {
      for (const Event& e : events) {
        if (e.kind == EventKind::kUserAnnotation && !(e.flags & kFlagUnfinished) && ctx.IsStepName(e.name)) {
          int64_t n = 0;
          ParseStepName(ctx.Name(e), &n);
          ctx.steps.push_back(Step{n, e.start_ns, e.end_ns});
        }
      }
    }
  }
  MergeStreamRuns(devices, run_ends, &ctx);
  std::sort(ctx.steps.begin(), ctx.steps.end(),
            [](const Step& a, const Step& b) { return a.start_ns < b.start_ns; });
  return ctx;
}

namespace {

// The correlation ids whose launch call the analysis asks about: the op after each idle gap
// and each small device-to-host copy (copy-back syncs).
void CollectLaunchIds(const AnalysisContext& ctx, std::vector<uint32_t>* ids) {
  constexpr uint8_t kCopyDtoH = 2;
  const TraceData& data = *ctx.data;
  ids->clear();
  for (const DeviceWork& dw : ctx.devices) {
    for (const IdleGap& g : dw.gaps) {
      if (g.next != nullptr && g.next->correlation != 0) ids->push_back(g.next->correlation);
    }
    for (const GpuOp& op : dw.ops) {
      if (op.event->kind != EventKind::kMemcpy || op.event->correlation == 0 ||
          op.event->detail >= data.memcpys.size()) {
        continue;
      }
      const MemcpyDetail& m = data.memcpys[op.event->detail];
      if (m.copy_kind == kCopyDtoH && m.bytes <= ctx.options->copy_back_max_bytes) {
        ids->push_back(op.event->correlation);
      }
    }
  }
}

}  // namespace

void ResolveLaunches(AnalysisContext& ctx) {
  const TraceData& data = *ctx.data;
  std::vector<uint32_t>& ids = ctx.launches.ids_;
  std::vector<Launch>& launches = ctx.launches.launches_;
  CollectLaunchIds(ctx, &ids);
  std::vector<uint32_t>& dense = ctx.launches.dense_;
  dense.clear();
  uint32_t lo = UINT32_MAX, hi = 0;
  for (uint32_t id : ids) {
    lo = std::min(lo, id);
    hi = std::max(hi, id);
  }
  if (!ids.empty() && uint64_t{hi} - lo < 2 * uint64_t{ids.size()} + 1024) {
    // Dense: slots in first-seen order, the calls found with one array read each.
    ctx.launches.base_ = lo;
    dense.assign(size_t{hi} - lo + 1, 0);
    launches.clear();
    for (uint32_t id : ids) {
      uint32_t& slot = dense[id - lo];
      if (slot == 0) {
        launches.push_back(Launch{0, INT64_MIN});
        slot = static_cast<uint32_t>(launches.size());
      }
    }
    std::vector<uint32_t>().swap(ids);
    for (size_t t = 0; t < data.tracks.size() && t < data.events_by_track.size(); ++t) {
      if (data.tracks[t].type != TrackType::kThread) continue;
      for (const Event& e : data.events_by_track[t]) {
        if ((e.kind != EventKind::kRuntime && e.kind != EventKind::kDriver) || e.correlation == 0) continue;
        if (e.correlation < lo || e.correlation > hi) continue;
        const uint32_t slot = dense[e.correlation - lo];
        // The last call with the id wins, as it did in the map this replaced.
        if (slot != 0) launches[slot - 1] = Launch{e.start_ns, e.end_ns};
      }
    }
    // Ids whose launch is not in the trace: a lookup miss means "unknown".
    for (uint32_t& slot : dense) {
      if (slot != 0 && launches[slot - 1].end_ns == INT64_MIN) slot = 0;
    }
    return;
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  ids.shrink_to_fit();
  launches.assign(ids.size(), Launch{0, INT64_MIN});
  if (ids.empty()) return;
  for (size_t t = 0; t < data.tracks.size() && t < data.events_by_track.size(); ++t) {
    if (data.tracks[t].type != TrackType::kThread) continue;
    for (const Event& e : data.events_by_track[t]) {
      if ((e.kind != EventKind::kRuntime && e.kind != EventKind::kDriver) || e.correlation == 0) continue;
      auto it = std::lower_bound(ids.begin(), ids.end(), e.correlation);
      if (it == ids.end() || *it != e.correlation) continue;
      // The last call with the id wins, as it did in the map this replaced.
      launches[static_cast<size_t>(it - ids.begin())] = Launch{e.start_ns, e.end_ns};
    }
  }
  // Drop the ids whose launch is not in the trace, so a lookup miss means "unknown".
  size_t kept = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (launches[i].end_ns == INT64_MIN) continue;
    ids[kept] = ids[i];
    launches[kept++] = launches[i];
  }
  ids.resize(kept);
  launches.resize(kept);
}

}  // namespace kairos::internal
