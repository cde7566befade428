// File: json_reader_fuzz_test.cc
// Layer: test (fuzz corpus replay). Replays test/fuzz/corpus/json_reader through the JSON
// reader fuzz entry point in every build (the sanitizer builds check it too), plus edge
// inputs; tools/fuzz.sh runs the same entry under libFuzzer.
// Threading: single-threaded.
#include <catch2/catch.hpp>
#include <string>

#include "fuzz/corpus_replay.h"

extern "C" int KairosFuzzJsonReader(const uint8_t* data, size_t size);

namespace {

int Run(const std::string& s) { return kairos::testing::RunFuzzEntry(KairosFuzzJsonReader, s); }

TEST_CASE("JSON reader corpus replays through the fuzz entry point", "[fuzz]") {
  CHECK(kairos::testing::ReplayCorpus(KairosFuzzJsonReader, KAIROS_JSON_CORPUS_DIR) >= 8);
}

TEST_CASE("JSON reader edge inputs", "[fuzz]") {
  CHECK(Run("") == 0);
  CHECK(Run(std::string(1, '\0')) == 0);
  CHECK(Run(std::string(100000, '[')) == 0);  // deep nesting must not overflow the stack
  CHECK(Run(std::string(100000, '{')) == 0);
  CHECK(Run("\"\\ud800\"") == 0);
  CHECK(Run("1e999999999") == 0);
  CHECK(Run("{\"traceEvents\":[{\"ts\":1e300,\"dur\":-1e300,\"ph\":\"X\"}]}") == 0);
}

}  // namespace
