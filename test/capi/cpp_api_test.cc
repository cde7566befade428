// File: cpp_api_test.cc
// Layer: test/capi. The header-only C++ wrapper (include/kairos/kairos.hpp): RAII ranges,
// a cross-thread range that ends once, optimizer-step brackets, Flush; checked in the trace.
// Threading: the test thread plus one thread that ends an AsyncRange.
#include "kairos/kairos.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "temp_dir.h"

namespace {

using kairos::testing::TempDir;

int CountNamed(const nlohmann::json& trace, const std::string& name, const std::string& cat) {
  int n = 0;
  for (const auto& e : trace["traceEvents"])
    if (e.value("ph", "") == "X" && e.value("name", "") == name && e.value("cat", "") == cat) ++n;
  return n;
}

TEST_CASE("C++ wrapper records ranges, async ranges and steps") {
  const TempDir temp("kairos_cpp_");
  const std::string& dir = temp.path();
  const std::string cfg =
      std::string("KAIROS_HOST_METRICS_INTERVAL_MS=10\nACTIVITIES_LOG_FILE=") + dir + "/cpp.json";
  REQUIRE(kairos_init(cfg.c_str()) == KAIROS_OK);
  CHECK(kairos::Flush().empty());  // nothing written yet
  REQUIRE(kairos_start() == KAIROS_OK);
  for (int i = 0; i < 3; ++i) {
    kairos::OptimizerStep step;
    kairos::ScopedRange outer("outer");
    { kairos::ScopedRange inner("inner"); }
  }
  kairos::AsyncRange a("async");
  kairos::AsyncRange moved(std::move(a));  // the moved-from range must not end anything
  std::thread([r = std::move(moved)]() mutable { r.End(); r.End(); }).join();
  REQUIRE(kairos_stop() == KAIROS_OK);
  const std::string path = kairos::Flush();
  REQUIRE(path == std::string(dir) + "/cpp_" + std::to_string(getpid()) + ".json");
  std::ifstream in(path);
  const nlohmann::json trace = nlohmann::json::parse(in);
  CHECK(CountNamed(trace, "outer", "user_annotation") == 3);
  CHECK(CountNamed(trace, "inner", "user_annotation") == 3);
  CHECK(CountNamed(trace, "async", "user_annotation") == 1);
  // The host source is registered by the profiler: its counter tracks are in the trace.
  // At least the samples taken when the window opened and closed (host_sampler.cc), however
  // short the window and loaded the machine: a gauge, since CPU-time rates need a 10 ms tick
  // between samples. The sampler thread's periodic samples are tested with a fake clock
  // (host_sampler_test).
  int thread_samples = 0;
  for (const auto& e : trace["traceEvents"])
    if (e.value("ph", "") == "C" && e.value("name", "") == "process.threads") ++thread_samples;
  CHECK(thread_samples >= 2);
  kairos_shutdown();
}

}  // namespace
