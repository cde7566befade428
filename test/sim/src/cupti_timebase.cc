// File: test/sim/src/cupti_timebase.cc
// Layer: CUDA/CUPTI simulator, substitute libcupti.so.13: see cupti_timebase.h.
#include "cupti_timebase.h"

#include <algorithm>
#include <cmath>

#include "sim_common.h"

namespace kairos::sim {
namespace {

// The slope is measured over at least this span once the process has run that long; a new
// base is taken when the span exceeds it, so NTP slewing of either clock is followed.
constexpr uint64_t kMaxSpanNs = 1000000000ull;
// The fit is refreshed at most this often (and at least once per span, see RefitLocked).
constexpr uint64_t kMaxRefreshNs = 50000000ull;
constexpr uint64_t kMinRefreshNs = 1000000ull;

}  // namespace

Timebase::Timebase() { SetCallback(nullptr); }

void Timebase::SetCallback(CUpti_TimestampCallbackFunc cb) {
  std::lock_guard<std::mutex> lock(mu_);
  cb_ = cb;
  slope_ = 1.0;
  base_ = last_ = Sample();
  // A second anchor 1 ms later gives a first slope; later refreshes lengthen the span.
  SleepUntilMono(base_.mono + kMinRefreshNs);
  RefitLocked(Sample());
}

CUpti_TimestampCallbackFunc Timebase::callback() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cb_;
}

uint64_t Timebase::Now() const {
  CUpti_TimestampCallbackFunc cb;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cb = cb_;
  }
  return cb != nullptr ? cb() : RealtimeNowNs();
}

Timebase::Anchor Timebase::Sample() const {
  // The tightest of a few bracketed readings: the client clock is read between two
  // monotonic readings and attributed to their midpoint.
  Anchor best{0, 0};
  uint64_t best_width = ~0ull;
  for (int i = 0; i < 3; ++i) {
    uint64_t m0 = MonoNowNs();
    uint64_t c = cb_ != nullptr ? cb_() : RealtimeNowNs();
    uint64_t m1 = MonoNowNs();
    if (m1 - m0 < best_width) {
      best_width = m1 - m0;
      best = Anchor{m0 + (m1 - m0) / 2, c};
    }
  }
  return best;
}

void Timebase::RefitLocked(const Anchor& a) {
  // A client clock that stands still or goes backwards tells nothing about the rate: keep
  // the previous slope (records then carry what the client's clock said).
  if (a.mono > base_.mono && a.client > base_.client) {
    slope_ = static_cast<double>(a.client - base_.client) / static_cast<double>(a.mono - base_.mono);
    // A nanosecond clock that runs at the monotonic rate to within 1 ppm (CLOCK_REALTIME and
    // CLOCK_MONOTONIC are slewed together; the difference is anchor noise) is taken as the
    // same rate: records then keep their exact durations, and the offset refreshed every
    // 50 ms bounds the error at 50 ns.
    if (std::fabs(slope_ - 1.0) < 1e-6) slope_ = 1.0;
  }
  if (a.mono - base_.mono > kMaxSpanNs) base_ = last_;
  last_ = a;
  const uint64_t span = std::max<uint64_t>(last_.mono - base_.mono, 1);
  next_refresh_mono_ = a.mono + std::clamp(span, kMinRefreshNs, kMaxRefreshNs);
}

uint64_t Timebase::FromMono(uint64_t mono_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t now = MonoNowNs();
  if (now >= next_refresh_mono_) RefitLocked(Sample());
  // Integer base plus a double delta: a double alone cannot hold a 1.7e18 ns epoch exactly.
  const double delta = static_cast<double>(static_cast<int64_t>(mono_ns - last_.mono)) * slope_;
  if (!std::isfinite(delta) || std::fabs(delta) > 4e18) return last_.client;
  if (delta < 0 && static_cast<uint64_t>(std::llround(-delta)) > last_.client) return 0;
  return delta >= 0 ? last_.client + static_cast<uint64_t>(std::llround(delta))
                    : last_.client - static_cast<uint64_t>(std::llround(-delta));
}

}  // namespace kairos::sim
