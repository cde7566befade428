// File: gpu_counters.cc — see gpu_counters.h.
#include "model/gpu_counters.h"

#include <algorithm>

namespace kairos {
namespace {

// Mean of the intervals of `series` that [start, end) covers for at least kMinSampleCoverage
// of their length; returns the count and adds to *sum.
uint32_t CoveredMean(const std::vector<CounterInterval>& series, int64_t start, int64_t end,
                     double* mean) {
  // First interval that ends after the kernel starts.
  auto it = std::upper_bound(series.begin(), series.end(), start,
                             [](int64_t t, const CounterInterval& c) { return t < c.end_ns; });
  double sum = 0;
  uint32_t n = 0;
  for (; it != series.end() && it->start_ns < end; ++it) {
    const int64_t len = it->end_ns - it->start_ns;
    const int64_t overlap = std::min(end, it->end_ns) - std::max(start, it->start_ns);
    if (len <= 0 || static_cast<double>(overlap) < kMinSampleCoverage * static_cast<double>(len))
      continue;
    sum += it->value;
    ++n;
  }
  if (n > 0) *mean = sum / n;
  return n;
}

}  // namespace

int64_t FindGpuCounterTrack(const TraceData& data, int32_t device, std::string_view metric) {
  for (size_t i = 0; i < data.counter_tracks.size(); ++i) {
    const CounterTrack& t = data.counter_tracks[i];
    if (t.device == device && t.name == metric) return static_cast<int64_t>(i);
  }
  return -1;
}

std::vector<CounterInterval> CounterIntervals(const TraceData& data, uint32_t track) {
  std::vector<CounterInterval> out;
  for (const CounterSample& s : data.counter_samples) {
    if (s.track != track) continue;
    if (!out.empty()) out.back().end_ns = s.ts_ns;
    out.push_back({s.ts_ns, s.ts_ns, s.value});
  }
  if (out.size() >= 2) {
    std::vector<int64_t> gaps;
    gaps.reserve(out.size() - 1);
    for (size_t i = 0; i + 1 < out.size(); ++i) gaps.push_back(out[i].end_ns - out[i].start_ns);
    std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
    out.back().end_ns = out.back().start_ns + gaps[gaps.size() / 2];
  }
  // A lone sample has no known length: it stays zero-length and counts for no kernel.
  return out;
}

DeviceCounterMeans MeanDeviceCounters(const TraceData& data, int32_t device) {
  DeviceCounterMeans m;
  auto mean_of = [&](const char* metric, double* out) -> std::vector<CounterInterval> {
    const int64_t t = FindGpuCounterTrack(data, device, metric);
    if (t < 0) return {};
    std::vector<CounterInterval> s = CounterIntervals(data, static_cast<uint32_t>(t));
    double sum = 0, len = 0;
    for (const CounterInterval& c : s) {
      const double l = static_cast<double>(c.end_ns - c.start_ns);
      sum += c.value * l;
      len += l;
    }
    if (len > 0) *out = sum / len;
    if (m.samples == 0) m.samples = s.size();
    return s;
  };
  const std::vector<CounterInterval> sm = mean_of(kPmSmActive, &m.sm_active_pct);
  const std::vector<CounterInterval> occ = mean_of(kPmOccupancy, &m.occupancy_pct);
  mean_of(kPmTensorActive, &m.tensor_active_pct);
  mean_of(kPmDramThroughput, &m.dram_throughput_pct);
  // Occupancy weighted by SM activity when both were sampled (same sampler: same stamps).
  if (!sm.empty() && sm.size() == occ.size()) {
    double sum = 0, w = 0;
    for (size_t i = 0; i < sm.size(); ++i) {
      const double weight = sm[i].value * static_cast<double>(sm[i].end_ns - sm[i].start_ns);
      sum += occ[i].value * weight;
      w += weight;
    }
    if (w > 0) m.occupancy_pct = sum / w;
  }
  return m;
}

std::vector<KernelCounters> AttributeKernelCounters(const TraceData& data) {
  std::vector<KernelCounters> out;
  // Per device: the two attributed series (most traces have one or a few devices).
  struct DeviceSeries {
    int32_t device;
    std::vector<CounterInterval> sm, occ;
  };
  std::vector<DeviceSeries> devices;
  for (size_t i = 0; i < data.counter_tracks.size(); ++i) {
    const CounterTrack& t = data.counter_tracks[i];
    if (t.device < 0 || (t.name != kPmSmActive && t.name != kPmOccupancy)) continue;
    auto it = std::find_if(devices.begin(), devices.end(),
                           [&](const DeviceSeries& d) { return d.device == t.device; });
    if (it == devices.end()) it = devices.insert(devices.end(), DeviceSeries{t.device, {}, {}});
    (t.name == kPmSmActive ? it->sm : it->occ) = CounterIntervals(data, static_cast<uint32_t>(i));
  }
  if (devices.empty()) return out;
  for (size_t ti = 0; ti < data.tracks.size() && ti < data.events_by_track.size(); ++ti) {
    const Track& track = data.tracks[ti];
    if (track.type != TrackType::kGpuStream) continue;
    auto dev = std::find_if(devices.begin(), devices.end(), [&](const DeviceSeries& d) {
      return d.device == static_cast<int32_t>(track.device);
    });
    if (dev == devices.end()) continue;
    for (const Event& e : data.events_by_track[ti]) {
      if (e.kind != EventKind::kKernel || e.correlation == 0) continue;
      KernelCounters k;
      k.correlation = e.correlation;
      double v = 0;
      const uint32_t n_sm = CoveredMean(dev->sm, e.start_ns, e.end_ns, &v);
      if (n_sm > 0) k.sm_active_pct = static_cast<float>(v);
      const uint32_t n_occ = CoveredMean(dev->occ, e.start_ns, e.end_ns, &v);
      if (n_occ > 0) k.occupancy_pct = static_cast<float>(v);
      k.samples = std::max(n_sm, n_occ);
      if (k.samples > 0) out.push_back(k);
    }
  }
  std::sort(out.begin(), out.end(), [](const KernelCounters& a, const KernelCounters& b) {
    return a.correlation < b.correlation;
  });
  return out;
}

const KernelCounters* FindKernelCounters(const TraceData& data, uint32_t correlation) {
  const auto& v = data.kernel_counters;
  auto it = std::lower_bound(v.begin(), v.end(), correlation,
                             [](const KernelCounters& k, uint32_t c) { return k.correlation < c; });
  return it != v.end() && it->correlation == correlation ? &*it : nullptr;
}

}  // namespace kairos
