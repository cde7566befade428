// File: clock.h
// Layer: kairos_base. Raw timestamps for the hot path and their conversion to Unix ns.
// Producers call ReadRawClock() (rdtsc on x86-64, CLOCK_MONOTONIC elsewhere) and store the
// raw value; the session converts with ClockConverter on its own thread.
// Threading: ReadRawClock is wait-free; a ClockConverter is immutable after Calibrate().
#ifndef KAIROS_SRC_CLOCK_H_
#define KAIROS_SRC_CLOCK_H_

#include <cstdint>
#include <ctime>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace kairos {

#if defined(__x86_64__)
inline uint64_t ReadRawClock() { return __rdtsc(); }
#else
inline uint64_t ReadRawClock() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}
#endif

int64_t UnixNowNs();       // CLOCK_REALTIME
int64_t MonotonicNowNs();  // CLOCK_MONOTONIC

// Maps raw clock values to Unix-epoch ns with a linear fit: unix = base_unix +
// (raw - base_raw) * ns_per_tick. Calibrate() measures ns_per_tick against CLOCK_MONOTONIC
// over `sample_ns` and anchors the offset to CLOCK_REALTIME by taking the tightest of several
// bracketed readings. Re-calibrating at each session end bounds drift to the session length.
class ClockConverter {
 public:
  void Calibrate(int64_t sample_ns = 2000000);
  int64_t ToUnixNs(uint64_t raw) const {
    const double delta = static_cast<double>(static_cast<int64_t>(raw - base_raw_));
    return base_unix_ns_ + static_cast<int64_t>(delta * ns_per_tick_);
  }
  double ns_per_tick() const { return ns_per_tick_; }

  // For tests: a fixed mapping.
  void SetForTest(uint64_t base_raw, int64_t base_unix_ns, double ns_per_tick) {
    base_raw_ = base_raw;
    base_unix_ns_ = base_unix_ns;
    ns_per_tick_ = ns_per_tick;
  }

 private:
  uint64_t base_raw_ = 0;
  int64_t base_unix_ns_ = 0;
  double ns_per_tick_ = 1.0;
};

}  // namespace kairos

#endif  // KAIROS_SRC_CLOCK_H_
