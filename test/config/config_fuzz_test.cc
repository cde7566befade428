// File: config_fuzz_test.cc
// Layer: test for kairos_config. Replays the checked-in corpus (test/config/corpus/*) through
// the fuzz entry point, as the house style asks where libFuzzer is not available, plus
// generated edge inputs. Passing means no crash, trap or sanitizer report.
// Threading: single-threaded.
#include <catch2/catch.hpp>
#include <string>

#include "fuzz/corpus_replay.h"

extern "C" int KairosFuzzConfig(const uint8_t* data, size_t size);

namespace {

int Run(const std::string& s) { return kairos::testing::RunFuzzEntry(KairosFuzzConfig, s); }

TEST_CASE("corpus replays through the config fuzz entry point", "[fuzz]") {
  CHECK(kairos::testing::ReplayCorpus(KairosFuzzConfig, KAIROS_CONFIG_CORPUS_DIR) >= 10);
}

TEST_CASE("generated edge inputs", "[fuzz]") {
  CHECK(Run("") == 0);
  CHECK(Run(std::string(1, '\0')) == 0);
  CHECK(Run(std::string(100000, '=')) == 0);
  CHECK(Run(std::string(100000, '\n')) == 0);
  CHECK(Run("ACTIVITIES_LOG_FILE=" + std::string(70000, 'a')) == 0);
  std::string all_bytes;
  for (int i = 0; i < 256; ++i) all_bytes += static_cast<char>(i);
  CHECK(Run("CUSTOM_CONFIG=" + all_bytes) == 0);
  CHECK(Run("ACTIVITY_TYPES=" + std::string(5000, ',')) == 0);
}

}  // namespace
