// File: cupti_tally.cc
// Layer: kairos_activity. See cupti_tally.h.
#include "activity/cupti_tally.h"

#include <cupti.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "activity/cupti_convert.h"

namespace kairos::internal {

void CuptiTally::AddBuffer(const uint8_t* buffer, size_t valid_size, int64_t now_ns) {
  ForEachCuptiRecord(buffer, valid_size, [&](uint32_t kind, const uint8_t* p) {
    // Only the fields read are copied out: the records are unaligned in general and a whole
    // kernel record is 216 bytes.
    uint32_t device;
    uint64_t start, end, bytes = 0;
    bool kernel = false;
    if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      std::memcpy(&device, p + offsetof(CUpti_ActivityKernel10, deviceId), sizeof device);
      std::memcpy(&start, p + offsetof(CUpti_ActivityKernel10, start), sizeof start);
      std::memcpy(&end, p + offsetof(CUpti_ActivityKernel10, end), sizeof end);
      kernel = true;
    } else if (kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      std::memcpy(&device, p + offsetof(CUpti_ActivityMemcpy6, deviceId), sizeof device);
      std::memcpy(&start, p + offsetof(CUpti_ActivityMemcpy6, start), sizeof start);
      std::memcpy(&end, p + offsetof(CUpti_ActivityMemcpy6, end), sizeof end);
      std::memcpy(&bytes, p + offsetof(CUpti_ActivityMemcpy6, bytes), sizeof bytes);
    } else if (kind == CUPTI_ACTIVITY_KIND_MEMCPY2) {
      std::memcpy(&device, p + offsetof(CUpti_ActivityMemcpyPtoP4, deviceId), sizeof device);
      std::memcpy(&start, p + offsetof(CUpti_ActivityMemcpyPtoP4, start), sizeof start);
      std::memcpy(&end, p + offsetof(CUpti_ActivityMemcpyPtoP4, end), sizeof end);
      std::memcpy(&bytes, p + offsetof(CUpti_ActivityMemcpyPtoP4, bytes), sizeof bytes);
    } else {
      return;
    }
    Add(device, kernel, static_cast<int64_t>(bytes), static_cast<int64_t>(start),
        static_cast<int64_t>(end), now_ns);
  });
}

void CuptiTally::Add(uint32_t device, bool kernel, int64_t bytes, int64_t start, int64_t end,
                     int64_t now_ns) {
  Device& d = DeviceOf(device);
  const bool complete = start > 0 && end > 0 && end >= start;
  Bucket& b = BucketOf(d, (complete ? end : now_ns) / kBucketNs);
  if (kernel) {
    ++b.kernels;
  } else {
    b.memcpy_bytes += bytes;
  }
  if (complete) MarkBusy(d, start, end);
}

CuptiTally::Device& CuptiTally::DeviceOf(uint32_t id) {
  if (last_device_ != nullptr && last_device_->id == id) return *last_device_;
  for (Device& d : devices_) {
    if (d.id == id) return *(last_device_ = &d);
  }
  devices_.emplace_back();
  devices_.back().id = id;
  return *(last_device_ = &devices_.back());
}

CuptiTally::Bucket& CuptiTally::BucketOf(Device& d, int64_t ms) {
  if (d.cached_ms != ms || d.cached == nullptr) {
    d.cached = &d.buckets[ms];
    d.cached_ms = ms;
  }
  return *d.cached;
}

void CuptiTally::MarkBusy(Device& d, int64_t start, int64_t end) {
  constexpr int64_t kHalf = kSlotNs / 2;
  for (int64_t ms = start / kBucketNs; ms * kBucketNs < end; ++ms) {
    const int64_t base = ms * kBucketNs;
    // Slots i with start <= base + i * slot + half < end.
    int64_t first = start - base - kHalf;
    first = first <= 0 ? 0 : (first + kSlotNs - 1) / kSlotNs;
    const int64_t last_mid = end - 1 - base - kHalf;
    if (last_mid < 0) continue;
    const int64_t last = std::min<int64_t>(63, last_mid / kSlotNs);
    if (first > last) continue;
    const uint64_t upto = last == 63 ? ~uint64_t{0} : (uint64_t{1} << (last + 1)) - 1;
    BucketOf(d, ms).busy |= upto & ~((uint64_t{1} << first) - 1);
  }
}

CuptiTally::Totals CuptiTally::Take(uint32_t device, int64_t end_ns) {
  Totals out;
  Device* d = nullptr;
  for (Device& x : devices_) {
    if (x.id == device) d = &x;
  }
  if (d == nullptr) return out;
  const auto stop = d->buckets.lower_bound(end_ns / kBucketNs);
  int64_t slots = 0;
  for (auto it = d->buckets.begin(); it != stop; ++it) {
    out.kernels += it->second.kernels;
    out.memcpy_bytes += it->second.memcpy_bytes;
    slots += __builtin_popcountll(it->second.busy);
  }
  out.busy_ns = slots * kSlotNs;
  d->buckets.erase(d->buckets.begin(), stop);
  d->cached = nullptr;
  d->cached_ms = INT64_MIN;
  return out;
}

}  // namespace kairos::internal
