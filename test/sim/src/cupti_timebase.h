// File: test/sim/src/cupti_timebase.h
// Layer: CUDA/CUPTI simulator, substitute libcupti.so.13: the CUPTI timebase.
// Threading: all methods are thread-safe (one mutex around the fit).
//
// Real CUPTI stamps CPU-side records (API calls, memory, overhead) by calling the client's
// timestamp callback at the moment of the activity, and converts GPU timestamps into that
// base during post-processing with a linear interpolation (cupti_activity.h, doc of
// cuptiActivityRegisterTimestampCallback). Without a callback the base is CLOCK_REALTIME ns,
// which cuptiGetTimestamp also returns. The simulator's GPU work lives on CLOCK_MONOTONIC, so
// GPU times are mapped with a two-point fit (monotonic -> client clock) that is refreshed
// whenever it is older than its own span allows: the extrapolation error stays about
// (anchor error x refresh interval / span), i.e. tens of ns, whatever the client's unit
// (ns, TSC ticks, us) or epoch.
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
  Anchor Sample() const;
  void RefitLocked(const Anchor& a);

  mutable std::mutex mu_;
  CUpti_TimestampCallbackFunc cb_ = nullptr;
  Anchor base_{0, 0};  // older anchor (slope is measured from here)
  Anchor last_{0, 0};  // newest anchor (results are extrapolated from here)
  double slope_ = 1.0;  // client units per monotonic ns
  uint64_t next_refresh_mono_ = 0;
};

}  // namespace kairos::sim

#endif  // KAIROS_TEST_SIM_SRC_CUPTI_TIMEBASE_H_
