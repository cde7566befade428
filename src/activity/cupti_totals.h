// File: cupti_totals.h
// Layer: kairos_activity (CUDA builds only). Telemetry's kernel and copy totals
// (docs/TELEMETRY.md): every kernel and memcpy record the buffer worker sees, inside a trace
// window or between windows, is tallied here (cupti_tally.h) until telemetry takes a device's
// totals up to a millisecond edge. Turning the kinds on between windows is CuptiSource's job
// (it owns what CUPTI records); this module only counts and remembers whether counting was
// ever interrupted.
// Owner: CuptiSource. The on flag is this module's: set by StartActivityTotals, cleared for
// good when counting cannot resume after a window (then the totals are incomplete).
// Threading: Count on the buffer worker, Take on the telemetry thread, on/TurnOn/GiveUp from
// either; the tally is guarded by this module's mutex.
#ifndef KAIROS_SRC_ACTIVITY_CUPTI_TOTALS_H_
#define KAIROS_SRC_ACTIVITY_CUPTI_TOTALS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "activity/cupti_tally.h"

namespace kairos::internal {

// Kernels completed and bytes copied per device, by the record's end time.
struct ActivityTotals {
  int64_t kernels = 0;
  int64_t memcpy_bytes = 0;
  // GPU time with a kernel or copy running (their union), at 1/64 ms resolution, before the
  // edge: telemetry's gpu_busy_pct where PM sampling is unavailable.
  int64_t busy_ns = 0;
  // False once counting could not be resumed after a window (then for good): the totals miss
  // records and must not be reported as counts.
  bool complete = true;
};

class CuptiTotals {
 public:
  bool on() const { return on_.load(); }
  // Telemetry asked for the totals: true if they were off (the caller enables the kinds).
  bool TurnOn() { return !on_.exchange(true); }
  // Enabling the kinds failed at the start: off again, the totals stay complete.
  void TurnOff() { on_.store(false); }
  // The kinds could not be resumed after a window: off for good, the totals incomplete.
  void GiveUp() {
    on_.store(false);
    failed_.store(true);
  }
  // Buffer worker: tallies the buffer's kernel and copy records when the totals are on.
  void Count(const uint8_t* buffer, size_t valid_size);
  // Returns and forgets `device`'s totals of records that ended before `end_ns`.
  ActivityTotals Take(uint32_t device, int64_t end_ns);

 private:
  std::atomic<bool> on_{false};
  std::atomic<bool> failed_{false};
  std::mutex mu_;     // the tally: buffer worker vs Take
  CuptiTally tally_;  // guarded by mu_
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CUPTI_TOTALS_H_
