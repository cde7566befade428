// File: daemon_protocol_fuzz_test.cc
// Layer: test (daemon). Replays the checked-in corpus (test/daemon/corpus) through the fuzz
// entry point, plus every truncation and a deterministic set of byte flips of each file, so
// the decoders' "never crash, never over-read" property runs under ASan in ctest.
// Threading: single-threaded.
#include <catch2/catch.hpp>
#include <dirent.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" int KairosFuzzDaemonProtocol(const uint8_t* data, size_t size);

namespace {

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  DIR* dir = opendir(KAIROS_DAEMON_CORPUS_DIR);
  if (dir == nullptr) return files;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream in(std::string(KAIROS_DAEMON_CORPUS_DIR) + "/" + e->d_name, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    files.push_back(ss.str());
  }
  closedir(dir);
  return files;
}

int Run(const std::string& s) {
  // A fresh heap copy of exactly the input size, so ASan catches any over-read.
  std::vector<uint8_t> copy(s.begin(), s.end());
  return KairosFuzzDaemonProtocol(copy.data(), copy.size());
}

TEST_CASE("daemon protocol corpus replays without crashing") {
  const std::vector<std::string> corpus = CorpusFiles();
  REQUIRE(corpus.size() == 11);  // with the two "tlm" seeds (an offer, a datagram of lines)
  size_t runs = 0;
  for (const std::string& input : corpus) {
    CHECK(Run(input) == 0);
    for (size_t n = 0; n < input.size(); ++n, ++runs) Run(input.substr(0, n));
    for (size_t i = 0; i < input.size(); ++i) {
      for (uint8_t mask : {0x01, 0x80, 0xff}) {
        std::string flipped = input;
        flipped[i] = static_cast<char>(flipped[i] ^ mask);
        Run(flipped);
        ++runs;
      }
    }
  }
  CHECK(runs > 1000);
}

}  // namespace
