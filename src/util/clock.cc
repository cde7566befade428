// File: clock.cc — see clock.h.
#include "util/clock.h"


#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace kairos {

namespace internal {
std::atomic<int> g_raw_clock_mode{0};

int DecideRawClockMode() {
  int mode = TscIsInvariant() ? 1 : 2;
  int expected = 0;
  // First decision wins; every reader then sees the same mode for the process lifetime.
  if (!g_raw_clock_mode.compare_exchange_strong(expected, mode, std::memory_order_relaxed)) {
    mode = expected;
  }
  return mode;
}
}  // namespace internal

namespace {

bool CpuinfoHasFlags() {
  // Hypervisors may hide CPUID leaf 0x80000007 while the kernel still knows the TSC is
  // invariant (and reports both flags).
  FILE* f = std::fopen("/proc/cpuinfo", "r");
  if (f == nullptr) return false;
  char line[8192];
  bool constant = false, nonstop = false;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, "flags", 5) != 0) continue;
    constant = std::strstr(line, " constant_tsc") != nullptr;
    nonstop = std::strstr(line, " nonstop_tsc") != nullptr;
    break;
  }
  std::fclose(f);
  return constant && nonstop;
}

}  // namespace

bool TscIsInvariant() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) != 0 && eax >= 0x80000007u &&
      __get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) != 0 && (edx & (1u << 8)) != 0) {
    return true;
  }
  return CpuinfoHasFlags();
#else
  return false;
#endif
}

bool RawClockIsTsc() {
#if defined(__x86_64__)
  int mode = internal::g_raw_clock_mode.load(std::memory_order_relaxed);
  if (mode == 0) mode = internal::DecideRawClockMode();
  return mode == 1;
#else
  return false;
#endif
}

int64_t UnixNowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t MonotonicNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

namespace {
// Reads (raw, now()) as a pair whose bracketing raw interval is smallest among a few tries,
// so the anchor is accurate to the cost of one clock_gettime.
void AnchorPair(uint64_t* raw, int64_t* unix_ns, int64_t (*now)()) {
  uint64_t best_width = ~0ull;
  for (int i = 0; i < 8; ++i) {
    uint64_t a = ReadRawClock();
    int64_t u = now();
    uint64_t b = ReadRawClock();
    if (b - a < best_width) {
      best_width = b - a;
      *raw = a + (b - a) / 2;
      *unix_ns = u;
    }
  }
}
}  // namespace

ClockAnchor TakeClockAnchor() {
  ClockAnchor a{0, 0};
  AnchorPair(&a.raw, &a.unix_ns, UnixNowNs);
  return a;
}

void ClockConverter::Calibrate(int64_t sample_ns) {
  ClockAnchor first = TakeClockAnchor();
  const int64_t mono0 = MonotonicNowNs();
  // Busy-wait: sleeping would let the sample interval be dominated by scheduler noise.
  while (MonotonicNowNs() - mono0 < sample_ns) {
  }
  SetAnchors({first, TakeClockAnchor()});
}

void ClockConverter::SetAnchors(std::vector<ClockAnchor> anchors) {
  std::sort(anchors.begin(), anchors.end(),
            [](const ClockAnchor& a, const ClockAnchor& b) { return a.raw < b.raw; });
  // Equal raw values (or a realtime step backwards) would make a segment useless or
  // negative: keep only anchors that advance on both clocks.
  anchors_.clear();
  for (const ClockAnchor& a : anchors) {
    if (anchors_.empty() || (a.raw > anchors_.back().raw && a.unix_ns > anchors_.back().unix_ns)) {
      anchors_.push_back(a);
    }
  }
  slopes_.clear();
  for (size_t i = 0; i + 1 < anchors_.size(); ++i) {
    slopes_.push_back(static_cast<double>(anchors_[i + 1].unix_ns - anchors_[i].unix_ns) /
                      static_cast<double>(anchors_[i + 1].raw - anchors_[i].raw));
  }
  single_slope_ = 1.0;
  if (anchors_.size() == 1 && RawClockIsTsc()) {
    ClockConverter c;
    c.Calibrate(1000000);
    single_slope_ = c.ns_per_tick();
  }
}

