// File: pm_source_test.cc
// Layer: tests for kairos_counters. The PM-sampling source with a fake platform (no CUPTI):
// which configs turn it on and with which metrics, samples becoming one counter track per
// (GPU, metric) under the GPU, only inside the window, the bound on stored values, and the
// error paths (every GPU failing makes the source sit out with one message; one GPU failing
// leaves a warning in the trace). The CUPTI path is tested on the simulator
// (test/sim/tests/sim_pm_sampling_test.cc).
// Threading: test thread only (run_thread = false; Poll() is called directly).
#include "counters/pm_source.h"

#include <map>

#include <catch2/catch.hpp>

#include "model/gpu_counters.h"

namespace kairos {
namespace {

constexpr int64_t kMs = 1000000;

struct FakeState {
  std::map<uint32_t, std::vector<PmSample>> pending;  // per device, handed out at its next Poll
  std::vector<uint32_t> started;     // devices Start was called for
  std::vector<std::string> metrics;  // as configured
  uint32_t fail_device = 99;         // Start fails for this device
  int stops = 0;
};

class FakeSampler : public PmSampler {
 public:
  explicit FakeSampler(FakeState* s) : s_(s) {}
  absl::Status Start(uint32_t device, const std::vector<std::string>& metrics,
                     int64_t interval_ns) override {
    (void)interval_ns;
    if (device == s_->fail_device)
      return absl::UnavailableError("cuptiPmSamplingEnable failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)");
    device_ = device;
    s_->started.push_back(device);
    s_->metrics = metrics;
    return absl::OkStatus();
  }
  absl::Status Poll(std::vector<PmSample>* out, bool* overflowed) override {
    (void)overflowed;
    for (const PmSample& p : s_->pending[device_]) out->push_back(p);
    s_->pending[device_].clear();
    return absl::OkStatus();
  }
  void Stop() override { ++s_->stops; }

 private:
  FakeState* s_;
  uint32_t device_ = 0;
};

class FakePlatform : public PmPlatform {
 public:
  FakePlatform(FakeState* s, int devices) : s_(s), devices_(devices) {}
  int DeviceCount() override { return devices_; }
  std::unique_ptr<PmSampler> Open() override { return std::make_unique<FakeSampler>(s_); }

