// File: root.h
// Layer: kairos_session. The process root: the one object that owns kairos' process state:
// the session (with its TraceSources: cpu, cuda, host) and the daemon client. Created on
// first use by the C layer (session/api.h) and never destroyed: application threads may
// still call in while the process exits. What stays global is only what the hot path must
// reach without a pointer chase: the recording epoch and per-thread ring state
// (src/activity/cpu_recorder.h), the iteration counter (profiler.h), and the process-wide
// pools that CUPTI and the thread registry hand out (reset by the root's after-fork hook).
// One pthread_atfork child hook resets everything in a forked child: the thread registry,
// the CUPTI buffer pool, the iteration counter, the daemon client (stopped, not restarted),
// the flush-on-signal watcher, and the root itself (replaced by a fresh idle one with the
// environment's base config; the parent's is leaked, its mutex may be held by a thread that
// does not exist in the child).
// Threading: GetRoot() is thread-safe; the hooks run where POSIX runs them.
#ifndef KAIROS_SRC_SESSION_ROOT_H_
#define KAIROS_SRC_SESSION_ROOT_H_

#include <atomic>

#include "session/profiler.h"

namespace kairos {

class DaemonClient;

struct Root {
  Profiler session;
  DaemonClient* daemon = nullptr;  // never destroyed (its poller may run during exit)
  // Set once the framework-ops source is registered with this root's session. Per root, not a
  // process-wide once_flag: a forked child's fresh root registers its own (ChildAfterFork).
  std::atomic<bool> framework_ops_attached{false};
};

// The root, created and initialised from the environment on first call.
Root& GetRoot();

}  // namespace kairos

#endif  // KAIROS_SRC_SESSION_ROOT_H_
