// File: test_util.h
// Layer: test/core. Helpers shared by the session tests: a parsed Kineto JSON trace with name
// counts (their temp directories are test/temp_dir.h's TempDir, removed when the test ends).
// Threading: test thread only.
#ifndef KAIROS_TEST_CORE_TEST_UTIL_H_
#define KAIROS_TEST_CORE_TEST_UTIL_H_

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace kairos::testing {

inline nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
}

// Number of trace events per name for one category ("" = every category).
inline std::map<std::string, int> CountNames(const nlohmann::json& trace, const std::string& cat) {
  std::map<std::string, int> counts;
  if (!trace.contains("traceEvents")) return counts;
  for (const auto& e : trace["traceEvents"]) {
    if (!e.contains("name") || !e.contains("cat")) continue;
    if (!cat.empty() && e["cat"] != cat) continue;
    counts[e["name"].get<std::string>()]++;
  }
  return counts;
}

}  // namespace kairos::testing

#endif  // KAIROS_TEST_CORE_TEST_UTIL_H_
