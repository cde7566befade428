// File: test/sim/src/cupti_store.cc
// Layer: CUDA/CUPTI simulator, substitute libcupti.so.13: activity buffers.
// Threading: see cupti_store.h. Lock order: deliver_mu_ before mu_; client
//            completion callbacks run with only deliver_mu_ held.
#include "cupti_store.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "cupti_records.h"
#include "sim_common.h"
#include "sim_private.h"

namespace kairos::sim {
namespace {

// Bounded memory: GPU records waiting for their simulated end time.
constexpr size_t kMaxPending = 1u << 20;
// CUPTI's own heuristic period when the client sets none.
constexpr uint32_t kDefaultFlushPeriodMs = 20;

}  // namespace

ActivityStore::ActivityStore(const StoreFaults& faults) : faults_(faults) {}

void ActivityStore::Register(CUpti_BuffersCallbackRequestFunc request,
                             CUpti_BuffersCallbackCompleteFunc complete) {
  std::lock_guard<std::mutex> lock(mu_);
  request_ = request;
  complete_ = complete;
  if (!worker_.joinable() && !stop_) {
    worker_ = std::thread([this] { WorkerLoop(); });
  }
}

bool ActivityStore::registered() const {
  std::lock_guard<std::mutex> lock(mu_);
  return request_ != nullptr && complete_ != nullptr;
}

void ActivityStore::Append(const void* record, size_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  WriteLocked(static_cast<const uint8_t*>(record), size);
}

void ActivityStore::QueueGpu(const void* record, size_t size, uint64_t complete_mono_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  if (request_ == nullptr || size > sizeof(Pending::bytes) || pending_.size() >= kMaxPending) {
    ++dropped_;
    return;
  }
  Pending p;
  p.complete_mono_ns = complete_mono_ns;
  p.size = static_cast<uint32_t>(size);
  std::memcpy(p.bytes, record, size);
  pending_.push_back(p);
}

bool ActivityStore::EnsureBufferLocked(size_t size) {
  bool fits = cur_ != nullptr && cur_used_ + size <= cur_size_ &&
              (cur_max_records_ == 0 || cur_records_ < cur_max_records_);
  if (fits) return true;
  if (cur_ != nullptr) RetireCurrentLocked(/*full=*/true);
  if (request_ == nullptr) return false;
  ++requests_;
  if (faults_.withhold_buffers < 0 || requests_ <= faults_.withhold_buffers) {
    KSIM_DIAG("KAIROS_SIM_CUPTI_WITHHOLD_BUFFERS: buffer request %lld withheld", requests_);
    return false;
  }
  uint8_t* buffer = nullptr;
  size_t buffer_size = 0;
  size_t max_records = 0;
  uint64_t t0 = MonoNowNs();
  request_(&buffer, &buffer_size, &max_records);
  uint64_t t1 = MonoNowNs();
  if (buffer == nullptr || buffer_size < size) {
    // A refused (or too small) buffer: the records that needed it are dropped.
    if (buffer != nullptr && complete_ != nullptr) {
      done_.push_back(Done{buffer, buffer_size, 0, 0});
    }
    return false;
  }
  cur_ = buffer;
  cur_size_ = buffer_size;
  cur_used_ = 0;
  cur_records_ = 0;
  cur_max_records_ = max_records;
  if (overhead_enabled_ != nullptr && overhead_enabled_() &&
      sizeof(CUpti_ActivityOverhead3) + size <= cur_size_) {
    CUpti_ActivityOverhead3 o;
    std::memset(&o, 0, sizeof(o));
    o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST;
    o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    o.objectId.pt.processId = static_cast<uint32_t>(getpid());
    o.objectId.pt.threadId = KSimThreadId();
    o.start = KSimToCuptiTime(t0);
    o.end = KSimToCuptiTime(t1);
    std::memcpy(cur_, &o, sizeof(o));
    cur_used_ = sizeof(o);
    cur_records_ = 1;
  }
  return true;
}

void ActivityStore::WriteLocked(const uint8_t* record, size_t size) {
  if (!EnsureBufferLocked(size)) {
    ++dropped_;
    return;
  }
  std::memcpy(cur_ + cur_used_, record, size);
  cur_used_ += size;
  ++cur_records_;
}

void ActivityStore::RetireCurrentLocked(bool full) {
  uint64_t ready = MonoNowNs() + static_cast<uint64_t>(faults_.completion_delay_ms) * 1000000ull;
  done_.push_back(Done{cur_, cur_size_, cur_used_, ready});
  cur_ = nullptr;
  cur_size_ = cur_used_ = cur_records_ = cur_max_records_ = 0;
  if (full) cv_.notify_all();
}

void ActivityStore::DrainLocked(bool forced, uint64_t now) {
  // Records complete in end-time order per stream but are queued in launch
  // order; a record is written once everything queued before it that is still
  // running has been passed over, so scan the whole queue.
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->complete_mono_ns <= now || forced) {
      if (it->complete_mono_ns > now) {
        ClearGpuTimestamps(it->bytes);
      } else {
        ConvertGpuTimestamps(it->bytes, [](uint64_t t) { return KSimToCuptiTime(t); });
      }
      WriteLocked(it->bytes, it->size);
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
}

CUptiResult ActivityStore::FlushAll(uint32_t flag) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (request_ == nullptr || complete_ == nullptr) return CUPTI_ERROR_INVALID_OPERATION;
    const bool forced = (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0;
    DrainLocked(forced, MonoNowNs());
    // Records still running would sit in the current buffer on a real GPU: it stays.
    const bool held = !forced && faults_.hold_incomplete && !pending_.empty();
    if (cur_ != nullptr && cur_used_ > 0 && !held) RetireCurrentLocked(/*full=*/false);
  }
  if (faults_.completion_delay_ms > 0) {
    // Delayed completion: the buffers arrive from the worker after the delay,
    // i.e. after this flush has returned.
    cv_.notify_all();
    return CUPTI_SUCCESS;
  }
  Deliver(/*all=*/true);
  return CUPTI_SUCCESS;
}

