// File: controller.h
// Layer: kairos_session. SessionController: it carries out what the session's Scheduler
// (scheduler.h: the only session state, and all its policy) decides. The request side (init,
// requests, synchronous start/stop, flush, exit) feeds the Scheduler events; the session
// runner (its controller thread, runner.cc) performs the actions it hands out: warms up, opens
// and closes the TraceSources and hands the finished window to the trace assembler
// (trace_assembler.h), which writes the trace and its summary. (Named Profiler until #24.)
// Ownership: the process root (root.h) creates the one SessionController of the process image
// and owns it, with its sources; it is never destroyed (threads may call in while the process
// exits). A forked child gets a fresh one from the root's single after-fork hook.
// Threading: every method is thread-safe (one mutex, mu_). The runner thread is started at
// the first accepted request; a process that never profiles has no kairos thread. It waits
// on a condition variable with deadlines (no periodic wake-ups). Collection and file writing
// run on the runner thread, never on the caller's. Every wait of a caller is bounded; the
// bounds are the constants below (documented per C function in bindings/c/kairos.h).
#ifndef KAIROS_SRC_SESSION_CONTROLLER_H_
#define KAIROS_SRC_SESSION_CONTROLLER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "config/config.h"
#include "config/env.h"
#include "model/trace_source.h"
#include "session/scheduler.h"
#include "util/clock.h"

namespace kairos {

struct TelemetryStepRing;  // counters/telemetry.h
namespace internal {
struct NcclTallies;  // activity/nccl_collectives.h
}  // namespace internal

// The step hook's process state, in one object (a hot-path exception of the state table in
// docs/ARCHITECTURE.md: the application's kairos_step reaches it without a root). The hook
// does one fetch_add of `iteration`, one load of `wake_at` and of `telemetry`, and writes
// its time into `ring`.
struct StepState {
  // Raw times of the last kRing step boundaries, slot = iteration % kRing. The slot's
  // iteration is stored after its time (release), so a reader that finds the iteration it
  // expects also finds that boundary's time; a slot not yet written for the newest boundary
  // reads as "just now". 64 boundaries cover any request handled within 64 steps of its poll.
  static constexpr int64_t kRing = 64;
  struct Slot {
    std::atomic<int64_t> iteration{-1};
    std::atomic<uint64_t> raw{0};
  };
  // Iteration counter shared by the step hooks; see StepHook().
  std::atomic<int64_t> iteration{0};
  // The runner asks to be woken when `iteration` reaches this value (INT64_MAX = never).
  std::atomic<int64_t> wake_at{std::numeric_limits<int64_t>::max()};
  // The running telemetry writer's step ring (the root's Telemetry publishes it here through
  // TelemetryOptions::step_slot); nullptr while none runs: one load per step, no ring.
  std::atomic<TelemetryStepRing*> telemetry{nullptr};
  Slot ring[kRing];
};
extern StepState g_steps;

// The iteration that was current at raw clock time `raw` (the number of step boundaries at or
// before it), from the raw times of the last 64 boundaries that StepHook keeps; the oldest it
// knows when `raw` is older than that. Any thread; lock-free.
int64_t IterationAtRaw(uint64_t raw);
// The raw time of step boundary `iteration` from the same ring; 0 when the ring does not hold
// it (more than 64 boundaries old, or counted in g_steps.iteration but its time not yet written:
// StepHook writes it just after the increment). Any thread; lock-free.
uint64_t StepBoundaryRaw(int64_t iteration);
// Child side of fork() (the root's hook): the iteration counter restarts at 0, no wake-up is
// armed, the ring forgets the parent's boundaries (the child's iteration n is not the
// parent's, so a slot left from the parent must not answer for it), and steps are no longer
// stamped into the parent's telemetry writer's ring (its thread does not exist here).
void StepStateAfterForkChild();

// Upper bounds of the callers' waits (bindings/c/kairos.h repeats them per function).
inline constexpr int64_t kStartWaitMs = 10000;  // kairos_start: the window opens
inline constexpr int64_t kFlushWaitMs = 60000;  // kairos_flush: the trace is written
// kairos_shutdown / exit / KAIROS_FLUSH_ON_SIGNAL: KAIROS_EXIT_FLUSH_TIMEOUT_MS of the base
// config (file, environment or kairos_init; a daemon request cannot change it), never more
// than this.
// kairos_set_metadata's bounds: every trace carries the metadata, and a job that sets a key
// per step (or a value per rank) must not grow it without end.
inline constexpr size_t kMaxMetadataKeys = 1024;
inline constexpr size_t kMaxMetadataKeyBytes = 256;
inline constexpr size_t kMaxMetadataValueBytes = 64 * 1024;
inline constexpr int64_t kMaxExitFlushMs = 60000;

class SessionController {
 public:
  // The process root's session (root.h creates it, and initialises it from the environment,
  // on first call).
  static SessionController& Get();

