// File: cupti_tally.h
// Layer: kairos_activity (CUDA builds only). Telemetry's kernel and copy totals
// (docs/TELEMETRY.md: kernels, memcpy_bytes, and gpu_busy_pct without PM sampling), counted
// from CUPTI activity buffers by the millisecond each record ended, plus which of each
// millisecond's 64 slots had a kernel or copy running.
// Cost: this runs on kairos' buffer worker for every kernel and copy record of the job, in
// and out of trace windows, so per record it is one walk step and, in the usual case of
// records ending in the millisecond the previous one touched, no map lookup
// (bench/telemetry_tally_benchmark.cc).
// Threading: none of its own; CuptiTotals (cupti_totals.h) serialises every call with its mutex.
#ifndef KAIROS_SRC_ACTIVITY_CUPTI_TALLY_H_
#define KAIROS_SRC_ACTIVITY_CUPTI_TALLY_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace kairos::internal {

class CuptiTally {
 public:
  static constexpr int64_t kBucketNs = 1000000;        // Take edges are whole milliseconds
  static constexpr int64_t kSlotNs = kBucketNs / 64;   // one bit of a bucket's busy mask

  struct Totals {
    int64_t kernels = 0;
    int64_t memcpy_bytes = 0;
    // Time with a kernel or copy running (their union), at kSlotNs resolution.
    int64_t busy_ns = 0;
  };

  // Counts the kernel, memcpy and peer-to-peer memcpy records of one CUPTI buffer. A record
  // without valid timestamps (still running at a forced flush, never reported again) counts
  // at `now_ns` and adds no busy time.
  void AddBuffer(const uint8_t* buffer, size_t valid_size, int64_t now_ns);
  // One record: a kernel, or a copy of `bytes`. Counts at `end` (at `now_ns` when the
  // timestamps are not a valid interval); marks [start, end) busy when they are.
  void Add(uint32_t device, bool kernel, int64_t bytes, int64_t start, int64_t end, int64_t now_ns);
  // Returns and forgets `device`'s totals of the milliseconds before `end_ns`; later ones
  // stay. Busy slots of a record still running at the edge count in a later Take.
  Totals Take(uint32_t device, int64_t end_ns);

 private:
  struct Bucket {
    int64_t kernels = 0;
    int64_t memcpy_bytes = 0;
    // Slot i is set when a record covered the slot's midpoint: a record shorter than a slot
    // marks one with probability length / slot, so the expected busy time is its length,
    // and overlapping records (streams, copy engines) mark a slot once: the union.
    uint64_t busy = 0;
  };
  struct Device {
    uint32_t id = 0;
    std::map<int64_t, Bucket> buckets;  // by millisecond; one interval's worth at most
    // The bucket the last record touched: records arrive roughly in time order, so most
    // land in it. Map nodes are stable until Take erases them (which clears this).
    int64_t cached_ms = INT64_MIN;
    Bucket* cached = nullptr;
  };
  Device& DeviceOf(uint32_t id);
  static Bucket& BucketOf(Device& d, int64_t ms);
  static void MarkBusy(Device& d, int64_t start, int64_t end);

  std::vector<Device> devices_;  // a handful: linear search beats a map
  Device* last_device_ = nullptr;  // stable: devices_ only grows through DeviceOf, which resets it
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CUPTI_TALLY_H_
