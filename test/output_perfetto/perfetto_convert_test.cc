// File: perfetto_convert_test.cc
// Layer: test (output_perfetto). The Perfetto reader and `kairos convert`: protobuf ->
// TraceData is lossless against the JSON writer, and the CLI round-trips
// JSON -> protobuf (plain and zstd) -> JSON without losing events; usage errors exit 2,
// I/O errors exit 1.
// Threading: single-threaded (runs the CLI as a child process).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "output/json_writer.h"
#include "output/perfetto_writer.h"
#include "output/proto/perfetto_reader.h"
#include "output/writer.h"
#include "output_perfetto/json_compare.h"
#include "output_perfetto/reference_trace.h"
#include "output_perfetto/string_sink.h"

namespace kairos {
namespace {

using nlohmann::json;

using testing::StringSink;

std::string JsonOf(const TraceData& d) {
  StringSink s;
  JsonTraceWriter w;
  REQUIRE(w.Write(d, s).ok());
  return s.out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int Run(const std::string& args) {
  int rc = std::system((std::string(KAIROS_CLI_PATH) + " convert " + args + " >/dev/null 2>&1").c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST_CASE("protobuf -> TraceData -> JSON equals the JSON of the original data") {
  TraceData ref = testing::BuildReferenceTrace(100);
  StringSink pb;
  PerfettoTraceWriter w;
  REQUIRE(w.Write(ref, pb).ok());
  absl::StatusOr<TraceData> back = ReadPerfettoTraceBytes(pb.out);
  REQUIRE(back.ok());
  CHECK(back->EventCount() == ref.EventCount());
  CHECK(back->stats.count("perfetto_reader.unmapped") == 0);
  json a = json::parse(JsonOf(ref)), b = json::parse(JsonOf(*back));
  CHECK(testing::SortedEvents(a) == testing::SortedEvents(b));
  CHECK(testing::TopLevelWithoutEvents(a) == testing::TopLevelWithoutEvents(b));
}

TEST_CASE("kairos convert round-trips JSON -> protobuf -> JSON without losing events") {
  char tmpl[] = "/tmp/kairos_cv_XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  std::string dir = tmpl;
  TraceData ref = testing::BuildReferenceTrace(2000);
  OutputOptions req;
  req.path = dir + "/in.json";
  REQUIRE(WriteTraceFile(ref, req).ok());
  json original = json::parse(ReadFile(req.path));

  for (const char* mid : {"mid.pftrace", "mid.pftrace.zst", "mid.perfetto-trace"}) {
    INFO(mid);
    std::string m = dir + "/" + mid;
    REQUIRE(Run(dir + "/in.json " + m) == 0);
    std::string out = dir + "/out_" + mid + ".json.zst";
    REQUIRE(Run(m + " " + out + " --zstd-level 5") == 0);
    REQUIRE(std::system(("zstd -q -d -f " + out + " -o " + dir + "/out.json").c_str()) == 0);
    json back = json::parse(ReadFile(dir + "/out.json"));
    CHECK(back["traceEvents"].size() == original["traceEvents"].size());
    CHECK(testing::SortedEvents(back) == testing::SortedEvents(original));
    CHECK(testing::TopLevelWithoutEvents(back) == testing::TopLevelWithoutEvents(original));
  }
  // --format overrides the name.
  REQUIRE(Run(dir + "/in.json " + dir + "/forced.bin --format perfetto") == 0);
  CHECK(ReadFile(dir + "/forced.bin").substr(0, 1) == "\x0a");
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("kairos convert usage and I/O errors") {
  CHECK(Run("") == 2);
  CHECK(Run("--help") == 0);
  CHECK(Run("a.json") == 2);
  CHECK(Run("a.json b.pftrace --format xml") == 2);
  CHECK(Run("a.json b.pftrace --zstd-level 0") == 2);
  CHECK(Run("a.json b.pftrace --bogus") == 2);
  CHECK(Run("/nonexistent/a.json /tmp/b.pftrace") == 1);
  CHECK(Run("/dev/null /nonexistent-dir/b.pftrace") == 1);
}

TEST_CASE("kairos convert rejects a ts that does not fit instead of wrapping it") {
  char tmpl[] = "/tmp/kairos_convert_ts_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  {
    std::ofstream f(dir + "/in.json");
    f << R"J({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":99999999999999999999,"dur":1}]})J";
  }
  const std::string cmd = std::string(KAIROS_CLI_PATH) + " convert " + dir + "/in.json " + dir +
                          "/out.json 2>" + dir + "/err";
  const int rc = std::system(cmd.c_str());
  CHECK((WIFEXITED(rc) ? WEXITSTATUS(rc) : -1) == 1);
  CHECK(ReadFile(dir + "/err").find("\"ts\": 99999999999999999999 does not fit a 64-bit ns time") !=
        std::string::npos);
  CHECK_FALSE(std::ifstream(dir + "/out.json").good());
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace kairos
