// File: test/sim/tests/trace_dir.h
// Layer: simulator tests. Finds the trace a preloaded program wrote into a test's private
// directory: <dir>/<name>*.json (kairos may add the pid), never the .summary.json beside it.
// Threading: none.
#ifndef KAIROS_TEST_SIM_TESTS_TRACE_DIR_H_
#define KAIROS_TEST_SIM_TESTS_TRACE_DIR_H_

#include <dirent.h>

#include <string>

namespace ksim_test {

// The path of the (last listed) trace in `dir`, or "" when there is none.
inline std::string TracePathIn(const std::string& dir) {
  std::string path;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      const bool json = name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0;
      if (json && name.find(".summary.") == std::string::npos) path = dir + "/" + name;
    }
    closedir(d);
  }
  return path;
}

}  // namespace ksim_test

#endif  // KAIROS_TEST_SIM_TESTS_TRACE_DIR_H_
