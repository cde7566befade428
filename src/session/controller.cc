// File: controller.cc
// Layer: kairos_session. The controller thread of Profiler: takes the pending request,
// drives warm-up -> recording -> flushing -> idle with deadline waits on a condition
// variable (no polling), then collects every source and writes the trace.
// Threading: runs on the controller thread only; holds mu_ except around source calls,
// collection and I/O, so callers (Stop, Flush, step hooks) never wait behind a write.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "analysis/emit_summary.h"
#include "report/report.h"
#include "clock.h"
#include "config/env.h"
#include "config/output_path.h"
#include "log.h"
#include "output/writer.h"
#include "session/profiler.h"
#include "session/trace_identity.h"

namespace kairos {

namespace {
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
constexpr int64_t kLateWarnNs = 10 * 1000000;
}  // namespace

struct Profiler::Window {
  std::vector<TraceSource*> warmed;  // sources whose StartWarmup succeeded, in order
  std::vector<std::string> warnings;
  bool iteration_mode = false;
  int64_t end_iteration = 0;
  int64_t end_deadline_ns = kNever;  // Unix ns (time mode)
  uint64_t start_raw = 0, end_raw = 0;
  bool start_is_step_boundary = false;
};

void Profiler::ControllerMain() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return pending_ != nullptr; });
    RunSession(lock);
  }
}

void Profiler::WarmUp(std::unique_lock<std::mutex>& lock, Window& w) {
  std::vector<TraceSource*> sources;
  for (auto& s : sources_) sources.push_back(s.get());
  const Config config = active_.config;
  lock.unlock();
  for (TraceSource* s : sources) {
    absl::Status st = s->StartWarmup(config);
    if (st.ok()) {
      w.warmed.push_back(s);
    } else {
      KAIROS_LOG_WARNING("source %s sits this trace out: %s", s->name(),
                         std::string(st.message()).c_str());
      w.warnings.push_back(absl::StrCat("source ", s->name(), ": ", st.message()));
    }
  }
  lock.lock();
}

void Profiler::OpenWindow(std::unique_lock<std::mutex>& lock, Window& w, uint64_t raw,
                          bool exact) {
  w.start_raw = raw;
  w.start_is_step_boundary = exact;
  ClockWindowOpened();  // first TSC<->Unix anchor of this window (clock.h)
  lock.unlock();
  const int64_t now_ns = UnixNowNs();
  for (TraceSource* s : w.warmed) s->StartRecording(now_ns);
  lock.lock();
}

bool Profiler::WaitUntilUnix(std::unique_lock<std::mutex>& lock, int64_t target_ns) {
  for (;;) {
    if (cancel_requested_) return false;
    const int64_t now = UnixNowNs();
    if (now >= target_ns) return true;
    cv_.wait_for(lock, std::chrono::nanoseconds(target_ns - now));
  }
}

Profiler::IterWait Profiler::WaitIteration(std::unique_lock<std::mutex>& lock, int64_t target,
                                           int64_t deadline_ns, bool stop_ends_wait,
                                           uint64_t* raw, bool* exact) {
  // seq_cst store then load: pairs with StepHook's increment-then-load.
  g_step_wake_at.store(target);
  for (;;) {
    if (cancel_requested_) return IterWait::kCancelled;
    if (stop_ends_wait && stop_requested_) {
      *raw = stop_raw_;
      *exact = false;
      return IterWait::kStopped;
    }
    for (const auto& [it, r] : boundaries_) {
      if (it == target) {
        *raw = r;
        *exact = true;
        return IterWait::kReached;
      }
    }
    if (g_iteration.load() >= target) {  // passed before we asked to be woken
      *raw = ReadRawClock();
      *exact = false;
      return IterWait::kReached;
    }
    if (deadline_ns == kNever) {
      cv_.wait(lock);
    } else {
      const int64_t now = UnixNowNs();
      if (now >= deadline_ns) return IterWait::kTimedOut;
      cv_.wait_for(lock, std::chrono::nanoseconds(deadline_ns - now));
    }
  }
}

