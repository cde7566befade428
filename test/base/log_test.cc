// File: log_test.cc
// Layer: test for kairos_base. LogRateLimiter with an injected clock: the burst, the count of
// suppressed lines carried by the next admitted line, a new interval, a clock going back.
// Threading: single-threaded.
#include "log.h"

#include <catch2/catch.hpp>

namespace kairos {
namespace {

TEST_CASE("LogRateLimiter admits a burst per interval and counts the rest", "[log]") {
  LogRateLimiter limiter(3, 1000);
  uint64_t suppressed = 99;
  for (int i = 0; i < 3; ++i) {
    REQUIRE(limiter.Admit(10 + i, &suppressed));
    CHECK(suppressed == 0);
  }
  for (int i = 0; i < 100000; ++i) CHECK_FALSE(limiter.Admit(20, &suppressed));
  CHECK(limiter.pending_suppressed() == 100000);
  // Next interval: the first line carries the count, once.
  REQUIRE(limiter.Admit(1010, &suppressed));
  CHECK(suppressed == 100000);
  REQUIRE(limiter.Admit(1011, &suppressed));
  CHECK(suppressed == 0);
  CHECK(limiter.pending_suppressed() == 0);
  // A clock that goes backwards starts a new interval instead of blocking forever.
  REQUIRE(limiter.Admit(1012, &suppressed));
  CHECK_FALSE(limiter.Admit(1013, &suppressed));
  REQUIRE(limiter.Admit(5, &suppressed));
  CHECK(suppressed == 1);
}

TEST_CASE("the log level is process-wide and settable from any module", "[log]") {
  const LogLevel before = GetLogLevel();
  SetLogLevel(LogLevel::kError);
  CHECK(GetLogLevel() == LogLevel::kError);
  SetLogLevel(before);
  CHECK(GetLogLevel() == before);
}

}  // namespace
}  // namespace kairos
