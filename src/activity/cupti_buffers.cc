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

namespace kairos::internal {

CuptiBufferPool::~CuptiBufferPool() {
  Stop();
  Free();
}

absl::Status CuptiBufferPool::Allocate(size_t size, size_t count) {
  size = (size + 7) & ~size_t{7};
  if (size == 0 || count == 0) return absl::InvalidArgumentError("empty CUPTI buffer pool");
  std::lock_guard<std::mutex> lock(mu_);
  if (size == size_ && count == buffers_.size()) return absl::OkStatus();
  if (outstanding_ != 0 || queue_head_ != queue_.size() || busy_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "CUPTI still holds ", outstanding_, " activity buffers of the previous session"));
  }
  for (uint8_t* b : buffers_) std::free(b);
  buffers_.clear();
  free_.clear();
  const long page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
  const size_t alloc = (size + page - 1) / page * page;
  for (size_t i = 0; i < count; ++i) {
    auto* b = static_cast<uint8_t*>(std::aligned_alloc(page, alloc));
    if (b == nullptr) {
      for (uint8_t* x : buffers_) std::free(x);
      buffers_.clear();
      size_ = 0;
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", count, " CUPTI buffers of ", size, " bytes"));
    }
    // Prefault now so the first records of the window do not take page faults.
    std::memset(b, 0, alloc);
    buffers_.push_back(b);
  }
  std::sort(buffers_.begin(), buffers_.end());
  free_ = buffers_;
  free_.reserve(count);
  queue_.clear();
  queue_.reserve(count);
  queue_head_ = 0;
  size_ = size;
  return absl::OkStatus();
}

bool CuptiBufferPool::Free() {
  std::lock_guard<std::mutex> lock(mu_);
  if (outstanding_ != 0 || queue_head_ != queue_.size() || busy_) return false;
  for (uint8_t* b : buffers_) std::free(b);
  buffers_.clear();
  buffers_.shrink_to_fit();
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
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.empty()) {
    ++refused_;
    return nullptr;
  }
  uint8_t* b = free_.back();
  free_.pop_back();
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

void CuptiBufferPool::Start(ProcessFn process) {
  Stop();
  std::lock_guard<std::mutex> lock(mu_);
  process_ = std::move(process);
  stop_ = false;
  worker_ = std::thread([this] { WorkerLoop(); });
}

void CuptiBufferPool::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stop_ || queue_head_ != queue_.size(); });
    if (queue_head_ == queue_.size()) {
      if (stop_) return;
      continue;
    }
    const Completed c = queue_[queue_head_++];
    busy_ = true;
    lock.unlock();
    if (process_) process_(c.buffer, c.valid_size);
    lock.lock();
    busy_ = false;
    free_.push_back(c.buffer);
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