bool Profiler::WaitForWindowStart(std::unique_lock<std::mutex>& lock, Window& w) {
  const Config& c = active_.config;
  if (active_.sync) {
    WarmUp(lock, w);
    OpenWindow(lock, w, ReadRawClock(), false);
    return true;
  }
  if (c.IterationMode()) {
    const int64_t start = active_.start_iteration;
    const int64_t warm = start - active_.warmup_iteration;
    w.iteration_mode = true;
    w.end_iteration = start + c.iterations;
    const int64_t deadline = (active_.never_stepped && c.iteration_fallback_timeout_ms > 0)
                                 ? UnixNowNs() + c.iteration_fallback_timeout_ms * 1000000
                                 : kNever;
    uint64_t raw = 0;
    bool exact = false;
    switch (WaitIteration(lock, start - warm, deadline, false, &raw, &exact)) {
      case IterWait::kReached:
        break;
      case IterWait::kTimedOut:
        if (g_iteration.load() == 0) {
          if (c.duration_ms <= 0) {
            KAIROS_LOG_WARNING("no iteration was counted within %lld ms and the duration is 0; "
                               "trace request dropped",
                               static_cast<long long>(c.iteration_fallback_timeout_ms));
            return false;
          }
          const std::string msg = absl::StrCat(
              "no iteration was counted within ", c.iteration_fallback_timeout_ms,
              " ms; fell back to a duration window of ", c.duration_ms, " ms");
          KAIROS_LOG_WARNING("%s", msg.c_str());
          w.warnings.push_back(msg);
          w.iteration_mode = false;
          WarmUp(lock, w);
          OpenWindow(lock, w, ReadRawClock(), false);
          w.end_deadline_ns = UnixNowNs() + c.duration_ms * 1000000;
          return true;
        }
        // Stepping started just at the deadline: wait for the boundary after all.
        if (WaitIteration(lock, start - warm, kNever, false, &raw, &exact) != IterWait::kReached)
          return false;
        break;
      default:
        return false;
    }
    WarmUp(lock, w);
    // Iteration windows record CPU ranges from warm-up on, so ranges straddling the first
    // boundary keep their true start (clamped, flagged) instead of being lost.
    cpu_->EnableNow();
    if (warm > 0 && WaitIteration(lock, start, kNever, false, &raw, &exact) != IterWait::kReached)
      return false;
    OpenWindow(lock, w, raw, exact);
    return true;
  }
  const int64_t warm_ns = std::max<int64_t>(c.warmup_secs, 0) * 1000000000;
  const int64_t start_ns = c.profile_start_time_ms > 0 ? c.profile_start_time_ms * 1000000
                                                       : active_.accepted_unix_ns + warm_ns;
  if (!WaitUntilUnix(lock, start_ns - warm_ns)) return false;
  WarmUp(lock, w);
  if (!WaitUntilUnix(lock, start_ns)) return false;
  const int64_t late = UnixNowNs() - start_ns;
  if (late > kLateWarnNs)
    KAIROS_LOG_INFO("Tracing started %lld ms late!", static_cast<long long>(late / 1000000));
  OpenWindow(lock, w, ReadRawClock(), false);
  w.end_deadline_ns = UnixNowNs() + c.duration_ms * 1000000;
  return true;
}

void Profiler::WaitForWindowEnd(std::unique_lock<std::mutex>& lock, Window& w) {
  if (w.iteration_mode) {
    bool exact = false;
    // Cancel is only honoured during warm-up; Flush/AtExit ask for a stop here.
    while (WaitIteration(lock, w.end_iteration, kNever, true, &w.end_raw, &exact) ==
           IterWait::kCancelled) {
      cancel_requested_ = false;
    }
  } else {
    for (;;) {
      if (stop_requested_) {
        w.end_raw = stop_raw_;
        break;
      }
      if (active_.sync || w.end_deadline_ns == kNever) {
        cv_.wait(lock);
        continue;
      }
      const int64_t now = UnixNowNs();
      if (now >= w.end_deadline_ns) {
        w.end_raw = ReadRawClock();
        break;
      }
      cv_.wait_for(lock, std::chrono::nanoseconds(w.end_deadline_ns - now));
    }
  }
  g_step_wake_at.store(kNever);
}

void Profiler::RunSession(std::unique_lock<std::mutex>& lock) {
  active_ = std::move(*pending_);
  pending_.reset();
  const uint64_t seq = session_seq_;
  stop_requested_ = false;
  cancel_requested_ = false;
  sm_.Transition(SessionState::kIdle, SessionState::kWarmup);
  Window w;
  if (!WaitForWindowStart(lock, w)) {
    g_step_wake_at.store(kNever);
    armed_cpu_epoch_ = 0;
    if (active_.cpu_epoch != 0) internal::DisableEpoch(active_.cpu_epoch);
    std::vector<TraceSource*> warmed = w.warmed;
    lock.unlock();
    for (TraceSource* s : warmed) s->Reset();
    lock.lock();
    sm_.Transition(SessionState::kWarmup, SessionState::kIdle);
    FinishSessionLocked(seq, Result{absl::NotFoundError("trace cancelled before its window opened"),
                                    std::string()});
    return;
  }
  sm_.Transition(SessionState::kWarmup, SessionState::kRecording);
  recording_seq_ = seq;
  done_cv_.notify_all();
  WaitForWindowEnd(lock, w);
  recording_seq_ = 0;
  sm_.Transition(SessionState::kRecording, SessionState::kFlushing);
  const Config config = active_.config;
  const ConfigSource source = active_.source;
  auto metadata = metadata_;
  lock.unlock();
  const int64_t end_ns = UnixNowNs();
  for (TraceSource* s : w.warmed) s->StopRecording(end_ns);
  Result result = CollectAndWrite(config, source, w, std::move(metadata));
  lock.lock();
  sm_.Transition(SessionState::kFlushing, SessionState::kIdle);
  FinishSessionLocked(seq, std::move(result));
}

