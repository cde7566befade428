// File: pm_source.h
// Layer: kairos_counters. The "pm_sampling" TraceSource: CUPTI PM sampling (CUDA 13's
// cupti_pmsampling.h) of GPU-wide hardware counters — SM active, achieved occupancy, tensor
// pipe active, DRAM throughput by default — at KAIROS_PM_SAMPLING_INTERVAL_US, turned into
// one counter track per (GPU, metric) under that GPU's process, and attributed to the
// kernels they overlap (gpu_counters.h). docs/COUNTERS.md.
// Enabled for a session when CUPTI_PM_SAMPLING_METRICS names metrics or ACTIVITY_TYPES
// includes hardware_counters (then the default metrics unless a list is given).
// Threading: every TraceSource method runs on the session runner thread; one poll thread of
// the source's own decodes the samplers between StartWarmup and StopRecording. mu_ guards
// what they share.
#ifndef KAIROS_SRC_COUNTERS_PM_SOURCE_H_
#define KAIROS_SRC_COUNTERS_PM_SOURCE_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config/config.h"  // the sources take a Config (trace_source.h only declares it)
#include "counters/pm_backend.h"
#include "model/trace_source.h"

namespace kairos {

class Telemetry;

// The metrics sampled when hardware_counters is enabled without CUPTI_PM_SAMPLING_METRICS
// (a fresh list per call: read when a source is configured, not per sample).
std::vector<std::string> DefaultPmMetrics();

// Whether `config` asks for PM sampling, and with which metrics.
bool PmSamplingRequested(const Config& config);
std::vector<std::string> PmMetricsFor(const Config& config);

struct PmSourceOptions {
  // Nullptr: the CUPTI platform (CUDA builds; otherwise PM sampling is unavailable).
  std::function<std::unique_ptr<PmPlatform>()> platform;
  std::string cupti_library;        // KAIROS_CUPTI_LIBRARY, for the CUPTI platform
  bool run_thread = true;           // false: tests call Poll() themselves
  int64_t poll_interval_ms = 100;   // how often the thread decodes the hardware buffers
  // Bound on stored values (one value = one metric of one sample, 24 bytes): 4 metrics at
  // 1 ms fill it in about 4 minutes of window; later values are dropped and counted.
  size_t max_values = size_t{1} << 20;
  // Not owned; when set, telemetry's own samplers pause while this source samples and it is
  // fed the decoded samples instead (one PM-sampling session per GPU).
  Telemetry* telemetry = nullptr;
};

class PmSamplingSource : public TraceSource {
 public:
  explicit PmSamplingSource(PmSourceOptions options = {});
  ~PmSamplingSource() override;
  PmSamplingSource(const PmSamplingSource&) = delete;
  PmSamplingSource& operator=(const PmSamplingSource&) = delete;

  const char* name() const override { return "pm_sampling"; }
  absl::Status StartWarmup(const Config& config) override;
  // When sampling was on for every GPU that samples (0: not sampling). The first PM start of a
  // process can take hundreds of ms on a real GPU (libnvperf_host loads); an iteration window
  // that began before then moves its start, as for CUPTI (TraceSource::ReadyRaw).
  uint64_t ReadyRaw() const override { return ready_raw_; }
  void StartRecording(int64_t window_start_ns) override;
  void StopRecording(int64_t window_end_ns) override;
  void Collect(TraceData& data) override;
  void Reset() override;

  // Decodes every sampler once (the poll thread's step; tests call it directly).
  void Poll();

 private:
  uint64_t ready_raw_ = 0;  // StartWarmup and ReadyRaw: the session thread only
  struct Device {
    uint32_t ordinal;
    std::unique_ptr<PmSampler> sampler;
  };
  struct Value {
    int64_t ts_ns;
    double value;
    uint32_t device;   // index into devices_
    uint32_t metric;   // index into metrics_
  };
  void PollLocked();
  void StopThread();
  void StopSamplersLocked();
  void ThreadMain();

  PmSourceOptions options_;
  std::unique_ptr<PmPlatform> platform_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  bool stop_ = false;                   // guarded by mu_
  bool enabled_ = false;                // guarded by mu_
  std::vector<std::string> metrics_;    // guarded by mu_
  std::vector<Device> devices_;         // guarded by mu_ (samplers that started)
  std::vector<uint32_t> ordinals_;      // guarded by mu_: device index -> GPU ordinal
  std::vector<std::string> failures_;   // guarded by mu_: devices that could not sample
  int64_t interval_ns_ = 0;
  int64_t window_start_ns_ = 0, window_end_ns_ = INT64_MAX;
  std::vector<Value> values_;           // guarded by mu_
  std::vector<PmSample> scratch_;       // guarded by mu_
  uint64_t dropped_ = 0, overflows_ = 0, poll_errors_ = 0;  // guarded by mu_
};

}  // namespace kairos

#endif  // KAIROS_SRC_COUNTERS_PM_SOURCE_H_
