// File: cupti_link_table.h
// Layer: kairos_activity (CUDA builds only). The (correlation id, CPU range id) pairs the
// CUPTI API-enter callback records on application threads, in a table whose memory follows
// use: a private anonymous mapping of zero pages, so creating it costs no page faults and no
// zeroing (an 8 MiB table zeroed with new[]() put 2048 faults on the path of a caller
// waiting in kairos_start). Only a small head is prefaulted, on the controller thread; an
// application thread takes one page fault per 512 new links beyond it. Clear() hands the
// used pages back to the kernel (they read as zero again), so an idle process keeps none.
// Threading: Add() from any thread (one relaxed fetch_add, one release store); Create,
// Clear and the readers on the session thread while no window records.
#ifndef KAIROS_SRC_ACTIVITY_CUPTI_LINK_TABLE_H_
#define KAIROS_SRC_ACTIVITY_CUPTI_LINK_TABLE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace kairos::internal {

class CuptiLinkTable {
 public:
  CuptiLinkTable() = default;
  ~CuptiLinkTable();
  CuptiLinkTable(const CuptiLinkTable&) = delete;
  CuptiLinkTable& operator=(const CuptiLinkTable&) = delete;

  // Room for `capacity` pairs (maps more only when a larger table is asked for) and prefaults
  // the first `prefault_bytes`. A smaller mapping is never unmapped while the table lives: a
  // thread that read `linking` just before the window closed may still write into it. False
  // when the mapping fails (capacity() is then 0 and every Add counts as overflow).
  bool Create(size_t capacity, size_t prefault_bytes);
  // Forgets every pair; the pages they used go back to the kernel. Session thread only.
  void Clear();

  void Add(uint32_t correlation_id, uint32_t range_id) {
    // Relaxed: the slot index only needs uniqueness; the release store publishes the pair
    // to the acquire load in at().
    const size_t slot = count_.fetch_add(1, std::memory_order_relaxed);
    if (slot < capacity_) {
      slots_[slot].store((static_cast<uint64_t>(correlation_id) << 32) | range_id,
                         std::memory_order_release);
    }
  }

  size_t capacity() const { return capacity_; }
  // Pairs added since the last Clear, including those that did not fit.
  size_t added() const { return count_.load(std::memory_order_relaxed); }
  size_t stored() const { return added() < capacity_ ? added() : capacity_; }
  size_t overflow() const { return added() - stored(); }
  // Pair `i` (< stored()); 0 when its writer has not published it yet.
  uint64_t at(size_t i) const { return slots_[i].load(std::memory_order_acquire); }
  // Pages of the table resident now (mincore; tests and benchmarks).
  size_t ResidentPages() const;

 private:
  void Unmap();
  std::atomic<uint64_t>* slots_ = nullptr;
  size_t capacity_ = 0;  // pairs in use this session (<= the mapping's room)
  size_t bytes_ = 0;     // mapped, page-rounded
  std::vector<std::pair<void*, size_t>> outgrown_;  // smaller mappings, unmapped at the end
  std::atomic<size_t> count_{0};
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CUPTI_LINK_TABLE_H_