void Profiler::FinishSessionLocked(uint64_t seq, Result result) {
  if (result.status.ok()) last_path_ = result.path;
  last_result_ = std::move(result);
  completed_seq_ = seq;
  done_cv_.notify_all();
}

Profiler::Result Profiler::CollectAndWrite(
    const Config& config, ConfigSource source, Window& w,
    std::vector<std::pair<std::string, std::string>> metadata) {
  TraceData data;
  const ClockConverter clock = WindowClockConverter();  // anchors from open to now (clock.h)
  cpu_->SetWindow(w.start_raw, w.end_raw, clock, w.start_is_step_boundary);

  const EnvSettings& env = Env();
  const PathContext ctx = CurrentPathContext();
  std::string path;
  if (source == ConfigSource::kDaemon) {
    OnDemandPath od = ResolveOnDemandPath(config.log_file, OnDemandAllowedDir(env), ctx);
    if (od.replaced) {
      KAIROS_LOG_WARNING("%s", od.message.c_str());
      w.warnings.push_back(od.message);
    }
    path = od.path;
  } else {
    path = ResolveOutputPath(config.log_file, DefaultTraceDir(env), ctx);
  }

  data.pid = getpid();
  data.process_name = ReadProcessName();
  data.host_name = ReadHostName();
  data.window_start_ns = clock.ToUnixNs(w.start_raw);
  data.window_end_ns = std::max(data.window_start_ns, clock.ToUnixNs(w.end_raw));
  data.trace_name = path;
  data.trace_id = config.request_trace_id;
  data.distributed = DistributedFromEnv();
  if (!env.job_name.empty()) metadata.emplace_back("job_name", env.job_name);
  if (!env.job_version.empty()) metadata.emplace_back("job_version", env.job_version);
  if (!env.job_attempt_index.empty())
    metadata.emplace_back("job_attempt_index", env.job_attempt_index);
  data.metadata = std::move(metadata);
  data.config_text = ConfigToText(config);
  data.warnings = std::move(w.warnings);

  for (TraceSource* s : w.warmed) s->Collect(data);  // registration order: cpu first
  data.SortTracks();
  data.base_time_ns = TraceBaseTimeNs(ProcessBaseTimeNs(), EarliestTimestampNs(data));
  for (TraceSource* s : w.warmed) s->Reset();

  // The analysis summary travels inside the trace and next to it (<trace>.summary.json).
  if (config.summary != SummaryMode::kOff) {
    EmitOptions options;
    options.print_text = config.summary == SummaryMode::kStdout;
    std::string summary_json;
    absl::Status ss = EmitSummary(data, path, options, &summary_json);
    if (!ss.ok())
      KAIROS_LOG_WARNING("summary not written: %s", std::string(ss.message()).c_str());
    if (!summary_json.empty()) data.metadata_json.emplace_back("kairos_summary", summary_json);
  }
  // Opt-in HTML report next to the trace (docs/REPORT.md); it analyses the data again.
  if (config.report == ReportMode::kHtml) {
    absl::Status rs = WriteReportFile(ReportPathFor(path), RenderHtmlReport({{path, &data}}));
    if (!rs.ok()) KAIROS_LOG_WARNING("report not written: %s", std::string(rs.message()).c_str());
  }

  OutputRequest request;
  request.path = path;
  request.format = config.output_format;
  request.zstd_level = static_cast<int>(config.zstd_level);
  absl::Status st = WriteTraceFile(data, request);
  if (!st.ok()) {
    KAIROS_LOG_WARNING("trace not written to %s: %s", path.c_str(),
                       std::string(st.message()).c_str());
    return Result{st, std::string()};
  }
  for (const std::string& extra : config.extra_outputs) {
    OutputRequest r2 = request;
    r2.path = ResolveOutputPath(extra, DefaultTraceDir(env), ctx);
    r2.format = OutputFormat::kAuto;
    absl::Status s2 = WriteTraceFile(data, r2);
    if (!s2.ok())
      KAIROS_LOG_WARNING("extra output %s not written: %s", r2.path.c_str(),
                         std::string(s2.message()).c_str());
  }
  KAIROS_LOG_INFO("trace written to %s (%zu events)", path.c_str(), data.EventCount());
  return Result{absl::OkStatus(), path};
}

}  // namespace kairos
