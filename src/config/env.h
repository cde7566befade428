// File: env.h
// Layer: kairos_config. The one place the library reads environment variables
// (config-and-env.md §7, docs/CONFIG.md "Environment variables"). A test
// (test/config/no_getenv_test) fails if getenv appears anywhere else in src/, bindings/, tools/.
// Holds no state: the library's one decoded copy, read by every component so all see one
// view, is the process root's (session/root.h ProcessEnv()); the layers below the session get
// what they need from it as parameters.
// Threading: DecodeProcessEnv() reads the environment like getenv (not while another thread
// calls setenv); the rest is pure or reads files on the caller's thread.
#ifndef KAIROS_SRC_CONFIG_ENV_H_
#define KAIROS_SRC_CONFIG_ENV_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "config/config.h"
#include "util/log.h"

namespace kairos {

// EnvSettings
//
// Everything kairos takes from the environment, decoded once. Strings are "" when the
// variable is unset. Integers are -1 when unknown unless said otherwise.
struct EnvSettings {
  // Base config file: KAIROS_CONFIG, else KINETO_CONFIG (non-empty values only). "" = none.
  // Unlike libkineto, kairos does not fall back to /etc/libkineto.conf: a process that names
  // no config must not start tracing because a machine-wide file exists.
  std::string config_file;
  std::string config_file_var;  // "KAIROS_CONFIG" or "KINETO_CONFIG" (for messages)

  // KAIROS_CONFIG_TEXT: a whole config as one string; ';' and '\n' both end a line, so a
  // value cannot contain ';' here. has_config_text is true when the variable is set.
  std::string config_text;
  bool has_config_text = false;

  // KAIROS_LOG_LEVEL (verbose|info|warning|error|off, or a Kineto number) wins over
  // KINETO_LOG_LEVEL (Kineto's atoi semantics: 0 verbose, 1 info, 2 warning, 3 stage,
  // 4 error; non-numeric reads as 0; stage maps to error, >= 5 to off). nullopt = neither set.
  std::optional<LogLevel> log_level;

  // Daemon: KINETO_USE_DAEMON is presence-only (even "0" enables, as in libkineto);
  // KAIROS_USE_DAEMON enables only when exactly "1".
  bool use_daemon = false;
  // KAIROS_DAEMON_REGISTER exactly "always": poll the daemon from load, not only once the
  // process uses a GPU, NCCL or kairos_step (daemon_glue.cc).
  bool daemon_register_always = false;
  std::string ipc_socket_dir;   // KINETO_IPC_SOCKET_DIR
  std::string daemon_endpoint;  // KAIROS_DAEMON_ENDPOINT (override of the daemon's name, tests)

  // Directories.
  std::string ondemand_trace_dir;  // KINETO_ONDEMAND_TRACE_DIR
  std::string trace_dir;           // KAIROS_TRACE_DIR
  std::string tmp_dir = "/tmp";    // TMPDIR if set and non-empty, else "/tmp"

  // Job id sent to the daemon: KAIROS_JOB_ID, else SLURM_JOB_ID, read with strtoll semantics
  // (leading digits count, non-numeric gives 0, values above 2^31 are kept exact). 0 = unset.
  int64_t job_id = 0;

  // Distributed identity. Precedence (first set and valid wins):
  //   rank:       RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK
  //   world_size: WORLD_SIZE, SLURM_NTASKS, OMPI_COMM_WORLD_SIZE, PMI_SIZE
  //   local_rank: LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID
  // The framework's own variables come first because they are what the training script sees.
  int64_t rank = -1;
  int64_t world_size = -1;
  int64_t local_rank = -1;
  std::string rank_var;  // the variable rank came from, "" if unknown

  // PT_PROFILER_JOB_NAME / _VERSION / _ATTEMPT_INDEX, copied verbatim into trace metadata.
  std::string job_name;
  std::string job_version;
  std::string job_attempt_index;

