// File: test/sim/src/cupti_store.h
// Layer: CUDA/CUPTI simulator, substitute libcupti.so.13: activity buffers.
// Threading: all methods are thread-safe. Client buffer-request callbacks run
//            on the thread that writes the record (API thread or the worker);
//            completion callbacks run on the worker thread (periodic and full
//            buffers) or on the caller of FlushAll, never under the store lock.
//
// ActivityStore does what CUPTI's buffer machinery does: it asks the client for
// buffers, writes records back to back at their current CUDA 13 sizes, counts
// records it cannot place, keeps GPU records until their simulated end time
// has passed (they are "incomplete" before that) and hands buffers back.
#ifndef KAIROS_TEST_SIM_SRC_CUPTI_STORE_H_
#define KAIROS_TEST_SIM_SRC_CUPTI_STORE_H_

#include <cupti.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace kairos::sim {

struct StoreFaults {
  long long withhold_buffers = 0;   // first N requests get no buffer; <0: all
  long long completion_delay_ms = 0;
  bool reorder = false;             // reverse record order inside each buffer
  // A default (not forced) flush returns no buffer while a record is incomplete, as real
  // CUPTI's (cupti_activity.h: "It doesn't return buffers which have one or more incomplete
  // records"; real CUPTI writes a kernel's record at launch, so a running kernel holds back
  // the buffer it sits in; seen on an H100 as telemetry lines alternating ~30/~450 kernels).
  bool hold_incomplete = true;
};

class ActivityStore {
 public:
  explicit ActivityStore(const StoreFaults& faults);
  ActivityStore(const ActivityStore&) = delete;
  ActivityStore& operator=(const ActivityStore&) = delete;

  void Register(CUpti_BuffersCallbackRequestFunc request, CUpti_BuffersCallbackCompleteFunc complete);
  bool registered() const;
  // Writes a complete (CPU-side) record now.
  void Append(const void* record, size_t size);
  // Keeps a GPU record until `complete_mono_ns`.
  void QueueGpu(const void* record, size_t size, uint64_t complete_mono_ns);
  // cuptiActivityFlushAll semantics; INVALID_OPERATION when not registered.
  CUptiResult FlushAll(uint32_t flag);
  // Dropped records since the previous call.
  size_t TakeDropped();
  void SetFlushPeriodMs(uint32_t ms);
  // Drops incomplete GPU records and forgets the client callbacks.
  void Reset();
  // Stops the worker (process exit).
  void Shutdown();

  // Set by the owner so buffer requests can be accounted as OVERHEAD records.
  void set_overhead_enabled(bool (*enabled)()) { overhead_enabled_ = enabled; }

 private:
  struct Pending {
    uint64_t complete_mono_ns;
    uint32_t size;
    uint8_t bytes[224];
  };
  struct Done {
    uint8_t* buffer;
    size_t size;
    size_t valid;
    uint64_t ready_mono_ns;
  };

  void WriteLocked(const uint8_t* record, size_t size);
  bool EnsureBufferLocked(size_t size);
  void RetireCurrentLocked(bool full);
  void DrainLocked(bool forced, uint64_t now);
  // Hands out ready buffers; `all` ignores the completion-delay knob.
  void Deliver(bool all);
  void WorkerLoop();
  void ReorderRecords(uint8_t* buffer, size_t valid);

  const StoreFaults faults_;
  mutable std::mutex mu_;
  std::mutex deliver_mu_;  // serializes completion callbacks
  std::condition_variable cv_;
  CUpti_BuffersCallbackRequestFunc request_ = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete_ = nullptr;
  uint8_t* cur_ = nullptr;
  size_t cur_size_ = 0;
  size_t cur_used_ = 0;
  size_t cur_records_ = 0;
  size_t cur_max_records_ = 0;
  long long requests_ = 0;
  std::deque<Pending> pending_;
  std::deque<Done> done_;
  size_t dropped_ = 0;
  uint32_t flush_period_ms_ = 0;
  bool stop_ = false;
  bool (*overhead_enabled_)() = nullptr;
  std::thread worker_;
};

}  // namespace kairos::sim

#endif  // KAIROS_TEST_SIM_SRC_CUPTI_STORE_H_
