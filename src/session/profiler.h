// File: profiler.h
// Layer: kairos_session. The process-root object behind the C ABI: holds the base config,
// the registered TraceSources (cpu first), the session state machine, and the controller
// thread that opens and closes recording windows and writes traces.
// Threading: every method is thread-safe. The controller thread is started lazily, at the
// first accepted trace request; a process that never profiles has no kairos thread. It
// waits on a condition variable with deadlines (no periodic wake-ups). Collection and file
// writing run on the controller thread, never on the caller's.
//
// One Profiler exists per process image: Profiler::Get() creates it on first use and it is
// never destroyed (threads may still call in while the process exits). In a forked child
// pthread_atfork replaces it with a fresh idle one (the parent's is leaked; its mutex may be
// held by a thread that does not exist in the child).
#ifndef KAIROS_SRC_SESSION_PROFILER_H_
#define KAIROS_SRC_SESSION_PROFILER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "activity/cpu_recorder.h"
#include "config/config.h"
#include "session/session_state.h"
#include "trace_source.h"

namespace kairos {

// Iteration counter shared by the step hooks; see StepHook().
extern std::atomic<int64_t> g_iteration;
// The controller asks to be woken when g_iteration reaches this value (INT64_MAX = never).
extern std::atomic<int64_t> g_step_wake_at;

class Profiler {
 public:
  // The process root; created (and initialised from the environment) on first call.
  static Profiler& Get();

  // kairos_init: parses `text` (ConfigSource::kApi) on top of the environment's config and
  // makes it the base config for kairos_start and later requests. If the text names a
  // window (a PROFILE_START_* / ACTIVITIES_ITERATIONS / ACTIVITIES_DURATION_* /
  // ACTIVITIES_WARMUP_* key), that window is scheduled too. On error the previous config
  // stays in force and the error names key, line and reason.
  absl::Status Init(std::string_view text);
  // kairos_shutdown: closes an open window (written within KAIROS_EXIT_FLUSH_TIMEOUT_MS)
  // and refuses new requests until the next Init().
  void Shutdown();

  // Synchronous session: starts recording now (pre-empting a trace that is only warming
  // up); FAILED_PRECONDITION "profiler busy" while another window records or flushes.
  // Blocks until the controller has opened the window (bounded).
  absl::Status Start();
  // Closes the synchronous (or any recording) window at this instant; the trace is written
  // on the controller thread. FAILED_PRECONDITION when nothing records.
  absl::Status Stop();
  // Ends a recording window now (cancels one still warming up), waits until its trace is
  // written, and returns the path. With no session it returns the last trace written;
  // NOT_FOUND if there is none.
  absl::StatusOr<std::string> Flush();

  // An on-demand request (daemon client thread, tests). Rejected with FAILED_PRECONDITION
  // "profiler busy" while any session is active; never queued.
  absl::Status RequestTrace(const Config& config, ConfigSource source);

  // Adds a data source to every later session, after the cpu source and the ones registered
  // before it (Collect runs in that order). Never removed. Sources registered in a parent
  // process do not survive fork(): the child gets a fresh profiler with the cpu source only.
  void RegisterTraceSource(std::unique_ptr<TraceSource> source);

  // kairos_set_metadata: a key/value copied into every later trace's top-level metadata.
  void SetMetadata(std::string key, std::string value);

  // Called from StepHook when an iteration boundary the controller waits for is reached.
  void OnStepBoundary(int64_t iteration, uint64_t raw_time);

  // atexit: closes and writes an open window within exit_flush_timeout_ms; never hangs.
  void AtExit();

  SessionState state();
  Config base_config();
  // Number of sessions finished (written, failed or cancelled); for tests.
  uint64_t completed_sessions();
  // Blocks until at least `n` sessions have finished or `timeout_ms` passed; returns whether
  // they had. For tests and tools that need to know a window closed by itself.
  bool WaitForCompletedSessions(uint64_t n, int64_t timeout_ms);

  // Attach without code change (LD_PRELOAD constructor, CUDA InitializeInjection): when the
  // environment configured a time window that starts at once (no PROFILE_START_TIME, warm-up
  // 0), blocks until that window is open (at most 10 s), so a short program's first GPU
  // work is inside it. Returns at once otherwise, and on every later call.
  void WaitForStartupWindow();

