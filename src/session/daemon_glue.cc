// File: daemon_glue.cc
// Layer: kairos_session. The adapter between DaemonClient and SessionController (see
// daemon_glue.h).
// Threading: handler methods run on the daemon client thread; SessionController is
// thread-safe.
#include "session/daemon_glue.h"

#include <link.h>

#include <atomic>
#include <cstring>
#include <memory>

#include "activity/nccl_collectives.h"
#include "config/daemon_config.h"
#include "config/env.h"
#include "config/output_path.h"
#include "session/controller.h"
#include "session/root.h"
#include "util/log.h"

namespace kairos {
namespace {

class ControllerHandler final : public TraceRequestHandler {
 public:
  // Busy is the session's state: Armed (a request waiting to open) counts.
  bool Busy() const override { return SessionController::Get().busy(); }
  absl::Status OnTraceRequest(const Config& config, uint64_t poll_raw,
                              std::string* message) override {
    absl::Status status =
        SessionController::Get().RequestTrace(config, ConfigSource::kDaemon, poll_raw);
    if (status.ok()) {
      // The session re-checks the path when it creates the file; this is the prediction.
      const EnvSettings& env = ProcessEnv();
      const OnDemandPath path = ResolveOnDemandPath(
          config.log_file, OnDemandAllowedDir(env), CurrentPathContext(env.rank));
      *message = (config.IterationMode() ? "iteration window" : "time window") +
                 std::string(", trace file ") + path.path;
    }
    return status;
  }
};

bool LoadedDriverLibrary() {
  bool found = false;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const char* name = info->dlpi_name;
        if (name == nullptr) return 0;
        const char* base = strrchr(name, '/');
        base = base != nullptr ? base + 1 : name;
        if (strncmp(base, "libcuda.so", 10) == 0) {
          *static_cast<bool*>(out) = true;
          return 1;
        }
        return 0;
      },
      &found);
  return found;
}

}  // namespace

bool ProcessLooksLikeTrainingJob(int64_t iteration, bool nccl_comm, bool driver_loaded) {
  return iteration > 0 || nccl_comm || driver_loaded;
}

bool ProcessLooksLikeTrainingJobNow() {
  int32_t rank = -1, size = 0;
  return ProcessLooksLikeTrainingJob(g_steps.iteration.load(std::memory_order_relaxed),
                                     internal::NcclLargestComm(GetRoot().nccl, &rank, &size),
                                     LoadedDriverLibrary());
}

DaemonClient* StartDaemonClientIfEnabled(int64_t poll_ms, TelemetryOfferHandler on_telemetry_offer) {
  const EnvSettings& env = ProcessEnv();
  if (!env.use_daemon) return nullptr;
  {
    Config base;
    base.daemon_poll_ms = poll_ms;
    // Lives as long as the client that calls it: never destroyed once the client runs.
    auto handler = std::make_unique<ControllerHandler>();
    DaemonClientOptions options = DaemonClientOptionsFrom(env, base);
    // Register once the process shows it trains: it stepped, joined an NCCL communicator or
    // initialised CUDA (the runtime loads the driver, libcuda, at its first call; a launcher
    // that imports torch maps libcudart but not the driver). A few microseconds a tick
    // until then; never again after.
    if (!env.daemon_register_always) options.ready = ProcessLooksLikeTrainingJobNow;
    // The offer arrives on the client's thread, which starts after the client exists: the
    // slot is filled before Start() (never destroyed, like the handler).
    auto* client_slot = new DaemonClient*(nullptr);
    if (on_telemetry_offer) {
      options.on_telemetry_offer = [client_slot, cb = std::move(on_telemetry_offer)](int64_t secs) {
        cb(*client_slot, secs);
      };
    }
    auto client = DaemonClient::Create(std::move(options), handler.get(), MakeDaemonConfigPreparer());
    if (!client.ok()) {
      KAIROS_LOG_WARNING("daemon client disabled: %s",
                         std::string(client.status().message()).c_str());
      return nullptr;
    }
    *client_slot = client->get();
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
    handler.release();  // the client's for the life of the process
    return client->release();  // never destroyed: owned by the root
  }
}

}  // namespace kairos
