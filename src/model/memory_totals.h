// File: memory_totals.h
// Layer: kairos_model. Absolute memory totals for the "[memory]" events of a trace
// (docs/MEMORY.md): each device starts from its baseline (memory in use when the window
// opened), and every allocation and free after it moves the running total, in time order.
// Also the per-device counter tracks the writers show as a memory-over-time line.
// Threading: the session thread, on a TraceData it is assembling.
#ifndef KAIROS_SRC_MEMORY_TOTALS_H_
#define KAIROS_SRC_MEMORY_TOTALS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model/trace_data.h"

namespace kairos {

// Device memory in use when the window opened (total - free, as cuMemGetInfo reports it:
// everything on the device, this process's allocations made before the window included).
struct MemoryBaseline {
  int32_t device = 0;
  uint64_t used_bytes = 0;
  uint64_t total_bytes = 0;
};

struct MemoryTotalsResult {
  uint64_t events = 0;
  uint64_t frees_before_window = 0;  // frees of addresses the window did not see allocated
  uint64_t address_reused = 0;       // an allocation at a live address (its free was lost)
  uint64_t tracked_overflow = 0;     // live addresses beyond the bound: not matched to frees
};

// Fills total_allocated / total_reserved of every memory row (IsMemoryEvent) of `data` in
// time order, per (Device Type, Device Id), starting from the device's baseline (0 without
// one). A free of an address not allocated in the window is flagged kMemoryFreeBeforeWindow
// and still subtracted: it frees part of the baseline. Reserved equals allocated for CUDA
// driver allocations (each cudaMalloc'd byte is held by the process); the torch allocator's
// own events carry their reserved totals and are not passed here. Live addresses tracked at
// most `max_live` (beyond: counted, their frees treated as pre-window frees). A device whose
// running total would go below 0 (its frees exceed baseline plus allocations) starts from
// the deficit instead, with a warning in data.warnings: totals are never negative.
MemoryTotalsResult ComputeMemoryTotals(TraceData& data, const std::vector<MemoryBaseline>& baselines,
                                       size_t max_live);

// Adds one counter track per CUDA device with memory events, "GPU memory allocated" and
// "GPU memory reserved" (bytes, placed under the device), with a sample at each event, and
// keeps counter_samples sorted. A framework allocator's events get their own pair of tracks
// ("... (allocator)").
void AddMemoryCounters(TraceData& data);

// The baselines as the trace states them: metadata_json "memory_baseline", a JSON array of
// {"device", "bytes_in_use", "device_total_bytes", "source"}.
std::string MemoryBaselineJson(const std::vector<MemoryBaseline>& baselines);

inline constexpr char kMemoryAllocatedCounter[] = "GPU memory allocated";
inline constexpr char kMemoryReservedCounter[] = "GPU memory reserved";
// The same from a framework allocator's own events (IsAllocatorMemory), never mixed with
// CUPTI's on one track: the allocator's blocks live inside segments CUPTI counts already.
inline constexpr char kAllocatorAllocatedCounter[] = "GPU memory allocated (allocator)";
inline constexpr char kAllocatorReservedCounter[] = "GPU memory reserved (allocator)";

}  // namespace kairos

#endif  // KAIROS_SRC_MEMORY_TOTALS_H_
