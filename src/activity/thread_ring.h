// File: thread_ring.h
// Layer: kairos_activity. The fixed-size record a producer thread appends on the hot path,
// and the per-thread buffer it appends to.
// Threading: one producer (the owning thread) appends; the collector reads [0, size()) after
// an acquire load of the write index. A session resets the buffer from the producer side
// only (on its first record of a new epoch), never while the collector reads it: the
// session's state machine does not start a new epoch until collection is finished.
#ifndef KAIROS_SRC_ACTIVITY_THREAD_RING_H_
#define KAIROS_SRC_ACTIVITY_THREAD_RING_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace kairos::internal {

enum class RecordType : uint8_t {
  kPush = 0,  // range_push: id = new range id
  kPop,       // range_pop: id = popped range id (0 = pop with no push in this session)
  kStart,     // range_start (cross-thread): id = new range id
  kEnd,       // range_end: id = the id kStart returned
  kMark,      // instant
  kStep,      // iteration boundary: id = the iteration that begins here
  kCount
};

// 24 bytes: raw clock, thread-local name id, range id (or iteration), args slot.
struct RingRecord {
  uint64_t raw_time;  // ReadRawClock(); converted to Unix ns on the collector thread
  uint32_t name;      // index into the owning thread's name table; 0 = no name
  uint32_t id;        // see RecordType
  uint32_t args;      // 1-based slot in the thread's args array; 0 = none
  RecordType type;
  uint8_t pad[3];
};
static_assert(sizeof(RingRecord) == 24, "RingRecord must stay 24 bytes");
static_assert(alignof(RingRecord) == 8, "RingRecord alignment");

// A fill-and-drop buffer (not circular: a session keeps its first records and counts the
// rest as dropped, so a trace never has a hole in the middle of a window).
class ThreadRing {
 public:
  // Allocates and prefaults `capacity` records (touching every page now, so the hot path
  // never takes a page fault). capacity 0 is allowed: every append is dropped.
  explicit ThreadRing(size_t capacity);
  ThreadRing(const ThreadRing&) = delete;
  ThreadRing& operator=(const ThreadRing&) = delete;

  // Producer only. Returns false (and counts a drop) when full.
  bool Append(const RingRecord& r) {
    // Relaxed: only this thread writes size_.
    const size_t n = size_.load(std::memory_order_relaxed);
    if (__builtin_expect(n >= capacity_, 0)) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    records_[n] = r;
    // Release: the collector's acquire load of size_ then sees the record bytes.
    size_.store(n + 1, std::memory_order_release);
    return true;
  }
  // Producer only: forget everything (start of a new session).
  void Reset() {
    size_.store(0, std::memory_order_release);
    dropped_.store(0, std::memory_order_relaxed);
  }

  // Collector side.
  size_t size() const { return size_.load(std::memory_order_acquire); }
  const RingRecord& at(size_t i) const { return records_[i]; }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  size_t capacity() const { return capacity_; }

 private:
  std::unique_ptr<RingRecord[]> records_;
  size_t capacity_;
  std::atomic<size_t> size_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_THREAD_RING_H_
