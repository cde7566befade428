// File: config.h
// Layer: kairos_config. The one immutable config value every consumer reads, and the parser
// for the Kineto key=value syntax (config-and-env.md). Knows nothing of sessions or output.
// Threading: ParseConfig is pure and thread-safe; a Config is a plain value.
#ifndef KAIROS_SRC_CONFIG_CONFIG_H_
#define KAIROS_SRC_CONFIG_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace kairos {

// Activity types, numbered as Kineto's ActivityType (append-only, config-and-env.md §4).
enum class ActivityType : uint8_t {
  kCpuOp = 0, kUserAnnotation = 1, kGpuUserAnnotation = 2, kGpuMemcpy = 3, kGpuMemset = 4,
  kKernel = 5, kExternalCorrelation = 6, kCudaRuntime = 7, kCudaDriver = 8,
  kCpuInstantEvent = 9, kPythonFunction = 10, kOverhead = 11, kMtiaRuntime = 12,
  kMtiaCcpEvents = 13, kMtiaInsight = 14, kCudaSync = 15, kCudaEvent = 16, kMtiaCounters = 17,
  kGlowRuntime = 18, kCudaProfilerRange = 19, kHpuOp = 20, kXpuRuntime = 21, kXpuDriver = 22,
  kCollectiveComm = 23, kPrivateuse1Runtime = 24, kPrivateuse1Driver = 25,
  kXpuScopeProfiler = 26, kXpuSync = 27, kHardwareCounters = 28,
  kMemory = 29,  // kairos: CUDA allocations and frees (as PROFILE_PROFILE_MEMORY=true)
  kCount = 30
};
using ActivitySet = uint64_t;  // bit i set = ActivityType i enabled
inline constexpr ActivitySet ActivityBit(ActivityType t) { return ActivitySet{1} << static_cast<int>(t); }
inline constexpr ActivitySet kDefaultActivities = (ActivitySet{1} << 18) - 1;  // types 0..17

enum class OutputFormat : uint8_t {
  kAuto = 0,      // from the file name (.json, .json.gz, .json.zst, .pftrace, .pftrace.zst, ...)
  kJson, kJsonGzip, kJsonZstd, kPerfetto, kPerfettoZstd,
};

enum class SummaryMode : uint8_t { kFile = 0, kStdout, kOff };
enum class ReportMode : uint8_t { kOff = 0, kHtml };

// Every field has the Kineto default (config-and-env.md §3.1) or a documented kairos default
// (docs/CONFIG.md). Times are in the units the key names say.
struct Config {
  // ---- Kineto keys ----
  bool activities_enabled = true;                    // ACTIVITIES_ENABLED
  ActivitySet activity_types = kDefaultActivities;   // ACTIVITY_TYPES
  int64_t duration_ms = 500;                          // ACTIVITIES_DURATION_MSECS / _SECS
  int64_t iterations = 0;                             // ACTIVITIES_ITERATIONS
  int64_t warmup_secs = 5;                            // ACTIVITIES_WARMUP_PERIOD_SECS
  int64_t warmup_iterations = 0;                      // ACTIVITIES_WARMUP_ITERATIONS
  int64_t max_gpu_buffer_mb = 128;                    // ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB
  std::string log_file;                               // ACTIVITIES_LOG_FILE ("" = default path)
  bool display_cuda_sync_wait_events = true;          // ACTIVITIES_DISPLAY_CUDA_SYNC_WAIT_EVENTS
  bool cupti_per_thread_buffer = false;               // CUPTI_PER_THREAD_BUFFER_ENABLED
  int64_t profile_start_time_ms = 0;                  // PROFILE_START_TIME (Unix ms; 0 = now+warmup)
  int64_t profile_start_iteration = -1;               // PROFILE_START_ITERATION
  int64_t profile_start_iteration_roundup = -1;       // PROFILE_START_ITERATION_ROUNDUP
  std::string request_trace_id;                       // REQUEST_TRACE_ID
  std::string request_group_trace_id;                 // REQUEST_GROUP_TRACE_ID
  bool enable_ipc_fabric = false;                     // ENABLE_IPC_FABRIC
  int64_t on_demand_poll_secs = 5;                    // ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS
  int64_t verbose_log_level = -1;                     // VERBOSE_LOG_LEVEL
  std::vector<std::string> verbose_log_modules;       // VERBOSE_LOG_MODULES
  bool report_input_shapes = false;                   // PROFILE_REPORT_INPUT_SHAPES (+alias)
  bool profile_memory = false;                        // PROFILE_PROFILE_MEMORY
  bool with_stack = false;                            // PROFILE_WITH_STACK (+alias PYTHON_STACK_TRACE)
  bool with_flops = false;                            // PROFILE_WITH_FLOPS
  bool with_modules = false;                          // PROFILE_WITH_MODULES
  bool memory_snapshot = false;                       // PROFILE_MEMORY
  int64_t memory_snapshot_duration_ms = 1000;         // PROFILE_MEMORY_DURATION_MSECS
  std::string custom_config;                          // CUSTOM_CONFIG
  std::vector<std::string> pm_sampling_metrics;       // CUPTI_PM_SAMPLING_METRICS
  int64_t pm_sampling_device_id = -1;                 // CUPTI_PM_SAMPLING_DEVICE_ID

