// File: daemon_rpc_test.cc
// Layer: test (daemon). The RPC texts byte for byte (dynolog-wire-protocol.md §6.2-§6.4), the
// request handler's replies and silences, the small JSON reader and the trace-path prediction.
// Threading: single-threaded.
#include "daemon_rpc.h"

#include <catch2/catch.hpp>

#include "config/config.h"
#include "daemon_trace_path.h"

namespace kairos::tools {
namespace {

TEST_CASE("gputrace config text: defaults, iteration mode, memory mode (§6.4)") {
  GputraceOptions o;
  o.log_file = "/tmp/trace.json";
  CHECK(BuildGputraceConfig(o) ==
        "ACTIVITIES_LOG_FILE=/tmp/trace.json\nPROFILE_START_TIME=0\n"
        "ACTIVITIES_DURATION_MSECS=500\nPROFILE_REPORT_INPUT_SHAPES=false\n"
        "PROFILE_WITH_STACK=false\nPROFILE_WITH_FLOPS=false\nPROFILE_WITH_MODULES=false");
  GputraceOptions it = o;
  it.log_file = "/tmp/t2.pt.trace.json";
  it.iterations = 7;
  it.start_iteration_roundup = 50;
  it.record_shapes = it.with_stacks = it.with_flops = it.with_modules = true;
  CHECK(BuildGputraceConfig(it) ==
        "ACTIVITIES_LOG_FILE=/tmp/t2.pt.trace.json\nPROFILE_START_ITERATION=0\n"
        "PROFILE_START_ITERATION_ROUNDUP=50\nACTIVITIES_ITERATIONS=7\n"
        "PROFILE_REPORT_INPUT_SHAPES=true\nPROFILE_WITH_STACK=true\nPROFILE_WITH_FLOPS=true\n"
        "PROFILE_WITH_MODULES=true");
  GputraceOptions mem = o;
  mem.log_file = "<f>";
  mem.duration_ms = 1234;
  mem.profile_memory = true;
  CHECK(BuildGputraceConfig(mem) ==
        "ACTIVITIES_LOG_FILE=<f>\nPROFILE_START_TIME=0\nACTIVITIES_DURATION_MSECS=1234\n"
        "PROFILE_REPORT_INPUT_SHAPES=false\nPROFILE_PROFILE_MEMORY=true\nPROFILE_MEMORY=true\n"
        "PROFILE_MEMORY_DURATION_MSECS=1234\nPROFILE_WITH_STACK=false\nPROFILE_WITH_FLOPS=false\n"
        "PROFILE_WITH_MODULES=false");
}

TEST_CASE("a request with --profile-memory turns memory recording on, one without does not") {
  GputraceOptions o;
  o.log_file = "/tmp/trace.json";
  ParseOptions daemon;
  daemon.source = ConfigSource::kDaemon;
  std::vector<std::string> warnings;
  auto off = ParseConfig(BuildGputraceConfig(o), Config{}, daemon, &warnings);
  REQUIRE(off.ok());
  CHECK_FALSE(off->profile_memory);
  o.profile_memory = true;
  auto on = ParseConfig(BuildGputraceConfig(o), Config{}, daemon, &warnings);
  REQUIRE(on.ok());
  CHECK(on->profile_memory);
  CHECK(on->log_file == "/tmp/trace.json");  // PROFILE_MEMORY=true no longer moves the trace
  // Only PROFILE_MEMORY_DURATION_MSECS (libkineto's snapshot duration) is warned about.
  CHECK(warnings == std::vector<std::string>{"config line 7: PROFILE_MEMORY_DURATION_MSECS: "
                                             "accepted but not implemented by kairos; no effect"});
}

TEST_CASE("gputrace request text is dyno's, byte for byte (§6.3)") {
  GputraceOptions o;
  o.log_file = "/tmp/trace.json";
  o.job_id = 42;
  o.pids = "5,6";
  o.process_limit = 3;
  CHECK(BuildGputraceRequest(o, BuildGputraceConfig(o)) ==
        "\n{\n    \"fn\": \"setKinetOnDemandRequest\",\n    \"config\": "
        "\"ACTIVITIES_LOG_FILE=/tmp/trace.json\\nPROFILE_START_TIME=0\\n"
        "ACTIVITIES_DURATION_MSECS=500\\nPROFILE_REPORT_INPUT_SHAPES=false\\n"
        "PROFILE_WITH_STACK=false\\nPROFILE_WITH_FLOPS=false\\nPROFILE_WITH_MODULES=false\",\n"
        "    \"job_id\": 42,\n    \"pids\": [5,6],\n    \"process_limit\": 3\n}");
  // Unlike dyno, a quote in the path keeps the JSON valid.
  o.log_file = "/tmp/a\"b.json";
  auto json = ParseRpcJson(BuildGputraceRequest(o, BuildGputraceConfig(o)));
  REQUIRE(json.ok());
  CHECK(json->Find("config")->text.rfind("ACTIVITIES_LOG_FILE=/tmp/a\"b.json\n", 0) == 0);
}

TEST_CASE("RPC handler: replies exactly like Dynolog, or closes silently") {
  DaemonRegistry reg(60000, nullptr, "h");
  reg.OnPoll(9, {77}, 2, 0);
  std::string log;
  CHECK(HandleRpcRequest("{\"fn\":\"getStatus\"}", reg, 0, 0, &log) == "{\"status\":1}");
  CHECK(HandleRpcRequest("{\"fn\":\"getVersion\"}", reg, 0, 0, &log) ==
        "{\"version\":\"kairos-0.1.0\"}");
  CHECK(HandleRpcRequest("\n{\n    \"fn\": \"dcgmProfPause\",\n    \"duration_s\": 300\n}", reg,
                         0, 0, &log) == "{\"status\":false}");
  CHECK(HandleRpcRequest("{\"fn\":\"setKinetOnDemandRequest\",\"pids\":[0]}", reg, 0, 0, &log) ==
        "{\"status\":\"failed\"}");
  CHECK(HandleRpcRequest("{\"fn\":\"setKinetOnDemandRequest\",\"config\":\"x\",\"pids\":[0],"
                         "\"job_id\":\"9\"}", reg, 0, 0, &log) ==
        "{\"status\":\"failed with exception = job_id is not an integer\"}");
  CHECK(HandleRpcRequest("{\"fn\":\"setKinetOnDemandRequest\",\"config\":\"x\",\"pids\":[1.5]}",
                         reg, 0, 0, &log) ==
        "{\"status\":\"failed with exception = pids must be 32-bit integers\"}");
  CHECK(HandleRpcRequest("{\"fn\":\"setKinetOnDemandRequest\",\"config\":\"x\",\"pids\":[0],"
                         "\"job_id\":9}", reg, 0, 0, &log) ==
        "{\"activityProfilersBusy\":0,\"activityProfilersTriggered\":[77],\"eventProfilersBusy\":0,"
        "\"eventProfilersTriggered\":[],\"processesMatched\":[77]}");
  CHECK(log == "rpc: setKinetOnDemandRequest job 9: matched 1, triggered 1, busy 0");
  CHECK_FALSE(HandleRpcRequest("{\"fn\":\"noSuchFn\"}", reg, 0, 0, &log).has_value());
  CHECK_FALSE(HandleRpcRequest("[1,2]", reg, 0, 0, &log).has_value());
  CHECK_FALSE(HandleRpcRequest("{\"nofn\":1}", reg, 0, 0, &log).has_value());
  CHECK_FALSE(HandleRpcRequest("\x01\x02 garbage", reg, 0, 0, &log).has_value());
  CHECK_FALSE(HandleRpcRequest("", reg, 0, 0, &log).has_value());
}

TEST_CASE("RPC JSON reader: values, escapes, errors, depth limit, repeated keys") {
  auto v = ParseRpcJson(" {\"a\": [1, -2, 3.5, true, false, null], \"s\": \"q\\\"\\n\\u00e9\"} ");
  REQUIRE(v.ok());
  const auto& a = v->Find("a")->items;
  REQUIRE(a.size() == 6);
  int64_t i = 0;
  CHECK(a[1].AsExactInt(&i));
  CHECK(i == -2);
  CHECK_FALSE(a[2].AsExactInt(&i));
  CHECK(a[3].boolean);
  CHECK_FALSE(a[4].boolean);
  CHECK(a[5].type == JsonValue::Type::kNull);
  CHECK(v->Find("s")->text == "q\"\n\xc3\xa9");
  CHECK(ParseRpcJson("{\"a\":1} x").status().message() == "JSON: trailing data at byte 8");
  CHECK_FALSE(ParseRpcJson("{\"a\":}").ok());
  CHECK_FALSE(ParseRpcJson("\"unterminated").ok());
  CHECK(ParseRpcJson(std::string(kMaxRpcJsonDepth, '[') + std::string(kMaxRpcJsonDepth, ']')).ok());
  CHECK(ParseRpcJson(std::string(40, '[') + std::string(40, ']')).status().message() ==
        "JSON: nesting too deep at byte 32");
  // Hostile input: a key given twice is rejected (no "which one wins" ambiguity), and so
  // are invalid UTF-8 and numbers outside the RFC 8259 grammar.
  CHECK(ParseRpcJson("{\"fn\":\"a\",\"fn\":\"b\"}").status().message() ==
        "JSON: duplicate key at byte 14");
  CHECK_FALSE(ParseRpcJson("\"\xC3(\"").ok());
  CHECK_FALSE(ParseRpcJson("[01]").ok());
  CHECK(JsonQuote("a\"b\\c\n\x01") == "\"a\\\"b\\\\c\\n\\u0001\"");
}

TEST_CASE("trace path prediction uses the file name only") {
  CHECK(PredictOnDemandTracePath("/tmp/t.pt.trace.json", 42) == "/tmp/t_42.pt.trace.json");
  CHECK(PredictOnDemandTracePath("/tmp/a.json", 42) == "/tmp/a_42.json");
  CHECK(PredictOnDemandTracePath("/tmp/d.json/x", 42) == "/tmp/d.json/x");
  CHECK(PredictOnDemandTracePath("/tmp/r{pid}.json", 42) == "/tmp/r42.json");
  CHECK(PredictOnDemandTracePath("x.json.gz", 7) == "x_7.json.gz");
}

}  // namespace
}  // namespace kairos::tools