void ActivityStore::ReorderRecords(uint8_t* buffer, size_t valid) {
  std::vector<std::pair<size_t, size_t>> spans;  // offset, size
  size_t off = 0;
  while (off + sizeof(uint32_t) <= valid) {
    uint32_t kind;
    std::memcpy(&kind, buffer + off, sizeof(kind));
    size_t size = RecordSize(kind);
    if (size == 0 || off + size > valid) break;
    spans.emplace_back(off, size);
    off += size;
  }
  std::vector<uint8_t> copy(buffer, buffer + off);
  size_t out = 0;
  for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
    std::memcpy(buffer + out, copy.data() + it->first, it->second);
    out += it->second;
  }
}

void ActivityStore::Deliver(bool all) {
  std::lock_guard<std::mutex> deliver_lock(deliver_mu_);
  for (;;) {
    Done d;
    CUpti_BuffersCallbackCompleteFunc complete;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (done_.empty() || complete_ == nullptr) return;
      if (!all && done_.front().ready_mono_ns > MonoNowNs()) return;
      d = done_.front();
      done_.pop_front();
      complete = complete_;
    }
    if (faults_.reorder && d.valid > 0) ReorderRecords(d.buffer, d.valid);
    complete(nullptr, 0, d.buffer, d.size, d.valid);
  }
}

void ActivityStore::WorkerLoop() {
  // Its own name: a thread inherits its creator's, and the creator is often one of kairos'
  // threads (kairos-telem enables activity in telemetry mode), so benchmarks that count the
  // CPU time of kairos-* threads counted this simulated CUPTI worker as kairos' own.
  pthread_setname_np(pthread_self(), "ksim-activity");
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      uint32_t period = flush_period_ms_ != 0 ? flush_period_ms_ : kDefaultFlushPeriodMs;
      cv_.wait_for(lock, std::chrono::milliseconds(period));
      if (stop_) return;
      // Periodic flush: only records that are complete, and only full buffers
      // (retired by WriteLocked) are handed out here.
      DrainLocked(/*forced=*/false, MonoNowNs());
    }
    Deliver(/*all=*/false);
  }
}

size_t ActivityStore::TakeDropped() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(dropped_, 0);
}

void ActivityStore::SetFlushPeriodMs(uint32_t ms) {
  std::lock_guard<std::mutex> lock(mu_);
  flush_period_ms_ = ms;
}

void ActivityStore::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.clear();
  if (cur_ != nullptr) RetireCurrentLocked(/*full=*/false);
}

void ActivityStore::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

}  // namespace kairos::sim
