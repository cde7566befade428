// File: pipelined_sink.cc
// Layer: kairos_output. See pipelined_sink.h.
// Threading: the caller's thread fills buffers; kairos-write empties them into the inner sink.
#include "output/pipelined_sink.h"

#include <sched.h>
#include <unistd.h>

#include <cstring>
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

PipelinedSink::Buffer PipelinedSink::TakeFree(std::unique_lock<std::mutex>& lock,
                                              bool stop_on_error) {
  free_cv_.wait(lock, [&] {
    return !free_.empty() || buffers_ < kBuffers || (stop_on_error && !status_.ok());
  });
  Buffer b;
  if (!free_.empty()) {
    b = std::move(free_.back());
    free_.pop_back();
  } else if (buffers_ < kBuffers) {
    ++buffers_;
    b.cap = kHandOffBytes + 64 * 1024;  // a hand-off plus one writer chunk
    b.data.reset(new char[b.cap]);
  }
  return b;
}

absl::Status PipelinedSink::Write(const void* data, size_t size) {
  if (finished_) return absl::FailedPreconditionError("trace sink already finished");
  if (!fill_.data) {
    std::unique_lock<std::mutex> lock(mu_);
    fill_ = TakeFree(lock, /*stop_on_error=*/true);
    if (!status_.ok()) return status_;  // known by now: say so before taking more bytes
  } else if (absl::Status s = Error(); !s.ok()) {
    return s;
  }
  if (fill_.len + size > fill_.cap) {  // a Write larger than a hand-off
    const size_t cap = fill_.len + size;
    std::unique_ptr<char[]> bigger(new char[cap]);
    std::memcpy(bigger.get(), fill_.data.get(), fill_.len);
    fill_.data = std::move(bigger);
    fill_.cap = cap;
  }
  std::memcpy(fill_.data.get() + fill_.len, data, size);
  fill_.len += size;
  if (fill_.len >= kHandOffBytes) return HandOff();
  return absl::OkStatus();
}

absl::Status PipelinedSink::Exchange(std::unique_ptr<char[]>* buf, size_t* cap, size_t len) {
  if (finished_) return absl::FailedPreconditionError("trace sink already finished");
  if (absl::Status s = HandOff(); !s.ok()) return s;  // what Write collected goes first
  if (!thread_.joinable()) {
    if (absl::Status s = Error(); !s.ok()) return s;
    absl::Status s = inner_.Write(buf->get(), len);
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (status_.ok()) status_ = s;
    }
    return s;
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (!status_.ok()) return status_;
  Buffer out;
  out.data = std::move(*buf);
  out.cap = *cap;
  out.len = len;
  work_.push_back(std::move(out));
  work_cv_.notify_one();
  // kairos-write returns every buffer it took, error or not, so this wait ends.
  Buffer back = TakeFree(lock, /*stop_on_error=*/false);
  *buf = std::move(back.data);
  *cap = back.cap;
  return status_;
}

absl::Status PipelinedSink::HandOff() {
  if (fill_.len == 0) return absl::OkStatus();
  if (!thread_.joinable()) {
    // One thread: the same large writes, on the caller's thread.
    absl::Status s = inner_.Write(fill_.data.get(), fill_.len);
    fill_.len = 0;
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
  fill_ = Buffer();  // the next Write takes a free buffer
  work_cv_.notify_one();
  return absl::OkStatus();
}

void PipelinedSink::Loop() {
  NameThisThread("write");
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stop_ || !work_.empty(); });
    if (work_.empty()) return;  // stop_ and drained
    Buffer buf = std::move(work_.front());
    work_.pop_front();
    const bool write = status_.ok();  // after an error the rest is dropped, not written
    lock.unlock();
    absl::Status s = write ? inner_.Write(buf.data.get(), buf.len) : absl::OkStatus();
    buf.len = 0;
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
  fill_ = Buffer();
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
