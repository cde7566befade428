// File: daemon_config.cc
// Layer: kairos_config. See daemon_config.h.
// Threading: stateless.
#include "config/daemon_config.h"

#include <algorithm>

#include "absl/strings/str_join.h"

namespace kairos {

DaemonConfigPreparer MakeDaemonConfigPreparer() {
  return [](std::string_view text, std::string* note) -> absl::StatusOr<Config> {
    std::vector<std::string> warnings;
    absl::StatusOr<Config> config =
        ParseConfig(text, Config{}, ParseOptions{ConfigSource::kDaemon, 0}, &warnings);
    if (config.ok() && !warnings.empty()) *note = absl::StrJoin(warnings, "; ");
    return config;
  };
}

DaemonClientOptions DaemonClientOptionsFrom(const EnvSettings& env, const Config& base) {
  DaemonClientOptions options;
  if (!env.daemon_endpoint.empty()) options.endpoint = env.daemon_endpoint;
  options.socket_dir = env.ipc_socket_dir;
  options.job_id = env.job_id;
  options.poll_ms = std::max<int64_t>(10, base.daemon_poll_ms);
  return options;
}

}  // namespace kairos
