// File: config_limits_test.cc
// Layer: test for kairos_config. What ParseConfig reports (ConfigParseInfo), the on-demand
// whitelist and ranges, control characters, value sizes, PROFILE_START_TIME bounds, and the
// warnings for accepted-but-unimplemented keys. Exact messages throughout.
// Threading: single-threaded.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/config.h"

namespace kairos {
namespace {

constexpr int64_t kNow = 1763772000000;  // a fixed "now" in Unix ms
constexpr int64_t kDayMs = 24LL * 3600 * 1000;

ParseOptions Options(ConfigSource source = ConfigSource::kFile) {
  ParseOptions o;
  o.source = source;
  o.now_unix_ms = kNow;
  return o;
}

// "ok" or the error message.
std::string Outcome(const std::string& text, ConfigSource source = ConfigSource::kFile) {
  absl::StatusOr<Config> c = ParseConfig(text, Config{}, Options(source));
  return c.ok() ? std::string("ok") : std::string(c.status().message());
}

Config Parse(const std::string& text) {
  absl::StatusOr<Config> c = ParseConfig(text, Config{}, Options());
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  return *c;
}

TEST_CASE("daemon requests may set only whitelisted keys, each rejected by name", "[config]") {
  const std::string base_only =
      ": not accepted in an on-demand (daemon) request (base config only, docs/CONFIG.md)";
  for (const char* line :
       {"ENABLE_IPC_FABRIC=true", "KAIROS_EXTRA_OUTPUTS=/etc/passwd", "KAIROS_DAEMON_POLL_MS=10",
        "ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS=1", "ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB=2147483647",
        "KAIROS_EXIT_FLUSH_TIMEOUT_MS=600000", "KAIROS_CPU_BUFFER_KB_PER_THREAD=1048576",
        "KAIROS_MAX_THREADS=65536", "KAIROS_HOST_METRICS_INTERVAL_MS=1", "VERBOSE_LOG_LEVEL=3",
        "ROCTRACER_MAX_EVENTS=1", "ENABLE_SIGUSR2=1", "CUPTI_PER_THREAD_BUFFER_ENABLED=1",
        "KAIROS_TELEMETRY_INTERVAL_SECS=1", "KAIROS_TELEMETRY_FILE=/tmp/t.jsonl"}) {
    const std::string text(line);
    INFO(text);
    CHECK(Outcome("ACTIVITIES_ITERATIONS=2\n" + text, ConfigSource::kDaemon) ==
          "config line 2: \"" + text.substr(0, text.find('=')) + "\"" + base_only);
  }
  CHECK(Outcome("NO_SUCH_KEY=1", ConfigSource::kDaemon) ==
        "config line 1: \"NO_SUCH_KEY\": unknown key; not accepted in an on-demand (daemon) "
        "request");
  // From a file the same keys apply (an unknown key is only a warning there).
  CHECK(Parse("ENABLE_IPC_FABRIC=true").enable_ipc_fabric);
  CHECK(Parse("ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB=2147483647").max_gpu_buffer_mb == 2147483647);
  CHECK(Parse("KAIROS_EXIT_FLUSH_TIMEOUT_MS=600000").exit_flush_timeout_ms == 600000);
  CHECK(Outcome("NO_SUCH_KEY=1") == "ok");
  // Telemetry is base config only; PM sampling may be asked for by a request.
  CHECK(Parse("KAIROS_TELEMETRY_INTERVAL_SECS=30").telemetry_interval_secs == 30);
  CHECK(Outcome("ACTIVITIES_ITERATIONS=2\nCUPTI_PM_SAMPLING_METRICS=a__b\n"
                "CUPTI_PM_SAMPLING_DEVICE_ID=1\nKAIROS_PM_SAMPLING_INTERVAL_US=100",
                ConfigSource::kDaemon) == "ok");
}

TEST_CASE("daemon requests are held to the on-demand ranges", "[config]") {
  const auto kDaemon = ConfigSource::kDaemon;
  CHECK(Outcome("KAIROS_ZSTD_LEVEL=3", kDaemon) == "ok");
  CHECK(Outcome("KAIROS_ZSTD_LEVEL=19", kDaemon) ==
        "config line 1: KAIROS_ZSTD_LEVEL: \"19\" is out of range; expected an integer in [1, 3] "
        "(the on-demand limit)");
  CHECK(Outcome("ACTIVITIES_DURATION_MSECS=3600001", kDaemon) ==
        "config line 1: ACTIVITIES_DURATION_MSECS: \"3600001\" is out of range; expected an "
        "integer in [0, 3600000] (the on-demand limit)");
  CHECK(Outcome("ACTIVITIES_DURATION_SECS=3601", kDaemon) ==
        "config line 1: ACTIVITIES_DURATION_SECS: \"3601\" is out of range; expected an integer "
        "in [0, 3600] (the on-demand limit)");
  // The exact texts `dyno gputrace` sends (dynolog-wire-protocol.md §3.4, §6.4) are accepted.
  CHECK(Outcome("\n    ACTIVITIES_LOG_FILE=/tmp/trace.json\nPROFILE_START_TIME=0\n"
                "ACTIVITIES_DURATION_MSECS=500\nPROFILE_REPORT_INPUT_SHAPES=false\n"
                "PROFILE_WITH_STACK=false\nPROFILE_WITH_FLOPS=false\n"
                "PROFILE_WITH_MODULES=false\n    REQUEST_TRACE_ID=2093711184972473596\n",
                kDaemon) == "ok");
  CHECK(Outcome("ACTIVITIES_LOG_FILE=/t/x.json\nPROFILE_START_TIME=0\n"
                "ACTIVITIES_DURATION_MSECS=1234\nPROFILE_REPORT_INPUT_SHAPES=false\n"
                "PROFILE_PROFILE_MEMORY=true\nPROFILE_MEMORY=true\n"
                "PROFILE_MEMORY_DURATION_MSECS=1234\nPROFILE_WITH_STACK=false\n"
                "PROFILE_WITH_FLOPS=false\nPROFILE_WITH_MODULES=false",
                kDaemon) == "ok");
  CHECK(Outcome("PROFILE_START_ITERATION=0\nPROFILE_START_ITERATION_ROUNDUP=50\n"
                "ACTIVITIES_ITERATIONS=7",
                kDaemon) == "ok");
  // The same values from a file keep the full range.
  CHECK(Parse("KAIROS_ZSTD_LEVEL=19").zstd_level == 19);
}

TEST_CASE("NUL and control characters are rejected in every source", "[config]") {
  for (ConfigSource source : {ConfigSource::kFile, ConfigSource::kEnv, ConfigSource::kApi,
                              ConfigSource::kDaemon}) {
    const std::string text("ACTIVITIES_LOG_FILE=/tmp/a\0b.json", 33);
    CHECK(Outcome(text, source) ==
          "config line 1: ACTIVITIES_LOG_FILE: contains the control character \\x00 (NUL and "
          "control characters are never accepted)");
  }
  CHECK(Outcome("REQUEST_TRACE_ID=a\rb") ==
        "config line 1: REQUEST_TRACE_ID: contains the control character \\x0d (NUL and control "
        "characters are never accepted)");
  CHECK(Outcome("KAIROS_EXTRA_OUTPUTS=/a,/b\x1b[2J") ==
        "config line 1: KAIROS_EXTRA_OUTPUTS: contains the control character \\x1b (NUL and "
        "control characters are never accepted)");
  CHECK(Outcome(std::string("ACTIVITIES_\x7f", 12) + "=1") ==
        "config line 1: \"ACTIVITIES_\\x7f\": contains the control character \\x7f (NUL and "
        "control characters are never accepted)");
  // A tab inside a value is not a control character for this rule.
  CHECK(Parse("REQUEST_TRACE_ID=a\tb").request_trace_id == "a\tb");
  CHECK(Outcome("CUSTOM_CONFIG=" + std::string(4097, 'x')) ==
        "config line 1: CUSTOM_CONFIG: value is 4097 bytes; the limit is 4096");
  CHECK(Parse("CUSTOM_CONFIG=" + std::string(4096, 'x')).custom_config.size() == 4096);
}

TEST_CASE("PROFILE_START_TIME far in the future is rejected, not overflowed", "[config]") {
  CHECK(Parse("PROFILE_START_TIME=" + std::to_string(kNow + kDayMs)).profile_start_time_ms ==
        kNow + kDayMs);
  const std::string later = std::to_string(kNow + kDayMs + 1);
  CHECK(Outcome("PROFILE_START_TIME=" + later) ==
        "config line 1: PROFILE_START_TIME: \"" + later +
            "\" is more than 24 h in the future (now is " + std::to_string(kNow) + " Unix ms)");
  CHECK(Outcome("PROFILE_START_TIME=9223372036854775807", ConfigSource::kDaemon) ==
        "config line 1: PROFILE_START_TIME: \"9223372036854775807\" is more than 24 h in the "
        "future (now is " +
            std::to_string(kNow) + " Unix ms)");
  CHECK(Outcome("PROFILE_START_TIME=99999999999999999999999") ==
        "config line 1: PROFILE_START_TIME: \"99999999999999999999999\" is out of range; "
        "expected an integer in [0, 9223372036854775807]");
}

TEST_CASE("ConfigParseInfo reports the keys set and whether a window is named", "[config]") {
  ConfigParseInfo info;
  std::vector<std::string> warnings;
  REQUIRE(ParseConfig("KAIROS_OUTPUT_FORMAT=json\nKAIROS_ZSTD_LEVEL=2\nKAIROS_OUTPUT_FORMAT=json\n"
                      "UNKNOWN_KEY=1\nENABLE_SIGUSR2=1",
                      Config{}, Options(), &warnings, &info)
              .ok());
  CHECK(info.keys_set == std::vector<std::string>{"KAIROS_OUTPUT_FORMAT", "KAIROS_ZSTD_LEVEL"});
  CHECK_FALSE(info.names_window);
  for (const char* key :
       {"PROFILE_START_TIME=0", "PROFILE_START_ITERATION=3", "PROFILE_START_ITERATION_ROUNDUP=2",
        "ACTIVITIES_ITERATIONS=1", "ACTIVITIES_DURATION_MSECS=5", "ACTIVITIES_DURATION_SECS=1",
        "ACTIVITIES_WARMUP_PERIOD_SECS=0", "ACTIVITIES_WARMUP_ITERATIONS=0"}) {
    INFO(key);
    ConfigParseInfo one;
    REQUIRE(ParseConfig(std::string("# c\nKAIROS_SUMMARY=off\n") + key, Config{}, Options(),
                        &warnings, &one)
                .ok());
    CHECK(one.names_window);
    CHECK(one.keys_set.size() == 2);
    CHECK(KeyNamesWindow(std::string(key).substr(0, std::string(key).find('='))));
  }
  CHECK_FALSE(KeyNamesWindow("KAIROS_SUMMARY"));
}

TEST_CASE("accepted but unimplemented keys warn once by name", "[config]") {
  std::vector<std::string> warnings;
  REQUIRE(ParseConfig("ACTIVITIES_DISPLAY_CUDA_SYNC_WAIT_EVENTS=false\n"
                      "CUPTI_PER_THREAD_BUFFER_ENABLED=true\nCUPTI_PM_SAMPLING_METRICS=a,b\n"
                      "CUPTI_PM_SAMPLING_DEVICE_ID=0\nVERBOSE_LOG_LEVEL=1\nVERBOSE_LOG_MODULES=x\n"
                      "PROFILE_MEMORY=false\nPROFILE_MEMORY_DURATION_MSECS=10\n"
                      "VERBOSE_LOG_LEVEL=2\nACTIVITIES_ITERATIONS=3",
                      Config{}, Options(), &warnings)
              .ok());
  const std::string tail = ": accepted but not implemented by kairos; no effect";
  CHECK(warnings == std::vector<std::string>{
                        "config line 1: ACTIVITIES_DISPLAY_CUDA_SYNC_WAIT_EVENTS" + tail,
                        "config line 2: CUPTI_PER_THREAD_BUFFER_ENABLED" + tail,
                        "config line 5: VERBOSE_LOG_LEVEL" + tail,
                        "config line 6: VERBOSE_LOG_MODULES" + tail,
                        "config line 8: PROFILE_MEMORY_DURATION_MSECS" + tail});
}

}  // namespace
}  // namespace kairos
