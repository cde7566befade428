// File: log_test.cc
// Layer: test for kairos_util. LogRateLimiter with an injected clock: the burst, the count of
// suppressed lines carried by the next admitted line, a new interval, a clock going back.
// Every line is inert and bounded: control bytes shown as \xNN, at most 1 KiB.
// Threading: single-threaded.
#include "util/log.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "abuse/abuse_util.h"

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

TEST_CASE("log lines are one inert line of at most 1 KiB", "[log]") {
  const LogLevel saved = GetLogLevel();
  SetLogLevel(LogLevel::kWarning);
  testing::StderrCapture capture;
  // Text from outside (a daemon request, a file name) with a terminal escape, a tab, a
  // newline that would forge a second line, and DEL.
  KAIROS_LOG_WARNING("name %s", "a\x1b[31mb\tc\nkairos: error: forged\x7f");
  KAIROS_LOG_WARNING("%s", std::string(5000, 'x').c_str());
  WriteLogLine("tool: ", "q\x01", " (suppressed 3 similar messages)");
  WriteLogLine("tool: ", std::string(5000, 'y'), " (suppressed 3 similar messages)");
  const std::vector<std::string> lines = capture.Stop();
  SetLogLevel(saved);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "kairos: warning: name a\\x1b[31mb\\x09c kairos: error: forged\\x7f");
  CHECK(lines[1].size() == 1023);
  CHECK(lines[1] == "kairos: warning: " + std::string(1003, 'x') + "...");
  CHECK(lines[2] == "tool: q\\x01 (suppressed 3 similar messages)");
  // A cut line keeps its suppressed count.
  CHECK(lines[3].size() == 1023);
  CHECK(lines[3] == "tool: " + std::string(982, 'y') + "... (suppressed 3 similar messages)");
}

TEST_CASE("a limited call site prints its burst, then a count; another site has its own", "[log]") {
  const LogLevel saved = GetLogLevel();
  SetLogLevel(LogLevel::kWarning);
  testing::StderrCapture capture;
  constexpr uint64_t key_a = internal::LogSiteKey(__FILE__, __LINE__ + 1);
  for (int i = 0; i < LogRateLimiter::kDefaultBurst + 3; ++i) KAIROS_LOG_WARNING_LIMITED("site a %d", i);
  for (int i = 0; i < 2; ++i) KAIROS_LOG_WARNING_LIMITED("site b %d", i);
  for (int i = 0; i < 3; ++i) KAIROS_LOG_ONCE(LogLevel::kWarning, "once c %d", i);
  for (int i = 0; i < 3; ++i) KAIROS_LOG_ONCE(LogLevel::kWarning, "once d %d", i);
  const std::vector<std::string> lines = capture.Stop();
  SetLogLevel(saved);
  REQUIRE(lines.size() == static_cast<size_t>(LogRateLimiter::kDefaultBurst) + 4);
  for (int i = 0; i < LogRateLimiter::kDefaultBurst; ++i) {
    CHECK(lines[static_cast<size_t>(i)] == "kairos: warning: site a " + std::to_string(i));
  }
  const size_t b = static_cast<size_t>(LogRateLimiter::kDefaultBurst);
  CHECK(lines[b] == "kairos: warning: site b 0");
  CHECK(lines[b + 1] == "kairos: warning: site b 1");
  CHECK(lines[b + 2] == "kairos: warning: once c 0");
  CHECK(lines[b + 3] == "kairos: warning: once d 0");
  // Site a's three refused lines wait in its slot of the logger's table.
  CHECK(internal::LogSiteLimiter(key_a).pending_suppressed() == 3);
}

TEST_CASE("log site keys are per file and line, never 0", "[log]") {
  constexpr uint64_t a = internal::LogSiteKey("src/a.cc", 10);
  static_assert(a == internal::LogSiteKey("src/a.cc", 10), "computed at compile time");
  CHECK(a != internal::LogSiteKey("src/a.cc", 11));
  CHECK(a != internal::LogSiteKey("src/b.cc", 10));
  CHECK(internal::LogSiteKey("", 0) != 0);
}

TEST_CASE("the site table gives each key its own slot until full, then one shared slot", "[log]") {
  static internal::LogSites sites;  // ~6 KiB: not on the test's stack
  std::vector<internal::LogSites::Slot*> slots;
  // Keys that all hash to slot 0 probe onward and still get distinct slots.
  for (uint64_t i = 0; i < internal::LogSites::kCapacity; ++i) {
    slots.push_back(&sites.Find(i * internal::LogSites::kCapacity + 7));
  }
  CHECK(sites.claimed() == internal::LogSites::kCapacity);
  for (size_t i = 0; i < slots.size(); ++i) {
    for (size_t j = i + 1; j < slots.size(); ++j) CHECK(slots[i] != slots[j]);
    CHECK(slots[i] != &sites.overflow());
    // A second lookup finds the same slot.
    CHECK(&sites.Find(i * internal::LogSites::kCapacity + 7) == slots[i]);
  }
  // Full: new keys share the overflow slot, and so share one limit.
  internal::LogSites::Slot& x = sites.Find(1000003);
  internal::LogSites::Slot& y = sites.Find(1000005);
  CHECK(&x == &sites.overflow());
  CHECK(&y == &x);
  uint64_t suppressed = 0;
  for (int i = 0; i < LogRateLimiter::kDefaultBurst; ++i) CHECK(x.limiter.Admit(i, &suppressed));
  CHECK_FALSE(y.limiter.Admit(10, &suppressed));
}

}  // namespace
}  // namespace kairos
