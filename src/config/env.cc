// File: env.cc
// Layer: kairos_config. Decodes the environment (the only getenv calls in kairos) and loads
// the config it names. Holds no state (the decoded copy is the root's).
// Threading: see env.h.
#include "config/env.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "util/input_file.h"

namespace kairos {
namespace {

constexpr off_t kMaxConfigFileBytes = 1 << 20;

std::string Get(const EnvLookup& lookup, const char* name) {
  const char* v = lookup(name);
  return v != nullptr ? std::string(v) : std::string();
}

// A non-negative decimal integer, all characters consumed; false otherwise.
bool ParseNonNegative(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

// First of `names` that is set and holds a valid value; malformed values are reported.
int64_t FirstInt(const EnvLookup& lookup, std::initializer_list<const char*> names,
                 std::string* from, std::vector<std::string>* warnings) {
  for (const char* name : names) {
    const char* raw = lookup(name);
    if (raw == nullptr || raw[0] == '\0') continue;
    int64_t v = 0;
    if (ParseNonNegative(raw, &v)) {
      if (from != nullptr) *from = name;
      return v;
    }
    warnings->push_back(absl::StrCat(name, "=\"", std::string(raw).substr(0, 64),
                                     "\" is not a non-negative integer; ignored"));
  }
  return -1;
}

// Kineto levels: 0 VERBOSE, 1 INFO, 2 WARNING, 3 STAGE, 4 ERROR. kairos has no STAGE: a
// minimum of STAGE hides warnings and keeps errors, which is kError.
LogLevel FromKinetoLevel(long level) {
  if (level <= 0) return LogLevel::kVerbose;
  if (level == 1) return LogLevel::kInfo;
  if (level == 2) return LogLevel::kWarning;
  if (level <= 4) return LogLevel::kError;
  return LogLevel::kOff;
}

std::optional<LogLevel> DecodeLogLevel(const EnvLookup& lookup,
                                       std::vector<std::string>* warnings) {
  const char* kairos_level = lookup("KAIROS_LOG_LEVEL");
  if (kairos_level != nullptr && kairos_level[0] != '\0') {
    const std::string v = absl::AsciiStrToLower(kairos_level);
    if (v == "verbose") return LogLevel::kVerbose;
    if (v == "info") return LogLevel::kInfo;
    if (v == "warning") return LogLevel::kWarning;
    if (v == "error") return LogLevel::kError;
    if (v == "off") return LogLevel::kOff;
    int64_t n = 0;
    if (ParseNonNegative(v, &n)) return FromKinetoLevel(static_cast<long>(std::min<int64_t>(n, 5)));
    warnings->push_back(absl::StrCat("KAIROS_LOG_LEVEL=\"", v.substr(0, 64),
                                     "\" is not verbose|info|warning|error|off or 0-4; ignored"));
  }
  const char* kineto_level = lookup("KINETO_LOG_LEVEL");
  // libkineto parses with atoi: anything non-numeric is 0 (VERBOSE). strtol gives the same
  // result without atoi's undefined behaviour on overflow.
  if (kineto_level != nullptr) return FromKinetoLevel(std::strtol(kineto_level, nullptr, 10));
  return std::nullopt;
}

const char* RealGetenv(const char* name) { return std::getenv(name); }

absl::StatusOr<std::string> ReadConfigFile(const std::string& path) {
  // The readers' open (input_file.h): O_NONBLOCK, so KAIROS_CONFIG naming a FIFO does not
  // hang the job at init, and the type checked on the open descriptor. Symlinks are followed
  // on purpose: a config file that is a link to a regular file (a dotfile manager,
  // /etc/alternatives) is normal. The size is bounded twice: by fstat and by the read loop
  // (a file may grow while read).
  struct stat st;
  const absl::StatusOr<int> opened = OpenInputFile(path, &st);
  if (!opened.ok()) {
    if (absl::IsNotFound(opened.status())) return absl::NotFoundError("config file does not exist");
    if (absl::IsFailedPrecondition(opened.status()))
      return absl::InvalidArgumentError(
          "config file is not a regular file (a FIFO, device or directory is refused)");
    // The helper's message is "<path>: <reason>"; this one's caller adds the path.
    return absl::PermissionDeniedError(absl::StrCat(
        "config file cannot be opened: ", opened.status().message().substr(path.size() + 2)));
  }
  const int fd = *opened;
  if (st.st_size > kMaxConfigFileBytes) {
    ::close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat("config file is ", st.st_size, " bytes; the limit is ", kMaxConfigFileBytes));
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return absl::PermissionDeniedError(
          absl::StrCat("config file cannot be read: ", std::strerror(err)));
    }
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > static_cast<size_t>(kMaxConfigFileBytes)) {
      ::close(fd);
      return absl::InvalidArgumentError("config file grew past the 1 MiB limit while reading");
    }
  }
  ::close(fd);
  return text;
}

