// File: test/sim/tests/sim_runtime_test.cc
// Layer: simulator tests: the substitute libcudart.so.13 running nvcc-built
//        kernels (records, streams, timing, copies, errors, graphs).
// Threading: single-threaded tests.
//
// The ctest entry sets KAIROS_SIM_KERNEL_TIMES=ksimPinnedKernel=2000, so the
// pinned kernel takes exactly 2 ms of simulated GPU time.
#include <catch2/catch.hpp>
#include <cuda_runtime.h>
#include <cupti.h>

#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "sim_test_util.h"

using ksim_test::Kinds;
using ksim_test::Of;
using ksim_test::Take;

namespace {

constexpr uint64_t kPinnedNs = 2000000;

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("N launches give exactly N kernel and N runtime records with matching ids", "[runtime]") {
  Kinds kinds({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME});
  float* d = nullptr;
  REQUIRE(cudaMalloc(&d, 1024 * sizeof(float)) == cudaSuccess);
  Take();
  constexpr int kN = 50;
  for (int i = 0; i < kN; ++i) REQUIRE(KsimLaunchScale(d, 1024, 4, 256, nullptr) == cudaSuccess);
  REQUIRE(KsimLaunchExplicit(d, 1024, nullptr) == cudaSuccess);
  auto records = Take();
  auto kernels = Of<CUpti_ActivityKernel10>(records, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  auto api = Of<CUpti_ActivityAPI>(records, CUPTI_ACTIVITY_KIND_RUNTIME);
  REQUIRE(kernels.size() == kN + 1);
  std::map<uint32_t, CUpti_ActivityAPI> launches;
  int get_last_error = 0, device_sync = 0;
  for (const auto& a : api) {
    if (a.cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 ||
        a.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
      launches[a.correlationId] = a;
    }
    get_last_error += a.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020;
    device_sync += a.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020;
  }
  CHECK(get_last_error == kN);
  CHECK(device_sync == 1);
  REQUIRE(launches.size() == kN + 1);
  int explicit_launches = 0;
  for (const auto& k : kernels) {
    auto it = launches.find(k.correlationId);
    REQUIRE(it != launches.end());
    CHECK(std::string(k.name) == "_Z9ksimScalePfif");
    CHECK(k.streamId == 7u);
    CHECK(k.start >= it->second.start);  // GPU work starts after it is launched
    if (it->second.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
      ++explicit_launches;
      CHECK(k.gridX == 4);
      CHECK(k.blockX == 64);
    } else {
      CHECK(k.gridX == 4);
      CHECK(k.blockX == 256);
    }
    CHECK(k.gridY == 1);
    CHECK(k.blockZ == 1);
  }
  CHECK(explicit_launches == 1);
  cudaFree(d);
}

TEST_CASE("streams are in-order queues with monotonic timestamps", "[runtime]") {
  Kinds kinds({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_CONTEXT});
  cudaStream_t a = nullptr, b = nullptr;
  REQUIRE(cudaStreamCreate(&a) == cudaSuccess);
  REQUIRE(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking) == cudaSuccess);
  float* d = nullptr;
  REQUIRE(cudaMalloc(&d, 4096) == cudaSuccess);
  for (int i = 0; i < 20; ++i) {
    REQUIRE(KsimLaunchScale(d, 64, 264, 256, a) == cudaSuccess);
    REQUIRE(KsimLaunchScale(d, 64, 8, 128, b) == cudaSuccess);
  }
  auto kernels = Of<CUpti_ActivityKernel10>(Take(), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  REQUIRE(kernels.size() == 40u);
  std::map<uint32_t, std::vector<CUpti_ActivityKernel10>> by_stream;
  for (const auto& k : kernels) by_stream[k.streamId].push_back(k);
  REQUIRE(by_stream.size() == 2u);
  for (auto& [id, ks] : by_stream) {
    CHECK(id != 7u);
    REQUIRE(ks.size() == 20u);
    std::sort(ks.begin(), ks.end(), [](const auto& x, const auto& y) { return x.correlationId < y.correlationId; });
    for (size_t i = 1; i < ks.size(); ++i) {
      CHECK(ks[i].start >= ks[i - 1].end);  // launch order == execution order, no overlap
      CHECK(ks[i].end > ks[i].start);
    }
  }
  // Two waves of 256-thread blocks on 132 SMs (264 blocks, 8 per SM fit) take
  // longer than one small wave.
  CHECK(by_stream.begin()->second[0].end - by_stream.begin()->second[0].start >
        by_stream.rbegin()->second[0].end - by_stream.rbegin()->second[0].start);
  cudaStreamDestroy(a);
  cudaStreamDestroy(b);
  cudaFree(d);
}

TEST_CASE("synchronize blocks the host for the simulated GPU time", "[runtime]") {
  Kinds kinds({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION});
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) REQUIRE(KsimLaunchPinned(nullptr) == cudaSuccess);
  double launch_ms = MsSince(t0);
  CHECK(launch_ms < 9.0);  // launches are asynchronous (10 ms of GPU work)
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  double total_ms = MsSince(t0);
  CHECK(total_ms >= 10.0);
  CHECK(total_ms < 60.0);  // generous: shared CI machines
  auto records = Take();
  auto kernels = Of<CUpti_ActivityKernel10>(records, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  REQUIRE(kernels.size() == 5u);
  for (const auto& k : kernels) CHECK(k.end - k.start == kPinnedNs);
  auto syncs = Of<CUpti_ActivitySynchronization2>(records, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  REQUIRE(syncs.size() == 2u);  // the test's sync and Take()'s
  CHECK(syncs[0].type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);
  CHECK(syncs[0].end - syncs[0].start >= 9000000u);
}

TEST_CASE("events carry simulated timestamps", "[runtime]") {
  cudaEvent_t start = nullptr, stop = nullptr;
  REQUIRE(cudaEventCreate(&start) == cudaSuccess);
  REQUIRE(cudaEventCreate(&stop) == cudaSuccess);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  // start completes when the first kernel ends, stop when the second ends.
  REQUIRE(KsimLaunchPinned(s) == cudaSuccess);
  REQUIRE(cudaEventRecord(start, s) == cudaSuccess);
  REQUIRE(KsimLaunchPinned(s) == cudaSuccess);
  REQUIRE(cudaEventRecord(stop, s) == cudaSuccess);
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop) == cudaErrorNotReady);
  CHECK(cudaEventQuery(stop) == cudaErrorNotReady);
  REQUIRE(cudaEventSynchronize(stop) == cudaSuccess);
  CHECK(cudaEventQuery(stop) == cudaSuccess);
  REQUIRE(cudaEventElapsedTime(&ms, start, stop) == cudaSuccess);
  CHECK(ms == Approx(2.0).epsilon(1e-4));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(s);
}

TEST_CASE("copies move real bytes; pageable is slower than pinned", "[runtime]") {
  Kinds kinds({CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET});
  constexpr size_t kBytes = 1 << 20;
  std::vector<uint8_t> pageable(kBytes, 0x5a), back(kBytes, 0);
  uint8_t* pinned = nullptr;
  uint8_t* dev = nullptr;
  REQUIRE(cudaMallocHost(reinterpret_cast<void**>(&pinned), kBytes) == cudaSuccess);
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&dev), kBytes) == cudaSuccess);
  std::memset(pinned, 0x33, kBytes);
  REQUIRE(cudaMemcpy(dev, pageable.data(), kBytes, cudaMemcpyHostToDevice) == cudaSuccess);
  REQUIRE(cudaMemcpy(back.data(), dev, kBytes, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(back == pageable);
  REQUIRE(cudaMemcpyAsync(dev, pinned, kBytes, cudaMemcpyHostToDevice, nullptr) == cudaSuccess);
  REQUIRE(cudaMemsetAsync(dev + 16, 0x7f, 16, nullptr) == cudaSuccess);
  REQUIRE(cudaMemcpy(back.data(), dev, kBytes, cudaMemcpyDefault) == cudaSuccess);
  CHECK(back[0] == 0x33);
  CHECK(back[16] == 0x7f);
  CHECK(back[32] == 0x33);
  auto records = Take();
  auto copies = Of<CUpti_ActivityMemcpy6>(records, CUPTI_ACTIVITY_KIND_MEMCPY);
  REQUIRE(copies.size() == 4u);
  CHECK(copies[0].copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
  CHECK(copies[0].srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
  CHECK(copies[0].dstKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  CHECK(copies[0].flags == 0);
  CHECK(copies[1].copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
  CHECK(copies[2].srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
  CHECK(copies[2].flags == CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
  CHECK(copies[3].copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
  CHECK(copies[0].bytes == kBytes);
  CHECK(copies[0].end - copies[0].start > copies[2].end - copies[2].start);
  auto sets = Of<CUpti_ActivityMemset4>(records, CUPTI_ACTIVITY_KIND_MEMSET);
  REQUIRE(sets.size() == 1u);
  CHECK(sets[0].value == 0x7fu);
  CHECK(sets[0].bytes == 16u);
  CHECK(sets[0].start >= copies[2].end);  // same stream, after the copy
  cudaFree(dev);
  cudaFreeHost(pinned);
}

TEST_CASE("API misuse returns the runtime's error codes", "[runtime]") {
  float* d = nullptr;
  REQUIRE(cudaMalloc(&d, 64) == cudaSuccess);
  REQUIRE(cudaFree(d) == cudaSuccess);
  CHECK(cudaFree(d) == cudaErrorInvalidValue);  // double free
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaSuccess);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
  CHECK(cudaStreamSynchronize(s) == cudaErrorInvalidResourceHandle);
  CHECK(KsimLaunchScale(nullptr, 0, 1, 2048, nullptr) == cudaErrorInvalidConfiguration);
  CHECK(KsimLaunchScale(nullptr, 0, 0, 32, nullptr) == cudaErrorInvalidConfiguration);
  CHECK(cudaSetDevice(5) == cudaErrorInvalidDevice);
  CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(&MsSince), dim3(1), dim3(1), nullptr, 0, nullptr) ==
        cudaErrorInvalidDeviceFunction);
  CHECK(cudaMemcpy(reinterpret_cast<void*>(0x10), reinterpret_cast<void*>(0x20), 4, cudaMemcpyDeviceToDevice) ==
        cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST_CASE("captured graphs replay their kernels with graph ids", "[runtime]") {
  Kinds kinds({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_GRAPH_TRACE});
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  float* d = nullptr;
  REQUIRE(cudaMalloc(&d, 4096) == cudaSuccess);
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  for (int i = 0; i < 3; ++i) REQUIRE(KsimLaunchScale(d, 64, 2, 64, s) == cudaSuccess);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  auto records = Take();
  auto kernels = Of<CUpti_ActivityKernel10>(records, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  auto graphs = Of<CUpti_ActivityGraphTrace2>(records, CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  auto api = Of<CUpti_ActivityAPI>(records, CUPTI_ACTIVITY_KIND_RUNTIME);
  REQUIRE(kernels.size() == 6u);  // nothing runs during capture
  REQUIRE(graphs.size() == 2u);
  std::set<uint32_t> graph_launch_corr;
  for (const auto& a : api) {
    if (a.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000) graph_launch_corr.insert(a.correlationId);
  }
  REQUIRE(graph_launch_corr.size() == 2u);
  std::set<uint64_t> nodes;
  for (const auto& k : kernels) {
    CHECK(k.graphId == graphs[0].graphId);
    CHECK(k.graphId != 0u);
    CHECK(graph_launch_corr.count(k.correlationId) == 1u);
    nodes.insert(k.graphNodeId);
  }
  CHECK(nodes.size() == 3u);
  CHECK(graphs[0].start <= kernels[0].start);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
  cudaFree(d);
}
