// File: log_test.cc
// Layer: test for kairos_util. LogRateLimiter with an injected clock: the burst, the count of
// suppressed lines carried by the next admitted line, a new interval, a clock going back.
// Every line is inert and bounded: control bytes shown as \xNN, at most 1 KiB.
// Threading: single-threaded.
#include "util/log.h"

#include <catch2/catch.hpp>
#include <string>

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

}  // namespace
}  // namespace kairos