  SessionController();
  // Ends the session as Shutdown() does (a window still open is closed and its trace written,
  // within the exit bound), then stops and joins the runner thread; the sources go with it.
  // The process root's session is never destroyed (application threads may call in while
  // the process exits); a session a test creates is, and leaves no thread behind.
  ~SessionController();
  SessionController(const SessionController&) = delete;
  SessionController& operator=(const SessionController&) = delete;

  // Called by the root after it registered the sources: makes the environment's config the
  // base config and, when `schedule` and it names a window, schedules that window.
  void InstallEnvironmentConfig(const absl::StatusOr<ConfigFromEnv>& loaded, bool schedule);

  // kairos_init: parses `text` (ConfigSource::kApi) on top of the environment's config and
  // makes it the base config for kairos_start and later requests. If the text names a
  // window (ConfigParseInfo::names_window), that window is scheduled too. On any error,
  // "profiler busy" included, the previous config stays in force and the error names key,
  // line and reason. Re-opens a shut-down profiler. `values` (kairos_init_values) are applied
  // after the text, each taken as data (ParseConfig's ConfigValue).
  absl::Status Init(std::string_view text, const std::vector<ConfigValue>& values = {});
  // kairos_shutdown: like AtExit, then refuses new requests until the next Init().
  void Shutdown();

  // Synchronous session: starts recording now (cancelling a request that has not opened
  // its window yet); FAILED_PRECONDITION "profiler busy" while another window records or
  // flushes. Blocks until the window is open, at most kStartWaitMs.
  absl::Status Start();
  // Closes the recording window at this instant; the trace is written on the runner thread.
  // FAILED_PRECONDITION when nothing records. Does not block.
  absl::Status Stop();
  // Ends a recording window now (cancels one not open yet), waits until its trace is written
  // (at most kFlushWaitMs), and returns the path. With no session it returns the outcome of
  // the most recent trace: its path, or its error (a failed write, nothing recorded, a
  // cancel); NOT_FOUND if there was none, or when the flush cancelled a window that had not
  // opened.
  absl::StatusOr<std::string> Flush();

  // An on-demand request (daemon client thread, tests). Rejected with FAILED_PRECONDITION
  // "profiler busy" while any session is active, Armed included; never queued.
  // `reference_raw` (ReadRawClock time, 0 = now) is the instant whose iteration an iteration
  // window is planned from (PROFILE_START_ITERATION_ROUNDUP rounds up from it): the daemon
  // client passes the poll tick that every rank of a job shares; KAIROS_REQUEST_TIME_MS (the
  // daemon's stamp), when set and within the last minute, replaces it. If the window planned
  // that way would have begun already (the request was handled late), it is planned from the
  // current iteration.
  absl::Status RequestTrace(const Config& config, ConfigSource source, uint64_t reference_raw = 0);

  // Adds a data source to every later session, after the ones registered before it (Collect
  // runs in that order). Never removed.
  void RegisterTraceSource(std::unique_ptr<TraceSource> source);
  // Registers `source` and lets it join a window already under way: at once (StartWarmup with
  // the window's config, under the session mutex) when the window is open, else when it
  // opens. For a cheap source that must see every window, also one that began before it was
  // registered (the Python tracer, attached after libkairos read a startup window).
  void RegisterJoiningTraceSource(std::unique_ptr<TraceSource> source);

