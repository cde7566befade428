// File: corpus_replay.h
// Layer: test (fuzz). The corpus replay every build runs for each fuzz entry point (where
// libFuzzer is not available, and under the sanitizers): every regular file of a checked-in
// corpus directory goes through the entry once and must return 0 (no crash, trap or
// sanitizer report either). Shared by the config and JSON reader replays.
// Threading: single-threaded.
#ifndef KAIROS_TEST_FUZZ_CORPUS_REPLAY_H_
#define KAIROS_TEST_FUZZ_CORPUS_REPLAY_H_

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace kairos::testing {

using FuzzEntry = int (*)(const uint8_t* data, size_t size);

inline int RunFuzzEntry(FuzzEntry entry, const std::string& bytes) {
  return entry(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

// Replays every regular file in `dir` (one CHECK per file); returns how many were replayed.
inline int ReplayCorpus(FuzzEntry entry, const char* dir) {
  int files = 0;
  for (const auto& file : std::filesystem::directory_iterator(dir)) {
    if (!file.is_regular_file()) continue;
    std::ifstream in(file.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    INFO(file.path().string());
    CHECK(RunFuzzEntry(entry, bytes) == 0);
    ++files;
  }
  return files;
}

}  // namespace kairos::testing

#endif  // KAIROS_TEST_FUZZ_CORPUS_REPLAY_H_
