// File: daemon_config.h
// Layer: kairos_config. How a daemon reply becomes a Config, and the daemon client's options
// from the environment. Kept apart from daemon_client.h so the client itself can be tested
// with a fake preparer.
// Threading: the preparer is called on the daemon client thread; it is stateless.
#ifndef KAIROS_SRC_CONFIG_DAEMON_CONFIG_H_
#define KAIROS_SRC_CONFIG_DAEMON_CONFIG_H_

#include "config/daemon_client.h"
#include "config/env.h"

namespace kairos {

// Parses the text with ParseConfig(text, Config{}, {ConfigSource::kDaemon}): like libkineto,
// an on-demand config starts from the defaults, not from the base config, so a base file
// cannot silently change what a remote request records. Any bad line rejects the whole
// config (anchor defect #9). Unknown/removed keys become `note` (one line). A config without
// REQUEST_TRACE_ID is accepted (older daemons), and the output path is NOT decided here: the
// session applies ResolveOnDemandPath when it creates the file, so the check and the
// creation happen together.
DaemonConfigPreparer MakeDaemonConfigPreparer();

// Endpoint, socket dir and job id from `env`; poll period from `base` (KAIROS_DAEMON_POLL_MS,
// default 1000 ms; values below 10 ms are raised to 10 ms).
DaemonClientOptions DaemonClientOptionsFrom(const EnvSettings& env, const Config& base);

}  // namespace kairos

#endif  // KAIROS_SRC_CONFIG_DAEMON_CONFIG_H_