  // kairos_set_metadata: a key/value copied into every later trace's top-level metadata.
  // Bounded (kMaxMetadataKeys keys of at most kMaxMetadataKeyBytes, values of at most
  // kMaxMetadataValueBytes): past a bound the call fails and changes nothing. O(1) per call.
  absl::Status SetMetadata(std::string key, std::string value);

  // Called from StepHook when an iteration the runner waits for is reached.
  void OnStepBoundary(int64_t iteration, uint64_t raw_time);

  // Process exit (and a flush signal): closes an open window and waits for its trace, or
  // cancels one not open yet; waits at most ExitFlushBoundMs(). Never hangs.
  void AtExit();
  int64_t ExitFlushBoundMs();

  SessionState state();
  bool busy();
  Config base_config();
  // Number of sessions finished (written, failed or cancelled); for tests.
  uint64_t completed_sessions();
  // Blocks until at least `n` sessions have finished or `timeout_ms` passed; returns whether
  // they had. For tests and tools that need to know a window closed by itself.
  bool WaitForCompletedSessions(uint64_t n, int64_t timeout_ms);

  // Attach without code change (LD_PRELOAD constructor, CUDA InitializeInjection): when the
  // environment configured a time window that starts at once (no PROFILE_START_TIME, warm-up
  // 0), blocks until that window is open (at most kStartWaitMs), so a short program's first
  // GPU work is inside it. Returns at once otherwise, and on every later call.
  void WaitForStartupWindow();

  // The TSC<->Unix anchors of the current window: opened by the runner, fed by the CUPTI
  // source (root.cc hands it this log), read by the trace assembler.
  WindowAnchors& window_anchors() { return anchors_; }

  // The base time of every trace the process writes (trace_identity.h): fixed when the first
  // trace closes; 0 before. A forked child's fresh root inherits the parent's
  // (root.cc: ChildAfterFork), so parent and child traces share one base.
  int64_t process_base_ns() const { return process_base_ns_.load(std::memory_order_relaxed); }
  void InheritProcessBaseNs(int64_t base) {
    process_base_ns_.store(base, std::memory_order_relaxed);
  }
  // The root's NCCL plugin tallies, whose largest communicator stands in for the rank in each
  // trace when the launcher set none (trace_identity.h). Set by the root before any request.
  void SetNcclTallies(const internal::NcclTallies* tallies) { nccl_ = tallies; }

 private:
  struct Active {
    Config config;
    ConfigSource source = ConfigSource::kApi;
    // The raw time from which CPU ranges record, when the request switched them on only after
    // its window's start boundary had passed (the job stepped on while it was planned): the
    // CPU source's ReadyRaw, as a late CUPTI enable's (0 = on time).
    uint64_t cpu_ready_raw = 0;
  };
  struct Result {
    absl::Status status;
    std::string path;
  };
  // The runner's progress through one session (runner.cc).
  struct Window {
    std::vector<TraceSource*> warmed;  // sources whose StartWarmup succeeded, in order
    std::vector<std::string> warnings;
    uint64_t start_raw = 0;
    bool start_is_step_boundary = false;
    bool opened = false;  // Open() ran
    // Latest TraceSource::ReadyRaw of the warmed sources (0 = none cares).
    uint64_t ready_raw = 0;
    const char* ready_source = "";  // that source's name()
    bool ready_source_reports_late = false;  // its TraceSource::ReportsLateStart()
  };

  absl::Status RequestLocked(const Config& requested, ConfigSource source, bool sync,
                             uint64_t reference_raw = 0);
  absl::Status EnsureRunnerLocked();
  // Waits (bounded) until session `seq` has finished; false on timeout.
  bool WaitFinishedLocked(std::unique_lock<std::mutex>& lock, uint64_t seq, int64_t timeout_ms);
  // Sends `kind` (kStop: close a recording window at `now_raw`, or cancel one not open yet;
  // kStopRecording: close a recording window only); the scheduler's refusal otherwise.
  absl::Status EndCurrentLocked(uint64_t now_raw,
                                SessionEventKind kind = SessionEventKind::kStop);

