// File: cupti_buffers.h
// Layer: kairos_activity. The CUPTI activity buffer pool and the hand-off to the conversion
// worker. CUPTI's request callback takes a buffer from the pool; its complete callback only
// queues the buffer. A kairos worker thread runs the conversion and gives the buffer back.
// Memory follows use: warm-up allocates and prefaults a few buffers; when the free list runs
// low, the worker (not the caller's thread) adds a prefaulted chunk, up to the configured
// count. Only if CUPTI asks while none is free and the worker has not caught up does the
// request allocate one buffer itself (counted in grown_inline()) rather than drop records,
// also while the worker is still prefaulting one: of the two, the one that lands when the
// pool is already at its bound is freed (the bound is exceeded by one buffer for that moment).
// Threading: Acquire/Complete may be called from any thread (CUPTI calls them from
// application threads and its own worker, concurrently); they take one short mutex.
// Allocate/Start/Drain/Stop/Free are for the session thread.
#ifndef KAIROS_SRC_ACTIVITY_CUPTI_BUFFERS_H_
#define KAIROS_SRC_ACTIVITY_CUPTI_BUFFERS_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace kairos::internal {

class CuptiBufferPool {
 public:
  // Runs on the worker thread for each completed buffer.
  using ProcessFn = std::function<void(const uint8_t* buffer, size_t valid_size)>;

  CuptiBufferPool() = default;
  // A forked child's pool, replacing the parent's `abandoned_parent` (see that member).
  explicit CuptiBufferPool(const CuptiBufferPool* abandoned_parent)
      : abandoned_parent_(abandoned_parent) {}
  ~CuptiBufferPool();
  CuptiBufferPool(const CuptiBufferPool&) = delete;
  CuptiBufferPool& operator=(const CuptiBufferPool&) = delete;

  // Sets the geometry: at most `count` buffers of `size` bytes (8-byte aligned; size rounded
  // up to 8); allocates and touches every page of `initial` of them now (more than `count` =
  // all). With none free, Start() has the worker prefault the first one at once,
  // off the calling thread. Keeps the current buffers when the geometry is unchanged. Fails
  // while CUPTI still holds buffers of an older geometry.
  absl::Status Allocate(size_t size, size_t count, size_t initial = SIZE_MAX);
  // Frees the buffers when CUPTI holds none; returns false (keeping them) otherwise.
  bool Free();

  // CUPTI request callback: a free buffer, or nullptr when the pool is empty (CUPTI then
  // drops and counts the records that would have gone there; refused() counts requests).
  uint8_t* Acquire();
  // CUPTI complete callback: queue for the worker. A buffer that is not from this pool is
  // ignored and counted in foreign().
  void Complete(uint8_t* buffer, size_t valid_size);

  // Runs on the worker thread when it has processed a buffer and none is waiting: work that
  // readies the next buffer's processing (the converter's event store, cupti_convert.h), off
  // the path of processing one. Drain() and Stop() wait for it like for a buffer.
  using IdleFn = std::function<void()>;

  // Starts the worker that calls `process` for each completed buffer, in completion order,
  // and `idle` (if set) whenever it has caught up.
  void Start(ProcessFn process, IdleFn idle = {});
  // Blocks until every buffer completed so far has been processed.
  void Drain();
  // Drains, then stops and joins the worker.
  void Stop();

  size_t buffer_size() const { return size_; }
  size_t buffer_count() const;  // allocated so far
  size_t max_buffers() const { return max_count_; }
  uint64_t grown_inline() const;
  size_t free_count() const;
  size_t outstanding() const;  // handed to CUPTI and not yet completed
  uint64_t refused() const;
  uint64_t foreign() const;
  uint64_t completed() const;

 private:
  // In a forked child, the parent's pool this one replaced: never touched (its worker thread
  // does not exist here, its mutex may be held), only kept reachable for leak checkers. A
  // chain over nested forks.
  const CuptiBufferPool* abandoned_parent_ = nullptr;

  struct Completed {
    uint8_t* buffer;
    size_t valid_size;
  };
  bool Owns(const uint8_t* buffer) const;
  void WorkerLoop();
  // One zeroed, page-aligned buffer of `size_` bytes; nullptr when out of memory.
  uint8_t* NewBuffer(bool prefault) const;
  // Adds `b` to the pool (mu_ held; capacity reserved, so nothing reallocates).
  void AddLocked(uint8_t* b);
  bool WantGrowLocked() const;

  size_t size_ = 0;
  size_t alloc_size_ = 0;   // size_ rounded up to pages
  size_t max_count_ = 0;
  size_t growing_ = 0;      // buffers being allocated outside the mutex
  size_t inline_growing_ = 0;  // of those, by Acquire itself (the rest by the worker)
  bool grow_requested_ = false;
  uint64_t grown_inline_ = 0;
  std::vector<uint8_t*> buffers_;  // every buffer of the pool, sorted by address
  mutable std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  std::vector<uint8_t*> free_;        // capacity == count: push/pop never allocate
  std::vector<Completed> queue_;      // capacity == count
  size_t queue_head_ = 0;
  size_t outstanding_ = 0;
  bool busy_ = false;
  bool stop_ = false;
  uint64_t refused_ = 0, foreign_ = 0, completed_ = 0;
  ProcessFn process_;
  IdleFn idle_;
  std::thread worker_;
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CUPTI_BUFFERS_H_
