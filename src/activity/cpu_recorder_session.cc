// File: cpu_recorder_session.cc — see cpu_recorder.h.
// Layer: kairos_activity. The CpuRecorder's session steps: sizing the rings and reserving an
// epoch (Prepare), arming the known threads and feeding their rings in warm-up, switching
// the recording epoch on and off, and returning exited threads' memory after the flush
// (Reset). The process-wide part it works on is cpu_recorder.cc's.
// Threading: the session thread; the registry's fields under its mutex.
#include <algorithm>
#include <chrono>
#include <mutex>

#include "activity/cpu_process_state.h"
#include "activity/cpu_recorder.h"

namespace kairos::internal {

void DisableEpoch(uint32_t epoch) {
  g_recorder.epoch.compare_exchange_strong(epoch, 0, std::memory_order_acq_rel);
}

uint32_t CpuRecorder::Prepare(const Config& config) {
  size_t records = options_.ring_records;
  if (records == 0) {
    records = static_cast<size_t>(std::max<int64_t>(config.cpu_buffer_kb_per_thread, 0)) * 1024 /
              sizeof(RingRecord);
  }
  const int64_t max_threads = options_.max_threads > 0 ? options_.max_threads : config.max_threads;
  ConfigureRings(records, max_threads,
                 options_.name_byte_budget > 0 ? options_.name_byte_budget : kDefaultNameByteBudget);
  const uint32_t e = ReserveCpuEpoch();
  next_epoch_.store(e, std::memory_order_release);
  return e;
}

absl::Status CpuRecorder::StartWarmup(const Config& config) {
  TakeCollectFlags(config);
  // A request armed by Prepare() may already record under its reserved epoch (the step hook
  // enabled it at the warm-up boundary); keep it. Otherwise size the rings and take one now.
  const uint32_t reserved = next_epoch_.exchange(0, std::memory_order_acq_rel);
  if (reserved != 0) {
    epoch_ = reserved;
  } else {
    epoch_ = Prepare(config);
    next_epoch_.store(0, std::memory_order_relaxed);
  }
  start_raw_ = 0;
  end_raw_ = ~0ull;
  start_is_step_boundary_ = false;
  // Threads that recorded before get their ring reset and prefaulted here, on the
  // controller thread, instead of on their first record in the window.
  ArmRegisteredThreads(epoch_);
  // Threads that recorded before get what their last window used, and the lead their last
  // rate asks for, made resident now, in warm-up on this (the session's) thread, so a busy
  // thread's records in the window do not race the feeder for their pages. Bounded: past
  // kWarmupFeedNs the feeder thread finishes it.
  const auto steady_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  const int64_t feed_until = steady_ns() + kWarmupFeedNs;
  for (int64_t now = steady_ns(); FeedRings(epoch_, now).behind && now < feed_until;
       now = steady_ns()) {
  }
  feeder_.Start(epoch_);
  return absl::OkStatus();
}

void CpuRecorder::EnableNow() {
  // Release: pairs with nothing on the hot path (it loads relaxed); the ring state a thread
  // needs is published by its own epoch store (ArmRegisteredThreads or the thread itself).
  g_recorder.epoch.store(epoch_, std::memory_order_release);
}

void CpuRecorder::StartRecording(int64_t) {
  EnableNow();
  // Threads record from here on: the feeder looks at their rings often for a few ms, so a
  // new writer that streams from its first record is seen before its head runs out.
  feeder_.Hurry();
}

void CpuRecorder::StopRecording(int64_t) {
  uint32_t expected = epoch_;
  g_recorder.epoch.compare_exchange_strong(expected, 0, std::memory_order_acq_rel);
  feeder_.Stop();
}

void CpuRecorder::SetWindow(uint64_t start_raw, uint64_t end_raw, const ClockConverter& clock,
                            bool start_is_step_boundary) {
  start_raw_ = start_raw;
  end_raw_ = end_raw;
  clock_ = clock;
  start_is_step_boundary_ = start_is_step_boundary;
}

void CpuRecorder::Reset() {
  StopRecording(0);
  feeder_.Stop();
  CpuThreadRegistry* reg = CpuRegistry();
  std::lock_guard<std::mutex> lock(reg->mu);
  // A thread that claimed a pre-armed state is listed in reg->prearmed until the offer
  // closes; close it first, or a claimer that exited would be freed below and written to
  // by the next warm-up's close (ASan: heap-use-after-free in ClosePreArmedOffer).
  ClosePreArmedOfferLocked(reg);
  // Threads that exited are gone for good: free their data now that it is collected.
  auto& v = reg->states;
  size_t kept = 0;
  for (ThreadState* s : v) {
    if (s->exited.load(std::memory_order_acquire)) {
      DeleteThreadState(reg, s);
    } else {
      // Live threads keep their ring's address range (a thread that read a stale epoch may
      // still write there) but give its pages back: all of them when the thread recorded
      // nothing this session, all but the head the next warm-up would make resident again
      // otherwise. The ring keeps its writer's rate, from which the feeder makes the next
      // window's lead resident in warm-up, before the thread's first record.
      if (s->ring_storage != nullptr) {
        ThreadRing::FeedState& f = s->ring_storage->feed;
        f.last_window_record_bytes = s->ring_storage->size() * sizeof(RingRecord);
        f.last_window_args_bytes =
            s->args_used.load(std::memory_order_relaxed) * sizeof(StoredArgs);
        if (s->ring_storage->size() == 0) {
          s->ring_storage->Release();
        } else {
          s->ring_storage->ReleaseBeyond(kArmedHeadBytes);
        }
      }
      v[kept++] = s;
    }
  }
  v.resize(kept);
  reg->spare_rings.clear();  // nobody references them
  reg->retained_records = 0;
  reg->collected_epoch = epoch_;
}

}  // namespace kairos::internal
