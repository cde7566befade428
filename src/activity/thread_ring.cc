// File: thread_ring.cc — see thread_ring.h.
// Layer: kairos_activity. Threading: see thread_ring.h.
#include "activity/thread_ring.h"

#include <algorithm>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace kairos::internal {
namespace {

// Below this a buffer comes from the heap: a page-granular mapping per exited thread's
// few records would waste most of the page.
constexpr size_t kMapThreshold = 64 * 1024;

size_t PageSize() {
  static const size_t page = [] {
    const long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<size_t>(p) : size_t{4096};
  }();
  return page;
}

}  // namespace

ThreadRing::ThreadRing(size_t capacity, size_t aux_bytes, bool prefault) {
  if (capacity == 0) return;
  const size_t record_bytes = capacity * sizeof(RingRecord);
  if (record_bytes / sizeof(RingRecord) != capacity) return;  // overflow
  const size_t total = record_bytes + ((aux_bytes + 7) & ~size_t{7});
  void* p = nullptr;
  if (total >= kMapThreshold) {
    const size_t page = PageSize();
    const size_t rounded = (total + page - 1) / page * page;
    p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
             -1, 0);
    if (p == MAP_FAILED) return;
    mapped_ = true;
    bytes_ = rounded;
  } else {
    p = std::calloc(1, total);
    if (p == nullptr) return;
    bytes_ = total;
  }
  records_ = static_cast<RingRecord*>(p);
  aux_ = static_cast<uint8_t*>(p) + record_bytes;
  aux_bytes_ = aux_bytes;
  capacity_ = capacity;
  if (prefault) Prefault();
}

ThreadRing::~ThreadRing() {
  if (records_ == nullptr) return;
  if (mapped_) {
    munmap(records_, bytes_);
  } else {
    std::free(records_);
  }
}

void ThreadRing::Prefault() {
  if (!mapped_ || records_ == nullptr || resident_) return;  // heap buffers: calloc'ed, small
  // One write per page is enough to fault it in; volatile so the stores are not elided.
  volatile uint8_t* p = reinterpret_cast<volatile uint8_t*>(records_);
  const size_t page = PageSize();
  // The records and the first quarter of the aux area (args slots, see ArgsCapacityFor): the
  // rest of aux is used only by ranges with args on most pushes and faults in on demand.
  const size_t record_bytes =
      static_cast<size_t>(static_cast<uint8_t*>(aux_) - reinterpret_cast<uint8_t*>(records_));
  const size_t touched = std::min(bytes_, record_bytes + aux_bytes_ / 4 + page);
  for (size_t off = 0; off < touched; off += page) p[off] = 0;
  resident_ = true;
}

void ThreadRing::PrefaultHead(size_t bytes) {
  if (!mapped_ || records_ == nullptr || resident_) return;
  volatile uint8_t* p = reinterpret_cast<volatile uint8_t*>(records_);
  const size_t page = PageSize();
  const size_t record_bytes =
      static_cast<size_t>(static_cast<uint8_t*>(aux_) - reinterpret_cast<uint8_t*>(records_));
  for (size_t off = 0; off < std::min(bytes, record_bytes); off += page) p[off] = 0;
  if (aux_bytes_ > 0) static_cast<volatile uint8_t*>(aux_)[0] = 0;
}

void ThreadRing::Release() {
  if (!mapped_ || records_ == nullptr) return;
  if (madvise(records_, bytes_, MADV_DONTNEED) == 0) resident_ = false;
}

ThreadRing* ThreadRing::CompactCopy(size_t records, size_t aux_bytes) const {
  if (records > capacity_) records = capacity_;
  if (aux_bytes > aux_bytes_) aux_bytes = aux_bytes_;
  auto* copy = new (std::nothrow) ThreadRing(records, aux_bytes, false);
  if (copy == nullptr) return nullptr;
  if (records > 0 && copy->capacity_ != records) {
    delete copy;
    return nullptr;
  }
  if (records > 0) {
    std::memcpy(static_cast<void*>(copy->records_), records_, records * sizeof(RingRecord));
    if (aux_bytes > 0) std::memcpy(copy->aux_, aux_, aux_bytes);
  }
  copy->size_.store(records, std::memory_order_relaxed);
  copy->dropped_.store(dropped(), std::memory_order_relaxed);
  return copy;
}

}  // namespace kairos::internal
