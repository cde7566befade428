// File: test/sim/tests/sim_cupti_test.cc
// Layer: simulator tests: the substitute libcupti.so.13 seen through the real
//        CUDA 13 headers (layouts, activity API, callback API).
// Threading: single-threaded tests; CUPTI delivers from its worker thread.
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>

#include "sim_test_util.h"

using ksim_test::Kinds;
using ksim_test::Of;
using ksim_test::Take;

// Record layouts of CUDA 13.0 U1 (facts doc §5/§6): the simulator writes the
// header structs, so these pin that the headers are the ones we expect.
static_assert(sizeof(CUpti_ActivityKernel10) == 216, "Kernel10");
static_assert(offsetof(CUpti_ActivityKernel10, start) == 16, "Kernel10.start");
static_assert(offsetof(CUpti_ActivityKernel10, correlationId) == 92, "Kernel10.correlationId");
static_assert(offsetof(CUpti_ActivityKernel10, name) == 104, "Kernel10.name");
static_assert(offsetof(CUpti_ActivityKernel10, queued) == 120, "Kernel10.queued");
static_assert(offsetof(CUpti_ActivityKernel10, graphNodeId) == 144, "Kernel10.graphNodeId");
static_assert(offsetof(CUpti_ActivityKernel10, graphId) == 156, "Kernel10.graphId");
static_assert(offsetof(CUpti_ActivityKernel10, isDeviceLaunched) == 208, "Kernel10.isDeviceLaunched");
static_assert(sizeof(CUpti_ActivityMemcpy6) == 96, "Memcpy6");
static_assert(offsetof(CUpti_ActivityMemcpy6, correlationId) == 44, "Memcpy6.correlationId");
static_assert(offsetof(CUpti_ActivityMemcpy6, copyCount) == 88, "Memcpy6.copyCount");
static_assert(sizeof(CUpti_ActivityMemcpyPtoP4) == 96, "MemcpyPtoP4");
static_assert(offsetof(CUpti_ActivityMemcpyPtoP4, correlationId) == 60, "PtoP4.correlationId");
static_assert(sizeof(CUpti_ActivityMemset4) == 88, "Memset4");
static_assert(offsetof(CUpti_ActivityMemset4, flags) == 48, "Memset4.flags");
static_assert(sizeof(CUpti_ActivityAPI) == 40, "ActivityAPI");
static_assert(offsetof(CUpti_ActivityAPI, correlationId) == 32, "ActivityAPI.correlationId");
static_assert(sizeof(CUpti_ActivitySynchronization2) == 56, "Synchronization2");
static_assert(offsetof(CUpti_ActivitySynchronization2, cudaEventSyncId) == 40, "Sync2.cudaEventSyncId");
static_assert(sizeof(CUpti_ActivityExternalCorrelation) == 24, "ExternalCorrelation");
static_assert(offsetof(CUpti_ActivityExternalCorrelation, correlationId) == 16, "ExtCorr.correlationId");
static_assert(sizeof(CUpti_ActivityOverhead3) == 56, "Overhead3");
static_assert(sizeof(CUpti_ActivityDevice5) == 184, "Device5");
static_assert(offsetof(CUpti_ActivityDevice5, name) == 136, "Device5.name");
static_assert(sizeof(CUpti_ActivityContext3) == 32, "Context3");
static_assert(sizeof(CUpti_ActivityGraphTrace2) == 56, "GraphTrace2");
static_assert(offsetof(CUpti_ActivityGraphTrace2, endDeviceId) == 48, "GraphTrace2.endDeviceId");
static_assert(sizeof(CUpti_ActivityMemory4) == 128, "Memory4");
static_assert(offsetof(CUpti_ActivityMemory4, source) == 120, "Memory4.source");
static_assert(sizeof(CUpti_CallbackData) == 72, "CallbackData");

TEST_CASE("the substitutes are the libraries that got loaded", "[cupti]") {
  REQUIRE(dlsym(RTLD_DEFAULT, "KSimApiEnter") != nullptr);
  uint32_t version = 0;
  REQUIRE(cuptiGetVersion(&version) == CUPTI_SUCCESS);
  CHECK(version == 130001u);
  int runtime = 0;
  REQUIRE(cudaRuntimeGetVersion(&runtime) == cudaSuccess);
  CHECK(runtime == 13000);
}

