// File: trace_source.h
// Layer: kairos_base. The one interface every data source implements (CPU ranges, CUPTI,
// host counters), so the session drives them all the same way and knows none of their
// internals.
// Threading: every method is called on kairos' controller/flush thread, never on the
// application's threads, and never concurrently for one source.
#ifndef KAIROS_SRC_TRACE_SOURCE_H_
#define KAIROS_SRC_TRACE_SOURCE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "config/config.h"
#include "trace_data.h"

namespace kairos {

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
};

}  // namespace kairos

#endif  // KAIROS_SRC_TRACE_SOURCE_H_
