// File: config_test.cc
// Layer: test for kairos_config. ParseConfig syntax rules, keys, aliases, errors (exact
// messages), warnings, derived defaults and the ConfigToText round trip.
// Threading: single-threaded.
#include "config/config.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace kairos {
namespace {

constexpr int64_t kNow = 1763772000000;  // a fixed "now" in Unix ms

ParseOptions Options(ConfigSource source = ConfigSource::kApi) {
  ParseOptions o;
  o.source = source;
  o.now_unix_ms = kNow;
  return o;
}

Config Parse(std::string_view text, std::vector<std::string>* warnings = nullptr) {
  absl::StatusOr<Config> c = ParseConfig(text, Config{}, Options(), warnings);
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  return *c;
}

std::string Error(std::string_view text, ConfigSource source = ConfigSource::kApi) {
  absl::StatusOr<Config> c = ParseConfig(text, Config{}, Options(source));
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(c.status().message());
}

// Field-by-field equality, so the round-trip test really compares values.
void RequireSame(const Config& a, const Config& b) {
  CHECK(a.activities_enabled == b.activities_enabled);
  CHECK(a.activity_types == b.activity_types);
  CHECK(a.duration_ms == b.duration_ms);
  CHECK(a.iterations == b.iterations);
  CHECK(a.warmup_secs == b.warmup_secs);
  CHECK(a.warmup_iterations == b.warmup_iterations);
  CHECK(a.max_gpu_buffer_mb == b.max_gpu_buffer_mb);
  CHECK(a.log_file == b.log_file);
  CHECK(a.display_cuda_sync_wait_events == b.display_cuda_sync_wait_events);
  CHECK(a.cupti_per_thread_buffer == b.cupti_per_thread_buffer);
  CHECK(a.profile_start_time_ms == b.profile_start_time_ms);
  CHECK(a.profile_start_iteration == b.profile_start_iteration);
  CHECK(a.profile_start_iteration_roundup == b.profile_start_iteration_roundup);
  CHECK(a.request_trace_id == b.request_trace_id);
  CHECK(a.request_group_trace_id == b.request_group_trace_id);
  CHECK(a.enable_ipc_fabric == b.enable_ipc_fabric);
  CHECK(a.on_demand_poll_secs == b.on_demand_poll_secs);
  CHECK(a.verbose_log_level == b.verbose_log_level);
  CHECK(a.verbose_log_modules == b.verbose_log_modules);
  CHECK(a.report_input_shapes == b.report_input_shapes);
  CHECK(a.profile_memory == b.profile_memory);
  CHECK(a.with_stack == b.with_stack);
  CHECK(a.with_flops == b.with_flops);
  CHECK(a.with_modules == b.with_modules);
  CHECK(a.memory_snapshot == b.memory_snapshot);
  CHECK(a.memory_snapshot_duration_ms == b.memory_snapshot_duration_ms);
  CHECK(a.custom_config == b.custom_config);
  CHECK(a.pm_sampling_metrics == b.pm_sampling_metrics);
  CHECK(a.pm_sampling_device_id == b.pm_sampling_device_id);
  CHECK(a.cpu_buffer_kb_per_thread == b.cpu_buffer_kb_per_thread);
  CHECK(a.max_threads == b.max_threads);
  CHECK(a.output_format == b.output_format);
  CHECK(a.extra_outputs == b.extra_outputs);
  CHECK(a.zstd_level == b.zstd_level);
  CHECK(a.summary == b.summary);
  CHECK(a.host_metrics_interval_ms == b.host_metrics_interval_ms);
  CHECK(a.nvtx_domains_include == b.nvtx_domains_include);
  CHECK(a.nvtx_domains_exclude == b.nvtx_domains_exclude);
  CHECK(a.daemon_poll_ms == b.daemon_poll_ms);
  CHECK(a.iteration_fallback_timeout_ms == b.iteration_fallback_timeout_ms);
  CHECK(a.exit_flush_timeout_ms == b.exit_flush_timeout_ms);
}

TEST_CASE("empty and comment-only texts give the defaults", "[config]") {
  std::vector<std::string> warnings;
  const Config c = Parse("\n  \t\n# just a comment\n   # indented comment\n\n", &warnings);
  RequireSame(c, Config{});
  CHECK(warnings.empty());
}

TEST_CASE("dyno gputrace time request, 4-space indented", "[config]") {
  const Config c = Parse(
      "\n    ACTIVITIES_LOG_FILE=/tmp/x.json\n    PROFILE_START_TIME=1763772005000\n"
      "    ACTIVITIES_DURATION_MSECS=750\n    PROFILE_REPORT_INPUT_SHAPES=false\n"
      "    PROFILE_PROFILE_MEMORY=true\n    PROFILE_WITH_STACK=yes\n    PROFILE_WITH_FLOPS=T\n"
      "    PROFILE_WITH_MODULES=0\n    REQUEST_TRACE_ID=1234567\n");
  CHECK(c.log_file == "/tmp/x.json");
  CHECK(c.profile_start_time_ms == 1763772005000);
  CHECK(c.duration_ms == 750);
  CHECK_FALSE(c.report_input_shapes);
  CHECK(c.profile_memory);
  CHECK(c.with_stack);
  CHECK(c.with_flops);
  CHECK_FALSE(c.with_modules);
  CHECK(c.request_trace_id == "1234567");
  CHECK_FALSE(c.IterationMode());
}

TEST_CASE("comments start anywhere and cut the value", "[config]") {
  const Config c = Parse("ACTIVITIES_LOG_FILE=/tmp/a#b.json\nACTIVITIES_ITERATIONS=3 # three\n");
  CHECK(c.log_file == "/tmp/a");
  CHECK(c.iterations == 3);
}

TEST_CASE("CRLF lines parse (kairos trims \\r, libkineto does not)", "[config]") {
  const Config c = Parse(
      "ACTIVITIES_ENABLED=false\r\nACTIVITIES_ITERATIONS=7\r\n"
      "ACTIVITIES_LOG_FILE=/tmp/t.json\r\n");
  CHECK_FALSE(c.activities_enabled);
  CHECK(c.iterations == 7);
  CHECK(c.log_file == "/tmp/t.json");
}

TEST_CASE("key and value are trimmed of spaces and tabs", "[config]") {
  const Config c = Parse(" \tACTIVITIES_WARMUP_PERIOD_SECS \t=\t 9 \t");
  CHECK(c.warmup_secs == 9);
}

TEST_CASE("an '=' in the value is an invalid line", "[config]") {
  CHECK(Error("ACTIVITIES_ITERATIONS=1\nCUSTOM_CONFIG=a=b\n") ==
        "config line 2: invalid config line \"CUSTOM_CONFIG=a=b\"; expected KEY=VALUE with "
        "exactly one '='");
  CHECK(Error("JUSTAWORD") ==
        "config line 1: invalid config line \"JUSTAWORD\"; expected KEY=VALUE with exactly one "
        "'='");
  CHECK(Error("\n\n = 5") ==
        "config line 3: invalid config line \"= 5\"; expected KEY=VALUE with exactly one '='");
}

TEST_CASE("integers: negative, garbage, overflow and range", "[config]") {
  CHECK(Error("# c\n\nACTIVITIES_DURATION_MSECS=-5") ==
        "config line 3: ACTIVITIES_DURATION_MSECS: \"-5\" is negative; expected an integer in "
        "[0, 2147483647]");
  CHECK(Error("ACTIVITIES_ITERATIONS=12x") ==
        "config line 1: ACTIVITIES_ITERATIONS: \"12x\" is not an integer; expected an integer "
        "in [0, 2147483647]");
  CHECK(Error("ACTIVITIES_ITERATIONS=") ==
        "config line 1: ACTIVITIES_ITERATIONS: \"\" is not an integer; expected an integer in "
        "[0, 2147483647]");
  CHECK(Error("ACTIVITIES_ITERATIONS=1 2") ==
        "config line 1: ACTIVITIES_ITERATIONS: \"1 2\" is not an integer; expected an integer "
        "in [0, 2147483647]");
  CHECK(Error("ACTIVITIES_ITERATIONS=2147483648") ==
        "config line 1: ACTIVITIES_ITERATIONS: \"2147483648\" is out of range; expected an "
        "integer in [0, 2147483647]");
  CHECK(Error("PROFILE_START_TIME=99999999999999999999") ==
        "config line 1: PROFILE_START_TIME: \"99999999999999999999\" is out of range; expected "
        "an integer in [0, 9223372036854775807]");
  CHECK(Error("PROFILE_START_ITERATION=-1") ==
        "config line 1: PROFILE_START_ITERATION: \"-1\" is negative; expected an integer in "
        "[0, 2147483647]");
  CHECK(Error("KAIROS_ZSTD_LEVEL=0") ==
        "config line 1: KAIROS_ZSTD_LEVEL: \"0\" is out of range; expected an integer in [1, 22]");
  CHECK(Parse("ACTIVITIES_ITERATIONS=2147483647").iterations == 2147483647);
  CHECK(Parse("ACTIVITIES_ITERATIONS=+4").iterations == 4);
  CHECK(Parse("ACTIVITIES_ITERATIONS=-0").iterations == 0);
  CHECK(Parse("KAIROS_ZSTD_LEVEL=22").zstd_level == 22);
}

TEST_CASE("booleans accept exactly the Kineto spellings, any case", "[config]") {
  for (const char* t : {"y", "Y", "yes", "YES", "t", "true", "True", "1"}) {
    CHECK(Parse(std::string("PROFILE_WITH_FLOPS=") + t).with_flops);
  }
  for (const char* f : {"n", "NO", "f", "false", "FALSE", "0"}) {
    CHECK_FALSE(Parse(std::string("ACTIVITIES_ENABLED=") + f).activities_enabled);
  }
  CHECK(Error("ACTIVITIES_ENABLED=on") ==
        "config line 1: ACTIVITIES_ENABLED: \"on\" is not a boolean; expected one of n y no yes "
        "f t false true 0 1");
}

TEST_CASE("PROFILE_START_TIME more than 10 s in the past is rejected", "[config]") {
  CHECK(Parse("PROFILE_START_TIME=1763771990000").profile_start_time_ms == 1763771990000);
  CHECK(Error("PROFILE_START_TIME=1763771989999") ==
        "config line 1: PROFILE_START_TIME: \"1763771989999\" is more than 10 s in the past (now "
        "is 1763772000000 Unix ms)");
  CHECK(Parse("PROFILE_START_TIME=0").profile_start_time_ms == 0);
}

TEST_CASE("ACTIVITY_TYPES: lower-cased, trimmed, unknown names rejected", "[config]") {
  const Config c = Parse("ACTIVITY_TYPES= Kernel , GPU_MEMCPY,cuda_runtime,hardware_counters,");
  CHECK(c.activity_types ==
        (ActivityBit(ActivityType::kKernel) | ActivityBit(ActivityType::kGpuMemcpy) |
         ActivityBit(ActivityType::kCudaRuntime) | ActivityBit(ActivityType::kHardwareCounters)));
  CHECK(Parse("ACTIVITY_TYPES=").activity_types == 0);
  CHECK(Error("ACTIVITY_TYPES=kernel,cuda_kernel") ==
        "config line 1: ACTIVITY_TYPES: unknown activity type \"cuda_kernel\"; expected names "
        "from docs/CONFIG.md such as kernel, gpu_memcpy, cuda_runtime");
  CHECK(ActivityTypeName(ActivityType::kCudaSync) == "cuda_sync");
  CHECK(ActivityTypeName(ActivityType::kCount).empty());
}

TEST_CASE("lists are comma-separated and trimmed", "[config]") {
  const Config c = Parse(
      "VERBOSE_LOG_MODULES= a.cpp ,b.cpp\t,, c.cpp\n"
      "CUPTI_PM_SAMPLING_METRICS=sm__cycles_active.avg\n"
      "KAIROS_EXTRA_OUTPUTS=/tmp/a.json.zst, /tmp/b.pftrace\n");
  CHECK(c.verbose_log_modules == std::vector<std::string>{"a.cpp", "b.cpp", "c.cpp"});
  CHECK(c.pm_sampling_metrics == std::vector<std::string>{"sm__cycles_active.avg"});
  CHECK(c.extra_outputs == std::vector<std::string>{"/tmp/a.json.zst", "/tmp/b.pftrace"});
}

TEST_CASE("later lines override earlier ones and the base", "[config]") {
  Config base;
  base.iterations = 11;
  base.log_file = "/base.json";
  absl::StatusOr<Config> c = ParseConfig(
      "ACTIVITIES_DURATION_MSECS=100\nACTIVITIES_DURATION_SECS=3\nACTIVITIES_WARMUP_ITERATIONS=1"
      "\nACTIVITIES_WARMUP_ITERATIONS=2",
      base, Options());
  REQUIRE(c.ok());
  CHECK(c->duration_ms == 3000);
  CHECK(c->warmup_iterations == 2);
  CHECK(c->iterations == 11);
  CHECK(c->log_file == "/base.json");
  CHECK(Parse("ACTIVITIES_DURATION_SECS=3\nACTIVITIES_DURATION_MSECS=100").duration_ms == 100);
}

TEST_CASE("an error anywhere rejects the whole text and leaves the base untouched", "[config]") {
  Config base;
  base.iterations = 5;
  const Config before = base;
  absl::StatusOr<Config> c = ParseConfig(
      "ACTIVITIES_ITERATIONS=9\nACTIVITIES_LOG_FILE=/x.json\nACTIVITIES_ENABLED=maybe\n", base,
      Options());
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message() ==
        "config line 3: ACTIVITIES_ENABLED: \"maybe\" is not a boolean; expected one of n y no "
        "yes f t false true 0 1");
  RequireSame(base, before);
}