  // ---- kairos keys (KAIROS_ prefix, docs/CONFIG.md) ----
  int64_t cpu_buffer_kb_per_thread = 65536;           // KAIROS_CPU_BUFFER_KB_PER_THREAD
  int64_t max_threads = 256;                          // KAIROS_MAX_THREADS
  OutputFormat output_format = OutputFormat::kAuto;   // KAIROS_OUTPUT_FORMAT
  std::vector<std::string> extra_outputs;             // KAIROS_EXTRA_OUTPUTS (more paths, same session)
  int64_t zstd_level = 1;                             // KAIROS_ZSTD_LEVEL
  SummaryMode summary = SummaryMode::kFile;           // KAIROS_SUMMARY (file|stdout|off)
  ReportMode report = ReportMode::kOff;               // KAIROS_REPORT (off|html)
  int64_t host_metrics_interval_ms = 100;             // KAIROS_HOST_METRICS_INTERVAL_MS (0 = off)
  std::vector<std::string> nvtx_domains_include;      // KAIROS_NVTX_DOMAINS (e.g. "+a,+b")
  std::vector<std::string> nvtx_domains_exclude;      // KAIROS_NVTX_DOMAINS (e.g. "-NCCL")
  int64_t daemon_poll_ms = 1000;                      // KAIROS_DAEMON_POLL_MS
  // KAIROS_ITERATION_FALLBACK_TIMEOUT_MS; -1 (unset): by the request's source
  // (IterationFallbackMs).
  int64_t iteration_fallback_timeout_ms = -1;
  int64_t request_time_ms = 0;                        // KAIROS_REQUEST_TIME_MS (0 = unknown)
  int64_t exit_flush_timeout_ms = 5000;               // KAIROS_EXIT_FLUSH_TIMEOUT_MS
  int64_t pm_sampling_interval_us = 1000;             // KAIROS_PM_SAMPLING_INTERVAL_US
  int64_t telemetry_interval_secs = -1;  // KAIROS_TELEMETRY_INTERVAL_SECS (0 = off, -1 = unset)
  std::string telemetry_file;                         // KAIROS_TELEMETRY_FILE ("" = default)
  int64_t telemetry_max_mb = 64;                      // KAIROS_TELEMETRY_MAX_MB (0 = no rotation)

  // Derived: true when the iteration keys select iteration mode (config-and-env.md §5).
  bool IterationMode() const { return profile_start_iteration >= 0 && iterations > 0; }
};

// Where a config text came from; decides path restrictions and error wording.
enum class ConfigSource : uint8_t { kFile = 0, kEnv, kApi, kDaemon };

// How long an iteration request waits for a process that never stepped before it becomes a
// duration window (0: never). Set explicitly: that. Unset: 10 s for a daemon request (the
// job runs already; one that counts no iterations would never be traced), none for the
// process's own config (environment, file, API: start-up before the first step, importing
// torch and loading data, routinely takes longer; on an H100 machine torch 2.11's import alone
// took over 10 s and the old default opened a 500 ms window during it).
inline constexpr int64_t kDaemonIterationFallbackMs = 10000;
inline int64_t IterationFallbackMs(int64_t configured, ConfigSource source) {
  if (configured >= 0) return configured;
  return source == ConfigSource::kDaemon ? kDaemonIterationFallbackMs : 0;
}

