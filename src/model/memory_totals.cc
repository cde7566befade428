// File: memory_totals.cc — see memory_totals.h.
#include "model/memory_totals.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace kairos {
namespace {

struct Ref {
  int64_t ts;
  uint32_t row;
};

// The memory rows of `data` in time order (ties: row order, which is record order).
std::vector<Ref> RowsInTimeOrder(const TraceData& data) {
  std::vector<Ref> refs;
  refs.reserve(data.memory.size());
  for (const auto& track : data.events_by_track) {
    for (const Event& e : track) {
      if (IsMemoryEvent(e) && e.detail < data.memory.size() &&
          (data.memory[e.detail].flags & kMemoryOwnTotals) == 0)
        refs.push_back({e.start_ns, e.detail});
    }
  }
  const auto before = [](const Ref& a, const Ref& b) { return a.ts != b.ts ? a.ts < b.ts : a.row < b.row; };
  // Each track is in time order already: with one thread (the usual case) no sort is needed.
  if (!std::is_sorted(refs.begin(), refs.end(), before)) std::sort(refs.begin(), refs.end(), before);
  return refs;
}

int64_t DeviceKey(const MemoryDetail& m) {
  return (static_cast<int64_t>(m.device_type) << 32) | static_cast<uint32_t>(m.device);
}

}  // namespace

MemoryTotalsResult ComputeMemoryTotals(TraceData& data, const std::vector<MemoryBaseline>& baselines,
                                       size_t max_live) {
  MemoryTotalsResult result;
  std::map<int64_t, int64_t> allocated;  // device key -> running total
  for (const MemoryBaseline& b : baselines) {
    allocated[(int64_t{1} << 32) | static_cast<uint32_t>(b.device)] = static_cast<int64_t>(b.used_bytes);
  }
  // Live window allocations: (device key, address) -> bytes.
  absl::flat_hash_map<std::pair<int64_t, uint64_t>, int64_t> live;
  std::map<int64_t, int64_t> lowest;  // device key -> lowest running total
  for (const Ref& r : RowsInTimeOrder(data)) {
    MemoryDetail& m = data.memory[r.row];
    ++result.events;
    const int64_t key = DeviceKey(m);
    int64_t& total = allocated[key];
    if (m.bytes >= 0) {
      auto [it, inserted] = live.try_emplace(std::make_pair(key, m.addr), m.bytes);
      if (!inserted) {  // the free of the earlier block at this address was not seen
        ++result.address_reused;
        total = SaturatingAdd(total, -it->second);
        it->second = m.bytes;
      } else if (live.size() > max_live) {
        live.erase(it);
        ++result.tracked_overflow;
      }
      total = SaturatingAdd(total, m.bytes);
    } else {
      auto it = live.find(std::make_pair(key, m.addr));
      if (it != live.end()) {
        live.erase(it);
      } else {
        m.flags |= kMemoryFreeBeforeWindow;
        ++result.frees_before_window;
      }
      total = SaturatingAdd(total, m.bytes);  // negative
    }
    m.total_allocated = total;
    m.total_reserved = total;
    int64_t& low = lowest[key];
    low = std::min(low, total);
  }
  // Memory in use is never negative. A total below 0 means the window freed more than the
  // baseline says was there (no baseline: 0; frees of blocks allocated before the window, or
  // allocations whose records were lost): at least that much was in use at the start, so the
  // device's totals start from there instead of drawing a counter track below zero.
  for (const auto& [key, low] : lowest) {
    if (low >= 0) continue;
    const int64_t raise = SaturatingAdd(0, -low);
    for (MemoryDetail& m : data.memory) {
      if (DeviceKey(m) != key || (m.flags & kMemoryOwnTotals) != 0) continue;
      m.total_allocated = SaturatingAdd(m.total_allocated, raise);
      m.total_reserved = m.total_allocated;
    }
    const int32_t device = static_cast<int32_t>(static_cast<uint32_t>(key));
    data.warnings.push_back(absl::StrCat(
        "memory: ", (key >> 32) == 1 ? absl::StrCat("GPU ", device) : std::string("host"), ": the window freed ", raise,
        " bytes more than its baseline and allocations account for; its totals start from ", raise,
        " bytes in use (the least the frees prove)"));
  }
  return result;
}

void AddMemoryCounters(TraceData& data) {
  // (device, allocator's events) -> (allocated, reserved)
  std::map<std::pair<int32_t, bool>, std::pair<uint32_t, uint32_t>> tracks;
  std::vector<CounterSample> added;
  added.reserve(2 * data.memory.size());
  for (const auto& track : data.events_by_track) {
    for (const Event& e : track) {
      if (!IsMemoryEvent(e) || e.detail >= data.memory.size()) continue;
      const MemoryDetail& m = data.memory[e.detail];
      if (m.device_type != 1 || m.device < 0) continue;
      const bool allocator = IsAllocatorMemory(m);
      auto it = tracks.find({m.device, allocator});
      if (it == tracks.end()) {
        const uint32_t a = static_cast<uint32_t>(data.counter_tracks.size());
        data.counter_tracks.push_back({allocator ? kAllocatorAllocatedCounter : kMemoryAllocatedCounter,
                                       "bytes", "GPU memory", m.device});
        data.counter_tracks.push_back({allocator ? kAllocatorReservedCounter : kMemoryReservedCounter,
                                       "bytes", "GPU memory", m.device});
        it = tracks.emplace(std::make_pair(m.device, allocator), std::make_pair(a, a + 1)).first;
      }
      added.push_back({e.start_ns, static_cast<double>(m.total_allocated), it->second.first});
      added.push_back({e.start_ns, static_cast<double>(m.total_reserved), it->second.second});
    }
  }
  if (added.empty()) return;
  const auto earlier = [](const CounterSample& a, const CounterSample& b) { return a.ts_ns < b.ts_ns; };
  if (!std::is_sorted(added.begin(), added.end(), earlier)) std::stable_sort(added.begin(), added.end(), earlier);
  const size_t old = data.counter_samples.size();
  data.counter_samples.insert(data.counter_samples.end(), added.begin(), added.end());
  if (old > 0 && earlier(data.counter_samples[old], data.counter_samples[old - 1])) {
    std::inplace_merge(data.counter_samples.begin(), data.counter_samples.begin() + old,
                       data.counter_samples.end(), earlier);
  }
}

std::string MemoryBaselineJson(const std::vector<MemoryBaseline>& baselines) {
  std::string out = "[";
  for (size_t i = 0; i < baselines.size(); ++i) {
    const MemoryBaseline& b = baselines[i];
    absl::StrAppend(&out, i ? ", " : "", "{\"device\": ", b.device, ", \"bytes_in_use\": ", b.used_bytes,
                    ", \"device_total_bytes\": ", b.total_bytes,
                    ", \"source\": \"cuMemGetInfo at window open (total - free)\"}");
  }
  out += "]";
  return out;
}

}  // namespace kairos
