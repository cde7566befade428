// File: fork_abandon_test.cc
// Layer: test (kairos_util). The one list of state a fork() child abandons: pointers are
// remembered (nullptr ignored) up to the bound, never more. (A real fork child's hook
// abandoning the parent's root: test/core/fork_state_test.cc.)
// Threading: single-threaded.
#include "util/fork_abandon.h"

#include <catch2/catch.hpp>

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

}  // namespace
}  // namespace kairos::internal
