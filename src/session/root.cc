// File: root.cc — see root.h. Creation of the process root, its built-in sources, the one
// after-fork hook, the exit hook and the opt-in flush on SIGTERM/SIGINT.
// Layer: kairos_session. Threading: GetRoot is thread-safe (call_once, then an acquire
// load); the fork hook runs in the child with only the forking thread alive; the signal
// handler does only async-signal-safe work (write, sigaction, raise) and waits for nothing.
#include "session/root.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>

#include "activity/cpu_recorder.h"
#include "activity/nccl_collectives.h"
#include "activity/nvtx_registry.h"
#include "config/daemon_client.h"
#include "util/clock.h"
#include "config/env.h"
#include "counters/host_sampler.h"
#include "counters/pm_source.h"
#include "counters/telemetry.h"
#include "config/output_path.h"
#include "session/trace_identity.h"
#ifdef KAIROS_HAVE_CUPTI
#include "counters/pm_cupti.h"
#endif
#include "util/log.h"
#include "session/api.h"
#include "session/daemon_glue.h"
#ifdef KAIROS_HAVE_CUPTI
#include "activity/cuda_presence.h"
#include "activity/cupti_devices.h"
#include "activity/cupti_source.h"
#endif
#include "util/dcheck.h"
#include "util/signal_mask.h"
#include "util/thread_name.h"

namespace kairos {
namespace {

void AtExitHandler();

// exit() runs atexit handlers newest first, and libraries loaded later register their static
// destructors later: libcupti (dlopen'ed at a window's warm-up) and libnvperf_host (loaded by
// the first PM sampler) tear down before a handler registered when kairos loaded. On an H100
// a window closing as the job exited called cuptiProfilerHostDeinitialize after that teardown
// and glibc aborted on a double free. So the exit flush is registered again once each is
// loaded, and runs first; the handler is idempotent (a second run finds nothing to do).
void RegisterExitFlushAgain() { std::atexit(AtExitHandler); }

// The "cpu" source as the session drives it: the recorder plus the early-start hooks that
// iteration windows use (the step hook switches recording on at the warm-up boundary).
class CpuSource final : public internal::CpuRecorder {
 public:
  void PrepareEarlyStart(const Config& config) override {
    const uint32_t e = Prepare(config);
    prepared_.store(e, std::memory_order_relaxed);
    armed_.store(e, std::memory_order_release);
  }
  // Switches the prepared epoch on once; later calls (every boundary while Armed, and the
  // runner after warm-up) find nothing armed and change nothing. The recorder's own epoch()
  // must not be used here: until StartWarmup runs it is still the previous session's.
  void StartEarly() override {
    const uint32_t e = armed_.exchange(0, std::memory_order_acq_rel);
    if (e != 0) internal::SwitchRecordingOn(e);
  }
  void CancelEarlyStart() override {
    armed_.store(0, std::memory_order_relaxed);
    const uint32_t e = prepared_.exchange(0, std::memory_order_acq_rel);
    if (e != 0) internal::DisableEpoch(e);
  }
  void SetWindowEdges(const WindowEdges& edges) override {
    if (edges.clock != nullptr)
      SetWindow(edges.start_raw, edges.end_raw, *edges.clock, edges.start_is_step_boundary);
  }

 private:
  // Written under the session lock, read by the runner without it: atomics.
  std::atomic<uint32_t> prepared_{0};  // epoch reserved by the last iteration request
  std::atomic<uint32_t> armed_{0};     // same, until StartEarly switched it on
};

#ifdef KAIROS_HAVE_CUPTI
// The "cuda" source as the session drives it: CUPTI, plus when it was ready. Its records come
// only once every kind is on, which is when StartWarmup returns (the first enable of a process
// can take long on a real GPU); an iteration window that began before then moves its start
// (TraceSource::ReadyRaw). Nothing to miss when CUPTI is not on (no CUDA in the process, or
// CUPTI unavailable: the trace says why).
class CudaSource final : public internal::CuptiSource {
 public:
  using CuptiSource::CuptiSource;
  absl::Status StartWarmup(const Config& config) override {
    absl::Status s = CuptiSource::StartWarmup(config);
    ready_raw_ = s.ok() && active() ? ReadRawClock() : 0;
    return s;
  }
  void Reset() override {
    ready_raw_ = 0;
    CuptiSource::Reset();
  }
  uint64_t ReadyRaw() const override { return ready_raw_; }
  bool ReportsLateStart() const override { return true; }

