// File: cupti_buffers.cc
// Layer: kairos_activity. See cupti_buffers.h.
// Threading: see cupti_buffers.h.
#include "activity/cupti_buffers.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "util/thread_name.h"

namespace kairos::internal {

CuptiBufferPool::~CuptiBufferPool() {
  Stop();
  Free();
}

namespace {
// Free buffers kept ahead of CUPTI: when fewer are free, the worker adds exactly the
// missing ones (prefaulted). One: CUPTI fills a buffer before it asks for the next, and each
// extra prefaulted buffer (1 MiB) is resident memory the job pays for (issue 12: two spares
// grown in pairs left 5 buffers, 21 MB, resident for a 2000-step loop that needs 2).
constexpr size_t kGrowChunk = 1;
}  // namespace

uint8_t* CuptiBufferPool::NewBuffer(bool prefault) const {
  const long page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
  auto* b = static_cast<uint8_t*>(std::aligned_alloc(static_cast<size_t>(page), alloc_size_));
  // Prefault (off the caller's thread) so CUPTI's writes into it take no page faults.
  if (b != nullptr && prefault) std::memset(b, 0, alloc_size_);
  return b;
}

void CuptiBufferPool::AddLocked(uint8_t* b) {
  buffers_.insert(std::upper_bound(buffers_.begin(), buffers_.end(), b), b);
  free_.push_back(b);
}

bool CuptiBufferPool::WantGrowLocked() const {
  return free_.size() + growing_ < kGrowChunk && buffers_.size() + growing_ < max_count_;
}

absl::Status CuptiBufferPool::Allocate(size_t size, size_t count, size_t initial) {
  size = (size + 7) & ~size_t{7};
  if (size == 0 || count == 0) return absl::InvalidArgumentError("empty CUPTI buffer pool");
  if (initial > count) initial = count;
  std::lock_guard<std::mutex> lock(mu_);
  if (size == size_ && count == max_count_ && !buffers_.empty()) return absl::OkStatus();
  if (outstanding_ != 0 || queue_head_ != queue_.size() || busy_ || growing_ != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "CUPTI still holds ", outstanding_, " activity buffers of the previous session"));
  }
  for (uint8_t* b : buffers_) std::free(b);
  buffers_.clear();
  free_.clear();
  const long page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
  alloc_size_ = (size + page - 1) / page * page;
  size_ = size;
  max_count_ = 0;
  // Capacity for the whole bound now, so later growth and hand-offs never reallocate.
  buffers_.reserve(count);
  free_.reserve(count);
  queue_.clear();
  queue_.reserve(count);
  queue_head_ = 0;
  for (size_t i = 0; i < initial; ++i) {
    uint8_t* b = NewBuffer(true);
    if (b == nullptr) {
      for (uint8_t* x : buffers_) std::free(x);
      buffers_.clear();
      free_.clear();
      size_ = 0;
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", initial, " CUPTI buffers of ", size, " bytes"));
    }
    AddLocked(b);
  }
  max_count_ = count;
  return absl::OkStatus();
}

bool CuptiBufferPool::Free() {
  std::lock_guard<std::mutex> lock(mu_);
  if (outstanding_ != 0 || queue_head_ != queue_.size() || busy_ || growing_ != 0) return false;
  for (uint8_t* b : buffers_) std::free(b);
  buffers_.clear();
  buffers_.shrink_to_fit();
  max_count_ = 0;
  free_.clear();
  free_.shrink_to_fit();
  queue_.clear();
  queue_.shrink_to_fit();
  queue_head_ = 0;
  size_ = 0;
  return true;
}

bool CuptiBufferPool::Owns(const uint8_t* buffer) const {
  return std::binary_search(buffers_.begin(), buffers_.end(), buffer);
}

uint8_t* CuptiBufferPool::Acquire() {
  bool inline_grow = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      uint8_t* b = free_.back();
      free_.pop_back();
      ++outstanding_;
      if (WantGrowLocked() && worker_.joinable() && !grow_requested_) {
        grow_requested_ = true;
        work_cv_.notify_one();
      }
      return b;
    }
    // The worker's buffers in flight do not count here: refusing because of one that is
    // still being prefaulted would drop records a moment before a buffer is free.
    if (buffers_.size() + inline_growing_ >= max_count_) {
      ++refused_;
      return nullptr;
    }
    // None free and the worker has not caught up: one buffer now beats dropping records.
    ++growing_;
    ++inline_growing_;
    inline_grow = true;
  }
  uint8_t* b = inline_grow ? NewBuffer(false) : nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  --growing_;
  --inline_growing_;
  if (b != nullptr && buffers_.size() >= max_count_) {
    // The worker's buffers landed meanwhile and filled the bound: give this one back (the
    // bound is exceeded by at most this buffer, for this moment) and take one of theirs.
    std::free(b);
    b = nullptr;
    if (!free_.empty()) {
      b = free_.back();
      free_.pop_back();
      ++outstanding_;
      return b;
    }
  }
  if (b == nullptr) {
    ++refused_;
    return nullptr;
  }
  ++grown_inline_;
  buffers_.insert(std::upper_bound(buffers_.begin(), buffers_.end(), b), b);
  ++outstanding_;
  return b;
}

