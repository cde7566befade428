// File: writer_test.cc
// Layer: tests (output). WriteTraceFile: format dispatch by extension and by request,
// atomic output, compressed JSON identical to plain JSON after decompression.
// Threading: single-threaded.
#include "output/writer.h"

#include <catch2/catch.hpp>

#include <cstdio>

#include "json_test_util.h"
#include "trace_fixture.h"

namespace kairos {
namespace {

std::string Decompress(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  CHECK(pclose(p) == 0);
  return out;
}

TEST_CASE("WriteTraceFile writes plain JSON for .json") {
  testing::TempDir dir;
  TraceData data;
  testing::BuildFull(&data);
  const std::string path = dir.File("trace.json");
  REQUIRE(WriteTraceFile(data, {path, OutputFormat::kAuto, 1}).ok());
  CHECK(dir.List() == std::vector<std::string>{"trace.json"});
  const std::string text = testing::ReadFile(path);
  testing::OrderedJson j;
  std::string why;
  REQUIRE(testing::ParseStrict(text, &j, &why));
  CHECK(j["traceEvents"].size() == 49);
  CHECK(j["traceEvents"].back()["name"] == "Record Window End");
}

TEST_CASE("Compressed JSON decompresses to exactly the plain JSON") {
  testing::TempDir dir;
  TraceData data;
  testing::BuildFull(&data);
  REQUIRE(WriteTraceFile(data, {dir.File("a.json"), OutputFormat::kAuto, 1}).ok());
  REQUIRE(WriteTraceFile(data, {dir.File("a.json.zst"), OutputFormat::kAuto, 3}).ok());
  REQUIRE(WriteTraceFile(data, {dir.File("a.json.gz"), OutputFormat::kAuto, 1}).ok());
  // Explicit format overrides the name.
  REQUIRE(WriteTraceFile(data, {dir.File("explicit.json"), OutputFormat::kJsonZstd, 1}).ok());
  const std::string plain = testing::ReadFile(dir.File("a.json"));
  CHECK(Decompress("zstd -dcq '" + dir.File("a.json.zst") + "'") == plain);
  CHECK(Decompress("gzip -dc '" + dir.File("a.json.gz") + "'") == plain);
  CHECK(Decompress("zstd -dcq '" + dir.File("explicit.json") + "'") == plain);
  CHECK(dir.List() == std::vector<std::string>{"a.json", "a.json.gz", "a.json.zst",
                                               "explicit.json"});
}

TEST_CASE("Unknown extension writes JSON; perfetto formats are not built here") {
  testing::TempDir dir;
  TraceData data;
  testing::BuildCpuOnly(&data);
  REQUIRE(WriteTraceFile(data, {dir.File("t.trace"), OutputFormat::kAuto, 1}).ok());
  CHECK(testing::ReadFile(dir.File("t.trace")).substr(0, 20) == "{\n\"schemaVersion\": 1");
  const absl::Status st = WriteTraceFile(data, {dir.File("t.pftrace"), OutputFormat::kAuto, 1});
  if (st.code() == absl::StatusCode::kUnimplemented) {
    CHECK(st.message() == "perfetto writer not built");
    CHECK(dir.List() == std::vector<std::string>{"t.trace"});
  }
}

TEST_CASE("WriteTraceFile errors leave nothing behind and name the path") {
  testing::TempDir dir;
  TraceData data;
  testing::BuildCpuOnly(&data);
  const std::string path = dir.File("missing/t.json.zst");
  const absl::Status st = WriteTraceFile(data, {path, OutputFormat::kAuto, 1});
  CHECK(st.code() == absl::StatusCode::kNotFound);
  CHECK(std::string(st.message()).find(path) != std::string::npos);
  CHECK(dir.List().empty());
}

}  // namespace
}  // namespace kairos