 private:
  uint64_t ready_raw_ = 0;  // runner thread only
};
#endif

// In Collect order: cpu (ranges, marks, steps, NVTX), cuda (CUPTI, CUDA builds), pm_sampling
// (GPU counters), host
// (/proc sampler). `load_cupti_now`: resolve libcupti on this thread (a window opens at once).
void RegisterBuiltinSources(Root& root, bool load_cupti_now) {
  SessionController& session = root.session;
  session.RegisterTraceSource(std::make_unique<CpuSource>());
#ifdef KAIROS_HAVE_CUPTI
  const EnvSettings& env = ProcessEnv();
  internal::CuptiSourceOptions options;
  options.library_path = env.cupti_library;
  options.cuda_injected = env.cuda_injected;
  options.current_range_id = internal::CurrentCpuRangeId;
  options.window_anchors = &session.window_anchors();
  options.nccl_tallies = &root.nccl;
  options.after_library_loaded = RegisterExitFlushAgain;
  auto cuda = std::make_unique<CudaSource>(std::move(options));
  root.cuda_source = cuda.get();  // owned by the session, which lives as long as the root
  // A CPU-only process never loads CUPTI (unless KAIROS_CUPTI_LIBRARY names one).
  if (load_cupti_now &&
      (!env.cupti_library.empty() || internal::ProcessUsesCuda(env.cuda_injected)))
    cuda->LoadApi();
  session.RegisterTraceSource(std::move(cuda));
#else
  (void)load_cupti_now;
#endif
  // GPU hardware counters (CUPTI PM sampling), after the CUPTI source so its Collect sees
  // the kernels it attributes samples to; idle unless a session asks for counters.
  {
    PmSourceOptions pm;
    pm.cupti_library = ProcessEnv().cupti_library;
    pm.telemetry = root.telemetry;
#ifdef KAIROS_HAVE_CUPTI
    pm.platform = [lib = pm.cupti_library, api = root.pm_api] {
      return internal::CreateCuptiPmPlatform(lib, api);
    };
#endif
    session.RegisterTraceSource(std::make_unique<PmSamplingSource>(std::move(pm)));
  }
  // Host metrics (/proc) on the timeline; idle unless a session runs with
  // KAIROS_HOST_METRICS_INTERVAL_MS > 0.
  session.RegisterTraceSource(std::make_unique<HostSampler>());
}

// ---- Flush on SIGTERM/SIGINT (KAIROS_FLUSH_ON_SIGNAL=1) ----
// The handler takes no lock and waits for nothing: the interrupted thread may hold a lock the
// flush needs (the session mutex in kairos_set_metadata, a name table in kairos_range_push),
// so it only wakes a watcher thread through a pipe and returns, and the interrupted code
// runs on and releases it. The watcher closes and writes the window (within the exit bound),
// then hands the signal, with its original siginfo, to the disposition installed before
// kairos' (the default action, or the program's handler). A second SIGTERM/SIGINT while the
// watcher flushes goes to that disposition at once.
// Process-wide because a signal handler has no argument to carry it and must not take the
// root's locks; one object, reset by the fork hook (the watcher thread is not in a child).
struct FlushOnSignal {
  int wake[2] = {-1, -1};  // handler -> watcher
  std::atomic<bool> watcher_alive{false};
  std::atomic<bool> in_progress{false};
  struct sigaction prev_term = {}, prev_int = {};  // the dispositions installed before kairos'
  siginfo_t info = {};  // the signal being flushed for (written by the handler before the wake)
};

// What this file holds process-wide, in one object: the root pointer the rest hangs from
// (created once, through `created`; replaced, not re-created, by the fork hook), the decoded
// environment (ProcessEnv; published once, kept by the fork hook) and the signal flush's
// state (reset by the fork hook). Every member is constant-initialised, so a library
// constructor that runs before this file's dynamic initialisers still finds it valid.
struct ProcessRoot {
  std::atomic<Root*> current{nullptr};
  std::once_flag created;
  // nullptr until the first ProcessEnv(); then never replaced nor freed (references to it
  // are held across the process's life).
  std::atomic<const EnvSettings*> env{nullptr};
  FlushOnSignal signal;
};
ProcessRoot g_root;

void ChainToPrevious(int sig, siginfo_t* info, void* ctx) {
  const struct sigaction& prev = sig == SIGTERM ? g_root.signal.prev_term : g_root.signal.prev_int;
  sigaction(sig, &prev, nullptr);  // later deliveries go straight to it
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction != nullptr) prev.sa_sigaction(sig, info, ctx);
    return;
  }
  if (prev.sa_handler == SIG_IGN) return;
  if (prev.sa_handler == SIG_DFL) {
    raise(sig);  // blocked while we run; the default action follows our return
    return;
  }
  prev.sa_handler(sig);
}

