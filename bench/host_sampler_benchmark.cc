// File: host_sampler_benchmark.cc
// Layer: benchmarks. CPU cost of the host metrics sampler. (1) The sampler's real thread
// at the given interval (default 100 ms) for a few seconds while the main thread sleeps:
// process CPU time over the run minus an idle baseline of the same length measured in the
// same run, as % of one core (target <= 0.5%). (2) The cost of one sample (all /proc reads
// and parsing) from a tight loop, and what it projects to at the interval.
// Usage: host_sampler_benchmark [seconds (default 5)] [interval_ms (default 100)]
// Threading: main thread + the sampler's thread.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "bench_headline.h"
#include "util/clock.h"
#include "counters/host_sampler.h"

namespace kairos {
namespace {

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// CPU seconds the process uses while the main thread sleeps `seconds`, optionally with a
// recording sampler running.
double CpuOver(double seconds, bool with_sampler, int64_t interval_ms, uint64_t* samples) {
  HostSampler sampler;
  Config config;
  config.host_metrics_interval_ms = interval_ms;
  const double c0 = ProcessCpuSeconds();
  if (with_sampler) {
    if (!sampler.StartWarmup(config).ok()) return -1;
    sampler.StartRecording(UnixNowNs());
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  if (with_sampler) {
    sampler.StopRecording(UnixNowNs());
    TraceData data;
    sampler.Collect(data);
    *samples = data.stats["host_counter_samples"];
    sampler.Reset();
  }
  return ProcessCpuSeconds() - c0;
}

}  // namespace
}  // namespace kairos

int main(int argc, char** argv) {
  using namespace kairos;
  const double seconds = argc > 1 ? std::atof(argv[1]) : 5.0;
  const int64_t interval_ms = argc > 2 ? std::atoll(argv[2]) : 100;
  uint64_t values = 0;
  const double idle = CpuOver(seconds, false, interval_ms, &values);
  const double with = CpuOver(seconds, true, interval_ms, &values);
  const double cost_pct = 100.0 * (with - idle) / seconds;
  std::printf("host_sampler: interval %lld ms over %.1f s: %llu values recorded\n",
              static_cast<long long>(interval_ms), seconds, static_cast<unsigned long long>(values));
  std::printf("  process CPU: idle baseline %.4f s, with sampler %.4f s\n", idle, with);
  std::printf("  sampler cost: %.3f%% of one core (target <= 0.5%%) -> %s\n", cost_pct,
              cost_pct <= 0.5 ? "OK" : "OVER TARGET");
  bench::Headline("host_sampler_benchmark", "cost_pct_of_core", cost_pct, bench::Better::kLower,
                  "%", 0.5);

  // One sample in a tight loop (every Tick is due: the injected clock jumps an interval).
  int64_t fake_now = 1700000000000000000;
  HostSamplerOptions o;
  o.run_thread = false;
  o.clock = [&fake_now] { return fake_now; };
  HostSampler sampler(o);
  Config config;
  config.host_metrics_interval_ms = interval_ms;
  if (!sampler.StartWarmup(config).ok()) return 1;
  sampler.StartRecording(fake_now);
  const int kIters = 2000;
  const double c0 = ProcessCpuSeconds();
  for (int i = 0; i < kIters; ++i) {
    fake_now += interval_ms * 1000000;
    sampler.Tick(fake_now);
  }
  const double per_sample_us = (ProcessCpuSeconds() - c0) / kIters * 1e6;
  std::printf("  one sample: %.1f us CPU -> %.3f%% of one core at %lld ms (ratio to the "
              "interval: 1/%.0f)\n",
              per_sample_us, 100.0 * per_sample_us / (static_cast<double>(interval_ms) * 1000.0),
              static_cast<long long>(interval_ms),
              static_cast<double>(interval_ms) * 1000.0 / per_sample_us);
  bench::Headline("host_sampler_benchmark", "one_sample_us", per_sample_us, bench::Better::kLower,
                  "us");
  sampler.StopRecording(fake_now);
  sampler.Reset();
  return 0;
}