void ClockConverter::SetForTest(uint64_t base_raw, int64_t base_unix_ns, double ns_per_tick) {
  anchors_.assign(1, ClockAnchor{base_raw, base_unix_ns});
  slopes_.clear();
  single_slope_ = ns_per_tick;
}

double ClockConverter::ns_per_tick() const { return slopes_.empty() ? single_slope_ : slopes_.back(); }

int64_t ClockConverter::ToUnixNs(uint64_t raw) const {
  if (anchors_.empty()) return static_cast<int64_t>(raw);
  // The segment containing raw (the first or last one outside the anchors' span).
  size_t i = 0;
  if (anchors_.size() > 1) {
    auto it = std::upper_bound(anchors_.begin(), anchors_.end(), raw,
                               [](uint64_t r, const ClockAnchor& a) { return r < a.raw; });
    size_t upper = static_cast<size_t>(it - anchors_.begin());
    i = upper == 0 ? 0 : std::min(upper - 1, anchors_.size() - 2);
  }
  const double slope = slopes_.empty() ? single_slope_ : slopes_[i];
  const double delta = static_cast<double>(static_cast<int64_t>(raw - anchors_[i].raw));
  return anchors_[i].unix_ns + static_cast<int64_t>(std::llround(delta * slope));
}

WindowAnchors::WindowAnchors() { anchors_.reserve(kMaxWindowAnchors); }

void WindowAnchors::AddLocked(const ClockAnchor& a) {
  if (anchors_.size() >= kMaxWindowAnchors) {
    // Keep the first anchor (window open), drop every other one after it, anchor half as often.
    size_t out = 1;
    for (size_t i = 2; i < anchors_.size(); i += 2) anchors_[out++] = anchors_[i];
    anchors_.resize(out);
    period_ns_ *= 2;
  }
  if (anchors_.size() >= 1) {
    const ClockAnchor& first = anchors_.front();
    if (a.raw > first.raw && a.unix_ns > first.unix_ns) {
      ns_per_raw_ = static_cast<double>(a.unix_ns - first.unix_ns) / static_cast<double>(a.raw - first.raw);
    }
  }
  anchors_.push_back(a);
  const double ticks = static_cast<double>(period_ns_) / std::max(ns_per_raw_, 1e-6);
  next_due_raw_.store(a.raw + static_cast<uint64_t>(ticks), std::memory_order_relaxed);
}

void WindowAnchors::Opened() {
  std::lock_guard<std::mutex> lock(mu_);
  anchors_.clear();
  period_ns_ = kWindowAnchorPeriodNs;
  open_ = true;
  ns_per_raw_ = RawClockIsTsc() ? 0.3 : 1.0;  // refined by the second anchor
  AddLocked(TakeClockAnchor());
}

void WindowAnchors::AnchorIfDue() {
  if (ReadRawClock() < next_due_raw_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (!open_ || ReadRawClock() < next_due_raw_.load(std::memory_order_relaxed)) return;
  AddLocked(TakeClockAnchor());
}

void WindowAnchors::AnchorNow() {
  std::lock_guard<std::mutex> lock(mu_);
  if (open_) AddLocked(TakeClockAnchor());
}

ClockConverter WindowAnchors::Converter() {
  ClockConverter c;
  std::vector<ClockAnchor> anchors;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (open_) {
      AddLocked(TakeClockAnchor());
      anchors = anchors_;
      open_ = false;
      next_due_raw_.store(~0ull, std::memory_order_relaxed);
    }
  }
  // One anchor, or a window shorter than 1 ms: too short a span for the slope.
  if (anchors.size() < 2 || anchors.back().unix_ns - anchors.front().unix_ns < 1000000) {
    c.Calibrate();
    if (!anchors.empty()) {
      // Keep the window's anchors' offset: shift the calibration onto the first anchor.
      ClockConverter shifted;
      shifted.SetForTest(anchors.front().raw, anchors.front().unix_ns, c.ns_per_tick());
      return shifted;
    }
    return c;
  }
  c.SetAnchors(std::move(anchors));
  return c;
}

}  // namespace kairos
