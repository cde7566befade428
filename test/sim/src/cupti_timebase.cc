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

double Timebase::MeasuredRate(const Anchor& from, const Anchor& to, bool realtime) {
  // CUPTI's own clock, CLOCK_REALTIME, runs at exactly the monotonic rate (both are slewed
  // together; they differ by steps only). A client's nanosecond clock whose measured rate is
  // 1 within the measurement noise (about 200 ns of anchor error over the span) is taken as
  // that rate too, so records keep their exact durations.
  if (realtime) return 1.0;
  const double span = static_cast<double>(to.mono - from.mono);
  const double rate = static_cast<double>(to.client - from.client) / span;
  return std::fabs(rate - 1.0) < std::max(1e-6, 200.0 / span) ? 1.0 : rate;
}

Timebase::Timebase() { SetCallback(nullptr); }

void Timebase::SetCallback(CUpti_TimestampCallbackFunc cb) {
  std::lock_guard<std::mutex> lock(mu_);
  cb_ = cb;
  rate_ = 1.0;
  base_ = Sample();
  // A second anchor 1 ms later gives a first rate; later refreshes lengthen the span.
  SleepUntilMono(base_.mono + kMinRefreshNs);
  last_ = Sample();
  if (last_.mono > base_.mono && last_.client > base_.client) {
    rate_ = MeasuredRate(base_, last_, cb_ == nullptr);
  }
  seg_begin_ = 0;
  seg_count_ = 1;
  segments_[0] = Segment{last_.mono, last_.client, rate_};
  next_refresh_mono_ = last_.mono + kMinRefreshNs;
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

uint64_t Timebase::EvalLocked(const Segment& seg, uint64_t mono) const {
  // Integer base plus a double delta: a double alone cannot hold a 1.7e18 ns epoch exactly.
  const double delta = static_cast<double>(static_cast<int64_t>(mono - seg.mono)) * seg.slope;
  if (!std::isfinite(delta) || std::fabs(delta) > 4e18) return seg.client;
  if (delta < 0) {
    const uint64_t back = static_cast<uint64_t>(std::llround(-delta));
    return back > seg.client ? 0 : seg.client - back;
  }
  return seg.client + static_cast<uint64_t>(std::llround(delta));
}

void Timebase::RefitLocked(const Anchor& a) {
  // A client clock that stands still or goes backwards tells nothing about the rate: keep
  // the previous rate (CPU-side records still carry what the client's clock said).
  if (a.mono > base_.mono && a.client > base_.client) {
    rate_ = MeasuredRate(base_, a, cb_ == nullptr);
  }
  if (a.mono - base_.mono > kMaxSpanNs) base_ = last_;
  last_ = a;
  const uint64_t span = std::max<uint64_t>(last_.mono - base_.mono, 1);
  const uint64_t interval = std::clamp(span, kMinRefreshNs, kMaxRefreshNs);
  next_refresh_mono_ = a.mono + interval;
  // Continue the current line from its value at this anchor; steer towards the client's
  // clock only when it has drifted by more than 0.5 us (in the client's units), over the
  // next interval, so the mapping stays continuous and increasing.
  const Segment& cur = segments_[(seg_begin_ + seg_count_ - 1) % kMaxSegments];
  const uint64_t v = EvalLocked(cur, a.mono);
  const double drift = static_cast<double>(static_cast<int64_t>(a.client - v));
  double slope = rate_;
  if (std::fabs(drift) > 500.0 * rate_) {
    slope = std::clamp(rate_ + drift / static_cast<double>(interval), rate_ * 0.5, rate_ * 1.5);
  }
  Segment next{a.mono, v, slope};
  if (seg_count_ == kMaxSegments) {
    seg_begin_ = (seg_begin_ + 1) % kMaxSegments;
    --seg_count_;
  }
  segments_[(seg_begin_ + seg_count_) % kMaxSegments] = next;
  ++seg_count_;
}

uint64_t Timebase::FromMono(uint64_t mono_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t now = MonoNowNs();
  if (now >= next_refresh_mono_) RefitLocked(Sample());
  // The newest segment that starts at or before mono_ns (usually one of the last few).
  size_t k = seg_count_;
  while (k > 1 && segments_[(seg_begin_ + k - 1) % kMaxSegments].mono > mono_ns) --k;
  return EvalLocked(segments_[(seg_begin_ + k - 1) % kMaxSegments], mono_ns);
}

}  // namespace kairos::sim
