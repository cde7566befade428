// File: trace_source.h
// Layer: kairos_model. The one interface every data source implements (CPU ranges, CUPTI,
// host counters), so the session drives them all the same way and knows none of their
// internals.
// Config is only declared here: base must not include config (config depends on base), and
// a source that reads the config includes config/config.h itself.
// Threading: every method is called on kairos' session runner thread, never on the
// application's threads, and never concurrently for one source, except the early-start
// hooks below, which say where they run.
#ifndef KAIROS_SRC_TRACE_SOURCE_H_
#define KAIROS_SRC_TRACE_SOURCE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "util/clock.h"
#include "model/trace_data.h"

namespace kairos {

struct Config;

// The recording window on the raw clock, with the converter the session calibrated for it.
struct WindowEdges {
  uint64_t start_raw = 0;
  uint64_t end_raw = ~0ull;
  const ClockConverter* clock = nullptr;
  // The window starts exactly at an iteration boundary (iteration windows), so the step that
  // runs at the start is not flagged as begun-before-window.
  bool start_is_step_boundary = false;
};

class TraceSource {
 public:
  virtual ~TraceSource() = default;
  virtual const char* name() const = 0;

  // A session enters warm-up: allocate and prefault buffers, enable collection. What is
  // produced during warm-up is discarded. An error means "this source sits this session out"
  // (the session records the message in TraceData::warnings and carries on).
  virtual absl::Status StartWarmup(const Config& config) = 0;
  // The recording window opens at `window_start_ns` (Unix ns).
  virtual void StartRecording(int64_t window_start_ns) = 0;
  // The recording window closes at `window_end_ns`; stop accepting new data.
  virtual void StopRecording(int64_t window_end_ns) = 0;
  // Appends what was recorded inside the window to `data` (tracks, events, side tables,
  // stats, warnings). Sources are collected in registration order (CPU ranges first), so a
  // later source may look up earlier sources' events in `data`.
  virtual void Collect(TraceData& data) = 0;
  // The session is over (written or cancelled): disable collection and drop per-session
  // state so the job pays nothing between traces.
  virtual void Reset() = 0;

  // Optional hooks for a source that records on the application's threads and must start
  // at an exact iteration boundary (the cpu source); the defaults do nothing.
  // An iteration window was accepted (requesting thread, session lock held): prepare so that
  // StartEarly is a single store.
  virtual void PrepareEarlyStart(const Config& config) { (void)config; }
  // Record from this instant, before the window opens: the warm-up boundary of an iteration
  // window (the step hook's thread, session lock held) and its warm-up (runner thread).
  // Idempotent.
  virtual void StartEarly() {}
  // The prepared request ended before its window opened (cancelled or dropped).
  virtual void CancelEarlyStart() {}
  // The exact edges of the window, set on the runner thread before Collect.
  virtual void SetWindowEdges(const WindowEdges& edges) { (void)edges; }

  // After StartWarmup (runner thread): the raw clock time from which this source records all
  // an iteration window needs, for a source that the runner switches on and the step hook
  // cannot (CUPTI); 0 when it does not matter when it was warmed up (the default: it records
  // from StartEarly on, or has nothing to miss). An iteration window whose start boundary came
  // before that instant starts at the next boundary instead (scheduler.h, kSourcesWarm).
  virtual uint64_t ReadyRaw() const { return 0; }
  // True when this source's own Collect says what it missed when it was ready only after the
  // window opened (CUPTI: cupti_enabled_late_us), so the session does not say it a second
  // time for a window whose start stayed (SessionController::StartIncompleteMessage).
  virtual bool ReportsLateStart() const { return false; }
};

}  // namespace kairos

#endif  // KAIROS_SRC_TRACE_SOURCE_H_
