// File: test/sim/tests/sim_pm_test.cc
// The simulator's CUDA 13 PM sampling, observed through pm_client.h (a client written
// only against the real CUPTI headers) while nvcc-built kernels run: SM active follows
// the workload's duty cycle and the grid's SM coverage, achieved occupancy follows the
// shared-memory limit, unknown metrics and the fault knobs fail as CUPTI does.
// Kernel durations are pinned (KAIROS_SIM_KERNEL_TIMES in CMakeLists.txt); host pacing is
// by the monotonic clock the simulator's timeline uses, so no result depends on speed.
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include "pm_client.h"

extern "C" int PmLaunchFull(unsigned grid);
extern "C" int PmLaunchQuarter(unsigned grid);
extern "C" int PmLaunchSmem(unsigned grid, size_t shared);
extern "C" int PmSmemOptIn(int bytes);
extern "C" int PmSmemLimits(size_t shared, int* max_dynamic_shared, int* blocks_per_sm);

namespace {

constexpr const char* kSm = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kOcc = "sm__warps_active.avg.pct_of_peak_sustained_active";
constexpr const char* kTensor = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kDram = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kGr = "gr__cycles_active.avg.pct_of_peak_sustained_elapsed";

int SmCount() {
  int sms = 0;
  REQUIRE(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess);
  return sms;
}

void SpinUntil(std::chrono::steady_clock::time_point t) {
  while (std::chrono::steady_clock::now() < t) {
  }
}

TEST_CASE("SM active follows a 50% duty cycle of full-wave kernels", "[pm_values]") {
  const int sms = SmCount();
  pmclient::Sampler s;
  REQUIRE(s.Open({kSm, kOcc, kTensor, kDram, kGr}, 1'000'000) == CUPTI_SUCCESS);
  // 30 steps of 4 ms: a 2 ms full-wave kernel (pmFull pinned to 2000 us), then idle.
  auto t = std::chrono::steady_clock::now();
  for (int step = 0; step < 30; ++step) {
    REQUIRE(PmLaunchFull(static_cast<unsigned>(sms) * 8) == cudaSuccess);
    t += std::chrono::milliseconds(4);
    SpinUntil(t);
  }
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::vector<pmclient::Sample> samples;
  REQUIRE(s.Collect(&samples) == CUPTI_SUCCESS);
  REQUIRE(samples.size() >= 110);  // 120 ms at 1 ms
  // Whole steps only: samples 2 .. 2 + 4k, away from the loop's first and last step.
  double sm = 0, gr = 0;
  int n = 0;
  for (size_t i = 4; i < 4 + 100 && i < samples.size(); ++i, ++n) {
    sm += samples[i].values[0];
    gr += samples[i].values[4];
    CHECK(samples[i].end > samples[i].start);
    CHECK(samples[i].start >= samples[i - 1].end - 1000);  // consecutive windows
    CHECK(samples[i].values[2] == 0.0);                     // no tensor-core kernel ran
    CHECK(samples[i].values[3] == 0.0);                     // no copy ran
  }
  REQUIRE(n == 100);
  INFO("SM active " << sm / n << "% gr active " << gr / n << "%");
  CHECK(std::fabs(sm / n - 50.0) <= 5.0);
  CHECK(std::fabs(gr / n - 50.0) <= 5.0);
  // A sample fully inside a kernel reads 100% SM active and 100% occupancy (8 blocks of
  // 8 warps fill the 64 warp slots of an H100 SM).
  int full = 0;
  for (const auto& x : samples)
    if (x.values[0] > 99.999) {
      ++full;
      CHECK(std::fabs(x.values[1] - 100.0) < 1e-6);
    }
  CHECK(full >= 20);
}

TEST_CASE("a grid for a quarter of the SMs reads 25% SM active", "[pm_values]") {
  const int sms = SmCount();
  REQUIRE(sms % 4 == 0);
  pmclient::Sampler s;
  REQUIRE(s.Open({kSm, kOcc}, 500'000) == CUPTI_SUCCESS);
  SpinUntil(std::chrono::steady_clock::now() + std::chrono::milliseconds(2));
  REQUIRE(PmLaunchQuarter(static_cast<unsigned>(sms / 4)) == cudaSuccess);  // pinned to 5000 us
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  SpinUntil(std::chrono::steady_clock::now() + std::chrono::milliseconds(2));
  std::vector<pmclient::Sample> samples;
  REQUIRE(s.Collect(&samples) == CUPTI_SUCCESS);
  std::vector<double> during;
  for (const auto& x : samples)
    if (x.values[0] > 0) during.push_back(x.values[0]);
  // 5 ms at 0.5 ms: 10 samples, 11 when the kernel straddles a boundary.
  REQUIRE(during.size() >= 10);
  REQUIRE(during.size() <= 11);
  int exact = 0;
  for (double v : during) {
    CHECK(v <= 25.0 + 1e-9);  // never more SMs than the grid has blocks
    if (std::fabs(v - 25.0) < 1e-6) ++exact;
  }
  CHECK(exact >= 9);  // every sample but the two edge ones is exactly 33/132
}

TEST_CASE("achieved occupancy follows the shared-memory limit", "[pm_values]") {
  const int sms = SmCount();
  // As on a device: 96 KiB of dynamic shared memory needs the kernel's opt-in first; the
  // occupancy API then predicts 2 blocks per SM (2 x 97 KiB of the SM's 228 KiB).
  int max_dyn = 0, blocks = 0;
  REQUIRE(PmSmemLimits(96 * 1024, &max_dyn, &blocks) == cudaSuccess);
  CHECK(max_dyn == 48 * 1024);
  CHECK(blocks == 2);
  CHECK(PmLaunchSmem(static_cast<unsigned>(sms), 96 * 1024) == cudaErrorInvalidValue);
  CHECK(PmSmemOptIn(228 * 1024) == cudaErrorInvalidValue);  // over the opt-in maximum (227 KiB)
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);       // and it is the last error, as in CUDA
  REQUIRE(PmSmemOptIn(96 * 1024) == cudaSuccess);
  REQUIRE(PmSmemLimits(96 * 1024, &max_dyn, &blocks) == cudaSuccess);
  CHECK(max_dyn == 96 * 1024);
  pmclient::Sampler s;
  REQUIRE(s.Open({kSm, kOcc}, 500'000) == CUPTI_SUCCESS);
  REQUIRE(PmLaunchFull(static_cast<unsigned>(sms) * 8) == cudaSuccess);            // 2 ms pinned
  REQUIRE(PmLaunchSmem(static_cast<unsigned>(sms) * 8, 96 * 1024) == cudaSuccess);  // 3 ms pinned
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::vector<pmclient::Sample> samples;
  REQUIRE(s.Collect(&samples) == CUPTI_SUCCESS);
  // 96 KiB per block: 2 blocks (16 warps) of the SM's 64 warp slots fit in 228 KiB.
  int full = 0, limited = 0;
  for (const auto& x : samples) {
    if (x.values[0] < 99.999) continue;  // occupancy is over active cycles; take whole samples
    if (std::fabs(x.values[1] - 100.0) < 1e-6) ++full;
    if (std::fabs(x.values[1] - 25.0) < 1e-6) ++limited;
    CHECK(x.values[1] >= 25.0 - 1e-6);
    CHECK(x.values[1] <= 100.0 + 1e-6);
  }
  CHECK(full >= 3);
  CHECK(limited >= 5);
}

TEST_CASE("an unknown metric fails as CUPTI does", "[pm_errors]") {
  pmclient::Sampler s;
  CHECK(s.Open({kSm, "sm__no_such_counter.avg.pct_of_peak_sustained_elapsed"}, 1'000'000) ==
        CUPTI_ERROR_INVALID_METRIC_NAME);
  CHECK(s.failed_call == "cuptiProfilerHostConfigAddMetrics");
  s.Close();
  // The device is free again afterwards.
  pmclient::Sampler ok;
  CHECK(ok.Open({kSm}, 1'000'000) == CUPTI_SUCCESS);
}

TEST_CASE("a second PM-sampling client on the same device is refused", "[pm_errors]") {
  pmclient::Sampler a, b;
  REQUIRE(a.Open({kSm}, 1'000'000) == CUPTI_SUCCESS);
  // cupti_pmsampling.h: "CUPTI_ERROR_INVALID_OPERATION if PM sampling is already enabled on
  // the device".
  CHECK(b.Open({kSm}, 1'000'000) == CUPTI_ERROR_INVALID_OPERATION);
  CHECK(b.failed_call == "cuptiPmSamplingEnable");
  a.Close();
  pmclient::Sampler c;
  CHECK(c.Open({kSm}, 1'000'000) == CUPTI_SUCCESS);
}

// Run once per KAIROS_SIM_PM_FAULT value (CMakeLists.txt): Enable fails with its code.
TEST_CASE("the PM fault knob fails cuptiPmSamplingEnable", "[pm_fault]") {
  const char* f = std::getenv("KAIROS_SIM_PM_FAULT");
  REQUIRE(f != nullptr);
  const std::string fault = f;
  CUptiResult want = CUPTI_SUCCESS;
  if (fault == "privileges") want = CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  if (fault == "other_client") want = CUPTI_ERROR_HARDWARE_BUSY;
  if (fault == "unsupported") want = CUPTI_ERROR_NOT_SUPPORTED;
  REQUIRE(want != CUPTI_SUCCESS);
  pmclient::Sampler s;
  CHECK(s.Open({kSm}, 1'000'000) == want);
  CHECK(s.failed_call == "cuptiPmSamplingEnable");
  // Kernels still run: only the counters are refused.
  CHECK(PmLaunchFull(8) == cudaSuccess);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
}

}  // namespace
