// File: cupti_trace_collect.cc
// Layer: kairos_activity (CUDA builds only). The Collect side of CuptiTrace (cupti_trace.h):
// the window's edges, the merge into the TraceData, memory totals, devices and the window's
// loss counters. Session thread only, after the buffer pool was drained.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "activity/cupti_devices.h"
#include "activity/cupti_trace.h"

namespace kairos::internal {

void CuptiTrace::SetEdges(const WindowEdges& edges) {
  window_edge_end_ns_ = edges.clock != nullptr && edges.end_raw != ~0ull
                            ? edges.clock->ToUnixNs(edges.end_raw)
                            : INT64_MAX;
  // An iteration window opens at a step boundary the training thread crosses on its own; when
  // enabling CUPTI took longer than the warm-up iterations, the first launches of the window
  // came before any record could be made. They cannot be counted one by one, so the trace
  // says how long the gap was.
  enabled_late_ns_ = 0;
  if (edges.clock != nullptr && enabled_raw_ > edges.start_raw && edges.start_raw != 0) {
    enabled_late_ns_ = edges.clock->ToUnixNs(enabled_raw_) - edges.clock->ToUnixNs(edges.start_raw);
  }
}

void CuptiTrace::ClearEdges() {
  window_edge_end_ns_ = INT64_MAX;
  enabled_raw_ = 0;
  enabled_late_ns_ = 0;
}

void CuptiTrace::AddMissingReason(TraceData& data) const {
  if (missing_reason_.empty()) return;
  data.warnings.push_back(missing_reason_);
  data.metadata.emplace_back("gpu_data_missing_reason", missing_reason_);
}

MergeResult CuptiTrace::Merge(TraceData& data, int64_t cupti_offset) {
  converter_->DropAfter(window_end_);
  for (size_t i = 0; i < links_.stored(); ++i) {
    const uint64_t v = links_.at(i);
    if (v != 0) converter_->AddExternal(static_cast<uint32_t>(v >> 32), v & 0xFFFFFFFFu);
  }
  data.AddStat("cupti_link_overflow", links_.overflow());
  if (cupti_offset != 0) converter_->ShiftTime(-cupti_offset);  // back to the session clock
  if (window_edge_end_ns_ != INT64_MAX) converter_->DropLaunchedAfter(window_edge_end_ns_);
  const MergeResult m = MergeIntoTraceData(*converter_, data);
  if (memory_on_) AddMemory(data, m);
  return m;
}

void CuptiTrace::AddMemory(TraceData& data, const MergeResult& m) {
  // The baseline was read after the window opened: what the window's records allocated and
  // freed up to that read is in it already, so it comes back out, giving the memory in use at
  // the window's start.
  std::vector<MemoryBaseline> baselines = memory_baselines_;
  for (MemoryBaseline& b : baselines) {
    int64_t net = 0;
    for (const auto& track : data.events_by_track) {
      for (const Event& e : track) {
        if (!IsMemoryEvent(e) || e.start_ns > memory_baseline_ns_ || e.detail >= data.memory.size()) continue;
        const MemoryDetail& d = data.memory[e.detail];
        if (d.device_type == 1 && d.device == b.device && (d.flags & kMemoryOwnTotals) == 0) net += d.bytes;
      }
    }
    const int64_t used = static_cast<int64_t>(b.used_bytes) - net;
    b.used_bytes = used > 0 ? static_cast<uint64_t>(used) : 0;
  }
  const MemoryTotalsResult t = ComputeMemoryTotals(data, baselines, converter_->max_events());
  AddMemoryCounters(data);
  data.metadata_json.emplace_back("memory_baseline", MemoryBaselineJson(baselines));
  data.AddStat("memory_events", t.events);
  data.AddStat("memory_frees_before_window", t.frees_before_window);
  data.AddStat("memory_address_reused", t.address_reused);
  data.AddStat("memory_live_overflow", t.tracked_overflow);
  data.AddStat("memory_without_call", m.memory_without_call);
  const ConvertStats& s = converter_->stats();
  data.AddStat("memory_pool_records", s.memory_pool_records);
  data.AddStat("memory_bad_records", s.memory_bad_op);
  if (baselines.empty()) {
    data.warnings.push_back("memory: no device baseline (cuMemGetInfo unavailable): totals count "
                            "from 0 at the window's start");
  }
}

void CuptiTrace::AddDevicesAndStats(TraceData& data, const MergeResult& m, const CuptiApi& api,
                                    const CuptiBufferPool& pool) {
  auto fill = device_info_ != nullptr ? device_info_ : QueryDeviceInfo;
  for (uint32_t device : m.devices) {
    const bool known = std::any_of(data.devices.begin(), data.devices.end(),
                                   [&](const DeviceInfo& d) { return d.id == device; });
    DeviceInfo info;
    if (!known && fill(device, &info)) data.devices.push_back(std::move(info));
  }
  data.metadata_json.emplace_back("cupti_version", std::to_string(api.version));
  AddLossStats(data, pool);
  data.AddStat("cupti_uncorrelated", m.uncorrelated_gpu);
  if (enabled_late_ns_ > 0) {
    data.AddStat("cupti_enabled_late_us", static_cast<uint64_t>(enabled_late_ns_ / 1000));
    data.warnings.push_back(absl::StrCat(
        "GPU recording was fully on only ", enabled_late_ns_ / 1000, " us after the window "
        "opened (enabling CUPTI outlasted the warm-up): GPU work launched in that time may be "
        "missing; raise ACTIVITIES_WARMUP_ITERATIONS"));
  }
  if (counts_.flush_failed) {
    data.warnings.push_back("CUPTI flush failed at the end of the window; GPU records still "
                            "held by CUPTI are missing");
  }
}

void CuptiTrace::AddLossStats(TraceData& data, const CuptiBufferPool& pool) {
  const ConvertStats& s = converter_->stats();
  data.AddStat("cupti_dropped", counts_.cupti_dropped);
  // Losses said in words as well (the stats count them; kairos_warnings says they happened).
  const uint64_t refused = pool.refused() - counts_.refused_at_start;
  if (counts_.cupti_dropped > 0 || refused > 0 || s.store_full > 0) {
    data.warnings.push_back(absl::StrCat(
        "cuda: GPU records lost: ", counts_.cupti_dropped, " dropped by CUPTI, ", refused,
        " buffers refused, ", s.store_full,
        " over the event store; raise ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB (cupti_dropped, "
        "cupti_buffers_refused, cupti_event_store_full)"));
  }
  data.AddStat("cupti_buffers_refused", pool.refused() - counts_.refused_at_start);
  data.AddStat("cupti_foreign_buffers", pool.foreign() - counts_.foreign_at_start);
  data.AddStat("cupti_out_of_range", s.out_of_range - counts_.warmup_drops.out_of_range);
  data.AddStat("cupti_event_store_full", s.store_full);
  data.AddStat("cupti_unknown_records", s.unknown_kind - counts_.warmup_drops.unknown_kind);
  data.AddStat("cupti_bad_timestamps", s.bad_timestamp - counts_.warmup_drops.bad_timestamp);
  data.AddStat("cupti_truncated_buffers", s.truncated_buffers);
  data.AddStat("cupti_filtered_api", s.filtered_api - counts_.warmup_drops.filtered_api);
  // Every record that began before the window: warm-up buffers thrown away, and those of
  // buffers CUPTI handed over after the window opened (a buffer held back by a running kernel
  // at the opening flush, or converted at Open).
  data.AddStat("cupti_warmup_discarded", counts_.warmup_discarded + s.before_window);
  data.AddStat("cupti_late_records", counts_.late_records);
  data.AddStat("cupti_flush_failed", counts_.flush_failed ? 1 : 0);
}

}  // namespace kairos::internal
