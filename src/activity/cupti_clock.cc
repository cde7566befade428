// File: cupti_clock.cc
// Layer: kairos_activity (CUDA builds only). See cupti_clock.h.
#include "activity/cupti_clock.h"

namespace kairos::internal {
namespace {

// CUPTI's default Linux timebase is CLOCK_REALTIME already; registering it explicitly makes
// GPU and CPU-side CUPTI records Unix ns on every platform (WSL defaults to MONOTONIC_RAW).
uint64_t CUPTIAPI UnixTimestamp() { return static_cast<uint64_t>(UnixNowNs()); }

}  // namespace

bool RegisterUnixTimestamps(const CuptiApi& api) {
  return api.ActivityRegisterTimestampCallback != nullptr &&
         api.ActivityRegisterTimestampCallback(UnixTimestamp) == CUPTI_SUCCESS;
}

int64_t CuptiClock::MeasureAtOpen(const CuptiApi& api) {
  offset_ = Measure(api);
  return offset_;
}

int64_t CuptiClock::MeasureAtClose(const CuptiApi& api) {
  const int64_t now = Measure(api);
  offset_ = (offset_ + now) / 2;
  return now;
}

int64_t CuptiClock::Measure(const CuptiApi& api) const {
  // CUPTI stamps every record with our callback (CLOCK_REALTIME): the clocks are one, and a
  // measurement could only add its own error. On a loaded machine that error was a few
  // microseconds, which shifted every GPU and API record against the CPU ranges around them.
  if (own_timestamps_) return 0;
  if (api.GetTimestamp == nullptr) return 0;
  // Otherwise the tightest of a few bracketed reads, as for the clock anchors.
  int64_t best = 0, best_width = INT64_MAX;
  for (int i = 0; i < 8; ++i) {
    const int64_t before = UnixNowNs();
    uint64_t cupti = 0;
    if (api.GetTimestamp(&cupti) != CUPTI_SUCCESS || cupti == 0) return 0;
    const int64_t after = UnixNowNs();
    if (after - before < best_width) {
      best_width = after - before;
      best = static_cast<int64_t>(cupti) - (before + (after - before) / 2);
    }
  }
  return best;
}

}  // namespace kairos::internal