TEST_CASE("callback names are the header names", "[cupti]") {
  const char* name = nullptr;
  REQUIRE(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, 211, &name) == CUPTI_SUCCESS);
  CHECK(std::string(name) == "cudaLaunchKernel_v7000");
  REQUIRE(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, 505, &name) == CUPTI_SUCCESS);
  CHECK(std::string(name) == "__cudaLaunchKernel_v13000");
  REQUIRE(cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, 307, &name) == CUPTI_SUCCESS);
  CHECK(std::string(name) == "cuLaunchKernel");
  CHECK(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, 100000, &name) == CUPTI_ERROR_INVALID_PARAMETER);
}

TEST_CASE("GetNextRecord walks current strides and stops at partial records", "[cupti]") {
  alignas(8) uint8_t buf[sizeof(CUpti_ActivityAPI) + sizeof(CUpti_ActivityKernel10)] = {};
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  std::memcpy(buf, &api, sizeof(api));
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  std::memcpy(buf + sizeof(api), &k, sizeof(k));
  CUpti_Activity* rec = nullptr;
  REQUIRE(cuptiActivityGetNextRecord(buf, sizeof(buf), &rec) == CUPTI_SUCCESS);
  CHECK(reinterpret_cast<uint8_t*>(rec) == buf);
  REQUIRE(cuptiActivityGetNextRecord(buf, sizeof(buf), &rec) == CUPTI_SUCCESS);
  CHECK(reinterpret_cast<uint8_t*>(rec) == buf + 40);
  CHECK(cuptiActivityGetNextRecord(buf, sizeof(buf), &rec) == CUPTI_ERROR_MAX_LIMIT_REACHED);
  rec = nullptr;
  CUpti_Activity* first = nullptr;
  REQUIRE(cuptiActivityGetNextRecord(buf, sizeof(buf) - 8, &first) == CUPTI_SUCCESS);
  CHECK(cuptiActivityGetNextRecord(buf, sizeof(buf) - 8, &first) == CUPTI_ERROR_MAX_LIMIT_REACHED);
  alignas(8) uint8_t zero[64] = {};
  CHECK(cuptiActivityGetNextRecord(zero, sizeof(zero), &rec) == CUPTI_ERROR_INVALID_KIND);
}

TEST_CASE("activity attributes keep CUDA 13 defaults and check sizes", "[cupti]") {
  size_t value = 0, size = sizeof(value);
  REQUIRE(cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &value) == CUPTI_SUCCESS);
  CHECK(value == 3200000u);
  uint8_t per_thread = 0;
  size = 1;
  REQUIRE(cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &size, &per_thread) ==
          CUPTI_SUCCESS);
  CHECK(per_thread == 1);
  size = 4;
  CHECK(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &value) ==
        CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
}

namespace {

struct CallbackLog {
  int enters = 0;
  int exits = 0;
  uint32_t enter_corr = 0;
  uint32_t exit_corr = 0;
  bool correlation_data_shared = false;
  std::string symbol;
  std::string function;
  int streams_created = 0;
};

void OnCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  auto* log = static_cast<CallbackLog*>(userdata);
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_STREAM_CREATED) {
    ++log->streams_created;
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
  auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (cb->callbackSite == CUPTI_API_ENTER) {
    ++log->enters;
    log->enter_corr = cb->correlationId;
    *cb->correlationData = 0xfeedull;
    log->function = cb->functionName;
    if (cb->symbolName != nullptr) log->symbol = cb->symbolName;
  } else {
    ++log->exits;
    log->exit_corr = cb->correlationId;
    log->correlation_data_shared = *cb->correlationData == 0xfeedull;
  }
}

}  // namespace

