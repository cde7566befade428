// File: clock.cc — see clock.h.
#include "clock.h"

namespace kairos {

int64_t UnixNowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t MonotonicNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

namespace {
// Reads (raw, unix) as a pair whose bracketing raw interval is smallest among a few tries,
// so the anchor is accurate to the cost of one clock_gettime.
void AnchorPair(uint64_t* raw, int64_t* unix_ns, int64_t (*now)()) {
  uint64_t best_width = ~0ull;
  for (int i = 0; i < 8; ++i) {
    uint64_t a = ReadRawClock();
    int64_t u = now();
    uint64_t b = ReadRawClock();
    if (b - a < best_width) {
      best_width = b - a;
      *raw = a + (b - a) / 2;
      *unix_ns = u;
    }
  }
}
}  // namespace

void ClockConverter::Calibrate(int64_t sample_ns) {
#if defined(__x86_64__)
  uint64_t raw0, raw1;
  int64_t mono0, mono1;
  AnchorPair(&raw0, &mono0, MonotonicNowNs);
  // Busy-wait: sleeping would let the sample interval be dominated by scheduler noise.
  while (MonotonicNowNs() - mono0 < sample_ns) {
  }
  AnchorPair(&raw1, &mono1, MonotonicNowNs);
  ns_per_tick_ = raw1 > raw0 ? static_cast<double>(mono1 - mono0) / static_cast<double>(raw1 - raw0) : 1.0;
#else
  (void)sample_ns;
  ns_per_tick_ = 1.0;
#endif
  AnchorPair(&base_raw_, &base_unix_ns_, UnixNowNs);
}

}  // namespace kairos