struct ParseOptions {
  ConfigSource source = ConfigSource::kApi;
  int64_t now_unix_ms = 0;  // for PROFILE_START_TIME checks; 0 = read the clock
};

// What ParseConfig saw, so no caller re-reads the text (issue 11 item 5).
struct ConfigParseInfo {
  std::vector<std::string> keys_set;  // keys applied, in text order, each once (aliases as written)
  bool names_window = false;          // a key that schedules a window was set (see below)
};

// The keys that schedule a trace window: PROFILE_START_TIME, PROFILE_START_ITERATION,
// PROFILE_START_ITERATION_ROUNDUP, ACTIVITIES_ITERATIONS, ACTIVITIES_DURATION_MSECS,
// ACTIVITIES_DURATION_SECS, ACTIVITIES_WARMUP_PERIOD_SECS, ACTIVITIES_WARMUP_ITERATIONS.
// A config without any of them only sets options and must not start a trace by itself.
bool KeyNamesWindow(std::string_view key);

// Parses `text` on top of `base` (later lines override earlier ones and `base`). On any
// bad line the whole text is rejected: the error names the key, the 1-based line number and
// the reason, and the caller keeps its previous config. Unknown and removed keys are not
// errors in a trusted text (file, env, API): each is reported once through `warnings` (if
// non-null) and ignored; so are keys that are accepted but not implemented by kairos (named in
// docs/CONFIG.md). A daemon (on-demand) text is held to a whitelist instead: any key that is
// not allowed in a request (unknown, removed, inert, unimplemented, base-only) and any value
// outside the key's on-demand range rejects the whole request, naming the key.
// In every source: a value with a control byte (NUL, CR, ESC, ...; tab is allowed) or longer
// than 4096 bytes is an error, and PROFILE_START_TIME more than 24 h in the future is an error
// (so later ms->ns arithmetic cannot overflow).
absl::StatusOr<Config> ParseConfig(std::string_view text, const Config& base,
                                   const ParseOptions& options,
                                   std::vector<std::string>* warnings = nullptr);
// Same, and fills `info` (if non-null) with what the text set. On error `info` is unspecified.
absl::StatusOr<Config> ParseConfig(std::string_view text, const Config& base,
                                   const ParseOptions& options, std::vector<std::string>* warnings,
                                   ConfigParseInfo* info);

// A key set to a value given as data, not as config text (kairos_init_values): the value is
// taken byte for byte, so it may contain '#', '=', ';' or leading/trailing blanks. The key's
// type checks, the 4096-byte limit and the control-character rule still apply.
struct ConfigValue {
  std::string_view key;
  std::string_view value;
};

// Parses `text` as above, then applies `values` in order on top of it (a value overrides the
// text's line for the same key). An error in a value is "config value <i>: <KEY>: <reason>"
// (1-based). `info` covers both.
absl::StatusOr<Config> ParseConfig(std::string_view text, const std::vector<ConfigValue>& values,
                                   const Config& base, const ParseOptions& options,
                                   std::vector<std::string>* warnings, ConfigParseInfo* info);

// Whether `value` can be written as the value of a KEY=VALUE line and read back unchanged;
// "" if it can, else the reason, e.g. "contains '#' (a comment starts there)". Callers that
// must send config text (the daemon request of `kairos trace`) refuse such a value by name.
std::string ConfigTextValueProblem(std::string_view value);

// ConfigToText
//
// The canonical KEY=VALUE text of `config` (one line per key, table order, used as trace
// metadata). ParseConfig(ConfigToText(c), Config{}, ...) reproduces `c`. Keys whose value is
// negative ("unset", e.g. PROFILE_START_ITERATION=-1) are left out because the syntax rejects
// negative numbers; a string or list value containing '#', '=', CR or LF (or with leading or
// trailing blanks) cannot be written in the syntax and is emitted as a
// "# KEY: value not representable" comment. Values may contain ';', so the text is not
// always valid as KAIROS_CONFIG_TEXT (which splits lines at ';').
std::string ConfigToText(const Config& config);

// The Kineto name of an activity type ("kernel", "cuda_runtime", ...); "" if out of range.
std::string_view ActivityTypeName(ActivityType type);

}  // namespace kairos

#endif  // KAIROS_SRC_CONFIG_CONFIG_H_
