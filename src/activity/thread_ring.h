// File: thread_ring.h
// Layer: kairos_activity. The fixed-size record a producer thread appends on the hot path,
// and the per-thread buffer it appends to.
// Threading: one producer (the owning thread) appends; the collector reads [0, size()) after
// an acquire load of the write index. Reset/ReleaseBeyond are called either by the producer
// or by the controller thread under the recorder's registry mutex while the epoch the
// producer would record under is not the one the buffer serves (see cpu_recorder.cc), never
// while the collector reads it. MakeResident is called under the registry mutex,
// also by the ring feeder while the producer appends (they never write a byte).
#ifndef KAIROS_SRC_ACTIVITY_THREAD_RING_H_
#define KAIROS_SRC_ACTIVITY_THREAD_RING_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace kairos::internal {

enum class RecordType : uint8_t {
  kPush = 0,  // range_push: id = new range id
  kPop,       // range_pop: id = popped range id (0 = pop with no push in this session)
  kStart,     // range_start (cross-thread): id = new range id
  kEnd,       // range_end: id = the id kStart returned
  kMark,      // instant
  kStep,      // iteration boundary: id = the iteration that begins here
  kPyCall,    // a Python frame entered (python tracer): name = process-wide Python name id
  kPyReturn,  // the innermost Python frame entered on this thread left (return or exception)
  kMemory,    // a framework allocator's event (kairos_memory_event): args slot = MemoryArgs
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

// The chunk a ring's populate makes one transparent huge page where it can (x86-64's PMD
// size; elsewhere the chunks just come out as small pages): see MakeResident.
inline constexpr size_t kRingHugeBytes = 2u << 20;

// A fill-and-drop buffer (not circular: a session keeps its first records and counts the
// rest as dropped, so a trace never has a hole in the middle of a window), followed by an
// `aux_bytes` side area (the thread's NVTX args slots) in the same allocation.
// Large buffers are private anonymous mappings, so Release() can hand their pages back to
// the kernel between sessions while the address range stays valid (a late write from a
// thread that read a stale epoch lands in a fresh zero page instead of freed memory).
class ThreadRing {
 public:
  // Allocates `capacity` records plus `aux_bytes` (address space only, for mapped buffers: the
  // ring feeder makes them resident as they are used, MakeResident). Allocation failure
  // leaves capacity 0 (every append is dropped and counted), never throws.
  ThreadRing(size_t capacity, size_t aux_bytes);
  ~ThreadRing();
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
  // Forget everything (start of a new session).
  void Reset() {
    size_.store(0, std::memory_order_release);
    dropped_.store(0, std::memory_order_relaxed);
  }
  // Resident memory grows with use, ahead of the writer, on kairos' threads (never the
  // producer's: a first touch of a fresh page costs the writer a page fault, 2-3 us under a
  // hypervisor). The calls below are made under the recorder's registry mutex.
  //
  // Makes the pages holding records [0, record_bytes) and side-area bytes [0, aux_bytes)
  // resident, populating at most `budget` bytes of new pages (callers bound how long they
  // hold the registry mutex; a whole kRingHugeBytes chunk, once begun, may overshoot it by
  // less than a chunk); returns the bytes populated. Whole aligned chunks past the first
  // come as transparent huge pages where the kernel has them (a fresh 4 KiB page costs
  // 2.8 us under a hypervisor, a 2 MiB one 0.17 ms). Never changes a byte: pages the
  // writer already reached keep what it wrote. A no-op for heap buffers (resident).
  size_t MakeResident(size_t record_bytes, size_t aux_bytes, size_t budget);
  // The writer ran past the populated part (the feeder did not run for longer than its lead
  // lasted): its pages up to `used_record_bytes` are resident because it wrote them, and
  // populating the rest of the 2 MiB chunk it is in would race it at small-page speed. The
  // populated part jumps to that chunk's end, the writer faults the rest of its chunk in
  // itself, and the next MakeResident goes on from there with whole (huge) chunks, so one
  // stall of the feeder costs the writer at most one chunk of faults, not a chase.
  // Returns the bytes skipped (0 when the writer is not ahead).
  size_t SkipPastWriter(size_t used_record_bytes);
  // Returns the pages past the first `keep_record_bytes` of records (and past the first page
  // of the side area) to the kernel: contents there become zero; the buffer stays usable and
  // refaults on use. Only for mapped buffers; a no-op for small heap ones.
  void ReleaseBeyond(size_t keep_record_bytes);
  void Release() { ReleaseBeyond(0); }
  // Bytes of records / side area made resident since the last release (page-aligned).
  size_t resident_record_bytes() const { return resident_record_bytes_; }
  size_t resident_aux_bytes() const { return resident_aux_bytes_; }
  size_t record_bytes() const { return capacity_ * sizeof(RingRecord); }
  bool resident() const { return resident_record_bytes_ >= record_bytes(); }
  // The ring feeder's bookkeeping (registry mutex). The rates outlive a window: a writer's
  // speed in one window sizes the lead made resident at the next warm-up.
  struct FeedState {
    size_t records = 0;       // size() at the feeder's last pass in this window
    size_t args = 0;          // args slots used at that pass
    int64_t last_ns = 0;      // steady-clock time of that pass; 0 = none yet in this window
    double record_bytes_per_ns = 0;
    double args_bytes_per_ns = 0;
    // What the previous window used: the next warm-up makes that much resident too (a
    // window is likely to look like the last one).
    size_t last_window_record_bytes = 0;
    size_t last_window_args_bytes = 0;
  } feed;
  // Adds `n` to the drop count (records a compacted copy could not keep).
  void AddDropped(uint64_t n) { dropped_.fetch_add(n, std::memory_order_relaxed); }
  // Copies the first `records` records and `aux_bytes` of the side area into a new buffer
  // of exactly that size (an exited thread's data kept until the flush), with this
  // buffer's drop count. nullptr when out of memory.
  ThreadRing* CompactCopy(size_t records, size_t aux_bytes) const;

  // Collector side.
  size_t size() const { return size_.load(std::memory_order_acquire); }
  const RingRecord& at(size_t i) const { return records_[i]; }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  size_t capacity() const { return capacity_; }
  void* aux() const { return aux_; }
  size_t aux_bytes() const { return aux_bytes_; }
  bool mapped() const { return mapped_; }

 private:
  RingRecord* records_ = nullptr;
  void* aux_ = nullptr;
  size_t capacity_ = 0;
  size_t aux_bytes_ = 0;
  size_t bytes_ = 0;  // whole allocation
  bool mapped_ = false;
  size_t resident_record_bytes_ = 0;  // see resident_record_bytes()
  size_t resident_aux_bytes_ = 0;
  std::atomic<size_t> size_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_THREAD_RING_H_