void FlushSignalHandler(int sig, siginfo_t* info, void* ctx) {
  const int saved_errno = errno;
  if (g_root.signal.watcher_alive.load() && !g_root.signal.in_progress.exchange(true)) {
    if (info != nullptr) {
      g_root.signal.info = *info;
    } else {
      g_root.signal.info = siginfo_t{};
      g_root.signal.info.si_signo = sig;
      g_root.signal.info.si_code = SI_USER;
    }
    const char byte = static_cast<char>(sig);
    if (write(g_root.signal.wake[1], &byte, 1) == 1) {
      errno = saved_errno;
      return;  // the watcher delivers the signal to the previous disposition after the flush
    }
  }
  errno = saved_errno;
  ChainToPrevious(sig, info, ctx);
}

// Watcher side: gives `sig` to the disposition installed before kairos', as if it arrived
// now. The watcher blocks SIGTERM/SIGINT, so the kernel delivers it to a thread of the
// program; re-queued with the original siginfo (a process may queue any si_code to itself),
// so the program's handler sees the real sender.
void RedeliverToPrevious(int sig) {
  const struct sigaction& prev = sig == SIGTERM ? g_root.signal.prev_term : g_root.signal.prev_int;
  sigaction(sig, &prev, nullptr);
  if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler == SIG_IGN) return;
  siginfo_t info = g_root.signal.info;
  info.si_signo = sig;
  if (syscall(SYS_rt_sigqueueinfo, getpid(), sig, &info) != 0) kill(getpid(), sig);
}

void SignalWatcherMain() {
  NameThisThread("signal");
  for (;;) {
    char byte = 0;
    const ssize_t n = read(g_root.signal.wake[0], &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    KAIROS_LOG_INFO("signal %d: closing and writing the open trace window", byte);
    GetRoot().session.AtExit();
    RedeliverToPrevious(byte);
  }
}

void InstallFlushOnSignal() {
  if (pipe2(g_root.signal.wake, O_CLOEXEC) != 0) return;
  // The watcher must never receive the signals it hands on (they would wake it again).
  try {
    const JobSignalsBlocked blocked;
    std::thread(SignalWatcherMain).detach();
  } catch (...) {
    return;
  }
  g_root.signal.watcher_alive.store(true);
  struct sigaction sa = {};
  sa.sa_sigaction = FlushSignalHandler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, &g_root.signal.prev_term);
  sigaction(SIGINT, &sa, &g_root.signal.prev_int);
  KAIROS_LOG_VERBOSE("KAIROS_FLUSH_ON_SIGNAL: SIGTERM/SIGINT flush an open window");
}

