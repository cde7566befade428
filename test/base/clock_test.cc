// Tests for src/clock.h: raw-clock conversion to Unix ns.
#include "clock.h"

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