TEST_CASE("aliases set the same fields", "[config]") {
  const Config c = Parse("CLIENT_INTERFACE_ENABLE_OP_INPUTS_COLLECTION=true\nPYTHON_STACK_TRACE=1");
  CHECK(c.report_input_shapes);
  CHECK(c.with_stack);
}

TEST_CASE("unknown and removed keys warn once each and are ignored", "[config]") {
  std::vector<std::string> warnings;
  const Config c = Parse(
      "FOO=1\nEVENTS=a,b\nFOO=2\nACTIVITIES_ITERATIONS=4\nENABLE_SIGUSR2=true\nEVENTS=c\n"
      "activities_iterations=5\nCUPTI_PROFILER_METRICS=x\n",
      &warnings);
  CHECK(c.iterations == 4);
  REQUIRE(warnings.size() == 5);
  CHECK(warnings[0] == "config line 1: \"FOO\": unrecognized key; ignored");
  CHECK(warnings[1] ==
        "config line 2: EVENTS: removed key (CUPTI event/metric profiler removed (kineto "
        "#1495)); ignored");
  CHECK(warnings[2] ==
        "config line 5: ENABLE_SIGUSR2: removed key (SIGUSR2 trigger removed (kineto #1408)); "
        "ignored");
  CHECK(warnings[3] == "config line 7: \"activities_iterations\": unrecognized key; ignored");
  CHECK(warnings[4] ==
        "config line 8: CUPTI_PROFILER_METRICS: removed key (CUPTI range profiler removed "
        "(kineto #1437)); ignored");
}

