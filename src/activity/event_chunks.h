// File: event_chunks.h
// Layer: kairos_activity. The converter's event store: Events in fixed-size chunks, each its
// own anonymous mapping. It grows with use one chunk at a time and never copies what it holds
// (a doubling vector copied every event and faulted the copy in again; a reservation of the
// whole bound made no copy but left the first touch of every page to the converter, 45% of
// its time in perf). Pages are made resident ahead of the writer by MakeReadyAhead(), which
// the conversion worker calls while it has no buffer to convert (cupti_buffers.h's idle
// hook), so converting a buffer normally finds its pages there; chunks go back to the
// kernel as the merge consumes them (ReleaseChunk) or at Release().
// Threading: one thread at a time (the conversion worker, then the session thread).
#ifndef KAIROS_SRC_ACTIVITY_EVENT_CHUNKS_H_
#define KAIROS_SRC_ACTIVITY_EVENT_CHUNKS_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "model/event.h"

namespace kairos::internal {

class EventChunks {
 public:
  // 16384 events = 640 KiB per chunk: the step resident memory grows by, and what a window
  // with a few events still holds.
  static constexpr size_t kChunkShift = 14;
  static constexpr size_t kChunkEvents = size_t{1} << kChunkShift;
  static constexpr size_t kChunkBytes = kChunkEvents * sizeof(Event);

  EventChunks() = default;
  ~EventChunks() { Release(); }
  EventChunks(const EventChunks&) = delete;
  EventChunks& operator=(const EventChunks&) = delete;

  // At most `max_events` (rounded up to whole chunks) will ever be held; sizes the chunk
  // table once so appending never reallocates it.
  void SetBound(size_t max_events);

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Events that fit in the chunks mapped now.
  size_t capacity() const { return chunks_.size() * kChunkEvents; }

  Event& operator[](size_t i) { return chunks_[i >> kChunkShift][i & (kChunkEvents - 1)]; }
  const Event& operator[](size_t i) const {
    return chunks_[i >> kChunkShift][i & (kChunkEvents - 1)];
  }
  Event& back() { return (*this)[size_ - 1]; }

  // A slot for one more event (uninitialised), or nullptr when out of memory.
  Event* Append() {
    if (size_ == capacity() && !AddChunk()) return nullptr;
    return &(*this)[size_++];
  }
  // Maps one more chunk (without making it resident); false at the bound or out of memory.
  bool Grow() { return AddChunk(); }
  // Keeps the first n events (n <= size()); chunks past them go back to the kernel.
  void Truncate(size_t n);
  void clear() { Truncate(0); }
  // Every chunk back to the kernel.
  void Release();

  // Maps and makes resident the chunks that hold the next `events` appends (at least the rest
  // of the current chunk). Off the converting path: the worker calls it while idle. Returns
  // the bytes of the chunks it populated (the current one counted whole).
  size_t MakeReadyAhead(size_t events);

  // Chunk-wise access for the merge, which hands each chunk back as soon as it has copied it.
  size_t chunk_count() const { return (size_ + kChunkEvents - 1) >> kChunkShift; }
  Event* chunk(size_t c) { return chunks_[c]; }
  size_t chunk_size(size_t c) const {
    const size_t begin = c << kChunkShift;
    return size_ - begin < kChunkEvents ? size_ - begin : kChunkEvents;
  }
  // Unmaps chunk c (its events must not be read again; the merge then Release()s).
  void ReleaseChunk(size_t c);

  // Pages made resident ahead of the writer so far (tests, benchmarks).
  uint64_t ready_bytes() const { return ready_bytes_; }

  // Walks the chunks with a plain pointer (an index through the chunk table per event made
  // the merge's passes a third slower than over a vector).
  template <typename E, typename Store>
  class Iter {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Event;
    using difference_type = std::ptrdiff_t;
    using pointer = E*;
    using reference = E&;
    Iter(Store* s, size_t left) : s_(s), left_(left) {
      if (left_ != 0) {
        p_ = s_->chunks_[0];
        chunk_end_ = p_ + kChunkEvents;
      }
    }
    E& operator*() const { return *p_; }
    E* operator->() const { return p_; }
    Iter& operator++() {
      ++p_;
      if (--left_ != 0 && p_ == chunk_end_) {
        p_ = s_->chunks_[++c_];
        chunk_end_ = p_ + kChunkEvents;
      }
      return *this;
    }
    bool operator==(const Iter& o) const { return left_ == o.left_; }
    bool operator!=(const Iter& o) const { return left_ != o.left_; }

   private:
    Store* s_;
    size_t left_;  // events from here to the end
    size_t c_ = 0;
    E* p_ = nullptr;
    E* chunk_end_ = nullptr;
  };
  using iterator = Iter<Event, EventChunks>;
  using const_iterator = Iter<const Event, const EventChunks>;
  iterator begin() { return iterator(this, size_); }
  iterator end() { return iterator(this, 0); }
  const_iterator begin() const { return const_iterator(this, size_); }
  const_iterator end() const { return const_iterator(this, 0); }

 private:
  bool AddChunk();

  std::vector<Event*> chunks_;  // mapped chunks, in order; capacity fixed by SetBound
  size_t max_chunks_ = 0;
  size_t size_ = 0;
  size_t resident_chunks_ = 0;  // chunks [0, resident_chunks_) are known resident
  uint64_t ready_bytes_ = 0;
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_EVENT_CHUNKS_H_