// KAIROS_TELEMETRY_INTERVAL_SECS > 0 in the base config (environment or config file at
// process start; a daemon request cannot set it): start the telemetry writer (its thread
// blocks SIGTERM/SIGINT like every kairos thread; the caller set the mask).
// `interval_secs` > 0; `with_file`: write KAIROS_TELEMETRY_FILE (false: the daemon's sink only).
void StartTelemetry(Root& root, const Config& config, int64_t interval_secs, bool with_file) {
  const EnvSettings& env = ProcessEnv();
  const PathContext ctx = CurrentPathContext(env.rank);
  TelemetryOptions o;
  o.interval_ns = interval_secs * 1000000000LL;
  // A coarse period: the aggregate needs means, not shapes; at most one sample per second.
  o.sample_interval_ns = std::min<int64_t>(o.interval_ns / 10, 1000000000LL);
  std::string path = config.telemetry_file.empty()
                         ? DefaultTraceDir(env) + "/kairos_telemetry_{host}_{pid}.jsonl"
                         : config.telemetry_file;
  if (with_file) o.path = ExpandPathTemplate(path, ctx);
  o.max_file_bytes = static_cast<uint64_t>(config.telemetry_max_mb) << 20;
  o.host = ReadHostName();
  o.pid = ctx.pid;
  if (env.job_id != 0) o.job_id = env.job_id;
  if (env.rank >= 0) o.rank = env.rank;
  if (config.pm_sampling_device_id >= 0) o.device = static_cast<uint32_t>(config.pm_sampling_device_id);
#ifdef KAIROS_HAVE_CUPTI
  // Only a process that uses CUDA samples counters (a CPU-only job never loads CUPTI),
  // decided when telemetry begins: a Python job imports torch, and so CUDA, after kairos
  // initialised.
  {
    const std::string lib = env.cupti_library;
    const bool injected = env.cuda_injected;
    o.platform = [lib, injected, api = root.pm_api]() -> std::unique_ptr<PmPlatform> {
      if (lib.empty() && !internal::ProcessUsesCuda(injected)) return nullptr;
      return internal::CreateCuptiPmPlatform(lib, api);
    };
  }
#endif
  // The daemon client's rule (daemon_glue.h): telemetry begins once the process stepped,
  // joined an NCCL communicator or loaded the CUDA driver; launchers and the shell tools a
  // job's scripts run under LD_PRELOAD never write a file or a warning.
  o.ready = ProcessLooksLikeTrainingJobNow;
  o.iterations = [] { return g_steps.iteration.load(std::memory_order_relaxed); };
  o.step_slot = &g_steps.telemetry;
#ifdef KAIROS_HAVE_CUPTI
  // Kernels and copies from CUPTI activity, in and between windows (kernel and memcpy
  // records only).
  if (internal::CuptiSource* cuda = root.cuda_source) {
    o.activity_start = [cuda](std::string* why) { return cuda->StartActivityTotals(why); };
    o.activity_take = [cuda](uint32_t device, int64_t end_ns) {
      const internal::CuptiSource::ActivityTotals t = cuda->TakeActivityTotals(device, end_ns);
      return TelemetryActivity{t.kernels, t.memcpy_bytes, t.busy_ns, t.complete};
    };
  }
  // Device memory in use, on the telemetry thread: only GPUs whose primary context the
  // application already made (no context is created, nothing is allocated); a process
  // without the driver loaded gets null fields (RTLD_NOLOAD).
  o.device_memory = [] { return internal::QueryMemoryInUse(); };
#endif
  absl::Status st = root.telemetry->Start(std::move(o));
  if (!st.ok()) KAIROS_LOG_WARNING("%s", std::string(st.message()).c_str());
}

void StartTelemetryIfEnabled(Root& root) {
  const Config config = root.session.base_config();
  if (config.telemetry_interval_secs <= 0) return;
  StartTelemetry(root, config, config.telemetry_interval_secs, /*with_file=*/true);
}

// A `kairos daemon --metrics-port` offered to collect telemetry (docs/FLEET.md): on the daemon
// client's thread, once. KAIROS_TELEMETRY_INTERVAL_SECS=0 keeps it off; N > 0 (telemetry
// already writing its file every N s) also sends each interval's lines to the daemon; unset,
// telemetry starts at the daemon's interval with no file. The telemetry thread inherits the
// client thread's signal mask (SIGTERM/SIGINT blocked).
void OnDaemonTelemetryOffer(Root& root, DaemonClient* client, int64_t interval_secs) {
  const Config config = root.session.base_config();
  if (client == nullptr || config.telemetry_interval_secs == 0) return;
  root.telemetry->SetSink([client](const std::string& lines) { return client->SendTelemetry(lines); });
  if (config.telemetry_interval_secs > 0) return;
  KAIROS_LOG_INFO("telemetry: sending lines every %lld s to the daemon (it serves metrics)",
                  static_cast<long long>(interval_secs));
  StartTelemetry(root, config, interval_secs, /*with_file=*/false);
}

Root* CreateRoot(bool after_fork) {
  auto* root = new Root;  // never destroyed: see root.h
  std::vector<std::string> warnings;
  auto loaded = LoadConfigFromSettings(ProcessEnv(), &warnings);
  if (!after_fork)
    for (const std::string& w : warnings) KAIROS_LOG_WARNING("%s", w.c_str());
  const bool opens_now = !after_fork && loaded.ok() && loaded->config.has_value() &&
                         loaded->config->activities_enabled && loaded->info.names_window;
  root->telemetry = new Telemetry();
#ifdef KAIROS_HAVE_CUPTI
  root->pm_api = internal::NewPmCuptiApi(RegisterExitFlushAgain);
#endif
  root->session.SetNcclTallies(&root->nccl);  // before any request: the trace identity's
  RegisterBuiltinSources(*root, opens_now);
  // A forked child starts idle: it keeps the base config but not the parent's window.
  root->session.InstallEnvironmentConfig(loaded, !after_fork);
  return root;
}

// Parent side, before fork(): the NVTX registry cannot be replaced in the child (the
// application holds its domain handles), so fork() waits until no thread mutates it.
void BeforeFork() { internal::NvtxRegistryLockBeforeFork(); }
void ParentAfterFork() { internal::NvtxRegistryUnlockAfterFork(); }