TEST_CASE("inert keys of other backends are validated but change nothing", "[config]") {
  std::vector<std::string> warnings;
  const Config c = Parse(
      "ROCTRACER_MAX_EVENTS=100\nXPUPTI_PROFILER_ENABLE_PER_KERNEL=true\n"
      "XPUPTI_PROFILER_MAX_SCOPES=5000000000\nACTIVITIES_COMPRESSION_ALGORITHM=GZIP\n",
      &warnings);
  RequireSame(c, Config{});
  CHECK(warnings.empty());
  CHECK(Error("ROCTRACER_MAX_EVENTS=lots") ==
        "config line 1: ROCTRACER_MAX_EVENTS: \"lots\" is not an integer; expected an integer in "
        "[0, 2147483647]");
}

TEST_CASE("ROUNDUP derives the start iteration; ROUNDUP=0 is ignored", "[config]") {
  const Config c = Parse("PROFILE_START_ITERATION_ROUNDUP=50\nACTIVITIES_ITERATIONS=3");
  CHECK(c.profile_start_iteration == 0);
  CHECK(c.profile_start_iteration_roundup == 50);
  CHECK(c.IterationMode());
  CHECK(Parse("PROFILE_START_ITERATION=7\nPROFILE_START_ITERATION_ROUNDUP=5")
            .profile_start_iteration == 7);

  std::vector<std::string> warnings;
  const Config z =
      Parse("PROFILE_START_ITERATION_ROUNDUP=4\nPROFILE_START_ITERATION_ROUNDUP=0", &warnings);
  CHECK(z.profile_start_iteration_roundup == 4);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] ==
        "config line 2: PROFILE_START_ITERATION_ROUNDUP: 0 is invalid (must be > 0); ignored");
  CHECK(Parse("PROFILE_START_ITERATION_ROUNDUP=0").profile_start_iteration == -1);
}

