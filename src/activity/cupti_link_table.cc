// File: cupti_link_table.cc
// Layer: kairos_activity (CUDA builds only). See cupti_link_table.h.
#include "activity/cupti_link_table.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

namespace kairos::internal {
namespace {
size_t PageSize() {
  const long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? static_cast<size_t>(p) : 4096;
}
}  // namespace

CuptiLinkTable::~CuptiLinkTable() { Unmap(); }

void CuptiLinkTable::Unmap() {
  if (slots_ != nullptr) munmap(slots_, bytes_);
  for (const auto& [p, n] : outgrown_) munmap(p, n);
  outgrown_.clear();
  slots_ = nullptr;
  capacity_ = 0;
  bytes_ = 0;
}

bool CuptiLinkTable::Create(size_t capacity, size_t prefault_bytes) {
  Clear();
  const size_t page = PageSize();
  const size_t bytes = (capacity * sizeof(uint64_t) + page - 1) / page * page;
  if (bytes > bytes_) {
    // MAP_NORESERVE: address space only; pages are zero-filled by the kernel on first write.
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      capacity_ = 0;  // the old mapping (if any) stays for late writers; nothing is stored
      return false;
    }
    // Small pages: a transparent huge page would fault 2 MiB in for the first link.
    madvise(p, bytes, MADV_NOHUGEPAGE);
    if (slots_ != nullptr) {
      madvise(slots_, bytes_, MADV_DONTNEED);
      outgrown_.emplace_back(slots_, bytes_);
    }
    slots_ = static_cast<std::atomic<uint64_t>*>(p);
    bytes_ = bytes;
  }
  capacity_ = capacity;
  // One write per page faults the head in here (the controller thread), not on the first
  // CUDA calls of the window. Zero is what the slot holds anyway (atomic: a late writer of
  // the last window may be storing into the same page).
  const size_t head = std::min(prefault_bytes, bytes_);
  for (size_t off = 0; off < head; off += page)
    slots_[off / sizeof(uint64_t)].store(0, std::memory_order_relaxed);
  return true;
}

void CuptiLinkTable::Clear() {
  if (slots_ != nullptr) {
    const size_t page = PageSize();
    const size_t used = (stored() * sizeof(uint64_t) + page - 1) / page * page;
    // MADV_DONTNEED on a private anonymous mapping: the pages read as zero afterwards. If it
    // fails (it does not on Linux for such a mapping), zero the used slots by hand.
    if (used > 0 && madvise(slots_, std::min(used, bytes_), MADV_DONTNEED) != 0) {
      for (size_t i = 0; i < stored(); ++i) slots_[i].store(0, std::memory_order_relaxed);
    }
  }
  count_.store(0, std::memory_order_relaxed);
}

size_t CuptiLinkTable::ResidentPages() const {
  if (slots_ == nullptr) return 0;
  const size_t page = PageSize();
  std::vector<unsigned char> vec(bytes_ / page);
  if (mincore(slots_, bytes_, vec.data()) != 0) return 0;
  return static_cast<size_t>(std::count_if(vec.begin(), vec.end(),
                                            [](unsigned char v) { return (v & 1) != 0; }));
}

}  // namespace kairos::internal
