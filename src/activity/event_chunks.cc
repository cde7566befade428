// File: event_chunks.cc
// Layer: kairos_activity. See event_chunks.h.
#include "activity/event_chunks.h"

#include <sys/mman.h>

#include <cerrno>

namespace kairos::internal {
namespace {

// Linux 5.14: allocate and map writable without writing; older kernels say EINVAL.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

// Makes a chunk resident without changing a byte of it (the chunk being written holds
// events already). One madvise instead of 160 page-fault entries; on an older kernel, an
// atomic no-op write per page does the same. ENOMEM leaves the rest to fault on use.
void Populate(Event* chunk) {
  auto* p = reinterpret_cast<uint8_t*>(chunk);
  if (madvise(p, EventChunks::kChunkBytes, MADV_POPULATE_WRITE) == 0 || errno != EINVAL) return;
  for (size_t off = 0; off < EventChunks::kChunkBytes; off += 4096) {
    __atomic_fetch_or(p + off, 0, __ATOMIC_RELAXED);
  }
}

}  // namespace

void EventChunks::SetBound(size_t max_events) {
  max_chunks_ = (max_events + kChunkEvents - 1) >> kChunkShift;
  if (chunks_.capacity() < max_chunks_) chunks_.reserve(max_chunks_);
}

bool EventChunks::AddChunk() {
  if (chunks_.size() >= max_chunks_) return false;
  void* p = mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  chunks_.push_back(static_cast<Event*>(p));  // capacity reserved by SetBound: no realloc
  return true;
}

size_t EventChunks::MakeReadyAhead(size_t events) {
  // The chunk being written and every chunk the next `events` appends reach.
  const size_t want = ((size_ + events) >> kChunkShift) + 1;
  // Chunks wholly behind the writer were touched by its appends (a cold start): resident.
  if (resident_chunks_ < (size_ >> kChunkShift)) resident_chunks_ = size_ >> kChunkShift;
  size_t bytes = 0;
  while (resident_chunks_ < want) {
    if (resident_chunks_ == chunks_.size() && !AddChunk()) break;
    // The current chunk is partly written already; populating its pages writes nothing, so
    // the events there are untouched.
    Populate(chunks_[resident_chunks_]);
    ++resident_chunks_;
    bytes += kChunkBytes;
  }
  ready_bytes_ += bytes;
  return bytes;
}

void EventChunks::Truncate(size_t n) {
  if (n > size_) return;
  size_ = n;
  const size_t keep = (n + kChunkEvents - 1) >> kChunkShift;
  while (chunks_.size() > keep) {
    if (chunks_.back() != nullptr) munmap(chunks_.back(), kChunkBytes);
    chunks_.pop_back();
  }
  if (resident_chunks_ > keep) resident_chunks_ = keep;
}

void EventChunks::ReleaseChunk(size_t c) {
  if (c >= chunks_.size() || chunks_[c] == nullptr) return;
  munmap(chunks_[c], kChunkBytes);
  chunks_[c] = nullptr;
}

void EventChunks::Release() { Truncate(0); }  // the chunk table (8 B per chunk) stays

}  // namespace kairos::internal