TEST_CASE("memory recording: PROFILE_PROFILE_MEMORY, PROFILE_MEMORY, ACTIVITY_TYPES memory", "[config]") {
  CHECK_FALSE(Parse("").profile_memory);
  CHECK(Parse("PROFILE_PROFILE_MEMORY=true").profile_memory);
  // PROFILE_MEMORY (libkineto's snapshot) turns recording on and no longer moves the trace.
  const Config c = Parse("ACTIVITIES_LOG_FILE=/a.json\nPROFILE_MEMORY=true");
  CHECK(c.log_file == "/a.json");
  CHECK(c.memory_snapshot);
  CHECK(c.profile_memory);
  CHECK_FALSE(Parse("PROFILE_MEMORY=false").profile_memory);
  const Config t = Parse("ACTIVITY_TYPES=kernel,memory");
  CHECK(t.activity_types == (ActivityBit(ActivityType::kKernel) | ActivityBit(ActivityType::kMemory)));
  CHECK_FALSE(t.profile_memory);  // the type alone turns on the CUPTI kinds (cupti_source.cc)
  CHECK((kDefaultActivities & ActivityBit(ActivityType::kMemory)) == 0);
  CHECK(ActivityTypeName(ActivityType::kMemory) == "memory");
}

TEST_CASE("kairos choice keys", "[config]") {
  CHECK(Parse("KAIROS_OUTPUT_FORMAT=perfetto.zst").output_format == OutputFormat::kPerfettoZstd);
  CHECK(Parse("KAIROS_OUTPUT_FORMAT=JSON.GZ").output_format == OutputFormat::kJsonGzip);
  CHECK(Error("KAIROS_OUTPUT_FORMAT=xml") ==
        "config line 1: KAIROS_OUTPUT_FORMAT: \"xml\" is not an output format; expected one of "
        "auto json json.gz json.zst perfetto perfetto.zst");
  CHECK(Parse("KAIROS_SUMMARY=stdout").summary == SummaryMode::kStdout);
  CHECK(Parse("KAIROS_SUMMARY=off").summary == SummaryMode::kOff);
  CHECK(Parse("").report == ReportMode::kOff);
  CHECK(Parse("KAIROS_REPORT=html").report == ReportMode::kHtml);
  CHECK(Error("KAIROS_SUMMARY=maybe") ==
        "config line 1: KAIROS_SUMMARY: \"maybe\" is not a summary mode; expected one of file "
        "stdout off");
  const Config n = Parse("KAIROS_NVTX_DOMAINS=+app, -NCCL ,+ io");
  CHECK(n.nvtx_domains_include == std::vector<std::string>{"app", "io"});
  CHECK(n.nvtx_domains_exclude == std::vector<std::string>{"NCCL"});
  CHECK(Error("KAIROS_NVTX_DOMAINS=+a,NCCL") ==
        "config line 1: KAIROS_NVTX_DOMAINS: item \"NCCL\" must be +name (record only listed "
        "domains) or -name (drop the domain)");
  CHECK(Error("KAIROS_NVTX_DOMAINS=-") ==
        "config line 1: KAIROS_NVTX_DOMAINS: item \"-\" must be +name (record only listed "
        "domains) or -name (drop the domain)");
}

