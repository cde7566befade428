// File: findings_util.h
// Layer: test (analysis). What the analysis tests ask of a Summary's findings: the set of
// finding ids, one finding by id, one evidence value by key (a missing one fails the test),
// and the time units the synthetic traces are written in. Shared by antipatterns_test and
// expert_trace_test.
// Threading: single-threaded.
#ifndef KAIROS_TEST_ANALYSIS_FINDINGS_UTIL_H_
#define KAIROS_TEST_ANALYSIS_FINDINGS_UTIL_H_

#include <catch2/catch.hpp>
#include <cstdint>
#include <set>
#include <string>

#include "analysis/summary.h"

namespace kairos::testing {

inline constexpr int64_t kUs = 1000, kMs = 1000000;

inline std::set<std::string> Ids(const Summary& s) {
  std::set<std::string> ids;
  for (const Finding& f : s.findings) ids.insert(f.id);
  return ids;
}

inline const Finding& Get(const Summary& s, const std::string& id) {
  for (const Finding& f : s.findings) {
    if (f.id == id) return f;
  }
  FAIL("no finding " << id);
  static Finding none;
  return none;
}

inline double Ev(const Finding& f, const std::string& key) {
  for (const auto& [k, v] : f.evidence) {
    if (k == key) return v;
  }
  FAIL("no evidence " << key << " in " << f.id);
  return -1;
}

}  // namespace kairos::testing

#endif  // KAIROS_TEST_ANALYSIS_FINDINGS_UTIL_H_
