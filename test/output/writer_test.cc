// File: writer_test.cc
// Layer: tests (output). WriteTraceFile: format dispatch by extension and by request,
// atomic output, compressed JSON identical to plain JSON after decompression.
// Threading: single-threaded.
#include "output/writer.h"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

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
  REQUIRE(WriteTraceFile(data, {path, TraceFormat::kAuto, 1, {}, {}}).ok());
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
  REQUIRE(WriteTraceFile(data, {dir.File("a.json"), TraceFormat::kAuto, 1, {}, {}}).ok());
  REQUIRE(WriteTraceFile(data, {dir.File("a.json.zst"), TraceFormat::kAuto, 3, {}, {}}).ok());
  REQUIRE(WriteTraceFile(data, {dir.File("a.json.gz"), TraceFormat::kAuto, 1, {}, {}}).ok());
  // Explicit format overrides the name.
  REQUIRE(WriteTraceFile(data, {dir.File("explicit.json"), TraceFormat::kJsonZstd, 1, {}, {}}).ok());
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
  REQUIRE(WriteTraceFile(data, {dir.File("t.trace"), TraceFormat::kAuto, 1, {}, {}}).ok());
  CHECK(testing::ReadFile(dir.File("t.trace")).substr(0, 20) == "{\n\"schemaVersion\": 1");
  const absl::Status st = WriteTraceFile(data, {dir.File("t.pftrace"), TraceFormat::kAuto, 1, {}, {}});
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
  const absl::Status st = WriteTraceFile(data, {path, TraceFormat::kAuto, 1, {}, {}});
  CHECK(st.code() == absl::StatusCode::kNotFound);
  CHECK(std::string(st.message()).find(path) != std::string::npos);
  CHECK(dir.List().empty());
}

// Writes "keep" to <dir>/victim and links <dir>/<link> to it; returns the victim's path.
std::string PlantSymlinkToVictim(const testing::TempDir& dir, const char* link) {
  const std::string victim = dir.File("victim");
  FILE* f = std::fopen(victim.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs("keep", f);
  std::fclose(f);
  REQUIRE(symlink(victim.c_str(), dir.File(link).c_str()) == 0);
  return victim;
}

TEST_CASE("SummaryPathFor replaces the trace extension") {
  CHECK(SummaryPathFor("/tmp/run.json") == "/tmp/run.summary.json");
  CHECK(SummaryPathFor("/tmp/run.json.zst") == "/tmp/run.summary.json");
  CHECK(SummaryPathFor("run.pftrace.zst") == "run.summary.json");
  CHECK(SummaryPathFor("trace") == "trace.summary.json");
}

TEST_CASE("The summary goes through the atomic sink: no fixed temp name, symlinks not followed") {
  testing::TempDir dir;
  TraceData data;
  testing::BuildCpuOnly(&data);
  // The old code wrote "<summary>.tmp" with fopen and renamed it: a symlink planted there made
  // it write wherever the link pointed (issue 12 item 2).
  const std::string victim = PlantSymlinkToVictim(dir, "t.summary.json.tmp");
  OutputOptions o{dir.File("t.json"), TraceFormat::kAuto, 1, "{\"schema_version\":1}"};
  absl::Status summary_status = absl::UnknownError("not set");
  REQUIRE(WriteTraceFile(data, o, &summary_status).ok());
  CHECK(summary_status.ok());
  CHECK(testing::ReadFile(dir.File("t.summary.json")) == "{\"schema_version\":1}\n");
  CHECK(testing::ReadFile(victim) == "keep");
  struct stat link_st, trace_st, summary_st;
  REQUIRE(lstat(dir.File("t.summary.json.tmp").c_str(), &link_st) == 0);
  CHECK(S_ISLNK(link_st.st_mode));
  // Same permissions as the trace, by construction (one sink).
  REQUIRE(stat(dir.File("t.json").c_str(), &trace_st) == 0);
  REQUIRE(lstat(dir.File("t.summary.json").c_str(), &summary_st) == 0);
  CHECK(S_ISREG(summary_st.st_mode));
  CHECK((summary_st.st_mode & 07777) == (trace_st.st_mode & 07777));
  CHECK(dir.List() == std::vector<std::string>{"t.json", "t.summary.json", "t.summary.json.tmp",
                                               "victim"});
}

TEST_CASE("A summary whose final name is a symlink is refused, and the trace still stands") {
  testing::TempDir dir;
  TraceData data;
  testing::BuildCpuOnly(&data);
  const std::string victim = PlantSymlinkToVictim(dir, "t.summary.json");
  absl::Status summary_status;
  REQUIRE(WriteTraceFile(data, {dir.File("t.json"), TraceFormat::kAuto, 1, "{}"}, &summary_status)
              .ok());
  CHECK_FALSE(summary_status.ok());
  CHECK(testing::ReadFile(victim) == "keep");
}

TEST_CASE("A failed trace write produces no summary") {
  testing::TempDir dir;
  TraceData data;
  testing::BuildCpuOnly(&data);
  // A directory where the trace should go: the trace cannot be committed.
  REQUIRE(mkdir(dir.File("t.json").c_str(), 0700) == 0);
  absl::Status summary_status = absl::UnknownError("untouched");
  const absl::Status st =
      WriteTraceFile(data, {dir.File("t.json"), TraceFormat::kAuto, 1, "{}"}, &summary_status);
  CHECK_FALSE(st.ok());
  CHECK(summary_status.message() == "untouched");  // the summary was never attempted
  CHECK(dir.List() == std::vector<std::string>{"t.json"});
}

}  // namespace
}  // namespace kairos