TEST_CASE("untrusted text in messages is bounded and escaped", "[config]") {
  const std::string msg = Error("ACTIVITIES_ITERATIONS=\"[31m" + std::string(100, '9'));
  CHECK(msg == "config line 1: ACTIVITIES_ITERATIONS: \"\\x22[31m" + std::string(59, '9') +
                   "...\" is not an integer; expected an integer in [0, 2147483647]");
}

TEST_CASE("ConfigToText round-trips through ParseConfig", "[config]") {
  Config c;
  c.activities_enabled = false;
  c.activity_types = ActivityBit(ActivityType::kKernel) | ActivityBit(ActivityType::kXpuSync);
  c.duration_ms = 1234;
  c.iterations = 3;
  c.warmup_secs = 0;
  c.warmup_iterations = 2;
  c.max_gpu_buffer_mb = 64;
  c.log_file = "/tmp/run_{rank}.pt.trace.json";
  c.display_cuda_sync_wait_events = false;
  c.cupti_per_thread_buffer = true;
  c.profile_start_time_ms = kNow + 5000;
  c.profile_start_iteration = 10;
  c.profile_start_iteration_roundup = 5;
  c.request_trace_id = "abc";
  c.request_group_trace_id = "grp";
  c.enable_ipc_fabric = true;
  c.on_demand_poll_secs = 2;
  c.verbose_log_level = 1;
  c.verbose_log_modules = {"a.cc", "b.cc"};
  c.report_input_shapes = true;
  c.profile_memory = true;
  c.with_stack = true;
  c.with_flops = true;
  c.with_modules = true;
  c.memory_snapshot = true;
  c.memory_snapshot_duration_ms = 77;
  c.custom_config = "opaque text";
  c.pm_sampling_metrics = {"m1"};
  c.pm_sampling_device_id = 1;
  c.cpu_buffer_kb_per_thread = 64;
  c.max_threads = 8;
  c.output_format = OutputFormat::kJsonZstd;
  c.extra_outputs = {"/tmp/a.pftrace", "/tmp/b.json"};
  c.zstd_level = 3;
  c.summary = SummaryMode::kOff;
  c.host_metrics_interval_ms = 0;
  c.nvtx_domains_include = {"app"};
  c.nvtx_domains_exclude = {"NCCL", "x"};
  c.daemon_poll_ms = 250;
  c.iteration_fallback_timeout_ms = 1;
  c.exit_flush_timeout_ms = 2;
  const std::string text = ConfigToText(c);
  absl::StatusOr<Config> back = ParseConfig(text, Config{}, Options());
  INFO(text);
  REQUIRE(back.ok());
  RequireSame(*back, c);
  CHECK(ConfigToText(*back) == text);

  // Defaults: negative "unset" values are left out and read back as the defaults.
  const std::string defaults = ConfigToText(Config{});
  CHECK(defaults.find("PROFILE_START_ITERATION=") == std::string::npos);
  CHECK(defaults.find("ACTIVITIES_DURATION_MSECS=500\n") != std::string::npos);
  CHECK(defaults.find("ACTIVITY_TYPES=cpu_op,user_annotation,gpu_user_annotation,") !=
        std::string::npos);
  absl::StatusOr<Config> d = ParseConfig(defaults, Config{}, Options());
  REQUIRE(d.ok());
  RequireSame(*d, Config{});
}

