// File: ring_feeder.h
// Layer: kairos_activity. The ring feeder: a kairos thread ("kairos-prefault") that keeps the
// per-thread CPU rings of the recording window resident ahead of their writers, so that an
// application thread never takes a page fault in a window, however long: rings are address
// space until used (memory grows with use), and the first touch of a fresh page costs its
// toucher a fault (2-3 us under a hypervisor, docs/PERFORMANCE.md).
// Each pass (FeedRings, cpu_recorder.h) measures how fast each ring's writer advanced since
// the previous pass and populates the pages it will reach within kFeedLeadNs at that rate.
// Threading: Start/Hurry/Stop from the session (runner) thread; the feeder thread runs passes
// every kFeedPeriodMs until stopped, back to back while any ring is behind its target.
#ifndef KAIROS_SRC_ACTIVITY_RING_FEEDER_H_
#define KAIROS_SRC_ACTIVITY_RING_FEEDER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace kairos::internal {

// How far ahead of a writer its ring is resident, in time at the writer's measured rate,
// and the bounds of that lead in bytes (a ring that has records always has the minimum).
inline constexpr int64_t kFeedLeadNs = 32'000'000;
inline constexpr size_t kFeedMinLeadBytes = 256u << 10;
inline constexpr size_t kFeedMaxLeadBytes = 64u << 20;
// Bytes one pass populates at most, all rings together: bounds how long a pass holds the
// recorder's registry mutex (which a thread's first record outside a pre-armed state, and
// thread exit, wait for) to about 1 ms at 2.5 us per page, however many threads record.
inline constexpr size_t kFeedChunkBytes = 1u << 20;
// Passes every kFeedPeriodMs while a writer is new or close to its lead, and in the first
// kFeedEagerNs of a run (threads start recording as a window opens); otherwise every quarter
// of the tightest writer's lead time, at most kFeedIdlePeriodMs. A wake-up alone costs about
// 25 us of CPU on a hypervisor: 1 ms passes throughout were 2.5% of a core.
inline constexpr int kFeedPeriodMs = 1;
inline constexpr int kFeedIdlePeriodMs = 8;
inline constexpr int64_t kFeedEagerNs = 250'000'000;
// From the window's opening (Hurry) for kFeedHurryNs, passes every kFeedHurryPeriodNs: a
// thread whose first record comes as the window opens may stream from it on, and its head
// (kFirstClaimHeadBytes, cpu_recorder.h) lasts 0.84 ms at the range floor's 2.5 GB/s; the
// feeder must have seen it and made its next chunk resident before then. 50 wake-ups a
// window, about 1.3 ms of CPU.
inline constexpr int64_t kFeedHurryNs = 5'000'000;
inline constexpr int64_t kFeedHurryPeriodNs = 100'000;
// The time slice the feeder thread asks the scheduler for (ring_feeder.cc, AskForShortSlice):
// its passes are short, and a short slice lets it run as it wakes beside a busy writer.
inline constexpr uint64_t kFeedSliceNs = 100'000;
// How long a warm-up may spend making remembered leads resident before the window opens.
inline constexpr int64_t kWarmupFeedNs = 200'000'000;

// The raw clock (the records' time base) against steady-clock ns: a reading of each, taken
// together, and the raw clock's rate. ns_per_tick 0 = not measured yet.
struct FeedClock {
  uint64_t raw = 0;
  int64_t ns = 0;
  double ns_per_tick = 0;
};

struct FeedPass {
  uint64_t populated_bytes = 0;
  bool behind = false;  // some ring is still short of its target (run the next pass now)
  bool young = false;   // a writer was measured for the first time in this pass
  // How long the tightest writer's resident margin lasts at its rate (INT64_MAX: no writer).
  int64_t margin_ns = INT64_MAX;
};

class RingFeeder {
 public:
  RingFeeder() = default;
  ~RingFeeder() { Stop(); }
  RingFeeder(const RingFeeder&) = delete;
  RingFeeder& operator=(const RingFeeder&) = delete;

  // Starts feeding the rings of `epoch` (stopping a previous run first). Its first pass runs
  // at once, so rings with a remembered rate get their lead before the window opens.
  void Start(uint32_t epoch);
  // The window opened (session thread): passes every kFeedHurryPeriodNs for kFeedHurryNs.
  void Hurry();
  // Stops and joins the thread; blocks for at most one pass (one kFeedChunkBytes populate
  // per ring). Safe to call when not started.
  void Stop();

  // Totals over this feeder's runs: bytes populated and passes made (tests, benchmarks).
  uint64_t populated_bytes() const { return populated_bytes_.load(std::memory_order_relaxed); }
  uint64_t passes() const { return passes_.load(std::memory_order_relaxed); }

 private:
  void Loop(uint32_t epoch);

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool hurry_ = false;  // Hurry() called since the thread last looked (mu_)
  std::thread thread_;
  std::atomic<uint64_t> populated_bytes_{0};
  std::atomic<uint64_t> passes_{0};
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_RING_FEEDER_H_
