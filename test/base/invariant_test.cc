// File: invariant_test.cc
// Layer: test for kairos_util. KAIROS_DCHECK as a release build compiles it (this file forces
// the release form in every build): a broken invariant is counted, logged once per call site
// with file and condition, and execution goes on; a holding invariant costs nothing visible.
// Threading: single-threaded.
#undef KAIROS_DCHECK_ON
#ifndef NDEBUG
#define NDEBUG 1
#endif
#include "util/dcheck.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "abuse/abuse_util.h"

namespace kairos {
namespace {

int CheckPositive(int v) {
  KAIROS_DCHECK(v > 0, "callers pass a positive count");
  return v;  // the release build goes on with what it has
}

TEST_CASE("a release build counts and logs a broken invariant, then only counts",
          "[dcheck]") {
  const uint64_t before = internal::InvariantBreaks();
  REQUIRE(before == 0);  // nothing in this process broke one before
  testing::StderrCapture err;
  CHECK(CheckPositive(3) == 3);
  CHECK(internal::InvariantBreaks() == 0);
  for (int i = 0; i < 20; ++i) CHECK(CheckPositive(-i) == -i);
  CHECK(internal::InvariantBreaks() == 20);
  const std::vector<std::string> lines = err.Stop();
  REQUIRE(lines.size() == internal::kLoggedInvariantBreaks);
  CHECK(lines[0].find("kairos: error: internal invariant broken at ") == 0);
  CHECK(lines[0].find("invariant_test.cc:") != std::string::npos);
  CHECK(lines[0].find("v > 0 (callers pass a positive count)") != std::string::npos);
  CHECK(lines[0].find("invariant_breaks") != std::string::npos);
  CHECK(lines.back().find("(later breaks: counted only)") != std::string::npos);
}

}  // namespace
}  // namespace kairos