  std::string cupti_library;        // KAIROS_CUPTI_LIBRARY (explicit libcupti path)
  // LD_PRELOAD names libkairos: the library was preloaded (not dlopen'ed), so its load-time
  // constructor may wait for a startup window without holding the loader lock of a dlopen.
  bool kairos_preloaded = false;
  // NCCL_PROFILER_PLUGIN as the process found it (the preload shim, bindings/c/shim.c, names
  // itself there before the core reads the environment, unless KAIROS_NCCL_PLUGIN=0).
  std::string nccl_profiler_plugin;
  // KAIROS_NCCL_PLUGIN_PID: the process whose preloaded kairos set NCCL_PROFILER_PLUGIN (0 =
  // none). Set beside it, and inherited with it by every child.
  int64_t nccl_plugin_owner_pid = 0;
  // NCCL_PROFILER_PLUGIN reached this process only by inheritance from a preloaded ancestor
  // (a marker of another pid) and kairos is not preloaded here: the job removed LD_PRELOAD
  // for this process, so a kairos that NCCL loads because of the variable stays inert.
  bool nccl_plugin_inherited = false;
  std::string cuda_injection_path;  // CUDA_INJECTION64_PATH, read only to learn we were injected
  bool cuda_injected = false;       // CUDA_INJECTION64_PATH set, non-empty and not "none"
  bool teardown_cupti = false;      // TEARDOWN_CUPTI exactly "1"
  // KAIROS_FLUSH_ON_SIGNAL exactly "1": on SIGTERM/SIGINT an open window is closed and written
  // (within the exit bound) before the previous handler runs.
  bool flush_on_signal = false;
  // KAIROS_PEAK_TFLOPS: the peak (TFLOP/s, > 0) MFU is computed against, for every dtype,
  // instead of the summary's datasheet table (docs/FLOPS.md); -1 = unset or invalid (warned).
  double peak_tflops = -1;

  // One line per ignored, malformed value (e.g. "RANK=\"x\" is not a non-negative integer;
  // ignored"). The caller logs them once at init.
  std::vector<std::string> warnings;
};

// Decodes settings from any lookup function (returns nullptr for unset). Pure; exposed so the
// decoding rules are testable without touching the environment.
using EnvLookup = std::function<const char*(const char* name)>;
EnvSettings DecodeEnv(const EnvLookup& lookup);

// DecodeEnv of the process environment as it is now, decoded afresh on every call: for the
// root's one copy (decoded once) and for a CLI command (once per command).
EnvSettings DecodeProcessEnv();

// KAIROS_PEAK_TFLOPS of `env` for a CLI command (`who` prefixes the one-line warning printed
// to stderr when the value is invalid): the peak, or -1.
double PeakTflopsFromEnv(const EnvSettings& env, const char* who);

// ConfigFromEnv
//
// The result of LoadConfigFromSettings: `config` is nullopt when the environment configures no
// trace at all (no config file variable, no KAIROS_CONFIG_TEXT), which is the normal case for
// a process that merely has the library preloaded: it must then do nothing.
struct ConfigFromEnv {
  std::optional<Config> config;
  std::string origin;  // e.g. "KINETO_CONFIG=/path" or "KAIROS_CONFIG_TEXT", for the log
  // The texts that were parsed (file text, then env text with ';' turned into newlines), so
  // the session can tell a config that names a window from one that only sets options.
  std::string text;
  // What the texts set (file keys, then env-text keys): names_window tells a config that
  // schedules a trace from one that only sets options.
  ConfigParseInfo info;
};

// LoadConfigFromSettings
//
// Reads env.config_file (if any) and parses it, then parses env.config_text on top of it
// (so the env text wins for keys in both). ENABLE_IPC_FABRIC defaults to env.use_daemon.
// Errors (the whole result is rejected): the file is missing, unreadable, larger than 1 MiB, or
// either text fails ParseConfig. Messages name the source, e.g.
//   "KINETO_CONFIG=/x/k.conf: config line 3: ACTIVITIES_ITERATIONS: ..."
// Warnings (unknown/removed keys) are appended to `warnings` if non-null, else logged.
// `now_unix_ms` is passed to ParseConfig (0 = read the clock).
absl::StatusOr<ConfigFromEnv> LoadConfigFromSettings(const EnvSettings& env,
                                                     std::vector<std::string>* warnings,
                                                     int64_t now_unix_ms = 0);

}  // namespace kairos

#endif  // KAIROS_SRC_CONFIG_ENV_H_
