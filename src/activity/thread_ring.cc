// File: thread_ring.cc — see thread_ring.h.
// Layer: kairos_activity. Threading: see thread_ring.h.
#include "activity/thread_ring.h"

#include <algorithm>
#include <cerrno>
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

// Asked each time (glibc answers from the auxiliary vector, no system call): every caller
// maps, populates or releases pages around it (never per record), and a cached copy would be
// one more piece of process state.
size_t PageSize() {
  const long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? static_cast<size_t>(p) : size_t{4096};
}

// `bytes` of address space (page-rounded) whose start is kRingHugeBytes-aligned when it is
// at least two huge chunks long, so that the feeder can populate whole aligned chunks as
// transparent huge pages (MakeResident); nullptr when mapping fails. The mapping is marked
// MADV_NOHUGEPAGE: a page the writer faults in itself stays 4 KiB (a 2 MiB fault on the
// application thread would cost it a 2 MiB clear), and a head stays a head; only the
// feeder's whole-chunk populates lift the mark, for the chunk, while they run.
void* MapAligned(size_t bytes) {
  const bool align = bytes >= 2 * kRingHugeBytes;
  const size_t span = align ? bytes + kRingHugeBytes : bytes;
  void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto* base = static_cast<uint8_t*>(p);
  if (align) {
    // Trim the slack before the aligned start and after its end (both page multiples).
    auto* start = reinterpret_cast<uint8_t*>(
        (reinterpret_cast<uintptr_t>(base) + kRingHugeBytes - 1) & ~(uintptr_t{kRingHugeBytes} - 1));
    if (start > base) munmap(base, static_cast<size_t>(start - base));
    uint8_t* const end = start + bytes;
    if (base + span > end) munmap(end, static_cast<size_t>(base + span - end));
    base = start;
  }
  (void)madvise(base, bytes, MADV_NOHUGEPAGE);  // EINVAL without THP support: nothing to mark
  return base;
}

}  // namespace

