// File: test/sim/src/cupti_timebase.h
// Layer: CUDA/CUPTI simulator, substitute libcupti.so.13: the CUPTI timebase.
// Threading: all methods are thread-safe (one mutex around the fit).
//
// Real CUPTI stamps CPU-side records (API calls, memory, overhead) by calling the client's
// timestamp callback at the moment of the activity, and converts GPU timestamps into that
// base during post-processing with a linear interpolation (cupti_activity.h, doc of
// cuptiActivityRegisterTimestampCallback). Without a callback the base is CLOCK_REALTIME ns,
// which cuptiGetTimestamp also returns. The simulator's GPU work lives on CLOCK_MONOTONIC, so
// GPU times are mapped with a fit (monotonic -> client clock) refreshed whenever it is older
// than its own span allows. The mapping is continuous and increasing: each refresh starts a
// new line segment at the old line's value and steers its slope (the rate measured between
// two anchors, plus a correction when the line has drifted more than 0.5 us from the client's
// clock) so back-to-back GPU records never overlap because of a refresh, nanosecond clocks
// that run at the monotonic rate (CLOCK_REALTIME) keep exact durations, and the error stays
// well under 1 us whatever the client's unit (ns, TSC ticks, us) or epoch.
#ifndef KAIROS_TEST_SIM_SRC_CUPTI_TIMEBASE_H_
#define KAIROS_TEST_SIM_SRC_CUPTI_TIMEBASE_H_

#include <cupti.h>

#include <cstdint>
#include <mutex>

namespace kairos::sim {

class Timebase {
 public:
  Timebase();
  // nullptr restores CUPTI's own clock. Takes the first two anchors (about 1 ms apart).
  void SetCallback(CUpti_TimestampCallbackFunc cb);
  CUpti_TimestampCallbackFunc callback() const;
  // The CUPTI timestamp now: the client's callback, called now, or CLOCK_REALTIME ns.
  uint64_t Now() const;
  // A CLOCK_MONOTONIC time (past or near future) in the CUPTI timebase, through the fit.
  // Whatever the callback returns (zero, backwards, garbage) the result is defined: the
  // slope only changes on anchors where both clocks advanced, and results are clamped at 0.
  uint64_t FromMono(uint64_t mono_ns);

 private:
  struct Anchor {
    uint64_t mono;
    uint64_t client;
  };
  // The mapping from `mono` on (until the next segment): client = client + (t - mono) * slope.
  struct Segment {
    uint64_t mono;
    uint64_t client;
    double slope;
  };
  Anchor Sample() const;
  static double MeasuredRate(const Anchor& from, const Anchor& to, bool realtime);
  void RefitLocked(const Anchor& a);
  uint64_t EvalLocked(const Segment& s, uint64_t mono) const;

  mutable std::mutex mu_;
  CUpti_TimestampCallbackFunc cb_ = nullptr;
  Anchor base_{0, 0};  // older anchor (the rate is measured from here)
  Anchor last_{0, 0};  // newest anchor
  double rate_ = 1.0;  // measured client units per monotonic ns
  // Recent segments, oldest first (bounded): GPU records are converted after they end, so
  // times a little before the newest segment use the segment that covered them.
  static constexpr size_t kMaxSegments = 256;
  Segment segments_[kMaxSegments];
  size_t seg_begin_ = 0, seg_count_ = 0;  // ring
  uint64_t next_refresh_mono_ = 0;
};

}  // namespace kairos::sim

#endif  // KAIROS_TEST_SIM_SRC_CUPTI_TIMEBASE_H_
