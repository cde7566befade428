// File: pipelined_sink.cc
// Layer: kairos_output. See pipelined_sink.h.
// Threading: the caller's thread fills buffers; kairos-write empties them into the inner sink.
#include "output/pipelined_sink.h"

#include <sched.h>
#include <unistd.h>

#include <system_error>
#include <utility>

#include "util/log.h"
#include "util/signal_mask.h"
#include "util/thread_name.h"

namespace kairos {

int PipelinedSink::UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

PipelinedSink::PipelinedSink(ByteSink& inner, bool use_thread) : inner_(inner) {
  if (!use_thread) return;
  JobSignalsBlocked blocked;  // kairos threads never take the job's SIGTERM/SIGINT
  try {
    thread_ = std::thread([this] { Loop(); });
  } catch (const std::system_error& e) {
    // Out of threads: write on the caller's thread instead; the trace is the same.
    KAIROS_LOG_ONCE(::kairos::LogLevel::kWarning, "trace writer: no second thread (%s); writing on one", e.what());
  }
}

PipelinedSink::~PipelinedSink() { Close().IgnoreError(); }

absl::Status PipelinedSink::Error() {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

absl::Status PipelinedSink::Write(const void* data, size_t size) {
  if (finished_) return absl::FailedPreconditionError("trace sink already finished");
  if (fill_.capacity() == 0) {
    std::unique_lock<std::mutex> lock(mu_);
    free_cv_.wait(lock, [this] { return !free_.empty() || buffers_ < kBuffers || !status_.ok(); });
    if (!status_.ok()) return status_;
    if (!free_.empty()) {
      fill_ = std::move(free_.back());
      free_.pop_back();
    } else {
      ++buffers_;
      lock.unlock();
      fill_.reserve(kHandOffBytes + 64 * 1024);  // a hand-off plus one writer chunk
    }
  } else if (absl::Status s = Error(); !s.ok()) {
    return s;
  }
  const char* p = static_cast<const char*>(data);
  fill_.insert(fill_.end(), p, p + size);
  if (fill_.size() >= kHandOffBytes) return HandOff();
  return absl::OkStatus();
}

absl::Status PipelinedSink::HandOff() {
  if (fill_.empty()) return absl::OkStatus();
  if (!thread_.joinable()) {
    // One thread: the same large writes, on the caller's thread.
    absl::Status s = inner_.Write(fill_.data(), fill_.size());
    fill_.clear();
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (status_.ok()) status_ = s;
    }
    return s;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    work_.push_back(std::move(fill_));
  }
  fill_ = std::vector<char>();  // capacity 0: the next Write takes a free buffer
  work_cv_.notify_one();
  return absl::OkStatus();
}

void PipelinedSink::Loop() {
  NameThisThread("write");
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stop_ || !work_.empty(); });
    if (work_.empty()) return;  // stop_ and drained
    std::vector<char> buf = std::move(work_.front());
    work_.pop_front();
    const bool write = status_.ok();  // after an error the rest is dropped, not written
    lock.unlock();
    absl::Status s = write ? inner_.Write(buf.data(), buf.size()) : absl::OkStatus();
    buf.clear();
    lock.lock();
    if (!s.ok() && status_.ok()) status_ = std::move(s);
    free_.push_back(std::move(buf));
    free_cv_.notify_one();
  }
}

absl::Status PipelinedSink::Close() {
  if (!thread_.joinable()) {
    if (Error().ok()) HandOff().IgnoreError();  // its error is kept in status_
  } else {
    HandOff().IgnoreError();  // queues; cannot fail
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_one();
    thread_.join();
  }
  fill_ = std::vector<char>();
  std::lock_guard<std::mutex> lock(mu_);
  free_.clear();
  return status_;
}

absl::Status PipelinedSink::Finish() {
  if (finished_) return absl::FailedPreconditionError("trace sink already finished");
  finished_ = true;
  if (absl::Status s = Close(); !s.ok()) return s;
  return inner_.Finish();
}

}  // namespace kairos
