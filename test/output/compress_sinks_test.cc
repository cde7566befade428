// File: compress_sinks_test.cc
// Layer: tests (output). ZstdSink and GzipSink: output decompressed by the real `zstd` and
// `gzip` command-line tools equals the input byte for byte; errors propagate.
// Threading: single-threaded.
#include "output/compress_sinks.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <random>
#include <string>

#include "json_test_util.h"
#include "output/file_sink.h"

namespace kairos {
namespace {

// Runs `cmd` and returns its stdout.
std::string RunCapture(const std::string& cmd, int* rc) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  *rc = pclose(p);
  return out;
}

// ~3 MB of trace-like text with some randomness, written in uneven pieces.
std::string SampleInput() {
  std::mt19937 rng(7);
  std::string s;
  while (s.size() < 3 * 1024 * 1024) {
    s += "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k" + std::to_string(rng() % 1000) +
         "\",\"ts\":" + std::to_string(rng()) + ".123},\n";
  }
  return s;
}

void WriteInPieces(ByteSink& sink, const std::string& s) {
  size_t pos = 0, piece = 1;
  while (pos < s.size()) {
    const size_t n = std::min(piece, s.size() - pos);
    REQUIRE(sink.Write(s.data() + pos, n).ok());
    pos += n;
    piece = piece * 3 + 1;
    if (piece > 200000) piece = 7;
  }
}

TEST_CASE("ZstdSink output decompresses with the zstd CLI to the same bytes") {
  testing::TempDir dir;
  const std::string input = SampleInput();
  for (int level : {1, 3, -5, 100}) {
    INFO("level " << level);
    const std::string path = dir.File("t" + std::to_string(level) + ".json.zst");
    auto file = AtomicFileSink::Create(path);
    REQUIRE(file.ok());
    ZstdSink zstd(**file, level);
    WriteInPieces(zstd, input);
    REQUIRE(zstd.Finish().ok());
    CHECK((*file)->bytes_written() < input.size() / 3);
    int rc = -1;
    const std::string out = RunCapture("zstd -dcq '" + path + "'", &rc);
    CHECK(rc == 0);
    CHECK(out.size() == input.size());
    CHECK(out == input);
  }
}

TEST_CASE("GzipSink output decompresses with gzip -dc to the same bytes") {
  testing::TempDir dir;
  const std::string input = SampleInput();
  const std::string path = dir.File("t.json.gz");
  auto file = AtomicFileSink::Create(path);
  REQUIRE(file.ok());
  GzipSink gz(**file);
  WriteInPieces(gz, input);
  REQUIRE(gz.Finish().ok());
  int rc = -1;
  const std::string out = RunCapture("gzip -dc '" + path + "'", &rc);
  CHECK(rc == 0);
  CHECK(out == input);
}

TEST_CASE("Empty input still makes a valid compressed file") {
  testing::TempDir dir;
  int rc = -1;
  {
    auto file = AtomicFileSink::Create(dir.File("e.zst"));
    REQUIRE(file.ok());
    ZstdSink z(**file, 1);
    REQUIRE(z.Finish().ok());
    CHECK(RunCapture("zstd -dcq '" + dir.File("e.zst") + "'", &rc).empty());
    CHECK(rc == 0);
  }
  {
    auto file = AtomicFileSink::Create(dir.File("e.gz"));
    REQUIRE(file.ok());
    GzipSink g(**file);
    REQUIRE(g.Finish().ok());
    CHECK(RunCapture("gzip -dc '" + dir.File("e.gz") + "'", &rc).empty());
    CHECK(rc == 0);
  }
}

TEST_CASE("Compressors pass the inner sink's error on and stay failed") {
  const std::string input = SampleInput();
  for (int which = 0; which < 2; ++which) {
    testing::StringSink inner;
    inner.FailAfter(10000);
    std::unique_ptr<ByteSink> sink;
    if (which == 0) {
      sink = std::make_unique<ZstdSink>(inner, 1);
    } else {
      sink = std::make_unique<GzipSink>(inner, 1);
    }
    absl::Status st;
    for (size_t pos = 0; pos < input.size() && st.ok(); pos += 65536) {
      st = sink->Write(input.data() + pos, std::min<size_t>(65536, input.size() - pos));
    }
    CHECK(st.code() == absl::StatusCode::kResourceExhausted);
    CHECK(sink->Write("x", 1) == st);
    CHECK(sink->Finish() == st);
    CHECK(inner.finish_calls == 0);
    CHECK(inner.failed_writes == 1);
  }
}

TEST_CASE("Finish is forwarded to the inner sink exactly once") {
  testing::StringSink inner;
  ZstdSink z(inner, 1);
  REQUIRE(z.Write("abc", 3).ok());
  REQUIRE(z.Finish().ok());
  CHECK(inner.finish_calls == 1);
  CHECK_FALSE(z.Finish().ok());
  CHECK(inner.finish_calls == 1);
}

}  // namespace
}  // namespace kairos