 private:
  FakeState* s_;
  int devices_;
};

PmSourceOptions Options(FakeState* s, int devices) {
  PmSourceOptions o;
  o.platform = [s, devices] { return std::make_unique<FakePlatform>(s, devices); };
  o.run_thread = false;
  return o;
}

PmSample Sample(int64_t start, std::vector<double> values) {
  PmSample p;
  p.start_ns = start;
  p.end_ns = start + kMs;
  p.values = std::move(values);
  return p;
}

TEST_CASE("PM sampling: requested by the metric list or the hardware_counters type") {
  Config c;
  CHECK_FALSE(PmSamplingRequested(c));
  c.activity_types |= ActivityBit(ActivityType::kHardwareCounters);
  CHECK(PmSamplingRequested(c));
  CHECK(PmMetricsFor(c) == DefaultPmMetrics());
  CHECK(DefaultPmMetrics().size() == 4);
  Config m;
  m.pm_sampling_metrics = {"a__x", "b__y", "a__x"};
  CHECK(PmSamplingRequested(m));
  CHECK(PmMetricsFor(m) == std::vector<std::string>{"a__x", "b__y"});
  m.activities_enabled = false;
  CHECK_FALSE(PmSamplingRequested(m));
}

TEST_CASE("PM source: one track per GPU and metric, under the GPU, inside the window only") {
  FakeState st;
  PmSamplingSource src(Options(&st, 2));
  Config c;
  c.pm_sampling_metrics = {kPmSmActive, kPmOccupancy};
  REQUIRE(src.StartWarmup(c).ok());
  CHECK(st.started == std::vector<uint32_t>{0, 1});
  st.pending[0] = {Sample(1 * kMs, {1, 2})};  // warm-up: dropped
  src.StartRecording(10 * kMs);
  st.pending[0] = {Sample(10 * kMs, {50, 25}), Sample(11 * kMs, {100, 40})};
  src.Poll();
  st.pending[1] = {Sample(12 * kMs, {30, 20}), Sample(20 * kMs, {7, 7})};
  src.StopRecording(20 * kMs);  // the sample at the window end lies outside
  TraceData d;
  d.window_start_ns = 10 * kMs;
  d.window_end_ns = 20 * kMs;
  src.Collect(d);
  REQUIRE(d.counter_tracks.size() == 4);
  CHECK(d.counter_tracks[0].name == kPmSmActive);
  CHECK(d.counter_tracks[0].device == 0);
  CHECK(d.counter_tracks[0].unit == "%");
  CHECK(d.counter_tracks[0].group == "GPU 0");
  CHECK(d.counter_tracks[1].name == kPmOccupancy);
  CHECK(d.counter_tracks[2].device == 1);
  REQUIRE(d.counter_samples.size() == 6);
  CHECK(d.counter_samples[0].ts_ns == 10 * kMs);
  CHECK(d.counter_samples[0].value == 50);
  CHECK(d.counter_samples[5].ts_ns == 12 * kMs);
  CHECK(d.stats["pm_samples"] == 6);
  CHECK(st.stops == 2);
  src.Reset();
}

TEST_CASE("PM source: CUPTI_PM_SAMPLING_DEVICE_ID picks one GPU; values are bounded") {
  FakeState st;
  PmSourceOptions o = Options(&st, 4);
  o.max_values = 3;
  PmSamplingSource src(o);
  Config c;
  c.activity_types |= ActivityBit(ActivityType::kHardwareCounters);
  c.pm_sampling_device_id = 2;
  REQUIRE(src.StartWarmup(c).ok());
  CHECK(st.started == std::vector<uint32_t>{2});
  CHECK(st.metrics == DefaultPmMetrics());
  src.StartRecording(0);
  st.pending[2] = {Sample(0, {1, 2, 3, 4}), Sample(kMs, {1, 2, 3, 4})};
  src.StopRecording(10 * kMs);
  TraceData d;
  src.Collect(d);
  CHECK(d.counter_samples.size() == 3);
  CHECK(d.stats["pm_samples_dropped"] == 5);
  CHECK(d.counter_tracks[0].device == 2);
}

TEST_CASE("PM source: no GPU can sample: one error, the source sits the trace out") {
  FakeState st;
  st.fail_device = 0;
  PmSamplingSource src(Options(&st, 1));
  Config c;
  c.activity_types |= ActivityBit(ActivityType::kHardwareCounters);
  absl::Status s = src.StartWarmup(c);
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message()) ==
        "PM sampling unavailable, trace has no GPU counters: GPU 0: cuptiPmSamplingEnable "
        "failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)");
}

TEST_CASE("PM source: one GPU failing leaves the others sampling and a warning") {
  FakeState st;
  st.fail_device = 1;
  PmSamplingSource src(Options(&st, 2));
  Config c;
  c.activity_types |= ActivityBit(ActivityType::kHardwareCounters);
  REQUIRE(src.StartWarmup(c).ok());
  src.StartRecording(0);
  src.StopRecording(kMs);
  TraceData d;
  src.Collect(d);
  REQUIRE(d.warnings.size() == 1);
  CHECK(d.warnings[0].find("GPU 1: cuptiPmSamplingEnable failed") != std::string::npos);
}

TEST_CASE("PM source: off unless asked") {
  FakeState st;
  PmSamplingSource src(Options(&st, 1));
  REQUIRE(src.StartWarmup(Config{}).ok());
  CHECK(st.started.empty());
  src.StartRecording(0);
  src.StopRecording(kMs);
  TraceData d;
  src.Collect(d);
  CHECK(d.counter_tracks.empty());
  CHECK(d.stats.count("pm_samples") == 0);
}

}  // namespace
}  // namespace kairos
