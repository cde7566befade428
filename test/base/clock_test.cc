// Tests for src/util/clock.h: raw-clock conversion to Unix ns.
#include "util/clock.h"

#include <catch2/catch.hpp>

namespace kairos {

TEST_CASE("ClockConverter maps raw ticks linearly") {
  ClockConverter c;
  c.SetForTest(1000, 1700000000000000000LL, 0.5);
  CHECK(c.ToUnixNs(1000) == 1700000000000000000LL);
  CHECK(c.ToUnixNs(3000) == 1700000000000001000LL);
  CHECK(c.ToUnixNs(0) == 1700000000000000000LL - 500);  // before the anchor
}

TEST_CASE("Calibrated clock agrees with CLOCK_REALTIME") {
  ClockConverter c;
  c.Calibrate(1000000);
  const int64_t a = UnixNowNs();
  const int64_t raw_ns = c.ToUnixNs(ReadRawClock());
  const int64_t b = UnixNowNs();
  // A calibrated reading must fall between two realtime readings taken around it, with
  // slack for the calibration error over a few microseconds (not a timing assertion on
  // speed: it checks the mapping is correct to within 50 us).
  CHECK(raw_ns >= a - 50000);
  CHECK(raw_ns <= b + 50000);
  CHECK(c.ns_per_tick() > 0.0);
}

}  // namespace kairos

namespace kairos {

TEST_CASE("ClockConverter interpolates between anchors and extrapolates past them") {
  ClockConverter c;
  // Two segments with different slopes (a clock slewed mid-window).
  c.SetAnchors({{3000, 5000}, {1000, 1000}, {2000, 3000}});
  CHECK(c.anchor_count() == 3);
  CHECK(c.ToUnixNs(1000) == 1000);
  CHECK(c.ToUnixNs(1500) == 2000);  // slope 2
  CHECK(c.ToUnixNs(2000) == 3000);
  CHECK(c.ToUnixNs(2500) == 4000);  // slope 2
  CHECK(c.ToUnixNs(500) == 0);      // before the first anchor: first segment's slope
  CHECK(c.ToUnixNs(4000) == 7000);  // after the last: last segment's slope
}

TEST_CASE("anchors that do not advance on both clocks are ignored") {
  ClockConverter c;
  c.SetAnchors({{1000, 1000}, {2000, 3000}, {2000, 9000}, {2500, 2000}});
  CHECK(c.anchor_count() == 2);
  CHECK(c.ToUnixNs(1500) == 2000);
}

TEST_CASE("window converter: anchors at open and close, CLOCK_REALTIME within a few us") {
  WindowAnchors log;
  log.Opened();
  const int64_t t0 = MonotonicNowNs();
  while (MonotonicNowNs() - t0 < 3000000) {
  }
  log.AnchorNow();
  const ClockConverter c = log.Converter();
  CHECK(c.anchor_count() == 3);
  const int64_t a = UnixNowNs();
  const int64_t mapped = c.ToUnixNs(ReadRawClock());
  const int64_t b = UnixNowNs();
  // Extrapolated a few us past the closing anchor over a 3 ms fit: generous 50 us slack.
  CHECK(mapped >= a - 50000);
  CHECK(mapped <= b + 50000);
  // The log is closed: a second converter without a new window falls back to Calibrate().
  CHECK(log.Converter().anchor_count() == 2);
}

TEST_CASE("the raw clock is the TSC exactly when the TSC is invariant") {
#if defined(__x86_64__)
  CHECK(RawClockIsTsc() == TscIsInvariant());
#else
  CHECK_FALSE(RawClockIsTsc());
#endif
  const uint64_t a = ReadRawClock();
  const uint64_t b = ReadRawClock();
  CHECK(b >= a);
}

}  // namespace kairos