TEST_CASE("callback API: single subscriber, enter/exit pairs, resource callbacks", "[cupti]") {
  CallbackLog log;
  CUpti_SubscriberHandle sub = nullptr;
  REQUIRE(cuptiSubscribe(&sub, OnCallback, &log) == CUPTI_SUCCESS);
  CUpti_SubscriberHandle second = nullptr;
  CHECK(cuptiSubscribe(&second, OnCallback, &log) == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  CHECK(second == nullptr);
  REQUIRE(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
                              CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000) == CUPTI_SUCCESS);
  REQUIRE(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RESOURCE) == CUPTI_SUCCESS);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  REQUIRE(KsimLaunchPinned(s) == cudaSuccess);
  CHECK(log.enters == 1);
  CHECK(log.exits == 1);
  CHECK(log.enter_corr == log.exit_corr);
  CHECK(log.enter_corr != 0u);
  CHECK(log.correlation_data_shared);
  CHECK(log.function == "__cudaLaunchKernel");
  CHECK(log.symbol == "_Z16ksimPinnedKernelPi");
  CHECK(log.streams_created == 1);
  REQUIRE(cuptiUnsubscribe(sub) == CUPTI_SUCCESS);
  REQUIRE(KsimLaunchPinned(s) == cudaSuccess);
  CHECK(log.enters == 1);  // no callbacks after unsubscribe
  CUpti_SubscriberHandle again = nullptr;
  CHECK(cuptiSubscribe(&again, OnCallback, &log) == CUPTI_SUCCESS);
  CHECK(cuptiUnsubscribe(again) == CUPTI_SUCCESS);
  cudaStreamDestroy(s);
}