void CuptiBufferPool::Complete(uint8_t* buffer, size_t valid_size) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (buffer == nullptr || !Owns(buffer)) {
      ++foreign_;
      return;
    }
    if (outstanding_ > 0) --outstanding_;
    ++completed_;
    // queue_ never holds more than count entries, so this push does not reallocate.
    if (queue_head_ == queue_.size()) {
      queue_.clear();
      queue_head_ = 0;
    }
    queue_.push_back(Completed{buffer, std::min(valid_size, size_)});
  }
  work_cv_.notify_one();
}

void CuptiBufferPool::Start(ProcessFn process, IdleFn idle) {
  Stop();
  std::lock_guard<std::mutex> lock(mu_);
  process_ = std::move(process);
  idle_ = std::move(idle);
  stop_ = false;
  // A pool started with fewer than kGrowChunk free buffers fills up on the worker first.
  grow_requested_ = WantGrowLocked();
  worker_ = std::thread([this] { WorkerLoop(); });
}

void CuptiBufferPool::WorkerLoop() {
  NameThisThread("cupti");
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stop_ || grow_requested_ || queue_head_ != queue_.size(); });
    if (grow_requested_) {
      grow_requested_ = false;
      // Add a prefaulted chunk here, off CUPTI's (the application's) thread.
      while (WantGrowLocked()) {
        const size_t n = std::min(kGrowChunk - free_.size() - growing_,
                                  max_count_ - buffers_.size() - growing_);
        growing_ += n;
        const size_t size = size_;
        lock.unlock();
        uint8_t* fresh[kGrowChunk] = {};
        for (size_t i = 0; i < n; ++i) fresh[i] = NewBuffer(true);
        lock.lock();
        growing_ -= n;
        bool failed = false;
        for (size_t i = 0; i < n; ++i) {
          // A new geometry cannot have been set meanwhile (Allocate refuses while growing_).
          if (fresh[i] != nullptr && size == size_ && buffers_.size() >= max_count_) {
            std::free(fresh[i]);  // requests grew the pool to its bound meanwhile
          } else if (fresh[i] != nullptr && size == size_) {
            AddLocked(fresh[i]);
          } else {
            std::free(fresh[i]);
            failed = true;
          }
        }
        if (failed) break;  // out of memory: CUPTI's later requests are refused and counted
      }
      continue;
    }
    if (queue_head_ == queue_.size()) {
      if (stop_) return;
      continue;
    }
    const Completed c = queue_[queue_head_++];
    busy_ = true;
    lock.unlock();
    if (process_) process_(c.buffer, c.valid_size);
    lock.lock();
    free_.push_back(c.buffer);
    if (queue_head_ == queue_.size() && idle_ && !stop_) {
      // Caught up: still busy_ (Drain waits), the mutex free for CUPTI's callbacks.
      lock.unlock();
      idle_();
      lock.lock();
    }
    busy_ = false;
    if (queue_head_ == queue_.size()) idle_cv_.notify_all();
  }
}

void CuptiBufferPool::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!worker_.joinable()) return;
  idle_cv_.wait(lock, [this] { return queue_head_ == queue_.size() && !busy_; });
}

void CuptiBufferPool::Stop() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!worker_.joinable()) return;
    idle_cv_.wait(lock, [this] { return queue_head_ == queue_.size() && !busy_; });
    stop_ = true;
  }
  work_cv_.notify_all();
  worker_.join();
  std::lock_guard<std::mutex> lock(mu_);
  process_ = nullptr;
}

size_t CuptiBufferPool::buffer_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return buffers_.size();
}
uint64_t CuptiBufferPool::grown_inline() const {
  std::lock_guard<std::mutex> lock(mu_);
  return grown_inline_;
}
size_t CuptiBufferPool::free_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return free_.size();
}
size_t CuptiBufferPool::outstanding() const {
  std::lock_guard<std::mutex> lock(mu_);
  return outstanding_;
}
uint64_t CuptiBufferPool::refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}
uint64_t CuptiBufferPool::foreign() const {
  std::lock_guard<std::mutex> lock(mu_);
  return foreign_;
}
uint64_t CuptiBufferPool::completed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return completed_;
}

}  // namespace kairos::internal
