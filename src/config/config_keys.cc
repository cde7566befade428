// File: config_keys.cc
// Layer: kairos_config (internal). The key table (config-and-env.md §3, docs/CONFIG.md) and
// the small value helpers that belong to it.
// Threading: the table is compile-time constant data; any thread.
#include "config/config_keys.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "util/trim.h"

namespace kairos {
namespace {

constexpr std::string_view kActivityNames[] = {
    "cpu_op",
    "user_annotation",
    "gpu_user_annotation",
    "gpu_memcpy",
    "gpu_memset",
    "kernel",
    "external_correlation",
    "cuda_runtime",
    "cuda_driver",
    "cpu_instant_event",
    "python_function",
    "overhead",
    "mtia_runtime",
    "mtia_ccp_events",
    "mtia_insight",
    "cuda_sync",
    "cuda_event",
    "mtia_counters",
    "glow_runtime",
    "cuda_profiler_range",
    "hpu_op",
    "xpu_runtime",
    "xpu_driver",
    "collective_comm",
    "privateuse1_runtime",
    "privateuse1_driver",
    "xpu_scope_profiler",
    "xpu_sync",
    "hardware_counters",
    "memory",
};
static_assert(std::size(kActivityNames) == static_cast<size_t>(ActivityType::kCount),
              "one name per ActivityType");

constexpr std::string_view kOutputFormatNames[] = {"auto",     "json",     "json.gz",
                                                   "json.zst", "perfetto", "perfetto.zst"};
static_assert(std::size(kOutputFormatNames) == static_cast<size_t>(OutputFormat::kPerfettoZstd) + 1,
              "one name per OutputFormat");
constexpr std::string_view kSummaryNames[] = {"file", "stdout", "off"};
constexpr std::string_view kReportNames[] = {"off", "html"};

std::string ParseActivityTypes(Config& config, std::string_view value) {
  ActivitySet set = 0;
  for (const std::string& item : internal::SplitConfigList(value)) {
    const std::string name = absl::AsciiStrToLower(item);
    const auto* it = std::find(std::begin(kActivityNames), std::end(kActivityNames), name);
    if (it == std::end(kActivityNames)) {
      return absl::StrCat("unknown activity type \"", item,
                          "\"; expected names from docs/CONFIG.md such as kernel, "
                          "gpu_memcpy, cuda_runtime");
    }
    set |= ActivitySet{1} << (it - std::begin(kActivityNames));
  }
  config.activity_types = set;
  return "";
}

std::string ActivityTypesText(const Config& config) {
  std::vector<std::string_view> names;
  for (size_t i = 0; i < std::size(kActivityNames); ++i) {
    if (config.activity_types & (ActivitySet{1} << i)) names.push_back(kActivityNames[i]);
  }
  return absl::StrJoin(names, ",", [](std::string* o, std::string_view n) { o->append(n); });
}

template <typename Enum, size_t N>
std::string ParseChoice(std::string_view value, const std::string_view (&names)[N],
                        std::string_view what, Enum* out) {
  const std::string lower = absl::AsciiStrToLower(internal::AV(value));
  for (size_t i = 0; i < N; ++i) {
    if (lower == names[i]) {
      *out = static_cast<Enum>(i);
      return "";
    }
  }
  std::string choices;
  for (std::string_view n : names)
    absl::StrAppend(&choices, choices.empty() ? "" : " ", internal::AV(n));
  return absl::StrCat("\"", internal::AV(value), "\" is not ", internal::AV(what),
                      "; expected one of ", choices);
}

std::string ParseNvtxDomains(Config& config, std::string_view value) {
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  for (const std::string& item : internal::SplitConfigList(value)) {
    const std::string name(absl::StripAsciiWhitespace(absl::string_view(item).substr(1)));
    if ((item[0] != '+' && item[0] != '-') || name.empty()) {
      return absl::StrCat("item \"", item,
                          "\" must be +name (record only listed domains) or -name (drop the "
                          "domain)");
    }
    (item[0] == '+' ? include : exclude).push_back(name);
  }
  config.nvtx_domains_include = std::move(include);
  config.nvtx_domains_exclude = std::move(exclude);
  return "";
}

std::string NvtxDomainsText(const Config& config) {
  std::string out;
  for (const auto& d : config.nvtx_domains_include)
    absl::StrAppend(&out, out.empty() ? "" : ",", "+", d);
  for (const auto& d : config.nvtx_domains_exclude)
    absl::StrAppend(&out, out.empty() ? "" : ",", "-", d);
  return out;
}

using internal::ConfigKey;
using internal::KeyKind;
using internal::KeyType;

constexpr ConfigKey Bool(std::string_view name, bool Config::*field, std::string_view def,
               std::string_view doc) {
  ConfigKey k;
  k.name = name;
  k.type = KeyType::kBool;
  k.bool_field = field;
  k.default_text = def;
  k.doc = doc;
  return k;
}

constexpr ConfigKey Int(std::string_view name, int64_t Config::*field, std::string_view def,
              std::string_view doc, int64_t min_value = 0,
              int64_t max_value = internal::kInt32Max) {
  ConfigKey k;
  k.name = name;
  k.type = KeyType::kInt;
  k.int_field = field;
  k.default_text = def;
  k.doc = doc;
  k.min_value = min_value;
  k.max_value = max_value;
  return k;
}

constexpr ConfigKey String(std::string_view name, std::string Config::*field, std::string_view def,
                 std::string_view doc) {
  ConfigKey k;
  k.name = name;
  k.type = KeyType::kString;
  k.string_field = field;
  k.default_text = def;
  k.doc = doc;
  return k;
}

constexpr ConfigKey List(std::string_view name, std::vector<std::string> Config::*field,
                         std::string_view def, std::string_view doc) {
  ConfigKey k;
  k.name = name;
  k.type = KeyType::kList;
  k.list_field = field;
  k.default_text = def;
  k.doc = doc;
  return k;
}

constexpr ConfigKey Custom(std::string_view name, std::string_view type_name,
                 std::string (*apply)(Config&, std::string_view),
                 std::string (*text)(const Config&), std::string_view def, std::string_view doc) {
  ConfigKey k;
  k.custom_type = type_name;
  k.name = name;
  k.type = KeyType::kCustom;
  k.apply_custom = apply;
  k.custom_text = text;
  k.default_text = def;
  k.doc = doc;
  return k;
}

constexpr ConfigKey Kairos(ConfigKey k) {
  k.kind = KeyKind::kKairos;
  return k;
}

// On the on-demand whitelist, with an optional tighter upper bound for integers.
constexpr ConfigKey OnDemand(ConfigKey k, int64_t daemon_max_value = -1) {
  k.daemon = true;
  k.daemon_max_value = daemon_max_value;
  return k;
}

constexpr ConfigKey Unimplemented(ConfigKey k) {
  k.unimplemented = true;
  return k;
}

constexpr ConfigKey Alias(ConfigKey k, std::string_view target) {
  k.kind = KeyKind::kAlias;
  k.target = target;
  return k;
}

constexpr ConfigKey Inert(std::string_view name, KeyType type, std::string_view doc,
                int64_t max_value = internal::kInt32Max) {
  ConfigKey k;
  k.name = name;
  k.type = type;
  k.kind = KeyKind::kInert;
  k.max_value = max_value;
  k.default_text = "-";
  k.doc = doc;
  return k;
}

constexpr ConfigKey Removed(std::string_view name, std::string_view why) {
  ConfigKey k;
  k.name = name;
  k.kind = KeyKind::kRemoved;
  k.default_text = "-";
  k.target = why;
  k.doc = "Ignored with a warning";
  return k;
}

// Every key, in documentation order: compile-time data, so no code runs to build it and
// nothing of it is writable (the blocks are constexpr lambdas for keys with an apply).
constexpr ConfigKey kKeys[] = {
    // ---- Kineto keys (config-and-env.md §3.1) ----
    OnDemand(Bool("ACTIVITIES_ENABLED", &Config::activities_enabled, "true",
                  "Activity profiler on. When false an on-demand request is ignored")),
    OnDemand(Custom("ACTIVITY_TYPES", "list", ParseActivityTypes, ActivityTypesText,
                    "the 18 types 0-17",
                    "Comma list of activity type names, lower-cased before matching; an "
                    "unknown name is an error")),
    [] {
      ConfigKey k = Int("ACTIVITIES_DURATION_SECS", nullptr, "0.5 s",
                        "Trace duration in seconds; sets the same value as "
                        "ACTIVITIES_DURATION_MSECS (the later line wins)");
      k.apply_int = [](Config& c, int64_t v) { c.duration_ms = v * 1000; };
      return OnDemand(k, 3600);
    }(),
    OnDemand(Int("ACTIVITIES_DURATION_MSECS", &Config::duration_ms, "500",
                 "Trace duration in ms (time mode)"),
             3600000),
    OnDemand(Int("ACTIVITIES_ITERATIONS", &Config::iterations, "0",
                 "Iterations to trace; iteration mode needs this > 0 and "
                 "PROFILE_START_ITERATION >= 0"),
             100000),
    OnDemand(Int("ACTIVITIES_WARMUP_PERIOD_SECS", &Config::warmup_secs, "5",
                 "Warm-up before the start time (time mode)"),
             600),
    OnDemand(Int("ACTIVITIES_WARMUP_ITERATIONS", &Config::warmup_iterations, "0",
                 "Warm-up iterations before the start iteration"),
             100000),
    Int("ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB", &Config::max_gpu_buffer_mb, "128",
        "Cap on CUPTI host buffers: at most 1 + size buffers of 1 MiB. "
        "Base config only (it bounds the job's memory)"),
    [] {
      ConfigKey k =
          Bool("PROFILE_MEMORY", &Config::memory_snapshot, "false",
               "Memory recording, as PROFILE_PROFILE_MEMORY: true turns it on "
               "(docs/MEMORY.md). libkineto writes a memory snapshot to "
               "`/tmp/memory_snapshot_{pid}.pickle` instead; kairos has no snapshot, so the "
               "trace keeps its path and carries the `[memory]` events");
      k.apply_bool = [](Config& c, bool v) {
        c.memory_snapshot = v;
        if (v) c.profile_memory = true;
      };
      // `dyno gputrace --profile-memory` sends it with PROFILE_PROFILE_MEMORY=true.
      return OnDemand(k);
    }(),
    OnDemand(String("ACTIVITIES_LOG_FILE", &Config::log_file,
                    "<tmpdir>/libkineto_activities_<pid>.json",
                    "Output path. `_<pid>` is inserted into the file name unless the path "
                    "uses `{pid}` (`_rank<R>_<pid>` when the rank is known and the path has "
                    "no `{rank}`); `{pid}` `{rank}` `{time}` `{host}` are expanded; daemon "
                    "paths are restricted to the allowed directory; NUL and control "
                    "characters are rejected")),
    Unimplemented(Bool("ACTIVITIES_DISPLAY_CUDA_SYNC_WAIT_EVENTS",
                       &Config::display_cuda_sync_wait_events, "true",
                       "Not implemented: accepted, warned about, no effect "
                       "(libkineto: write Stream Wait Event sync records)")),
    Unimplemented(Bool("CUPTI_PER_THREAD_BUFFER_ENABLED", &Config::cupti_per_thread_buffer, "false",
                       "Not implemented: accepted, warned about, no effect "
                       "(libkineto: CUPTI per-thread buffers)")),
    OnDemand(List("CUPTI_PM_SAMPLING_METRICS", &Config::pm_sampling_metrics, "empty",
                  "CUPTI PM-sampling metric names (CUDA 13, e.g. "
                  "sm__cycles_active.avg.pct_of_peak_sustained_elapsed); non-empty "
                  "turns PM sampling on. Empty with ACTIVITY_TYPES containing "
                  "hardware_counters samples the default metrics (docs/COUNTERS.md)")),
    OnDemand(Int("CUPTI_PM_SAMPLING_DEVICE_ID", &Config::pm_sampling_device_id, "-1 (unset)",
                 "GPU ordinal to PM-sample; unset = every GPU of the process")),
    [] {
      ConfigKey k = Int("PROFILE_START_TIME", &Config::profile_start_time_ms, "0",
                        "Start time in Unix ms; 0 = now + warm-up + 2 s. More than 10 s in the "
                        "past or more than 24 h in the future is an error",
                        0, internal::kInt64Max);
      k.int_check = internal::IntCheck::kNotPast;
      return OnDemand(k);
    }(),
    OnDemand(Int("PROFILE_START_ITERATION", &Config::profile_start_iteration, "-1 (unset)",
                 "Start iteration; takes precedence over the start time")),
    [] {
      ConfigKey k = Int("PROFILE_START_ITERATION_ROUNDUP", &Config::profile_start_iteration_roundup,
                        "-1 (unset)",
                        "Start at the next multiple of N. N > 0 with no start iteration sets the "
                        "start iteration to 0; 0 is warned about and ignored");
      k.int_check = internal::IntCheck::kZeroIgnored;
      return OnDemand(k, 1000000);
    }(),
    OnDemand(String("REQUEST_TRACE_ID", &Config::request_trace_id, "\"\"",
                    "Trace id, written as top-level trace_id")),
    OnDemand(String("REQUEST_GROUP_TRACE_ID", &Config::request_group_trace_id, "\"\"",
                    "Group trace id, written to trace metadata")),
    Bool("ENABLE_IPC_FABRIC", &Config::enable_ipc_fabric,
         "true if KINETO_USE_DAEMON/KAIROS_USE_DAEMON=1, else false",
         "Poll the Dynolog daemon. Base config only"),

    Int("ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS", &Config::on_demand_poll_secs, "5",
        "libkineto's daemon poll period; kairos polls every "
        "KAIROS_DAEMON_POLL_MS. Base config only"),
    Unimplemented(Int("VERBOSE_LOG_LEVEL", &Config::verbose_log_level, "-1 (off)",
                      "Not implemented: accepted, warned about, no effect (use "
                      "KAIROS_LOG_LEVEL)")),
    Unimplemented(List("VERBOSE_LOG_MODULES", &Config::verbose_log_modules, "all",
                       "Not implemented: accepted, warned about, no effect")),
    OnDemand(Bool("PROFILE_REPORT_INPUT_SHAPES", &Config::report_input_shapes, "false",
                  "Forwarded to the framework: record input shapes")),
    OnDemand(Bool("PROFILE_PROFILE_MEMORY", &Config::profile_memory, "false",
                  "Record every CUDA allocation and free in the window as `[memory]` events with "
                  "absolute totals (docs/MEMORY.md); also forwarded to the framework")),
    OnDemand(
        Bool("PROFILE_WITH_STACK", &Config::with_stack, "false",
             "Record Python calls and returns as python_function events (the kairos Python "
             "package's tracer; docs/PYTHON_STACKS.md). Warned about in a trace that has none")),
    OnDemand(Bool("PROFILE_WITH_FLOPS", &Config::with_flops, "false",
                  "torch bridge: a flops arg on each cpu_op with a formula "
                  "(docs/FLOPS.md)")),
    OnDemand(Bool("PROFILE_WITH_MODULES", &Config::with_modules, "false",
                  "With PROFILE_WITH_STACK: Module._call_impl frames are named "
                  "`nn.Module: <Class>_<n>` (docs/PYTHON_STACKS.md); alone: no "
                  "effect, said in the trace's warnings")),
    OnDemand(Alias(Bool("CLIENT_INTERFACE_ENABLE_OP_INPUTS_COLLECTION",
                        &Config::report_input_shapes, "false", "Alias"),
                   "PROFILE_REPORT_INPUT_SHAPES")),
    OnDemand(Alias(Bool("PYTHON_STACK_TRACE", &Config::with_stack, "false", "Alias"),
                   "PROFILE_WITH_STACK")),
    OnDemand(Unimplemented(Int("PROFILE_MEMORY_DURATION_MSECS",
                               &Config::memory_snapshot_duration_ms, "1000",
                               "Not implemented: accepted, warned about, no effect "
                               "(libkineto: memory-snapshot duration)")),
             3600000),
    OnDemand(String("CUSTOM_CONFIG", &Config::custom_config, "\"\"",
                    "Opaque string for plug-ins, copied to trace metadata")),
    Inert("ROCTRACER_MAX_EVENTS", KeyType::kInt, "ROCm only: validated, no effect"),
    Inert("XPUPTI_PROFILER_METRICS", KeyType::kList, "XPU only: no effect"),

    Inert("XPUPTI_PROFILER_ENABLE_PER_KERNEL", KeyType::kBool, "XPU only: validated, no effect"),
    Inert("XPUPTI_PROFILER_MAX_SCOPES", KeyType::kInt, "XPU only: validated, no effect",
          internal::kInt64Max),

    Inert("ACTIVITIES_MANIFOLD_PATH", KeyType::kString, "Meta-internal upload: no effect"),
    Inert("ACTIVITIES_COMPRESSION_ALGORITHM", KeyType::kString,
          "Meta-internal: no effect (use KAIROS_OUTPUT_FORMAT)"),

    // ---- kairos keys ----

    Kairos(Int("KAIROS_CPU_BUFFER_KB_PER_THREAD", &Config::cpu_buffer_kb_per_thread, "65536",
               "Per-thread CPU record ring: address space reserved when a thread first "
               "records, memory made resident as it fills (by the kairos-prefault thread, "
               "ahead of the writer). 64 MiB holds 2.8 M 24-byte records = 1.4 M ranges, "
               "all of a 10 s window at up to 140,000 ranges/s per thread. Full rings "
               "drop and count",
               4, 1048576)),
    Kairos(Int("KAIROS_MAX_THREADS", &Config::max_threads, "256",
               "Threads that get a ring; later threads' records are dropped and "
               "counted. Bounds memory at max_threads x ring size",
               1, 65536)),
    OnDemand(Kairos(Custom(
        "KAIROS_OUTPUT_FORMAT", "choice",
        [](Config& c, std::string_view v) {
          return ParseChoice(v, kOutputFormatNames, "an output format", &c.output_format);
        },
        [](const Config& c) {
          const size_t i = static_cast<size_t>(c.output_format);
          return i < std::size(kOutputFormatNames) ? std::string(kOutputFormatNames[i]) : "invalid";
        },
        "auto",
        "auto json json.gz json.zst perfetto perfetto.zst; auto picks the format from the "
        "file name"))),

    Kairos(List("KAIROS_EXTRA_OUTPUTS", &Config::extra_outputs, "empty",
                "More output paths for the same trace (format from each name). Base config "
                "only, because daemon paths must stay in the allowed directory")),
    OnDemand(Kairos(Int("KAIROS_ZSTD_LEVEL", &Config::zstd_level, "1",
                        "zstd level for .zst outputs; 1 is fast enough to run on "
                        "exit. A daemon request may ask for at most 3 (higher levels "
                        "can stall the job's exit)",
                        1, 22)),
             3),
    OnDemand(Kairos(Custom(
        "KAIROS_SUMMARY", "choice",
        [](Config& c, std::string_view v) {
          return ParseChoice(v, kSummaryNames, "a summary mode", &c.summary);
        },
        [](const Config& c) {
          const size_t i = static_cast<size_t>(c.summary);
          return i < std::size(kSummaryNames) ? std::string(kSummaryNames[i]) : "invalid";
        },
        "file", "file (next to the trace), stdout or off"))),
    OnDemand(Kairos(Custom(
        "KAIROS_REPORT", "choice",
        [](Config& c, std::string_view v) {
          return ParseChoice(v, kReportNames, "a report mode", &c.report);
        },
        [](const Config& c) {
          const size_t i = static_cast<size_t>(c.report);
          return i < std::size(kReportNames) ? std::string(kReportNames[i]) : "invalid";
        },
        "off",
        "html: also write an HTML report next to the trace (run.json gives run.report.html; "
        "docs/REPORT.md)"))),
    Kairos(Int("KAIROS_HOST_METRICS_INTERVAL_MS", &Config::host_metrics_interval_ms, "100",
               "Host counter sampling period; 0 = off. Base config only (a short "
               "period costs the job CPU)",
               0, 3600000)),
    OnDemand(Kairos(Custom("KAIROS_NVTX_DOMAINS", "list", ParseNvtxDomains, NvtxDomainsText, "all",
                           "Comma list of +name (record only these) and -name (drop these)"))),
    Kairos(Int("KAIROS_DAEMON_POLL_MS", &Config::daemon_poll_ms, "1000",
               "Daemon poll period (libkineto: 5 s). Base config only", 10, 3600000)),
    OnDemand(Kairos(Int("KAIROS_ITERATION_FALLBACK_TIMEOUT_MS",
                        &Config::iteration_fallback_timeout_ms,
                        "-1 (10000 for daemon requests, else 0)",
                        "An iteration request in a process that never steps falls "
                        "back to a duration window after this long; 0 = wait for the "
                        "first step. Unset: 10 s for a daemon request, no fallback for "
                        "the process's own config (start-up may take longer)",
                        -1)),
             600000),
    OnDemand(Kairos(Int(
        "KAIROS_REQUEST_TIME_MS", &Config::request_time_ms, "0 (unknown)",
        "Unix ms at which the request was made; `kairos daemon` stamps iteration requests with it. "
        "Every rank rounds PROFILE_START_ITERATION_ROUNDUP up from the iteration it was in at that "
        "instant, so a job's ranks trace the same iterations (docs/ONDEMAND.md)",
        0, INT64_MAX))),
    Kairos(Int("KAIROS_EXIT_FLUSH_TIMEOUT_MS", &Config::exit_flush_timeout_ms, "5000",
               "Longest wait at process exit for a trace to be written. Base config "
               "only: a request must not be able to stall the job's exit. Values "
               "above 60000 wait 60000 (kMaxExitFlushMs, the flush bound of "
               "kairos_flush too)",
               0, 600000)),

    OnDemand(Kairos(Int("KAIROS_PM_SAMPLING_INTERVAL_US", &Config::pm_sampling_interval_us, "1000",
                        "PM-sampling period in microseconds (GPU time trigger)", 100, 10000000))),
    Kairos(Int("KAIROS_TELEMETRY_INTERVAL_SECS", &Config::telemetry_interval_secs, "-1",
               "Always-on telemetry: one JSON line per GPU every N seconds to "
               "KAIROS_TELEMETRY_FILE (docs/TELEMETRY.md), and to a `kairos daemon "
               "--metrics-port` the process polls; 0 = off. -1 (unset): off, except "
               "that a process registered with a daemon serving metrics sends it "
               "lines at the daemon's interval (10 s by default; docs/FLEET.md). Base "
               "config only, never from a daemon request (it runs for the job's life)",
               -1, 86400)),
    Kairos(String("KAIROS_TELEMETRY_FILE", &Config::telemetry_file,
                  "<trace dir>/kairos_telemetry_{host}_{pid}.jsonl",
                  "Telemetry output (appended); `{pid}` `{rank}` `{host}` are "
                  "expanded. Base config only")),
    Kairos(Int("KAIROS_TELEMETRY_MAX_MB", &Config::telemetry_max_mb, "64",
               "Telemetry file bound: before it grows past N MiB it is renamed to "
               "FILE.1 (replacing it) and a new FILE begins, so a process keeps at "
               "most 2 x N MiB; 0 = never rotate. Base config only",
               0, 1048576)),

    // ---- removed keys (config-and-env.md §3.2) ----
    Removed("ENABLE_SIGUSR2", "SIGUSR2 trigger removed (kineto #1408)"),
    Removed("REQUEST_TIMESTAMP", "removed (kineto #1409)"),
    Removed("EVENTS", "CUPTI event/metric profiler removed (kineto #1495)"),
    Removed("METRICS", "CUPTI event/metric profiler removed (kineto #1495)"),
    Removed("SAMPLE_PERIOD_MSECS", "CUPTI event/metric profiler removed (kineto #1495)"),
    Removed("MULTIPLEX_PERIOD_MSECS", "CUPTI event/metric profiler removed (kineto #1495)"),
    Removed("REPORT_PERIOD_SECS", "CUPTI event/metric profiler removed (kineto #1495)"),
    Removed("SAMPLES_PER_REPORT", "CUPTI event/metric profiler removed (kineto #1495)"),
    Removed("EVENTS_LOG_FILE", "CUPTI event/metric profiler removed (kineto #1495)"),
    Removed("EVENTS_ENABLED_DEVICES", "CUPTI event/metric profiler removed (kineto #1495)"),
    Removed("EVENTS_DURATION_SECS", "CUPTI event/metric profiler removed (kineto #1495)"),
    Removed("MAX_EVENT_PROFILERS_PER_GPU", "CUPTI event/metric profiler removed (kineto #1495)"),
    Removed("EVENTS_HEARTBEAT_MONITOR_PERIOD_SECS",
            "CUPTI event/metric profiler removed (kineto #1495)"),
    Removed("CUPTI_PROFILER_METRICS", "CUPTI range profiler removed (kineto #1437)"),
    Removed("CUPTI_PROFILER_ENABLE_PER_KERNEL", "CUPTI range profiler removed (kineto #1437)"),
    Removed("CUPTI_PROFILER_MAX_RANGES", "CUPTI range profiler removed (kineto #1437)"),
};

std::string TypeName(const ConfigKey& k) {
  switch (k.type) {
    case KeyType::kBool:
      return "bool";
    case KeyType::kInt:
      return k.max_value == internal::kInt64Max ? "int64" : "int";
    case KeyType::kString:
      return "string";
    case KeyType::kList:
      return "list";
    case KeyType::kCustom:
      return std::string(k.custom_type);
  }
  return "";
}

std::string RangeText(const ConfigKey& k) {
  if (k.type != KeyType::kInt) return "";
  return absl::StrCat(
      "[", k.min_value, ", ",
      k.max_value == internal::kInt64Max ? std::string("2^63-1") : absl::StrCat(k.max_value), "]");
}

}  // namespace

std::string_view ActivityTypeName(ActivityType type) {
  const size_t i = static_cast<size_t>(type);
  return i < std::size(kActivityNames) ? kActivityNames[i] : std::string_view();
}

namespace internal {

absl::Span<const ConfigKey> ConfigKeys() { return kKeys; }

const ConfigKey* FindConfigKey(std::string_view name) {
  for (const ConfigKey& k : ConfigKeys()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

bool ParseConfigBool(std::string_view text, bool* value) {
  const std::string v = absl::AsciiStrToLower(AV(text));
  if (v == "y" || v == "yes" || v == "t" || v == "true" || v == "1") {
    *value = true;
    return true;
  }
  if (v == "n" || v == "no" || v == "f" || v == "false" || v == "0") {
    *value = false;
    return true;
  }
  return false;
}

std::vector<std::string> SplitConfigList(std::string_view text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(start, end - start);
    item = TrimBlanks(item);
    if (!item.empty()) items.emplace_back(item);
    start = end + 1;
  }
  return items;
}

std::string QuoteForLog(std::string_view s, size_t max_chars) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < max_chars; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') {
      absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > max_chars) out += "...";
  out += "\"";
  return out;
}

std::string ConfigKeysMarkdown() {
  std::string out;
  auto row = [&out](const ConfigKey& k, std::string_view note) {
    const std::string on_demand =
        !k.daemon ? "no"
                  : (k.daemon_max_value >= 0 ? absl::StrCat("yes, <= ", k.daemon_max_value)
                                             : std::string("yes"));
    absl::StrAppend(
        &out, "| `", internal::AV(k.name), "` | ", TypeName(k), " | ", RangeText(k), " | ",
        k.default_text == "-" ? "-" : absl::StrCat("`", internal::AV(k.default_text), "`"), " | ",
        on_demand, " | ", internal::AV(note), " |\n");
  };
  out +=
      "### Kineto keys\n\n| Key | Type | Range | Default | On demand | kairos behaviour |\n"
      "|---|---|---|---|---|---|\n";
  for (const ConfigKey& k : ConfigKeys()) {
    if (k.kind == KeyKind::kKineto) row(k, k.doc);
    if (k.kind == KeyKind::kAlias) row(k, absl::StrCat("Alias of `", internal::AV(k.target), "`"));
    if (k.kind == KeyKind::kInert) row(k, k.doc);
  }
  out +=
      "\n### kairos keys\n\n| Key | Type | Range | Default | On demand | Meaning and reasoning |\n"
      "|---|---|---|---|---|---|\n";
  for (const ConfigKey& k : ConfigKeys()) {
    if (k.kind == KeyKind::kKairos) row(k, k.doc);
  }
  out +=
      "\n### Removed keys (warned about once per config text, then ignored)\n\n"
      "| Key | Why |\n|---|---|\n";
  for (const ConfigKey& k : ConfigKeys()) {
    if (k.kind == KeyKind::kRemoved)
      absl::StrAppend(&out, "| `", internal::AV(k.name), "` | ", internal::AV(k.target), " |\n");
  }
  return out;
}

}  // namespace internal
}  // namespace kairos