  // Runner thread (runner.cc). Called with `lock` held; they unlock around source calls and
  // I/O.
  void RunnerMain();
  void WaitForWake(std::unique_lock<std::mutex>& lock);
  void WarmUp(std::unique_lock<std::mutex>& lock, Window& w);
  // Tells the scheduler the sources are warm, and when the last of them was ready; records
  // the warning when the window's start moved because of it, or stayed and that source's
  // first iterations are incomplete.
  void SourcesWarm(Window& w);
  // "the window starts at iteration N instead of M: ..." (the start moved; `lock` held).
  std::string StartMovedMessage(const Window& w) const;
  // "source S was recording only from iteration R on: ..." (the start stayed; `lock` held).
  std::string StartIncompleteMessage(const Window& w) const;
  void Open(std::unique_lock<std::mutex>& lock, Window& w);
  void Close(std::unique_lock<std::mutex>& lock, Window& w);
  void Abort(std::unique_lock<std::mutex>& lock, Window& w);
  void FinishLocked(Result result);
  // The raw time of step boundary `it`, which g_steps.iteration has already counted (runner, `lock`
  // held): as its hook delivered it, else from the step ring, else waited for (bounded,
  // releasing the lock); 0 if it did not come.
  uint64_t CountedBoundaryRaw(std::unique_lock<std::mutex>& lock, int64_t it);
  SchedulerEvent Now(SessionEventKind kind) const;
  // process_base_ns(), fixed now if it was not yet (runner, `mu_` held).
  int64_t ProcessBaseNsLocked();

  std::mutex mu_;
  std::condition_variable cv_;       // the runner waits here
  std::condition_variable done_cv_;  // Start/Flush/AtExit wait here
  Scheduler sched_;                  // the session state (see scheduler.h)
  Config base_config_;
  Config env_config_;  // what the environment configured (base for Init's text)
  bool runner_started_ = false;
  bool stopping_ = false;  // the destructor asks the runner to return
  std::thread runner_;     // joined by the destructor only
  // The runner thread (set by RunnerMain under mu_): its steps check they run on it.
  std::thread::id runner_id_;
  bool OnRunnerLocked() const { return std::this_thread::get_id() == runner_id_; }
  Active active_;
  std::unique_ptr<Window> window_;
  // Joining sources registered while window_ existed, not yet in its `warmed` (Open adds them).
  std::vector<TraceSource*> joining_;
  uint64_t startup_session_ = 0;  // env window that opens at init (WaitForStartupWindow)
  uint64_t close_raw_ = 0;        // raw instant of a Stop of the current window (0 = none)
  std::vector<std::pair<int64_t, uint64_t>> boundaries_;  // (iteration, raw) seen by hooks
  Result last_result_;
  std::string last_path_;
  std::vector<std::pair<std::string, std::string>> metadata_;  // in the order first set
  absl::flat_hash_map<std::string, size_t> metadata_index_;     // key -> index in metadata_
  std::vector<std::unique_ptr<TraceSource>> sources_;
  WindowAnchors anchors_;  // thread-safe itself; not guarded by mu_
  // Written by the runner under mu_ (once), read by the fork hook without it: an atomic.
  std::atomic<int64_t> process_base_ns_{0};
  const internal::NcclTallies* nccl_ = nullptr;  // set before the runner starts
};

// The iteration hook behind kairos_step / kairos_optimizer_post_step: one atomic increment,
// one load, plus a ring record while recording. Only when the runner waits for this
// iteration does it take the session mutex and wake the runner (a futex wake, a handful of
// times per trace).
void StepHook();

}  // namespace kairos

#endif  // KAIROS_SRC_SESSION_CONTROLLER_H_
