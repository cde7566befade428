// File: test/sim/tests/sim_fault_test.cc
// Layer: simulator tests: one test per fault knob and per environment
//        setting. Each runs in its own ctest process with the knob set (see
//        CMakeLists.txt); the default run excludes the [.fault] tag.
// Threading: single-threaded tests.
#include <catch2/catch.hpp>
#include <cuda_runtime.h>
#include <cupti.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "sim_test_util.h"

using ksim_test::Kinds;
using ksim_test::Of;
using ksim_test::Take;

TEST_CASE("KAIROS_SIM_CUPTI_FAIL forces CUPTI results", "[.fault][fail]") {
  // Env: KAIROS_SIM_CUPTI_FAIL=cuptiActivityEnable=999,cuptiSubscribe=39
  CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME) == CUPTI_ERROR_UNKNOWN);
  CUpti_SubscriberHandle sub = nullptr;
  CHECK(cuptiSubscribe(&sub, nullptr, nullptr) == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  CHECK(cuptiGetLastError() == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  uint32_t version = 0;
  CHECK(cuptiGetVersion(&version) == CUPTI_SUCCESS);  // others unaffected
}

TEST_CASE("KAIROS_SIM_CUPTI_WITHHOLD_BUFFERS drops and counts records", "[.fault][withhold]") {
  // Env: KAIROS_SIM_CUPTI_WITHHOLD_BUFFERS=all
  Kinds kinds({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);  // reset
  for (int i = 0; i < 10; ++i) REQUIRE(KsimLaunchPinned(nullptr) == cudaSuccess);
  auto records = Take();
  CHECK(records.empty());
  REQUIRE(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS);
  // 10 launches + 10 cudaGetLastError + 1 sync runtime records, 10 kernels.
  CHECK(dropped == 31u);
  REQUIRE(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS);
  CHECK(dropped == 0u);  // reset on read
}

TEST_CASE("KAIROS_SIM_CUPTI_COMPLETE_DELAY_MS delivers buffers after the flush", "[.fault][delay]") {
  // Env: KAIROS_SIM_CUPTI_COMPLETE_DELAY_MS=200
  Kinds kinds({CUPTI_ACTIVITY_KIND_RUNTIME});
  size_t before = ksim_test::DeliveredBuffers();
  int n = 0;
  cudaGetDeviceCount(&n);
  auto t0 = std::chrono::steady_clock::now();
  cuptiActivityFlushAll(0);
  CHECK(ksim_test::DeliveredBuffers() == before);
  while (ksim_test::DeliveredBuffers() == before &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  auto waited = std::chrono::steady_clock::now() - t0;
  CHECK(ksim_test::DeliveredBuffers() == before + 1);
  CHECK(waited >= std::chrono::milliseconds(190));
  auto api = Of<CUpti_ActivityAPI>(Take(0, true), CUPTI_ACTIVITY_KIND_RUNTIME);
  REQUIRE(api.size() >= 1u);
  CHECK(api[0].cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020);
}

TEST_CASE("KAIROS_SIM_CUPTI_OTHER_SUBSCRIBER reports another tool", "[.fault][subscriber]") {
  // Env: KAIROS_SIM_CUPTI_OTHER_SUBSCRIBER=nsys
  char old_name[64] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "kairos";
  params.oldSubscriberName = old_name;
  params.oldSubscriberSize = sizeof(old_name);
  CUpti_SubscriberHandle sub = nullptr;
  CHECK(cuptiSubscribe_v2(&sub, nullptr, nullptr, &params) == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  CHECK(sub == nullptr);
  CHECK(std::string(old_name) == "CUPTI for nsys");
}

TEST_CASE("KAIROS_SIM_CUPTI_REORDER reverses records within a buffer", "[.fault][reorder]") {
  // Env: KAIROS_SIM_CUPTI_REORDER=1
  Kinds kinds({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  for (int i = 0; i < 5; ++i) REQUIRE(KsimLaunchPinned(nullptr) == cudaSuccess);
  auto kernels = Of<CUpti_ActivityKernel10>(Take(), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  REQUIRE(kernels.size() == 5u);
  for (size_t i = 1; i < kernels.size(); ++i) CHECK(kernels[i].start < kernels[i - 1].start);
}

TEST_CASE("KAIROS_SIM_STOP_DEVICE_AFTER makes calls fail", "[.fault][stop]") {
  // Env: KAIROS_SIM_STOP_DEVICE_AFTER=3
  float* d = nullptr;
  CHECK(cudaMalloc(&d, 64) == cudaSuccess);                     // call 1
  CHECK(KsimLaunchScale(d, 16, 1, 32, nullptr) == cudaSuccess);  // calls 2 (launch) and 3 (cudaGetLastError)
  CHECK(cudaDeviceSynchronize() == cudaErrorDevicesUnavailable);
  CHECK(KsimLaunchScale(d, 16, 1, 32, nullptr) == cudaErrorDevicesUnavailable);
  CHECK(cudaFree(d) == cudaErrorDevicesUnavailable);
}

TEST_CASE("no device: calls fail with cudaErrorNoDevice", "[.fault][nodevice]") {
  // Env: KAIROS_SIM_DEVICES=none
  int n = -1;
  CHECK(cudaGetDeviceCount(&n) == cudaErrorNoDevice);
  CHECK(n == 0);
  float* d = nullptr;
  CHECK(cudaMalloc(&d, 64) == cudaErrorNoDevice);
  CHECK(KsimLaunchScale(nullptr, 16, 1, 32, nullptr) == cudaErrorNoDevice);
  CHECK(cudaDeviceSynchronize() == cudaErrorNoDevice);
}

TEST_CASE("KAIROS_SIM_DEVICES selects presets", "[.fault][devices]") {
  // Env: KAIROS_SIM_DEVICES=a100:2
  int n = 0;
  REQUIRE(cudaGetDeviceCount(&n) == cudaSuccess);
  CHECK(n == 2);
  cudaDeviceProp prop;
  REQUIRE(cudaGetDeviceProperties(&prop, 1) == cudaSuccess);
  CHECK(prop.multiProcessorCount == 108);
  CHECK(prop.major == 8);
  CHECK(std::string(prop.name).find("A100") != std::string::npos);
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  int dev = -1;
  REQUIRE(cudaGetDevice(&dev) == cudaSuccess);
  CHECK(dev == 1);
}

TEST_CASE("CUDA_INJECTION64_PATH is loaded on the first runtime call", "[.fault][injection]") {
  // Env: CUDA_INJECTION64_PATH=<libksim_test_inject.so>
  CHECK(std::getenv("KSIM_INJECTED") == nullptr);
  int n = 0;
  cudaGetDeviceCount(&n);
  cudaGetDeviceCount(&n);
  const char* injected = std::getenv("KSIM_INJECTED");
  REQUIRE(injected != nullptr);
  CHECK(std::string(injected) == "1");  // exactly once
}
