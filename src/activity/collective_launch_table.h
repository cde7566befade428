// File: collective_launch_table.h
// Layer: kairos_activity. The NCCL operations that kernel launches carried, keyed by the
// launch's correlation id: written by the API-enter callback on application threads (one per
// NCCL kernel launch, a few to a few hundred per training step), read on the session thread
// once the window is closed. Filled from warm-up on, because an iteration window opens at a
// step boundary before the session thread gets to it: the first step's collectives are
// launched before linking starts. So it is a ring: warm-up's records are overwritten by newer
// ones, and what falls out while the window records is counted (overflow). Storage comes from
// calloc (zero pages the kernel maps on first touch) and lives as long as the table: a thread
// that saw capture on just before it went off may still be writing.
// Threading: Add from any thread (one relaxed fetch_add, a per-slot sequence word published
// with release); BeginWindow, EndWindow, Collect and Clear on the session thread.
#ifndef KAIROS_SRC_ACTIVITY_COLLECTIVE_LAUNCH_TABLE_H_
#define KAIROS_SRC_ACTIVITY_COLLECTIVE_LAUNCH_TABLE_H_

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <vector>

#include "model/collective.h"

namespace kairos::internal {

class CollectiveLaunchTable {
 public:
  static constexpr size_t kCapacity = 16384;

  CollectiveLaunchTable() = default;
  ~CollectiveLaunchTable() { std::free(slots_); }
  CollectiveLaunchTable(const CollectiveLaunchTable&) = delete;
  CollectiveLaunchTable& operator=(const CollectiveLaunchTable&) = delete;

  // Allocates the ring once. False when that fails: every record is then lost (counted).
  bool Create() {
    if (slots_ == nullptr) slots_ = static_cast<Slot*>(std::calloc(kCapacity, sizeof(Slot)));
    return slots_ != nullptr;
  }

  void Add(const CollectiveRecord& r) {
    const size_t i = count_.fetch_add(1, std::memory_order_relaxed);
    if (in_window_.load(std::memory_order_relaxed)) window_adds_.fetch_add(1, std::memory_order_relaxed);
    if (slots_ == nullptr) return;
    Slot& s = slots_[i % kCapacity];
    s.seq.store(0, std::memory_order_relaxed);  // being rewritten
    std::atomic_thread_fence(std::memory_order_release);
    s.record = r;
    s.seq.store(i + 1, std::memory_order_release);
  }

  // The window records from here (the records already in the ring stay: they may be the
  // window's first step, launched before the window was seen to open).
  void BeginWindow() {
    window_adds_.store(0, std::memory_order_relaxed);
    in_window_.store(true, std::memory_order_relaxed);
  }
  void EndWindow() { in_window_.store(false, std::memory_order_relaxed); }

  // Every record in the ring, sorted by correlation id (callers keep those of their kernels).
  std::vector<CollectiveRecord> Collect() const {
    std::vector<CollectiveRecord> out;
    if (slots_ == nullptr) return out;
    const size_t n = std::min(count_.load(std::memory_order_relaxed), kCapacity);
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t before = slots_[i].seq.load(std::memory_order_acquire);
      if (before == 0) continue;
      const CollectiveRecord r = slots_[i].record;
      std::atomic_thread_fence(std::memory_order_acquire);
      if (slots_[i].seq.load(std::memory_order_relaxed) == before) out.push_back(r);
    }
    std::sort(out.begin(), out.end(), [](const CollectiveRecord& a, const CollectiveRecord& b) {
      return a.correlation < b.correlation;
    });
    return out;
  }

  // Records of the window that did not stay in the ring (all of them without storage).
  size_t overflow() const {
    const size_t n = window_adds_.load(std::memory_order_relaxed);
    const size_t room = slots_ != nullptr ? kCapacity : 0;
    return n > room ? n - room : 0;
  }

  void Clear() {
    if (slots_ != nullptr) {
      const size_t n = std::min(count_.load(std::memory_order_relaxed), kCapacity);
      for (size_t i = 0; i < n; ++i) slots_[i].seq.store(0, std::memory_order_relaxed);
    }
    count_.store(0, std::memory_order_relaxed);
    window_adds_.store(0, std::memory_order_relaxed);
    in_window_.store(false, std::memory_order_relaxed);
  }

 private:
  struct Slot {
    std::atomic<uint64_t> seq;  // 1 + the Add index that wrote it; 0: empty or being written
    CollectiveRecord record;
  };
  Slot* slots_ = nullptr;
  std::atomic<size_t> count_{0};
  std::atomic<size_t> window_adds_{0};
  std::atomic<bool> in_window_{false};
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_COLLECTIVE_LAUNCH_TABLE_H_
