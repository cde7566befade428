// File: cupti_clock.h
// Layer: kairos_activity (CUDA builds only). The CUPTI source's clock duties: the heartbeat
// that keeps the session's window anchor log (clock.h) fed while a window records (CUDA calls
// and completed buffers are the steadiest events kairos sees), the anchor at the window's
// closing edge, and CUPTI's timebase: kairos registers its own timestamp callback
// (CLOCK_REALTIME) and, only where CUPTI refuses it, measures CUPTI's offset at the edges.
// Threading: Beat from any thread (application threads inside the API callback, the buffer
// worker); everything else on the session thread.
#ifndef KAIROS_SRC_ACTIVITY_CUPTI_CLOCK_H_
#define KAIROS_SRC_ACTIVITY_CUPTI_CLOCK_H_

#include <cstdint>

#include "activity/cupti_api.h"
#include "util/clock.h"

namespace kairos::internal {

// Registers kairos' timestamp callback (Unix ns) with CUPTI. True when CUPTI took it.
bool RegisterUnixTimestamps(const CuptiApi& api);

class CuptiClock {
 public:
  // `anchors`: the session's window anchor log, or nullptr (no heartbeat).
  explicit CuptiClock(WindowAnchors* anchors) : anchors_(anchors) {}

  // Hot path: one raw clock read, or about 0.5 us once a second when an anchor is due.
  void Beat() const {
    if (anchors_ != nullptr) anchors_->AnchorIfDue();
  }
  // The window's closing edge, taken before the flush takes its time.
  void AnchorEdge() const {
    if (anchors_ != nullptr) anchors_->AnchorNow();
  }
  // Warm-up: registers the timestamp callback; with it CUPTI's clock is CLOCK_REALTIME.
  void UseUnixTimestamps(const CuptiApi& api) { own_timestamps_ = RegisterUnixTimestamps(api); }
  // The window opens: measures CUPTI clock minus CLOCK_REALTIME (the window's offset) and
  // returns it.
  int64_t MeasureAtOpen(const CuptiApi& api);
  // The window closes: measures again, returns that measurement and makes the window's
  // offset the mean of both edges.
  int64_t MeasureAtClose(const CuptiApi& api);
  // What Collect shifts records by to bring them back to the session clock.
  int64_t offset() const { return offset_; }

 private:
  // CUPTI clock - CLOCK_REALTIME now (0 with our timestamps or without cuptiGetTimestamp).
  int64_t Measure(const CuptiApi& api) const;

  WindowAnchors* const anchors_;
  bool own_timestamps_ = false;  // CUPTI took our timestamp callback: offset 0 by definition
  int64_t offset_ = 0;
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CUPTI_CLOCK_H_
