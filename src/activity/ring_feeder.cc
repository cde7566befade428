// File: ring_feeder.cc — see ring_feeder.h.
// Layer: kairos_activity. Threading: see ring_feeder.h.
#include "activity/ring_feeder.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>

#include "activity/cpu_recorder.h"
#include "util/clock.h"
#include "util/thread_name.h"

namespace kairos::internal {

namespace {

// Asks the scheduler for a short time slice for this thread (Linux 6.12+ EEVDF: a fair task
// with a custom slice, sched_attr.sched_runtime, unprivileged; its nice value is kept). A
// task with a shorter slice may preempt the running one as it wakes; with the default slice
// the feeder, woken beside a writer that just woke on its core, waited 1.5-3 ms for the
// writer's slice to end, and a writer at 2.5 GB/s outran its head meanwhile. Older kernels
// ignore the field or refuse the call: then nothing changes.
void AskForShortSlice() {
  struct SchedAttr {  // the kernel's struct sched_attr (uapi linux/sched/types.h)
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
  } attr = {};
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, tid);
  if (nice == -1 && errno != 0) return;
  attr.size = sizeof(attr);
  attr.sched_policy = 0;  // SCHED_OTHER, which this thread has (kairos never changes it)
  attr.sched_nice = nice;
  attr.sched_runtime = kFeedSliceNs;
  (void)syscall(SYS_sched_setattr, 0, &attr, 0);
}

}  // namespace

void RingFeeder::Start(uint32_t epoch) {
  Stop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
  }
  thread_ = std::thread([this, epoch] { Loop(epoch); });
}

void RingFeeder::Hurry() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    hurry_ = true;
  }
  cv_.notify_all();
}

void RingFeeder::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void RingFeeder::Loop(uint32_t epoch) {
  NameThisThread("prefault");
  AskForShortSlice();
  const auto steady_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  // The raw clock's rate, measured over this thread's life (from 1 ms on).
  const uint64_t raw0 = ReadRawClock();
  const int64_t ns0 = steady_ns();
  int64_t hurry_until = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (hurry_) {
      hurry_ = false;
      hurry_until = steady_ns() + kFeedHurryNs;
    }
    lock.unlock();
    FeedClock clock;
    clock.raw = ReadRawClock();
    clock.ns = steady_ns();
    if (clock.ns - ns0 >= 1'000'000 && clock.raw > raw0)
      clock.ns_per_tick = static_cast<double>(clock.ns - ns0) / static_cast<double>(clock.raw - raw0);
    const FeedPass pass = FeedRings(epoch, clock.ns, clock);
    populated_bytes_.fetch_add(pass.populated_bytes, std::memory_order_relaxed);
    passes_.fetch_add(1, std::memory_order_relaxed);
    lock.lock();
    if (pass.behind) continue;  // a writer outruns the chunk bound: no sleep
    int64_t sleep_ns = int64_t{kFeedIdlePeriodMs} * 1'000'000;
    if (clock.ns < hurry_until) {
      sleep_ns = kFeedHurryPeriodNs;
    } else if (pass.young || clock.ns - ns0 < kFeedEagerNs) {
      sleep_ns = int64_t{kFeedPeriodMs} * 1'000'000;
    } else if (pass.margin_ns != INT64_MAX) {
      sleep_ns = std::clamp<int64_t>(pass.margin_ns / 4, int64_t{kFeedPeriodMs} * 1'000'000, sleep_ns);
    }
    cv_.wait_for(lock, std::chrono::nanoseconds(sleep_ns), [this] { return stop_ || hurry_; });
  }
}

}  // namespace kairos::internal
