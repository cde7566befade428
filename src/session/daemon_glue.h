// File: daemon_glue.h
// Layer: kairos_session. Connects the Dynolog daemon client (src/config/daemon_client.h) to
// the process-root SessionController: it is the client's TraceRequestHandler.
// Threading: StartDaemonClientIfEnabled is called once, by the process root (root.cc).
#ifndef KAIROS_SRC_SESSION_DAEMON_GLUE_H_
#define KAIROS_SRC_SESSION_DAEMON_GLUE_H_

#include <cstdint>
#include <functional>

namespace kairos {

// When the environment enables the daemon (KINETO_USE_DAEMON present, or
// KAIROS_USE_DAEMON=1), creates the IPC endpoint and starts the poller thread, polling every
// `poll_ms`, and returns the client (never destroyed; the root keeps it and stops it in a
// forked child). Otherwise does nothing and returns nullptr: no socket, no thread. Errors
// are logged, never fatal.
// In a forked child the parent's client is not running and is not restarted (like
// libkineto, whose loader thread does not survive fork): a data-loader worker never
// registers with the daemon and never takes a trigger slot.
// The client polls (registers) only once the process looks like a training job:
// ProcessLooksLikeTrainingJob below, or always with KAIROS_DAEMON_REGISTER=always.
// `on_telemetry_offer`: a kairos daemon serving metrics offered to collect telemetry every N
// s (docs/FLEET.md); called once, on the client's thread, with the client (already created)
// and N. Null: offers are ignored.
class DaemonClient;
using TelemetryOfferHandler = std::function<void(DaemonClient* client, int64_t interval_secs)>;
DaemonClient* StartDaemonClientIfEnabled(int64_t poll_ms, TelemetryOfferHandler on_telemetry_offer);

// The registration rule: the process stepped (kairos_step, the torch bridge's optimizer
// hook), joined an NCCL communicator, or has the CUDA driver (libcuda) loaded.
bool ProcessLooksLikeTrainingJob(int64_t iteration, bool nccl_comm, bool driver_loaded);
// The same rule on this process now (the iteration counter, NCCL's communicators, the
// loaded objects). Any thread; may take the dynamic loader's lock.
bool ProcessLooksLikeTrainingJobNow();

}  // namespace kairos

#endif  // KAIROS_SRC_SESSION_DAEMON_GLUE_H_
