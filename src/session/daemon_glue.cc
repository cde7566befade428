// File: daemon_glue.cc
// Layer: kairos_session. The adapter between DaemonClient and Profiler (see daemon_glue.h).
// Threading: handler methods run on the daemon client thread; Profiler is thread-safe.
#include "session/daemon_glue.h"

#include <atomic>

#include "config/daemon_config.h"
#include "config/env.h"
#include "config/output_path.h"
#include "log.h"
#include "session/profiler.h"

namespace kairos {
namespace {

class ProfilerHandler final : public TraceRequestHandler {
 public:
  // Busy is the session's state: Armed (a request waiting to open) counts.
  bool Busy() const override { return Profiler::Get().busy(); }
  absl::Status OnTraceRequest(const Config& config, uint64_t poll_raw,
                              std::string* message) override {
    absl::Status status = Profiler::Get().RequestTrace(config, ConfigSource::kDaemon, poll_raw);
    if (status.ok()) {
      // The session re-checks the path when it creates the file; this is the prediction.
      const OnDemandPath path = ResolveOnDemandPath(
          config.log_file, OnDemandAllowedDir(Env()), CurrentPathContext());
      *message = (config.IterationMode() ? "iteration window" : "time window") +
                 std::string(", trace file ") + path.path;
    }
    return status;
  }
};

// The client the root owns, for DaemonClientPolls (the root's fork hook stops it).
std::atomic<DaemonClient*> g_client{nullptr};

}  // namespace

DaemonClient* StartDaemonClientIfEnabled(int64_t poll_ms) {
  const EnvSettings& env = Env();
  if (!env.use_daemon) return nullptr;
  {
    Config base;
    base.daemon_poll_ms = poll_ms;
    static ProfilerHandler handler;
    auto client = DaemonClient::Create(DaemonClientOptionsFrom(env, base), &handler,
                                       MakeDaemonConfigPreparer());
    if (!client.ok()) {
      KAIROS_LOG_WARNING("daemon client disabled: %s",
                         std::string(client.status().message()).c_str());
      return nullptr;
    }
    if (absl::Status s = (*client)->Start(); !s.ok()) {
      KAIROS_LOG_WARNING("daemon client disabled: %s", std::string(s.message()).c_str());
      return nullptr;
    }
    KAIROS_LOG_INFO("daemon client polling %s every %lld ms as %s",
                    (env.ipc_socket_dir.empty() ? "@" + DaemonClientOptionsFrom(env, base).endpoint
                                                : env.ipc_socket_dir)
                        .c_str(),
                    static_cast<long long>(std::max<int64_t>(10, poll_ms)),
                    (*client)->client_name().c_str());
    DaemonClient* raw = client->release();  // never destroyed: owned by the root
    g_client.store(raw, std::memory_order_release);
    return raw;
  }
}

uint64_t DaemonClientPolls() {
  DaemonClient* c = g_client.load(std::memory_order_acquire);
  return c == nullptr ? 0 : c->stats().polls;
}

}  // namespace kairos
