// File: env_test.cc
// Layer: test for kairos_config. Environment decoding (through setenv + DecodeProcessEnv and
// through DecodeEnv with a fake lookup) and LoadConfigFromSettings' sources and errors.
// Threading: single-threaded (setenv is not thread-safe).
#include "config/env.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "temp_dir.h"

namespace kairos {
namespace {

constexpr int64_t kNow = 1763772000000;

// Every variable env.cc reads, so each test starts from a clean environment.
const char* const kAllVars[] = {"KAIROS_CONFIG",
                                "KINETO_CONFIG",
                                "KAIROS_CONFIG_TEXT",
                                "KAIROS_LOG_LEVEL",
                                "KINETO_LOG_LEVEL",
                                "KINETO_USE_DAEMON",
                                "KAIROS_USE_DAEMON",
                                "KINETO_IPC_SOCKET_DIR",
                                "KAIROS_DAEMON_REGISTER",
                                "NCCL_PROFILER_PLUGIN",
                                "KAIROS_NCCL_PLUGIN",
                                "KAIROS_DAEMON_ENDPOINT",
                                "KINETO_ONDEMAND_TRACE_DIR",
                                "KAIROS_TRACE_DIR",
                                "TMPDIR",
                                "KAIROS_JOB_ID",
                                "SLURM_JOB_ID",
                                "RANK",
                                "SLURM_PROCID",
                                "OMPI_COMM_WORLD_RANK",
                                "PMI_RANK",
                                "WORLD_SIZE",
                                "SLURM_NTASKS",
                                "OMPI_COMM_WORLD_SIZE",
                                "PMI_SIZE",
                                "LOCAL_RANK",
                                "OMPI_COMM_WORLD_LOCAL_RANK",
                                "SLURM_LOCALID",
                                "PT_PROFILER_JOB_NAME",
                                "PT_PROFILER_JOB_VERSION",
                                "PT_PROFILER_JOB_ATTEMPT_INDEX",
                                "KAIROS_CUPTI_LIBRARY",
                                "CUDA_INJECTION64_PATH",
                                "TEARDOWN_CUPTI"};

// Unsets every variable above for the test's duration, then puts back the values they had
// (TMPDIR among them: the other tests' temp directories, test/temp_dir.h, are made under it).
struct CleanEnv {
  CleanEnv() {
    for (const char* v : kAllVars) {
      if (const char* value = getenv(v)) saved.emplace_back(v, value);
      unsetenv(v);
    }
  }
  ~CleanEnv() {
    for (const char* v : kAllVars) unsetenv(v);
    for (const auto& [name, value] : saved) setenv(name.c_str(), value.c_str(), 1);
  }
  std::vector<std::pair<std::string, std::string>> saved;
};

EnvSettings FromMap(const std::map<std::string, std::string>& vars) {
  return DecodeEnv([&vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

TEST_CASE("an empty environment configures nothing", "[env]") {
  CleanEnv clean;
  const EnvSettings e = DecodeProcessEnv();
  CHECK(e.config_file.empty());
  CHECK_FALSE(e.has_config_text);
  CHECK_FALSE(e.log_level.has_value());
  CHECK_FALSE(e.use_daemon);
  CHECK(e.tmp_dir == "/tmp");
  CHECK(e.job_id == 0);
  CHECK(e.rank == -1);
  CHECK(e.world_size == -1);
  CHECK(e.local_rank == -1);
  CHECK_FALSE(e.cuda_injected);
  CHECK_FALSE(e.teardown_cupti);
  CHECK(e.warnings.empty());
  absl::StatusOr<ConfigFromEnv> c = LoadConfigFromSettings(e, nullptr, kNow);
  REQUIRE(c.ok());
  CHECK_FALSE(c->config.has_value());
}

TEST_CASE("DecodeProcessEnv reads the environment as it is at each call", "[env]") {
  CleanEnv clean;
  const EnvSettings before = DecodeProcessEnv();
  setenv("KINETO_USE_DAEMON", "0", 1);  // presence-only: "0" still enables
  setenv("SLURM_JOB_ID", "4294967297", 1);
  setenv("RANK", "3", 1);
  const EnvSettings after = DecodeProcessEnv();
  CHECK(after.use_daemon);
  CHECK(after.job_id == 4294967297);
  CHECK(after.rank == 3);
  CHECK(after.rank_var == "RANK");
  CHECK_FALSE(before.use_daemon);
  CHECK(before.job_id == 0);
  CHECK(before.rank == -1);
}

TEST_CASE("config file variables: KAIROS_CONFIG wins over KINETO_CONFIG", "[env]") {
  CHECK(FromMap({{"KINETO_CONFIG", "/k.conf"}}).config_file == "/k.conf");
  const EnvSettings e = FromMap({{"KINETO_CONFIG", "/k.conf"}, {"KAIROS_CONFIG", "/a.conf"}});
  CHECK(e.config_file == "/a.conf");
  CHECK(e.config_file_var == "KAIROS_CONFIG");
  CHECK(FromMap({{"KAIROS_CONFIG", ""}, {"KINETO_CONFIG", "/k.conf"}}).config_file_var ==
        "KINETO_CONFIG");
}

TEST_CASE("KAIROS_PEAK_TFLOPS: a positive number, else ignored with a warning", "[env]") {
  CHECK(FromMap({}).peak_tflops == -1);
  CHECK(FromMap({{"KAIROS_PEAK_TFLOPS", "989.4"}}).peak_tflops == 989.4);
  for (const char* bad : {"0", "-5", "fast", "1e12"}) {
    const EnvSettings e = FromMap({{"KAIROS_PEAK_TFLOPS", bad}});
    CHECK(e.peak_tflops == -1);
    REQUIRE(e.warnings.size() == 1);
    CHECK(e.warnings[0] == std::string("KAIROS_PEAK_TFLOPS=\"") + bad +
                               "\" is not a positive number of TFLOP/s; ignored (MFU uses the peak table)");
  }
}

TEST_CASE("PeakTflopsFromEnv: the given environment's peak, -1 when invalid", "[env]") {
  // The CLI passes its own decoded environment; the warning goes to stderr, the value back.
  CHECK(PeakTflopsFromEnv(FromMap({{"KAIROS_PEAK_TFLOPS", "989.4"}}), "env_test") == 989.4);
  CHECK(PeakTflopsFromEnv(FromMap({{"KAIROS_PEAK_TFLOPS", "fast"}}), "env_test") == -1);
  CHECK(PeakTflopsFromEnv(FromMap({}), "env_test") == -1);
}

TEST_CASE("log levels", "[env]") {
  CHECK(FromMap({{"KINETO_LOG_LEVEL", "0"}}).log_level == LogLevel::kVerbose);
  CHECK(FromMap({{"KINETO_LOG_LEVEL", "1"}}).log_level == LogLevel::kInfo);
  CHECK(FromMap({{"KINETO_LOG_LEVEL", "2"}}).log_level == LogLevel::kWarning);
  CHECK(FromMap({{"KINETO_LOG_LEVEL", "3"}}).log_level == LogLevel::kError);  // STAGE
  CHECK(FromMap({{"KINETO_LOG_LEVEL", "4"}}).log_level == LogLevel::kError);
  CHECK(FromMap({{"KINETO_LOG_LEVEL", "5"}}).log_level == LogLevel::kOff);
  CHECK(FromMap({{"KINETO_LOG_LEVEL", "warn"}}).log_level == LogLevel::kVerbose);  // atoi -> 0
  CHECK(FromMap({{"KINETO_LOG_LEVEL", "2junk"}}).log_level == LogLevel::kWarning);
  CHECK(FromMap({{"KAIROS_LOG_LEVEL", "Error"}, {"KINETO_LOG_LEVEL", "0"}}).log_level ==
        LogLevel::kError);
  CHECK(FromMap({{"KAIROS_LOG_LEVEL", "off"}}).log_level == LogLevel::kOff);
  CHECK(FromMap({{"KAIROS_LOG_LEVEL", "1"}}).log_level == LogLevel::kInfo);
  const EnvSettings bad = FromMap({{"KAIROS_LOG_LEVEL", "loud"}, {"KINETO_LOG_LEVEL", "4"}});
  CHECK(bad.log_level == LogLevel::kError);
  REQUIRE(bad.warnings.size() == 1);
  CHECK(bad.warnings[0] ==
        "KAIROS_LOG_LEVEL=\"loud\" is not verbose|info|warning|error|off or 0-4; ignored");
}

TEST_CASE("daemon enablement", "[env]") {
  CHECK(FromMap({{"KINETO_USE_DAEMON", ""}}).use_daemon);
  CHECK(FromMap({{"KAIROS_USE_DAEMON", "1"}}).use_daemon);
  CHECK_FALSE(FromMap({{"KAIROS_USE_DAEMON", "0"}}).use_daemon);
  CHECK_FALSE(FromMap({{"KAIROS_USE_DAEMON", "yes"}}).use_daemon);
  const EnvSettings e =
      FromMap({{"KINETO_IPC_SOCKET_DIR", "/run/dyno"}, {"KAIROS_DAEMON_ENDPOINT", "dyno_test_1"}});
  CHECK(e.ipc_socket_dir == "/run/dyno");
  CHECK(e.daemon_endpoint == "dyno_test_1");
}

TEST_CASE("job id uses strtoll semantics", "[env]") {
  CHECK(FromMap({{"SLURM_JOB_ID", "123abc"}}).job_id == 123);
  CHECK(FromMap({{"SLURM_JOB_ID", "abc"}}).job_id == 0);
  CHECK(FromMap({{"SLURM_JOB_ID", "9007199254740993"}}).job_id == 9007199254740993);
  CHECK(FromMap({{"SLURM_JOB_ID", "7"}, {"KAIROS_JOB_ID", "8"}}).job_id == 8);
  CHECK(FromMap({{"SLURM_JOB_ID", "7"}, {"KAIROS_JOB_ID", ""}}).job_id == 7);
}

TEST_CASE("rank precedence and malformed values", "[env]") {
  const EnvSettings slurm = FromMap({{"SLURM_PROCID", "5"},
                                     {"SLURM_NTASKS", "16"},
                                     {"OMPI_COMM_WORLD_RANK", "6"},
                                     {"PMI_RANK", "7"}});
  CHECK(slurm.rank == 5);
  CHECK(slurm.rank_var == "SLURM_PROCID");
  CHECK(slurm.world_size == 16);
  const EnvSettings torch = FromMap({{"RANK", "1"},
                                     {"WORLD_SIZE", "2"},
                                     {"LOCAL_RANK", "1"},
                                     {"SLURM_PROCID", "9"},
                                     {"SLURM_LOCALID", "3"}});
  CHECK(torch.rank == 1);
  CHECK(torch.world_size == 2);
  CHECK(torch.local_rank == 1);
  const EnvSettings mpi = FromMap({{"OMPI_COMM_WORLD_RANK", "2"},
                                   {"OMPI_COMM_WORLD_SIZE", "4"},
                                   {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}});
  CHECK(mpi.rank == 2);
  CHECK(mpi.world_size == 4);
  CHECK(mpi.local_rank == 0);
  CHECK(FromMap({{"PMI_RANK", "3"}, {"PMI_SIZE", "8"}}).world_size == 8);
  const EnvSettings bad = FromMap({{"RANK", "x1"}, {"PMI_RANK", "4"}});
  CHECK(bad.rank == 4);
  REQUIRE(bad.warnings.size() == 1);
  CHECK(bad.warnings[0] == "RANK=\"x1\" is not a non-negative integer; ignored");
}

TEST_CASE("job identity, CUPTI and injection variables", "[env]") {
  const EnvSettings e = FromMap({{"PT_PROFILER_JOB_NAME", "llm\"x"},
                                 {"PT_PROFILER_JOB_VERSION", "3"},
                                 {"PT_PROFILER_JOB_ATTEMPT_INDEX", "0"},
                                 {"KAIROS_CUPTI_LIBRARY", "/opt/cupti.so"},
                                 {"CUDA_INJECTION64_PATH", "/opt/libkairos.so"},
                                 {"TEARDOWN_CUPTI", "1"},
                                 {"TMPDIR", "/scratch"},
                                 {"KAIROS_TRACE_DIR", "/traces"},
                                 {"KINETO_ONDEMAND_TRACE_DIR", "/od"}});
  CHECK(e.job_name == "llm\"x");
  CHECK(e.job_version == "3");
  CHECK(e.job_attempt_index == "0");
  CHECK(e.cupti_library == "/opt/cupti.so");
  CHECK(e.cuda_injected);
  CHECK(e.teardown_cupti);
  CHECK(e.tmp_dir == "/scratch");
  CHECK(e.trace_dir == "/traces");
  CHECK(e.ondemand_trace_dir == "/od");
  CHECK_FALSE(FromMap({{"CUDA_INJECTION64_PATH", "none"}}).cuda_injected);
  CHECK_FALSE(FromMap({{"TEARDOWN_CUPTI", "true"}}).teardown_cupti);
  CHECK(FromMap({{"TMPDIR", ""}}).tmp_dir == "/tmp");
}

TEST_CASE("LoadConfigFromSettings: file, then env text on top", "[env]") {
  const testing::TempDir temp("kairos_env_test_");
  const std::string& dir = temp.path();
  const std::string path = dir + "/k.conf";
  std::ofstream(path) << "ACTIVITIES_ITERATIONS=4\r\nACTIVITIES_LOG_FILE=/tmp/f.json\r\nOLD=1\n";
  EnvSettings env;
  env.config_file = path;
  env.config_file_var = "KINETO_CONFIG";
  env.has_config_text = true;
  env.config_text = "ACTIVITIES_LOG_FILE=/tmp/e.json; PROFILE_START_ITERATION=2\nNEW=1";
  env.use_daemon = true;
  std::vector<std::string> warnings;
  absl::StatusOr<ConfigFromEnv> c = LoadConfigFromSettings(env, &warnings, kNow);
  REQUIRE(c.ok());
  REQUIRE(c->config.has_value());
  CHECK(c->config->iterations == 4);
  CHECK(c->config->log_file == "/tmp/e.json");
  CHECK(c->config->profile_start_iteration == 2);
  CHECK(c->config->enable_ipc_fabric);
  CHECK(c->origin == "KINETO_CONFIG=" + path + " + KAIROS_CONFIG_TEXT");
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[0] ==
        "KINETO_CONFIG=" + path + ": config line 3: \"OLD\": unrecognized key; ignored");
  CHECK(warnings[1] == "KAIROS_CONFIG_TEXT: config line 3: \"NEW\": unrecognized key; ignored");
}

TEST_CASE("LoadConfigFromSettings errors name the source", "[env]") {
  const testing::TempDir temp("kairos_env_test_");
  const std::string& dir = temp.path();
  EnvSettings env;
  env.config_file = dir + "/missing.conf";
  env.config_file_var = "KAIROS_CONFIG";
  absl::StatusOr<ConfigFromEnv> missing = LoadConfigFromSettings(env, nullptr, kNow);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() ==
        "KAIROS_CONFIG=" + dir + "/missing.conf: config file does not exist");

  env.config_file = dir;  // a directory
  absl::StatusOr<ConfigFromEnv> not_file = LoadConfigFromSettings(env, nullptr, kNow);
  REQUIRE_FALSE(not_file.ok());
  CHECK(not_file.status().message() ==
        "KAIROS_CONFIG=" + dir +
            ": config file is not a regular file (a FIFO, device or directory is refused)");

  // A FIFO with no writer: opening it for reading used to block the job forever at init.
  // The test would hang (and time out) if the open blocked.
  const std::string fifo = dir + "/fifo.conf";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  env.config_file = fifo;
  absl::StatusOr<ConfigFromEnv> from_fifo = LoadConfigFromSettings(env, nullptr, kNow);
  REQUIRE_FALSE(from_fifo.ok());
  CHECK(from_fifo.status().message() ==
        "KAIROS_CONFIG=" + fifo +
            ": config file is not a regular file (a FIFO, device or directory is refused)");
  // A symlink to a FIFO is refused the same way; a symlink to a regular file is followed.
  const std::string link = dir + "/link.conf";
  REQUIRE(symlink(fifo.c_str(), link.c_str()) == 0);
  env.config_file = link;
  CHECK_FALSE(LoadConfigFromSettings(env, nullptr, kNow).ok());
  unlink(link.c_str());
  const std::string real = dir + "/real.conf";
  std::ofstream(real) << "ACTIVITIES_ITERATIONS=4\nPROFILE_START_ITERATION=1\n";
  REQUIRE(symlink(real.c_str(), link.c_str()) == 0);
  absl::StatusOr<ConfigFromEnv> via_link = LoadConfigFromSettings(env, nullptr, kNow);
  REQUIRE(via_link.ok());
  CHECK(via_link->config->iterations == 4);
  CHECK(via_link->info.names_window);
  CHECK(via_link->info.keys_set ==
        std::vector<std::string>{"ACTIVITIES_ITERATIONS", "PROFILE_START_ITERATION"});
  unlink(link.c_str());
  unlink(real.c_str());
  unlink(fifo.c_str());
  // /dev/null is a character device: refused without reading.
  env.config_file = "/dev/null";
  CHECK(LoadConfigFromSettings(env, nullptr, kNow).status().message() ==
        "KAIROS_CONFIG=/dev/null: config file is not a regular file (a FIFO, device or "
        "directory is refused)");
  env.config_file = dir;

  const std::string path = dir + "/bad.conf";
  std::ofstream(path) << "ACTIVITIES_ITERATIONS=1\nACTIVITIES_WARMUP_PERIOD_SECS=-1\n";
  env.config_file = path;
  absl::StatusOr<ConfigFromEnv> bad = LoadConfigFromSettings(env, nullptr, kNow);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() ==
        "KAIROS_CONFIG=" + path +
            ": config line 2: ACTIVITIES_WARMUP_PERIOD_SECS: \"-1\" is negative; expected an "
            "integer in [0, 2147483647]");

  if (geteuid() != 0) {  // root reads anything, so the permission case needs a normal user
    std::ofstream(path) << "ACTIVITIES_ITERATIONS=1\n";
    chmod(path.c_str(), 0);
    absl::StatusOr<ConfigFromEnv> unreadable = LoadConfigFromSettings(env, nullptr, kNow);
    REQUIRE_FALSE(unreadable.ok());
    CHECK(unreadable.status().message() ==
          "KAIROS_CONFIG=" + path + ": config file cannot be opened: Permission denied");
  }

  EnvSettings text_only;
  text_only.has_config_text = true;
  text_only.config_text = "ACTIVITIES_ITERATIONS=1;ACTIVITIES_ENABLED=sure";
  absl::StatusOr<ConfigFromEnv> bad_text = LoadConfigFromSettings(text_only, nullptr, kNow);
  REQUIRE_FALSE(bad_text.ok());
  CHECK(bad_text.status().message() ==
        "KAIROS_CONFIG_TEXT: config line 2: ACTIVITIES_ENABLED: \"sure\" is not a boolean; "
        "expected one of n y no yes f t false true 0 1");
}

TEST_CASE("KAIROS_CONFIG_TEXT from the process environment configures a trace", "[env]") {
  CleanEnv clean;
  setenv("KAIROS_CONFIG_TEXT", "ACTIVITIES_DURATION_MSECS=250", 1);
  absl::StatusOr<ConfigFromEnv> c = LoadConfigFromSettings(DecodeProcessEnv(), nullptr, kNow);
  REQUIRE(c.ok());
  REQUIRE(c->config.has_value());
  CHECK(c->config->duration_ms == 250);
  CHECK(c->origin == "KAIROS_CONFIG_TEXT");
}

}  // namespace
}  // namespace kairos