// The one after-fork hook (child side): see root.h. Every piece of process state in the
// table of docs/ARCHITECTURE.md ("Process state") has its rule here or is named there as
// needing none.
void ChildAfterFork() {
  internal::NvtxRegistryUnlockAfterFork();
  internal::CpuRecorderAfterForkChild();
#ifdef KAIROS_HAVE_CUPTI
  internal::ReplaceProcessCuptiPoolAfterFork();
#endif
  internal::NcclAfterForkChild();
  StepStateAfterForkChild();  // also unhooks the parent's kairos-telem ring (no thread here)
  // The watcher thread does not exist here: the handler chains at once.
  g_root.signal.watcher_alive.store(false);
  g_root.signal.in_progress.store(false);
  Root* old = g_root.current.load(std::memory_order_relaxed);
  if (old == nullptr) return;
  // The poller thread does not exist in the child; drop the inherited socket (bound to the
  // parent's name) so the child never reads the parent's replies. Not restarted.
  if (old->daemon != nullptr) old->daemon->Stop();
  const bool framework_ops = old->framework_ops_attached.load(std::memory_order_relaxed);
  auto* const python_observer = old->python_observer.load(std::memory_order_relaxed);
  void* const python_ctx = old->python_observer_ctx.load(std::memory_order_relaxed);
  Root* const fresh = CreateRoot(true);
  fresh->abandoned_parent = old;
  fresh->session.InheritProcessBaseNs(old->session.process_base_ns());
  g_root.current.store(fresh, std::memory_order_release);
  // The Python tracer attached in the parent keeps its observer in the child.
  if (python_observer != nullptr) api::AttachPythonTracer(python_observer, python_ctx);
  // A framework bridge attached in the parent (torch imported before DataLoader workers fork)
  // does not attach again: the child's session gets the same framework-ops source.
  if (framework_ops) api::AttachFrameworkOps();
}

void AtExitHandler() {
  Root* r = g_root.current.load(std::memory_order_acquire);
  if (r != nullptr) r->session.AtExit();
  // After the window's close (which fed telemetry its samples): the last, partial interval.
  if (r != nullptr && r->telemetry != nullptr) r->telemetry->Finish();
  // The client is never destroyed (its thread may be mid-request); its socket file in
  // KINETO_IPC_SOCKET_DIR would otherwise outlive every process that preloads kairos.
  if (r != nullptr && r->daemon != nullptr) r->daemon->RemoveSocketFile();
}

}  // namespace

Root& GetRoot() {
  Root* r = g_root.current.load(std::memory_order_acquire);
  if (r != nullptr) return *r;
  std::call_once(g_root.created, [] {
    const EnvSettings& env = ProcessEnv();
    if (env.log_level.has_value()) SetLogLevel(*env.log_level);
    for (const std::string& w : env.warnings) KAIROS_LOG_WARNING("%s", w.c_str());
    Root* fresh = CreateRoot(false);
    g_root.current.store(fresh, std::memory_order_release);
    pthread_atfork(BeforeFork, ParentAfterFork, ChildAfterFork);
    std::atexit(AtExitHandler);
    // The daemon client (its own thread) starts only when the environment asks for it. Its
    // poller, like every kairos thread, never takes the job's SIGTERM/SIGINT.
    {
      const JobSignalsBlocked blocked;
      fresh->daemon = StartDaemonClientIfEnabled(
          fresh->session.base_config().daemon_poll_ms,
          [fresh](DaemonClient* client, int64_t secs) { OnDaemonTelemetryOffer(*fresh, client, secs); });
      StartTelemetryIfEnabled(*fresh);  // its thread inherits the mask too
    }
    if (env.flush_on_signal) InstallFlushOnSignal();
  });
  r = g_root.current.load(std::memory_order_acquire);
  KAIROS_DCHECK(r != nullptr, "the root exists once its creation ran");
  return *r;
}

const EnvSettings& ProcessEnv() {
  const EnvSettings* e = g_root.env.load(std::memory_order_acquire);
  if (e != nullptr) return *e;
  // First call: decode and publish. Threads that race here each decode the same environment;
  // the first to publish wins and the others discard theirs, so every caller sees one value.
  auto* mine = new EnvSettings(DecodeProcessEnv());  // never freed: see ProcessRoot::env
  const EnvSettings* expected = nullptr;
  if (g_root.env.compare_exchange_strong(expected, mine, std::memory_order_acq_rel)) return *mine;
  delete mine;
  return *expected;
}

SessionController& SessionController::Get() { return GetRoot().session; }

}  // namespace kairos
