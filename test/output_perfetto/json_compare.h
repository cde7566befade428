// File: json_compare.h
// Layer: test (output_perfetto). Compares two Kineto JSON traces as data: the same
// top-level keys and values, and the same multiset of trace events (order-insensitive,
// since readers rebuild tracks in first-seen order).
// Threading: n/a.
#ifndef KAIROS_TEST_OUTPUT_PERFETTO_JSON_COMPARE_H_
#define KAIROS_TEST_OUTPUT_PERFETTO_JSON_COMPARE_H_

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kairos::testing {

inline std::vector<std::string> SortedEvents(const nlohmann::json& doc) {
  std::vector<std::string> v;
  for (const auto& e : doc["traceEvents"]) v.push_back(e.dump());
  std::sort(v.begin(), v.end());
  return v;
}

inline nlohmann::json TopLevelWithoutEvents(nlohmann::json doc) {
  doc.erase("traceEvents");
  return doc;
}

}  // namespace kairos::testing

#endif  // KAIROS_TEST_OUTPUT_PERFETTO_JSON_COMPARE_H_