TEST_CASE("ConfigToText marks values the syntax cannot carry", "[config]") {
  Config c;
  c.custom_config = "a=b";
  c.verbose_log_modules = {"x#y"};
  const std::string text = ConfigToText(c);
  CHECK(text.find("# CUSTOM_CONFIG: value not representable\n") != std::string::npos);
  CHECK(text.find("# VERBOSE_LOG_MODULES: value not representable\n") != std::string::npos);
  REQUIRE(ParseConfig(text, Config{}, Options()).ok());
}

TEST_CASE("values given as data keep '#', '=', ';' and blanks; text cannot carry them",
          "[config]") {
  // In text, '#' starts a comment: the path is cut (issue 30 item 3, runs/exp#1.json).
  CHECK(Parse("ACTIVITIES_LOG_FILE=runs/exp#1.json").log_file == "runs/exp");
  const std::string path = " runs/exp#1 a=b;c.json ";
  absl::StatusOr<Config> c = ParseConfig("ACTIVITIES_LOG_FILE=/tmp/other.json\nKAIROS_SUMMARY=off",
                                         {{"ACTIVITIES_LOG_FILE", path}}, Config{}, Options(),
                                         nullptr, nullptr);
  REQUIRE(c.ok());
  CHECK(c->log_file == path);  // the value overrides the text's line
  // Type checks, the control-character rule and the size limit still apply, by value index.
  auto error = [](std::vector<ConfigValue> values) {
    absl::StatusOr<Config> r = ParseConfig("", values, Config{}, Options(), nullptr, nullptr);
    REQUIRE_FALSE(r.ok());
    return std::string(r.status().message());
  };
  CHECK(error({{"KAIROS_SUMMARY", "off"}, {"ACTIVITIES_LOG_FILE", "/tmp/a\nb.json"}}) ==
        "config value 2: ACTIVITIES_LOG_FILE: contains the control character \\x0a (NUL and "
        "control characters are never accepted)");
  CHECK(error({{"PROFILE_START_ITERATION", "abc"}}) ==
        "config value 1: PROFILE_START_ITERATION: \"abc\" is not an integer; expected an "
        "integer in [0, 2147483647]");
  CHECK(error({{"ACTIVITIES_LOG_FILE", std::string(5000, 'a')}}) ==
        "config value 1: ACTIVITIES_LOG_FILE: value is 5000 bytes; the limit is 4096");
  CHECK(error({{"A=B", "1"}}) == "config value 1: invalid key \"A=B\"; expected a key name");
  ConfigParseInfo info;
  REQUIRE(ParseConfig("", {{"ACTIVITIES_ITERATIONS", "2"}}, Config{}, Options(), nullptr, &info)
              .ok());
  CHECK(info.names_window);
  CHECK(info.keys_set == std::vector<std::string>{"ACTIVITIES_ITERATIONS"});

  CHECK(ConfigTextValueProblem("/tmp/a.json") == "");
  CHECK(ConfigTextValueProblem("/tmp/a;b.json") == "");
  CHECK(ConfigTextValueProblem("/tmp/a#1.json") == "contains '#' (a comment starts there)");
  CHECK(ConfigTextValueProblem("/tmp/a=1.json") == "contains '=' (a config line has exactly one)");
  CHECK(ConfigTextValueProblem("/tmp/a\x1b.json") == "contains the control character \\x1b");
  CHECK(ConfigTextValueProblem("/tmp/a.json ") ==
        "has leading or trailing blanks (they are trimmed)");
}