ThreadRing::ThreadRing(size_t capacity, size_t aux_bytes) {
  if (capacity == 0) return;
  const size_t record_bytes = capacity * sizeof(RingRecord);
  if (record_bytes / sizeof(RingRecord) != capacity) return;  // overflow
  const size_t total = record_bytes + ((aux_bytes + 7) & ~size_t{7});
  void* p = nullptr;
  if (total >= kMapThreshold) {
    const size_t page = PageSize();
    const size_t rounded = (total + page - 1) / page * page;
    p = MapAligned(rounded);
    if (p == nullptr) return;
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
}

ThreadRing::~ThreadRing() {
  if (records_ == nullptr) return;
  if (mapped_) {
    munmap(records_, bytes_);
  } else {
    std::free(records_);
  }
}

namespace {

// Linux 5.14: populate (allocate and map writable) without writing; older kernels say EINVAL.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

// Makes [begin, end) (page-aligned) resident. Returns false when memory ran out.
bool Populate(uint8_t* begin, uint8_t* end) {
  if (end <= begin) return true;
  const size_t len = static_cast<size_t>(end - begin);
  if (madvise(begin, len, MADV_POPULATE_WRITE) == 0) return true;
  if (errno != EINVAL) return false;  // ENOMEM / EFAULT: leave the rest to fault on use
  // Older kernel: one atomic no-op write per page faults it in writable and, unlike a plain
  // store of zero, cannot undo a record the writer stored there meanwhile.
  const size_t page = PageSize();
  for (size_t off = 0; off < len; off += page) __atomic_fetch_or(begin + off, 0, __ATOMIC_RELAXED);
  return true;
}

// Makes [from, to) (page-aligned, inside a ring mapping that starts at `start`) resident,
// spending at most `budget` bytes (a huge chunk, once begun, is finished: it may overshoot
// by less than one chunk). Whole kRingHugeBytes-aligned chunks past the ring's first are
// populated as one transparent huge page each where the kernel has one: one page-table
// entry instead of 512, which is what a fresh page costs under a hypervisor (2.8 us a 4 KiB
// page on the development VM against 0.17 ms a 2 MiB chunk, docs/PERFORMANCE.md), so the
// feeder outruns a writer that streams GB/s. The ring's first chunk (the head a window
// keeps between windows) and partial chunks stay 4 KiB pages: releasing part of a huge
// page would leave all of it allocated until the kernel splits it. Returns where it stopped
// (< to: budget spent or out of memory; *failed says which).
uint8_t* PopulateRange(uint8_t* start, uint8_t* from, uint8_t* to, size_t budget, bool* failed) {
  size_t spent = 0;
  while (from < to && spent < budget) {
    auto* chunk = reinterpret_cast<uint8_t*>(reinterpret_cast<uintptr_t>(from) &
                                             ~(uintptr_t{kRingHugeBytes} - 1));
    uint8_t* const chunk_end = chunk + kRingHugeBytes;
    if (chunk == from && from >= start + kRingHugeBytes && chunk_end <= to) {
      // MADV_HUGEPAGE for the chunk only while it is populated (see MapAligned); without
      // THP support both marks fail and the populate gives 4 KiB pages.
      (void)madvise(from, kRingHugeBytes, MADV_HUGEPAGE);
      const bool ok = Populate(from, chunk_end);
      (void)madvise(from, kRingHugeBytes, MADV_NOHUGEPAGE);
      if (!ok) break;
      spent += kRingHugeBytes;
      from = chunk_end;
      continue;
    }
    uint8_t* stop = std::min(to, chunk_end);
    if (static_cast<size_t>(stop - from) > budget - spent) stop = from + (budget - spent);
    if (!Populate(from, stop)) break;
    spent += static_cast<size_t>(stop - from);
    from = stop;
  }
  *failed = from < to && spent < budget;
  return from;
}

size_t RoundUp(size_t n, size_t page) { return (n + page - 1) / page * page; }

}  // namespace

size_t ThreadRing::MakeResident(size_t record_bytes, size_t aux_bytes, size_t budget) {
  if (!mapped_ || records_ == nullptr) return 0;  // heap buffers: calloc'ed, small
  const size_t page = PageSize();
  uint8_t* const base = reinterpret_cast<uint8_t*>(records_);
  uint8_t* const aux = static_cast<uint8_t*>(aux_);
  size_t done = 0;
  bool failed = false;
  // Records first (every range has them), then the args slots. The two areas share the
  // page at their boundary; populating it twice is harmless.
  const size_t rec_target = std::min(RoundUp(record_bytes, page), RoundUp(this->record_bytes(), page));
  if (rec_target > resident_record_bytes_) {
    uint8_t* const reached = PopulateRange(base, base + resident_record_bytes_, base + rec_target,
                                           budget, &failed);
    const size_t to = static_cast<size_t>(reached - base);
    done += to - resident_record_bytes_;
    resident_record_bytes_ = to;
    if (failed) return done;
  }
  // The side area starts mid-page; its resident bytes count from its own start.
  const size_t aux_limit = static_cast<size_t>(base + bytes_ - aux);
  const size_t aux_target = std::min(RoundUp(aux_bytes, page), aux_limit);
  if (aux_target > resident_aux_bytes_ && done < budget) {
    uint8_t* const from_page = reinterpret_cast<uint8_t*>(
        reinterpret_cast<uintptr_t>(aux + resident_aux_bytes_) & ~(uintptr_t{page} - 1));
    uint8_t* const to_page = std::min(base + bytes_, reinterpret_cast<uint8_t*>(RoundUp(
                                                         reinterpret_cast<uintptr_t>(aux + aux_target), page)));
    uint8_t* const reached = PopulateRange(base, from_page, to_page, budget - done, &failed);
    // Back in the side area's own count (the first page may start before it).
    const size_t to = std::min(aux_target, reached > aux ? static_cast<size_t>(reached - aux) : 0);
    if (to > resident_aux_bytes_) {
      done += to - resident_aux_bytes_;
      resident_aux_bytes_ = to;
    }
  }
  return done;
}

size_t ThreadRing::SkipPastWriter(size_t used_record_bytes) {
  if (!mapped_ || records_ == nullptr || used_record_bytes <= resident_record_bytes_) return 0;
  const size_t end = RoundUp(record_bytes(), PageSize());
  const size_t to = std::min(RoundUp(used_record_bytes, kRingHugeBytes), end);
  const size_t skipped = to - resident_record_bytes_;
  resident_record_bytes_ = to;
  return skipped;
}

void ThreadRing::ReleaseBeyond(size_t keep_record_bytes) {
  if (!mapped_ || records_ == nullptr) return;
  const size_t page = PageSize();
  uint8_t* const base = reinterpret_cast<uint8_t*>(records_);
  const size_t keep = std::min(RoundUp(keep_record_bytes, page), resident_record_bytes_);
  // Keep the first page of the side area too (its first args slots), unless nothing is kept.
  uint8_t* const aux_first_page = reinterpret_cast<uint8_t*>(
      reinterpret_cast<uintptr_t>(aux_) & ~(uintptr_t{page} - 1));
  if (keep == 0) {
    if (madvise(base, bytes_, MADV_DONTNEED) != 0) return;
    resident_record_bytes_ = 0;
    resident_aux_bytes_ = 0;
    return;
  }
  // Records past `keep` up to the side area's first page, then the side area past its first
  // page (the first page is kept resident).
  if (aux_first_page > base + keep) {
    if (madvise(base + keep, static_cast<size_t>(aux_first_page - (base + keep)), MADV_DONTNEED) != 0)
      return;
  }
  uint8_t* const aux_rest = aux_first_page + page;
  if (base + bytes_ > aux_rest &&
      madvise(aux_rest, static_cast<size_t>(base + bytes_ - aux_rest), MADV_DONTNEED) != 0)
    return;
  // Records that share the side area's first page stay resident with it.
  const size_t below_aux = static_cast<size_t>(aux_first_page - base);
  resident_record_bytes_ = keep >= below_aux ? RoundUp(record_bytes(), page) : keep;
  resident_aux_bytes_ = std::min(resident_aux_bytes_,
                                 static_cast<size_t>(aux_rest - static_cast<uint8_t*>(aux_)));
}

ThreadRing* ThreadRing::CompactCopy(size_t records, size_t aux_bytes) const {
  if (records > capacity_) records = capacity_;
  if (aux_bytes > aux_bytes_) aux_bytes = aux_bytes_;
  auto* copy = new (std::nothrow) ThreadRing(records, aux_bytes);
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
