// File: test_data.h
// Layer: tests. Loads the captured /proc text checked into test/counters/data/.
// Threading: test thread only.
#ifndef KAIROS_TEST_COUNTERS_TEST_DATA_H_
#define KAIROS_TEST_COUNTERS_TEST_DATA_H_

#include <fstream>
#include <sstream>
#include <string>

namespace kairos::testing {

inline std::string LoadProcSample(const std::string& name) {
  std::ifstream in(std::string(KAIROS_COUNTERS_TEST_DATA) + "/" + name);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kairos::testing

#endif  // KAIROS_TEST_COUNTERS_TEST_DATA_H_