TEST_CASE("external correlation records precede API records, per thread and kind", "[cupti]") {
  Kinds kinds({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION});
  REQUIRE(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 42) == CUPTI_SUCCESS);
  REQUIRE(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 7) == CUPTI_SUCCESS);
  REQUIRE(KsimLaunchPinned(nullptr) == cudaSuccess);
  uint64_t last = 0;
  REQUIRE(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &last) == CUPTI_SUCCESS);
  CHECK(last == 7u);
  REQUIRE(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, nullptr) == CUPTI_SUCCESS);
  CHECK(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last) ==
        CUPTI_ERROR_QUEUE_EMPTY);
  auto records = Take(0, /*no_sync=*/true);
  // Launch (2 external + API; cudaGetLastError inside the helper: 2 + API).
  REQUIRE(records.size() == 6u);
  CHECK(ksim_test::KindOf(records[0]) == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  CHECK(ksim_test::KindOf(records[1]) == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  CHECK(ksim_test::KindOf(records[2]) == CUPTI_ACTIVITY_KIND_RUNTIME);
  auto ext = Of<CUpti_ActivityExternalCorrelation>(records, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  auto api = Of<CUpti_ActivityAPI>(records, CUPTI_ACTIVITY_KIND_RUNTIME);
  REQUIRE(ext.size() == 4u);
  REQUIRE(api.size() == 2u);
  CHECK(ext[0].externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
  CHECK(ext[0].externalId == 42u);
  CHECK(ext[1].externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1);
  CHECK(ext[1].externalId == 7u);
  CHECK(ext[0].correlationId == api[0].correlationId);
  CHECK(api[0].cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000);
  CHECK(api[1].cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020);
}

TEST_CASE("full buffers are delivered by a CUPTI worker thread, not the caller", "[cupti]") {
  ksim_test::SetBufferSize(40 * 8);  // eight API records per buffer
  Kinds kinds({CUPTI_ACTIVITY_KIND_RUNTIME});
  size_t before = ksim_test::DeliveredBuffers();
  size_t threads_before = ksim_test::DeliveringThreads().size();
  for (int i = 0; i < 40; ++i) {
    int n = 0;
    cudaGetDeviceCount(&n);
  }
  // Full buffers go out on the worker's next period (20 ms default).
  for (int i = 0; i < 200 && ksim_test::DeliveredBuffers() < before + 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  auto threads = ksim_test::DeliveringThreads();
  REQUIRE(threads.size() >= threads_before + 4);
  for (size_t i = threads_before; i < threads.size(); ++i) CHECK(threads[i] != std::this_thread::get_id());
  auto records = Take();
  ksim_test::SetBufferSize(256 * 1024);
}

TEST_CASE("flush without FORCED keeps incomplete GPU records; FORCED hands them out", "[cupti]") {
  Kinds kinds({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  // Ten kernels pinned to 2 ms each by KAIROS_SIM_KERNEL_TIMES: 20 ms of work.
  for (int i = 0; i < 10; ++i) REQUIRE(KsimLaunchPinned(nullptr) == cudaSuccess);
  auto early = Of<CUpti_ActivityKernel10>(Take(0, /*no_sync=*/true), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  CHECK(early.size() < 10u);
  for (const auto& k : early) CHECK(k.end - k.start == 2000000u);
  auto forced = Of<CUpti_ActivityKernel10>(Take(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED, /*no_sync=*/true),
                                           CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  REQUIRE(early.size() + forced.size() == 10u);
  REQUIRE(!forced.empty());
  CHECK(forced.back().start == 0u);  // CUPTI_TIMESTAMP_UNKNOWN: still running
  CHECK(forced.back().end == 0u);
  cudaDeviceSynchronize();
}

namespace {
uint64_t FixedClock() { return 5000000000000ull; }
uint64_t RealtimeClock() {
  timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  return static_cast<uint64_t>(rt.tv_sec) * 1000000000ull + static_cast<uint64_t>(rt.tv_nsec);
}
// A TSC-like clock: 3 ticks per ns from an arbitrary epoch.
uint64_t TicksClock() {
  timespec m;
  clock_gettime(CLOCK_MONOTONIC, &m);
  return 777000000000ull + 3 * (static_cast<uint64_t>(m.tv_sec) * 1000000000ull + static_cast<uint64_t>(m.tv_nsec));
}
}  // namespace

TEST_CASE("records use CLOCK_REALTIME, or the registered timestamp callback", "[cupti][timestamp]") {
  uint64_t ts = 0;
  REQUIRE(cuptiGetTimestamp(&ts) == CUPTI_SUCCESS);
  timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  uint64_t real = static_cast<uint64_t>(rt.tv_sec) * 1000000000ull + static_cast<uint64_t>(rt.tv_nsec);
  CHECK(real - ts < 50000000ull);
  {
    Kinds kinds({CUPTI_ACTIVITY_KIND_RUNTIME});
    int n = 0;
    cudaGetDeviceCount(&n);
    auto api = Of<CUpti_ActivityAPI>(Take(0, true), CUPTI_ACTIVITY_KIND_RUNTIME);
    REQUIRE(api.size() == 1u);
    CHECK(api[0].start >= ts);
    CHECK(api[0].start - ts < 1000000000ull);
  }
  REQUIRE(cuptiActivityRegisterTimestampCallback(FixedClock) == CUPTI_SUCCESS);
  {
    Kinds kinds({CUPTI_ACTIVITY_KIND_RUNTIME});
    int n = 0;
    cudaGetDeviceCount(&n);
    auto api = Of<CUpti_ActivityAPI>(Take(0, true), CUPTI_ACTIVITY_KIND_RUNTIME);
    REQUIRE(api.size() == 1u);
    // The client's clock is sampled at the moment of the call.
    CHECK(api[0].start == 5000000000000ull);
    CHECK(api[0].end == 5000000000000ull);
  }
  // Any unit: GPU durations are scaled, not only shifted (2 ms pinned kernel = 6e6 ticks).
  REQUIRE(cuptiActivityRegisterTimestampCallback(TicksClock) == CUPTI_SUCCESS);
  {
    Kinds kinds({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME});
    REQUIRE(KsimLaunchPinned(nullptr) == cudaSuccess);
    auto records = Take();
    auto k = Of<CUpti_ActivityKernel10>(records, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    auto api = Of<CUpti_ActivityAPI>(records, CUPTI_ACTIVITY_KIND_RUNTIME);
    REQUIRE(k.size() == 1u);
    REQUIRE(!api.empty());
    CHECK(k[0].end - k[0].start > 5940000u);
    CHECK(k[0].end - k[0].start < 6060000u);
    CHECK(k[0].start > api[0].start);  // the GPU starts after the launch call began
    CHECK(k[0].start - api[0].start < 3u * 1000000000ull);
  }
  // NULL is rejected (cupti_activity.h); the test restores a CLOCK_REALTIME callback.
  CHECK(cuptiActivityRegisterTimestampCallback(nullptr) == CUPTI_ERROR_INVALID_PARAMETER);
  REQUIRE(cuptiActivityRegisterTimestampCallback(RealtimeClock) == CUPTI_SUCCESS);
}
