// File: root.h
// Layer: kairos_session. The process root: the one object that owns kairos' session (with
// its TraceSources: cpu, cuda, pm_sampling, host), the daemon client and telemetry; beside
// it, in the same process object, the decoded environment (ProcessEnv). Created on
// first use by the C layer (session/api.h) and never destroyed: application threads may
// still call in while the process exits. What is still process-wide outside it (the hot
// path's epoch, per-thread slot and iteration counter by design; the rest with the reason it
// is not here yet) is the table "Process state" in docs/ARCHITECTURE.md, which a test keeps
// equal to the library's writable symbols.
// The root's pthread_atfork hooks (root.cc) apply that table's fork rules: before fork()
// the NVTX registry's mutex is taken (its domains are the application's handles, so it is
// kept, not replaced); in the child the thread registry and the CUPTI buffer pool are
// replaced (the parent's kept reachable, never touched), the step state (iteration counter,
// step ring, telemetry's step slot) is reset, the forking thread's pending NCCL operations
// are dropped, the daemon client is stopped (not restarted), the flush-on-signal watcher is
// marked absent, the decoded environment (ProcessEnv) is kept (the child's environment is
// the parent's), and the root itself (with its session's window clock anchors, its PM
// sampling API and its NCCL tallies) is replaced by a fresh idle one with the environment's
// base config and the parent's trace base time (the parent's root is leaked: its mutex may
// be held by a thread that does not exist in the child).
// Threading: GetRoot() and ProcessEnv() are thread-safe; the hooks run where POSIX runs them.
#ifndef KAIROS_SRC_SESSION_ROOT_H_
#define KAIROS_SRC_SESSION_ROOT_H_

#include <atomic>
#include <memory>
#include <mutex>

#include "activity/nccl_collectives.h"
#include "session/controller.h"

namespace kairos {

class DaemonClient;
struct EnvSettings;
class Telemetry;
namespace internal {
class CuptiSource;
struct PmProcessApi;
}

struct Root {
  SessionController session;
  DaemonClient* daemon = nullptr;  // never destroyed (its poller may run during exit)
  // Always-on telemetry (KAIROS_TELEMETRY_INTERVAL_SECS); idle unless the base config at
  // process start turns it on. Never destroyed (its writer may run during exit).
  Telemetry* telemetry = nullptr;
  // The session's CUPTI source (owned by `session`; CUDA builds, else nullptr), for
  // telemetry's kernel and copy totals.
  internal::CuptiSource* cuda_source = nullptr;
  // The PM sampling API (counters/pm_cupti.h; CUDA builds, else nullptr): loaded once per
  // root, shared by the session's pm_sampling source and telemetry so every PM call is
  // serialised. A forked child's fresh root has its own.
  std::shared_ptr<internal::PmProcessApi> pm_api;
  // NCCL's profiler plugin tallies (communicators, operations, those no launch took, the
  // largest communicator): every communicator initialised through this root counts here. A
  // forked child's fresh root starts from zero.
  internal::NcclTallies nccl;
  // Set once the framework-ops source is registered with this root's session. Per root, not a
  // process-wide once_flag: a forked child's fresh root registers its own (ChildAfterFork).
  std::atomic<bool> framework_ops_attached{false};
  // The NVTX domain filter is applied once, at the first NVTX attach (NVTX initialises its
  // injection once per process; a forked child's fresh root is never attached again).
  std::once_flag nvtx_filter_set;
  // The Python tracer's window observer (kairos_py_attach), or nullptr. Set once per root
  // with the python-stacks source; a forked child's fresh root gets the same one
  // (ChildAfterFork: the extension's code is mapped in the child too).
  std::atomic<void (*)(uint32_t, void*)> python_observer{nullptr};
  std::atomic<void*> python_observer_ctx{nullptr};
  // In a forked child, the parent's root this one replaced (ChildAfterFork): never touched
  // again (its mutexes may be held by threads that do not exist here), only kept reachable
  // so leak checkers in the child stay quiet. A chain over nested forks.
  const Root* abandoned_parent = nullptr;
};

// The root, created and initialised from the environment on first call.
Root& GetRoot();

// The process environment (config/env.h DecodeProcessEnv), decoded on the first call and
// never re-read, so every component sees one consistent view; the layers below the session
// get the fields they need from it as parameters. Held beside the root pointer, not in Root:
// it is read before the root exists (GetRoot builds the root from it; the load constructor
// and NCCL's plugin init read it to stay inert without creating a root), so this call never
// creates the root. Thread-safe, lock-free (threads racing the first call each decode; the
// first to publish wins). The reference stays valid for the life of the process; a forked
// child keeps it (fork() does not change the environment).
const EnvSettings& ProcessEnv();

}  // namespace kairos

#endif  // KAIROS_SRC_SESSION_ROOT_H_
