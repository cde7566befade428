// File: fork_abandon_test.cc
// Layer: test (kairos_base). The one list of state a fork() child abandons: pointers are
// remembered (nullptr ignored) up to the bound, never more; and a real fork child that
// replaces the clock's anchor log records the old one there.
// Threading: single-threaded (plus one fork child).
#include "fork_abandon.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include <catch2/catch.hpp>

#include "clock.h"

namespace kairos::internal {
namespace {

TEST_CASE("abandoned state is remembered up to the bound", "[fork_abandon]") {
  const int before = AbandonedAfterForkCount();
  KeepAbandonedAfterFork(nullptr);
  CHECK(AbandonedAfterForkCount() == before);
  static int objects[2 * kMaxAbandoned];
  for (int& o : objects) KeepAbandonedAfterFork(&o);
  CHECK(AbandonedAfterForkCount() == kMaxAbandoned);
}

TEST_CASE("a fork child that resets the clock anchors keeps the old log reachable",
          "[fork_abandon]") {
  ClockAnchorNow();  // the log exists
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int before = AbandonedAfterForkCount();
    ResetClockAnchorsAfterFork();
    // (At the bound when the other case ran first in this process.)
    _exit(AbandonedAfterForkCount() == std::min(before + 1, kMaxAbandoned) ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace kairos::internal
