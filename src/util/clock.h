// File: clock.h
// Layer: kairos_util. Raw timestamps for the hot path and their conversion to Unix ns.
// Producers call ReadRawClock() and store the raw value; the session converts with a
// ClockConverter on its own thread.
// The raw clock is the TSC (rdtsc) on x86-64 when the TSC is invariant (CPUID leaf
// 0x80000007 EDX bit 8, what Linux reports as constant_tsc + nonstop_tsc: it ticks at a
// fixed rate through frequency changes and deep sleep); otherwise, and on other
// architectures, it is CLOCK_MONOTONIC ns. The choice is made once, at the first reading.
// Conversion: anchors (raw, CLOCK_REALTIME) pairs are taken when a window opens, periodically
// while it is open and when it closes; a converter interpolates between them, so the slope
// comes from the whole window (error ~ anchor error / window length) instead of a 2 ms
// calibration stretched over it, and clock slewing during the window is followed.
// Threading: ReadRawClock is wait-free; the anchor log is guarded by a mutex (never taken
// on the hot path); a ClockConverter is immutable after it is built.
#ifndef KAIROS_SRC_CLOCK_H_
#define KAIROS_SRC_CLOCK_H_

#include <atomic>
#include <cstdint>
#include <ctime>
#include <mutex>
#include <vector>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace kairos {

inline uint64_t MonotonicRawNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

namespace internal {
// 0: not decided yet, 1: TSC, 2: CLOCK_MONOTONIC. Constant-initialized, so readings taken by
// static constructors before clock.cc's own initializers are already consistent.
extern std::atomic<int> g_raw_clock_mode;
int DecideRawClockMode();
}  // namespace internal

inline uint64_t ReadRawClock() {
#if defined(__x86_64__)
  int mode = internal::g_raw_clock_mode.load(std::memory_order_relaxed);
  if (__builtin_expect(mode == 1, 1)) return __rdtsc();
  if (mode == 0 && internal::DecideRawClockMode() == 1) return __rdtsc();
#endif
  return MonotonicRawNs();
}

// True when ReadRawClock returns TSC ticks (decides the mode if nothing has yet).
bool RawClockIsTsc();
// Whether this CPU's TSC is invariant (CPUID, then /proc/cpuinfo flags constant_tsc and
// nonstop_tsc). Exposed for tests and diagnostics.
bool TscIsInvariant();

int64_t UnixNowNs();       // CLOCK_REALTIME
int64_t MonotonicNowNs();  // CLOCK_MONOTONIC

struct ClockAnchor {
  uint64_t raw;
  int64_t unix_ns;
};
// A (raw, CLOCK_REALTIME) pair read as tightly as possible (best of a few bracketed reads).
ClockAnchor TakeClockAnchor();

// Maps raw clock values to Unix-epoch ns, piecewise linearly between anchors sorted by raw;
// before the first / after the last anchor it extrapolates with the nearest segment's slope.
class ClockConverter {
 public:
  // Two anchors `sample_ns` apart (busy-waited), as before anchors existed. Kept for callers
  // that have no window (and as the fallback of WindowAnchors::Converter).
  void Calibrate(int64_t sample_ns = 2000000);
  // Uses `anchors` (any order; at least one). With one anchor the slope is 1 tick = 1 ns on
  // the monotonic fallback, or measured by a short calibration for the TSC.
  void SetAnchors(std::vector<ClockAnchor> anchors);
  int64_t ToUnixNs(uint64_t raw) const;
  // Slope of the last segment (ns per raw tick).
  double ns_per_tick() const;
  size_t anchor_count() const { return anchors_.size(); }

  // For tests: a fixed mapping.
  void SetForTest(uint64_t base_raw, int64_t base_unix_ns, double ns_per_tick);

 private:
  std::vector<ClockAnchor> anchors_;  // sorted by raw, at least one once set
  std::vector<double> slopes_;        // slopes_[i]: segment anchors_[i] .. anchors_[i + 1]
  double single_slope_ = 1.0;         // when there is one anchor
};

// The anchor log of a recording window (bounded: at most kMaxWindowAnchors; when full, every
// other anchor is dropped and the period doubles). Owned by the session (SessionController), which
// lives in the process root, so a fork() child's fresh root has a fresh log; the CUPTI
// source adds anchors to its session's log while a window is open. Thread-safe.
constexpr size_t kMaxWindowAnchors = 4096;
constexpr int64_t kWindowAnchorPeriodNs = 1000000000;  // while a window is open
class WindowAnchors {
 public:
  WindowAnchors();
  WindowAnchors(const WindowAnchors&) = delete;
  WindowAnchors& operator=(const WindowAnchors&) = delete;
  // A window opens: forget the previous window's anchors and take the first one.
  void Opened();
  // Takes an anchor when the newest one is older than the anchor period; otherwise costs
  // one raw clock read and one relaxed atomic load. Any thread.
  void AnchorIfDue();
  // Takes an anchor now (window edges). Any thread.
  void AnchorNow();
  // The converter for the window just closed: takes a closing anchor, closes the log and
  // interpolates over it. Without an opening anchor (no Opened()) it falls back to
  // Calibrate().
  ClockConverter Converter();

 private:
  void AddLocked(const ClockAnchor& a);

  std::mutex mu_;
  std::vector<ClockAnchor> anchors_;  // capacity kMaxWindowAnchors, reserved once
  bool open_ = false;
  int64_t period_ns_ = kWindowAnchorPeriodNs;
  std::atomic<uint64_t> next_due_raw_{~0ull};
  double ns_per_raw_ = 1.0;  // rough, only to schedule the next anchor
};

}  // namespace kairos

#endif  // KAIROS_SRC_CLOCK_H_
