// File: collective_launch_table.h
// Layer: kairos_activity. The NCCL operations that kernel launches carried in one window,
// keyed by the launch's correlation id: written by the API-enter callback on application
// threads (at most one per NCCL kernel launch, so a few per training step), read on the
// session thread once the window is closed. Fixed capacity, allocated with calloc (zero
// pages the kernel maps on first touch, nothing faulted up front); what does not fit is
// counted. The storage lives as long as the table: a thread that saw the window open just
// before it closed may still be writing.
// Threading: Add from any thread (one relaxed fetch_add, one release store); Collect and
// Clear on the session thread.
#ifndef KAIROS_SRC_ACTIVITY_COLLECTIVE_LAUNCH_TABLE_H_
#define KAIROS_SRC_ACTIVITY_COLLECTIVE_LAUNCH_TABLE_H_

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <vector>

#include "collective.h"

namespace kairos::internal {

class CollectiveLaunchTable {
 public:
  static constexpr size_t kCapacity = 16384;

  CollectiveLaunchTable() = default;
  ~CollectiveLaunchTable() { std::free(slots_); }
  CollectiveLaunchTable(const CollectiveLaunchTable&) = delete;
  CollectiveLaunchTable& operator=(const CollectiveLaunchTable&) = delete;

  // Maps the storage once (session thread, before the window links calls). False when the
  // allocation fails: every Add then counts as overflow.
  bool Create() {
    if (slots_ == nullptr) slots_ = static_cast<Slot*>(std::calloc(kCapacity, sizeof(Slot)));
    return slots_ != nullptr;
  }

  void Add(const CollectiveRecord& r) {
    const size_t i = count_.fetch_add(1, std::memory_order_relaxed);
    if (slots_ == nullptr || i >= kCapacity) return;
    slots_[i].record = r;
    slots_[i].ready.store(1, std::memory_order_release);
  }

  // The published records, sorted by correlation id.
  std::vector<CollectiveRecord> Collect() const {
    std::vector<CollectiveRecord> out;
    const size_t n = std::min(count_.load(std::memory_order_relaxed), slots_ ? kCapacity : 0);
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (slots_[i].ready.load(std::memory_order_acquire) != 0) out.push_back(slots_[i].record);
    }
    std::sort(out.begin(), out.end(), [](const CollectiveRecord& a, const CollectiveRecord& b) {
      return a.correlation < b.correlation;
    });
    return out;
  }

  size_t overflow() const {
    const size_t n = count_.load(std::memory_order_relaxed);
    const size_t room = slots_ != nullptr ? kCapacity : 0;
    return n > room ? n - room : 0;
  }

  void Clear() {
    const size_t n = std::min(count_.load(std::memory_order_relaxed), slots_ ? kCapacity : 0);
    for (size_t i = 0; i < n; ++i) slots_[i].ready.store(0, std::memory_order_relaxed);
    count_.store(0, std::memory_order_relaxed);
  }

 private:
  struct Slot {
    std::atomic<uint32_t> ready;  // zero in calloc'd memory: not yet published
    CollectiveRecord record;
  };
  Slot* slots_ = nullptr;
  std::atomic<size_t> count_{0};
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_COLLECTIVE_LAUNCH_TABLE_H_