// Prefixes each ParseConfig warning with its source; logs them if the caller keeps none.
void Report(const std::string& origin, const std::vector<std::string>& remarks,
            std::vector<std::string>* warnings) {
  for (const std::string& r : remarks) {
    std::string line = absl::StrCat(origin, ": ", r);
    if (warnings != nullptr) {
      warnings->push_back(std::move(line));
    } else {
      KAIROS_LOG_WARNING("%s", line.c_str());
    }
  }
}

// The file's keys, then the env text's keys not already listed.
void MergeInfo(const ConfigParseInfo& from, ConfigParseInfo* into) {
  for (const std::string& key : from.keys_set) {
    if (std::find(into->keys_set.begin(), into->keys_set.end(), key) == into->keys_set.end())
      into->keys_set.push_back(key);
  }
  into->names_window = into->names_window || from.names_window;
}

}  // namespace

EnvSettings DecodeEnv(const EnvLookup& lookup) {
  EnvSettings e;
  for (const char* name : {"KAIROS_CONFIG", "KINETO_CONFIG"}) {
    std::string v = Get(lookup, name);
    if (!v.empty()) {
      e.config_file = std::move(v);
      e.config_file_var = name;
      break;
    }
  }
  if (const char* text = lookup("KAIROS_CONFIG_TEXT"); text != nullptr) {
    e.has_config_text = true;
    e.config_text = text;
  }
  e.log_level = DecodeLogLevel(lookup, &e.warnings);
  e.use_daemon = lookup("KINETO_USE_DAEMON") != nullptr || Get(lookup, "KAIROS_USE_DAEMON") == "1";
  e.daemon_register_always = Get(lookup, "KAIROS_DAEMON_REGISTER") == "always";
  e.ipc_socket_dir = Get(lookup, "KINETO_IPC_SOCKET_DIR");
  e.daemon_endpoint = Get(lookup, "KAIROS_DAEMON_ENDPOINT");
  e.ondemand_trace_dir = Get(lookup, "KINETO_ONDEMAND_TRACE_DIR");
  e.trace_dir = Get(lookup, "KAIROS_TRACE_DIR");
  e.tmp_dir = Get(lookup, "TMPDIR");
  if (e.tmp_dir.empty()) e.tmp_dir = "/tmp";

  // strtoll, as libkineto reads SLURM_JOB_ID: "123abc" is 123, "abc" is 0; int64 keeps ids
  // above 2^31 exact.
  for (const char* name : {"KAIROS_JOB_ID", "SLURM_JOB_ID"}) {
    const char* v = lookup(name);
    if (v != nullptr && v[0] != '\0') {
      e.job_id = std::strtoll(v, nullptr, 10);
      break;
    }
  }

  e.rank = FirstInt(lookup, {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"},
                    &e.rank_var, &e.warnings);
  e.world_size =
      FirstInt(lookup, {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}, nullptr,
               &e.warnings);
  e.local_rank = FirstInt(lookup, {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"},
                          nullptr, &e.warnings);

  e.job_name = Get(lookup, "PT_PROFILER_JOB_NAME");
  e.job_version = Get(lookup, "PT_PROFILER_JOB_VERSION");
  e.job_attempt_index = Get(lookup, "PT_PROFILER_JOB_ATTEMPT_INDEX");
  e.cupti_library = Get(lookup, "KAIROS_CUPTI_LIBRARY");
  e.kairos_preloaded = Get(lookup, "LD_PRELOAD").find("libkairos") != std::string::npos;
  e.nccl_profiler_plugin = Get(lookup, "NCCL_PROFILER_PLUGIN");
  {
    const std::string owner = Get(lookup, "KAIROS_NCCL_PLUGIN_PID");
    int64_t pid = 0;
    if (!owner.empty() && absl::SimpleAtoi(owner, &pid) && pid > 0) e.nccl_plugin_owner_pid = pid;
    e.nccl_plugin_inherited = !e.kairos_preloaded && !e.nccl_profiler_plugin.empty() &&
                              e.nccl_plugin_owner_pid != 0 &&
                              e.nccl_plugin_owner_pid != static_cast<int64_t>(getpid());
  }
  e.cuda_injection_path = Get(lookup, "CUDA_INJECTION64_PATH");
  e.cuda_injected = !e.cuda_injection_path.empty() && e.cuda_injection_path != "none";
  e.teardown_cupti = Get(lookup, "TEARDOWN_CUPTI") == "1";
  e.flush_on_signal = Get(lookup, "KAIROS_FLUSH_ON_SIGNAL") == "1";
  {
    const std::string peak = Get(lookup, "KAIROS_PEAK_TFLOPS");
    double v = 0;
    if (!peak.empty()) {
      if (absl::SimpleAtod(peak, &v) && v > 0 && v < 1e9) {
        e.peak_tflops = v;
      } else {
        e.warnings.push_back("KAIROS_PEAK_TFLOPS=\"" + peak +
                             "\" is not a positive number of TFLOP/s; ignored (MFU uses the peak table)");
      }
    }
  }
  return e;
}

EnvSettings DecodeProcessEnv() { return DecodeEnv(RealGetenv); }

double PeakTflopsFromEnv(const EnvSettings& env, const char* who) {
  for (const std::string& w : env.warnings)
    if (w.rfind("KAIROS_PEAK_TFLOPS", 0) == 0) std::fprintf(stderr, "%s: %s\n", who, w.c_str());
  return env.peak_tflops;
}

absl::StatusOr<ConfigFromEnv> LoadConfigFromSettings(const EnvSettings& env,
                                                     std::vector<std::string>* warnings,
                                                     int64_t now_unix_ms) {
  ConfigFromEnv result;
  if (env.config_file.empty() && !env.has_config_text) return result;

  Config config;
  config.enable_ipc_fabric = env.use_daemon;
  if (!env.config_file.empty()) {
    const std::string origin = absl::StrCat(env.config_file_var, "=", env.config_file);
    absl::StatusOr<std::string> text = ReadConfigFile(env.config_file);
    if (!text.ok()) {
      return absl::Status(text.status().code(),
                          absl::StrCat(origin, ": ", text.status().message()));
    }
    ParseOptions options{ConfigSource::kFile, now_unix_ms};
    std::vector<std::string> remarks;
    ConfigParseInfo info;
    absl::StatusOr<Config> parsed = ParseConfig(*text, config, options, &remarks, &info);
    Report(origin, remarks, warnings);
    MergeInfo(info, &result.info);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(origin, ": ", parsed.status().message()));
    }
    config = *std::move(parsed);
    result.origin = origin;
    absl::StrAppend(&result.text, *text, "\n");
  }
  if (env.has_config_text) {
    std::string text = env.config_text;
    for (char& c : text) {
      if (c == ';') c = '\n';
    }
    ParseOptions options{ConfigSource::kEnv, now_unix_ms};
    std::vector<std::string> remarks;
    ConfigParseInfo info;
    absl::StatusOr<Config> parsed = ParseConfig(text, config, options, &remarks, &info);
    Report("KAIROS_CONFIG_TEXT", remarks, warnings);
    MergeInfo(info, &result.info);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("KAIROS_CONFIG_TEXT: ", parsed.status().message()));
    }
    config = *std::move(parsed);
    absl::StrAppend(&result.origin, result.origin.empty() ? "" : " + ", "KAIROS_CONFIG_TEXT");
    absl::StrAppend(&result.text, text, "\n");
  }
  result.config = std::move(config);
  return result;
}

}  // namespace kairos