TEST_CASE("the iteration fallback: daemon requests 10 s by default, the process's own config none",
          "[config]") {
  // Unset (-1, what ParseConfig leaves when the key is absent).
  absl::StatusOr<Config> c = ParseConfig("PROFILE_START_ITERATION=5\nACTIVITIES_ITERATIONS=3",
                                         Config{}, Options());
  REQUIRE(c.ok());
  CHECK(c->iteration_fallback_timeout_ms == -1);
  CHECK(IterationFallbackMs(c->iteration_fallback_timeout_ms, ConfigSource::kDaemon) == 10000);
  CHECK(IterationFallbackMs(c->iteration_fallback_timeout_ms, ConfigSource::kEnv) == 0);
  CHECK(IterationFallbackMs(c->iteration_fallback_timeout_ms, ConfigSource::kApi) == 0);
  CHECK(IterationFallbackMs(c->iteration_fallback_timeout_ms, ConfigSource::kFile) == 0);
  // Set: the value, whatever the source (0 included: a daemon request that waits for good).
  c = ParseConfig("KAIROS_ITERATION_FALLBACK_TIMEOUT_MS=2500", Config{}, Options());
  REQUIRE(c.ok());
  CHECK(IterationFallbackMs(c->iteration_fallback_timeout_ms, ConfigSource::kEnv) == 2500);
  CHECK(IterationFallbackMs(c->iteration_fallback_timeout_ms, ConfigSource::kDaemon) == 2500);
  c = ParseConfig("KAIROS_ITERATION_FALLBACK_TIMEOUT_MS=0", Config{}, Options());
  REQUIRE(c.ok());
  CHECK(IterationFallbackMs(c->iteration_fallback_timeout_ms, ConfigSource::kDaemon) == 0);
}

}  // namespace
}  // namespace kairos
