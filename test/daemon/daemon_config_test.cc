// File: daemon_config_test.cc
// Layer: test (daemon). The real preparer: dyno's exact payloads (dynolog-wire-protocol.md
// §3.4, §6.4) parse into the expected Config from defaults; garbage is rejected whole.
// Threading: single-threaded.
#include "config/daemon_config.h"

#include <catch2/catch.hpp>

namespace kairos {
namespace {

TEST_CASE("dyno's default payload parses from defaults, with the trace id") {
  const DaemonConfigPreparer prepare = MakeDaemonConfigPreparer();
  std::string note;
  auto c = prepare(
      "\n    ACTIVITIES_LOG_FILE=/tmp/trace.json\nPROFILE_START_TIME=0\n"
      "ACTIVITIES_DURATION_MSECS=500\nPROFILE_REPORT_INPUT_SHAPES=false\n"
      "PROFILE_WITH_STACK=false\nPROFILE_WITH_FLOPS=false\nPROFILE_WITH_MODULES=false\n"
      "    REQUEST_TRACE_ID=2093711184972473596\n",
      &note);
  REQUIRE(c.ok());
  CHECK(note.empty());
  CHECK(c->log_file == "/tmp/trace.json");
  CHECK(c->duration_ms == 500);
  CHECK(c->profile_start_time_ms == 0);
  CHECK(c->request_trace_id == "2093711184972473596");
  CHECK_FALSE(c->IterationMode());
  CHECK(c->warmup_secs == Config{}.warmup_secs);
}

TEST_CASE("dyno's iteration payload selects iteration mode with the round-up") {
  std::string note;
  auto c = MakeDaemonConfigPreparer()(
      "\n    ACTIVITIES_LOG_FILE=/tmp/t2.pt.trace.json\nPROFILE_START_ITERATION=0\n"
      "PROFILE_START_ITERATION_ROUNDUP=50\nACTIVITIES_ITERATIONS=7\n"
      "PROFILE_REPORT_INPUT_SHAPES=true\nPROFILE_WITH_STACK=true\nPROFILE_WITH_FLOPS=true\n"
      "PROFILE_WITH_MODULES=true\n    REQUEST_TRACE_ID=5136004272534263866\n",
      &note);
  REQUIRE(c.ok());
  CHECK(c->IterationMode());
  CHECK(c->profile_start_iteration == 0);
  CHECK(c->profile_start_iteration_roundup == 50);
  CHECK(c->iterations == 7);
  CHECK(c->report_input_shapes);
  CHECK(c->with_stack);
}

TEST_CASE("garbage is rejected whole; base-only keys reject the request by name") {
  std::string note;
  auto bad = MakeDaemonConfigPreparer()("ACTIVITIES_LOG_FILE=/tmp/x.json\nthis is = = garbage\n",
                                        &note);
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("line 2") != std::string::npos);
  auto base_only = MakeDaemonConfigPreparer()("KAIROS_DAEMON_POLL_MS=5\n", &note);
  REQUIRE_FALSE(base_only.ok());
  CHECK(base_only.status().message() ==
        "config line 1: \"KAIROS_DAEMON_POLL_MS\": not accepted in an on-demand (daemon) "
        "request (base config only, docs/CONFIG.md)");
}

TEST_CASE("client options come from the environment and the base config") {
  EnvSettings env;
  env.daemon_endpoint = "relay-7";
  env.ipc_socket_dir = "/run/ipc";
  env.job_id = 5000000000LL;
  Config base;
  base.daemon_poll_ms = 3;
  const DaemonClientOptions o = DaemonClientOptionsFrom(env, base);
  CHECK(o.endpoint == "relay-7");
  CHECK(o.socket_dir == "/run/ipc");
  CHECK(o.job_id == 5000000000LL);
  CHECK(o.poll_ms == 10);
  CHECK(DaemonClientOptionsFrom(EnvSettings{}, Config{}).endpoint == "dynolog");
  CHECK(DaemonClientOptionsFrom(EnvSettings{}, Config{}).poll_ms == 1000);
}

}  // namespace
}  // namespace kairos
