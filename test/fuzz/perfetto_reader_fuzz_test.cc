// File: perfetto_reader_fuzz_test.cc
// Layer: test (fuzz corpus replay). Replays test/fuzz/corpus/perfetto_reader through the
// Perfetto reader fuzz entry point in every build (the sanitizer builds check it too), plus
// edge inputs; tools/fuzz.sh runs the same entry under libFuzzer.
// Threading: single-threaded.
#include <catch2/catch.hpp>
#include <string>

#include "fuzz/corpus_replay.h"

extern "C" int KairosFuzzPerfettoReader(const uint8_t* data, size_t size);

namespace {

int Run(const std::string& s) { return kairos::testing::RunFuzzEntry(KairosFuzzPerfettoReader, s); }

TEST_CASE("Perfetto reader corpus replays through the fuzz entry point", "[fuzz]") {
  CHECK(kairos::testing::ReplayCorpus(KairosFuzzPerfettoReader, KAIROS_PERFETTO_CORPUS_DIR) >= 6);
}

TEST_CASE("Perfetto reader edge inputs", "[fuzz]") {
  CHECK(Run("") == 0);
  CHECK(Run(std::string(1, '\0')) == 0);
  CHECK(Run("\x0a") == 0);                                   // a tag, no length
  CHECK(Run("\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01") == 0);  // length 2^64-1
  CHECK(Run("\x0a\x80\x80\x80\x80\x10" + std::string(100, '\0')) == 0);  // 4 GiB claimed
  CHECK(Run(std::string(50000, '\x0a')) == 0);               // 0x0A as tag and length
  std::string empties;
  for (int i = 0; i < 20000; ++i) empties += std::string("\x0a\x00", 2);
  CHECK(Run(empties) == 0);                                  // many empty packets
}

}  // namespace