  // Replaces the root after fork (child side). Internal.
  static void ResetAfterFork();

 private:
  struct Request {
    Config config;
    ConfigSource source = ConfigSource::kApi;
    bool sync = false;
    int64_t accepted_unix_ns = 0;
    // Iteration mode, fixed when the request is accepted (an already-passed start is moved
    // to the next reachable iteration, rounded up).
    int64_t warmup_iteration = 0;
    int64_t start_iteration = 0;
    bool never_stepped = false;
    uint32_t cpu_epoch = 0;  // reserved for the step hook to enable at the warm-up boundary
  };
  struct Result {
    absl::Status status;
    std::string path;
  };

  struct Window;  // controller.cc
  enum class IterWait : uint8_t { kReached, kStopped, kCancelled, kTimedOut };

  Profiler();
  void InitFromEnvironment();
  // The built-in sources after cpu: "cuda" (CUPTI) in CUDA builds. `load_now`: resolve
  // libcupti on this thread (see CuptiSource::LoadApi).
  void RegisterBuiltinSources(bool load_now);
  void LoadEnvironmentConfig();
  absl::Status ScheduleLocked(Request request, std::unique_lock<std::mutex>& lock);
  absl::Status EnsureControllerLocked();
  // Controller thread (controller.cc). Called with `lock` held; they unlock around source
  // calls and I/O.
  void ControllerMain();
  void RunSession(std::unique_lock<std::mutex>& lock);
  void WarmUp(std::unique_lock<std::mutex>& lock, Window& w);
  void OpenWindow(std::unique_lock<std::mutex>& lock, Window& w, uint64_t raw, bool exact);
  bool WaitUntilUnix(std::unique_lock<std::mutex>& lock, int64_t target_ns);
  IterWait WaitIteration(std::unique_lock<std::mutex>& lock, int64_t target, int64_t deadline_ns,
                         bool stop_ends_wait, uint64_t* raw, bool* exact);
  bool WaitForWindowStart(std::unique_lock<std::mutex>& lock, Window& w);
  void WaitForWindowEnd(std::unique_lock<std::mutex>& lock, Window& w);
  Result CollectAndWrite(const Config& config, ConfigSource source, Window& w,
                         std::vector<std::pair<std::string, std::string>> metadata);
  void FinishSessionLocked(uint64_t seq, Result result);

  std::mutex mu_;
  std::condition_variable cv_;       // controller waits here
  std::condition_variable done_cv_;  // Start/Flush/AtExit wait here
  SessionStateMachine sm_;
  Config base_config_;
  Config env_config_;  // what the environment configured (base for Init's text)
  bool shut_down_ = false;
  bool controller_started_ = false;
  std::unique_ptr<Request> pending_;
  // Active session.
  Request active_;
  uint64_t session_seq_ = 0;      // sessions accepted so far
  uint64_t completed_seq_ = 0;    // sessions finished (written, failed or cancelled)
  uint64_t recording_seq_ = 0;    // session whose window is open now (0 = none)
  uint64_t startup_seq_ = 0;      // env window that opens at init (WaitForStartupWindow)
  bool stop_requested_ = false;
  uint64_t stop_raw_ = 0;
  bool cancel_requested_ = false;
  std::vector<std::pair<int64_t, uint64_t>> boundaries_;
  uint32_t armed_cpu_epoch_ = 0;     // enabled by OnStepBoundary at armed_iteration_
  int64_t armed_iteration_ = 0;  // (iteration, raw) seen by hooks
  Result last_result_;
  std::string last_path_;
  std::vector<std::pair<std::string, std::string>> metadata_;
  internal::CpuRecorder* cpu_ = nullptr;
  std::vector<std::unique_ptr<TraceSource>> sources_;
};

// The iteration hook behind kairos_step / kairos_optimizer_post_step: one atomic increment,
// one relaxed-cost load, plus a ring record while recording. Only when the controller
// waits for this iteration does it take the profiler mutex and wake the controller (a futex
// wake, a handful of times per trace).
void StepHook();

// True when `text` contains a line whose key schedules a window (see Profiler::Init).
bool TextNamesWindow(std::string_view text);

}  // namespace kairos

#endif  // KAIROS_SRC_SESSION_PROFILER_H_
