// File: measured_counters_test.cc
// Layer: tests for kairos_model (gpu_counters) and kairos_analysis. PM-sampling counter
// tracks on a hand-built trace: sample-to-kernel attribution (coverage rule), per-device
// means (occupancy weighted by SM activity), the summary's measured values next to the
// estimates, and findings that prefer measured values. Every expected number is worked out
// in the comments.
// Threading: test thread only.
#include <catch2/catch.hpp>

#include "analysis/summary.h"
#include "model/gpu_counters.h"
#include "trace_builder.h"

namespace kairos {
namespace {

constexpr int64_t kMs = 1000000;

// GPU 0: SM active 100% for samples 0..4 ms, 20% for 5..9 ms; occupancy 50% then 10%.
void AddSamples(TraceData& d, int32_t device = 0) {
  const uint32_t sm = static_cast<uint32_t>(d.counter_tracks.size());
  d.counter_tracks.push_back({kPmSmActive, "%", "GPU 0", device});
  d.counter_tracks.push_back({kPmOccupancy, "%", "GPU 0", device});
  for (int i = 0; i < 10; ++i) {
    d.counter_samples.push_back({i * kMs, i < 5 ? 100.0 : 20.0, sm});
    d.counter_samples.push_back({i * kMs, i < 5 ? 50.0 : 10.0, sm + 1});
  }
}

TEST_CASE("CounterIntervals: each sample lasts until the next, the last one the median gap") {
  TraceData d;
  AddSamples(d);
  auto s = CounterIntervals(d, 0);
  REQUIRE(s.size() == 10);
  CHECK(s[0].start_ns == 0);
  CHECK(s[0].end_ns == kMs);
  CHECK(s[9].start_ns == 9 * kMs);
  CHECK(s[9].end_ns == 10 * kMs);
  CHECK(s[9].value == 20.0);
}

TEST_CASE("AttributeKernelCounters: means of the samples a kernel mostly covers") {
  testing::TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  const uint32_t st = b.Stream(0, 7);
  b.Kernel(st, "a", 0, 5 * kMs, 1);                      // samples 0..4: 100% / 50%
  b.Kernel(st, "b", 5 * kMs + kMs / 5, 9 * kMs + 9 * kMs / 10, 2);  // 5 (0.8), 6, 7, 8, 9 (0.9)
  b.Kernel(st, "c", 2 * kMs + kMs / 10, 2 * kMs + 4 * kMs / 10, 3);  // 0.3 of one sample: none
  b.Kernel(st, "d", 4 * kMs + kMs / 2, 5 * kMs + kMs / 2, 4);      // half of 4 and half of 5
  TraceData& d = b.Done();
  AddSamples(d);
  const auto k = AttributeKernelCounters(d);
  REQUIRE(k.size() == 3);
  CHECK(k[0].correlation == 1);
  CHECK(k[0].samples == 5);
  CHECK(k[0].sm_active_pct == Approx(100.0));
  CHECK(k[0].occupancy_pct == Approx(50.0));
  CHECK(k[1].correlation == 2);
  CHECK(k[1].samples == 5);
  CHECK(k[1].sm_active_pct == Approx(20.0));
  CHECK(k[1].occupancy_pct == Approx(10.0));
  // Exactly half of each of two samples counts (>= 0.5): (100 + 20) / 2.
  CHECK(k[2].correlation == 4);
  CHECK(k[2].samples == 2);
  CHECK(k[2].sm_active_pct == Approx(60.0));
  d.kernel_counters = k;
  CHECK(FindKernelCounters(d, 3) == nullptr);
  REQUIRE(FindKernelCounters(d, 2) != nullptr);
  CHECK(FindKernelCounters(d, 2)->samples == 5);
}

TEST_CASE("AttributeKernelCounters: another device's samples are not a kernel's") {
  testing::TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  b.Device(1);
  const uint32_t st = b.Stream(1, 7);
  b.Kernel(st, "a", 0, 5 * kMs, 1);
  TraceData& d = b.Done();
  AddSamples(d, 0);
  CHECK(AttributeKernelCounters(d).empty());
}

TEST_CASE("MeanDeviceCounters: SM efficiency and occupancy weighted by SM activity") {
  TraceData d;
  AddSamples(d);
  const DeviceCounterMeans m = MeanDeviceCounters(d, 0);
  CHECK(m.samples == 10);
  CHECK(m.sm_active_pct == Approx(60.0));  // (5 x 100 + 5 x 20) / 10
  // (5 x 100 x 50 + 5 x 20 x 10) / (5 x 100 + 5 x 20) = 26000 / 600
  CHECK(m.occupancy_pct == Approx(26000.0 / 600.0));
  CHECK(m.tensor_active_pct == -1.0);
  CHECK(m.dram_throughput_pct == -1.0);
  CHECK(MeanDeviceCounters(d, 1).samples == 0);
}

TEST_CASE("Summary: measured values per GPU and per top kernel next to the estimates") {
  testing::TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t st = b.Stream(0, 7);
  b.Launch(th, 0, kMs / 10, 1);
  b.Kernel(st, "a", 0, 5 * kMs, 1);
  b.Launch(th, 5 * kMs, 5 * kMs + kMs / 10, 2);
  b.Kernel(st, "b", 5 * kMs + kMs / 5, 9 * kMs + 9 * kMs / 10, 2);
  TraceData& d = b.Done();
  AddSamples(d);
  const Summary s = Analyze(d);
  REQUIRE(s.devices.size() == 1);
  CHECK(s.devices[0].measured_sm_active_pct == Approx(60.0));
  CHECK(s.devices[0].measured_occupancy_pct == Approx(26000.0 / 600.0));
  CHECK(s.devices[0].pm_samples == 10);
  CHECK(s.devices[0].est_occupancy_pct >= 0);  // still reported beside the measured value
  REQUIRE(s.top_kernels.size() == 2);
  CHECK(s.top_kernels[0].name == "a");
  CHECK(s.top_kernels[0].measured_sm_active_pct == Approx(100.0));
  CHECK(s.top_kernels[0].measured_occupancy_pct == Approx(50.0));
  CHECK(s.top_kernels[0].est_occupancy_pct >= 0);
  CHECK(s.top_kernels[1].measured_sm_active_pct == Approx(20.0));
  const std::string json = SummaryToJson(s);
  CHECK(json.find("\"measured\":{\"sm_efficiency_pct\":60") != std::string::npos);
  CHECK(SummaryToText(s).find("measured SM efficiency 60%") != std::string::npos);
}

TEST_CASE("Findings: measured occupancy overrules the theoretical estimate") {
  // 20 kernels of 0.4 ms with full theoretical occupancy (256 threads, 32 registers) but
  // measured occupancy 10%: low_occupancy fires with high confidence from the measurement.
  testing::TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t st = b.Stream(0, 7);
  TraceData& d0 = b.data();
  d0.counter_tracks.push_back({kPmSmActive, "%", "GPU 0", 0});
  d0.counter_tracks.push_back({kPmOccupancy, "%", "GPU 0", 0});
  for (int i = 0; i < 20; ++i) {
    const int64_t s = i * kMs / 2;
    b.Launch(th, s, s + 1000, static_cast<uint32_t>(i + 1));
    b.Kernel(st, "my_kernel", s, s + 4 * kMs / 10, static_cast<uint32_t>(i + 1));
    // One 0.1 ms sample per 0.1 ms of the window.
  }
  for (int j = 0; j < 100; ++j) {
    d0.counter_samples.push_back({j * kMs / 10, 95.0, 0});
    d0.counter_samples.push_back({j * kMs / 10, 10.0, 1});
  }
  const Summary s = Analyze(b.Done());
  const Finding* low = nullptr;
  for (const Finding& f : s.findings)
    if (f.id == "low_occupancy") low = &f;
  REQUIRE(low != nullptr);
  CHECK(low->confidence == "high");
  bool has_measured = false;
  for (const auto& [k, v] : low->evidence)
    if (k == "median_measured_occupancy_pct") has_measured = v == 10.0;
  CHECK(has_measured);

  // Without the counters the same kernels are not flagged (theoretical occupancy is 100%).
  testing::TraceBuilder b2(0, 10 * kMs);
  b2.Device(0);
  const uint32_t th2 = b2.Thread();
  const uint32_t st2 = b2.Stream(0, 7);
  for (int i = 0; i < 20; ++i) {
    const int64_t s2 = i * kMs / 2;
    b2.Launch(th2, s2, s2 + 1000, static_cast<uint32_t>(i + 1));
    b2.Kernel(st2, "my_kernel", s2, s2 + 4 * kMs / 10, static_cast<uint32_t>(i + 1));
  }
  for (const Finding& f : Analyze(b2.Done()).findings) CHECK(f.id != "low_occupancy");
}

}  // namespace
}  // namespace kairos
