// File: correlation_test.cc
// Layer: test (kairos_activity). Correlation of runtime calls, GPU work and CPU ranges, with
// records delivered out of order and across buffers, and the merge into TraceData.
// Threading: single-threaded.
#include "activity/correlation.h"

#include <catch2/catch.hpp>

#include "cupti_records.h"

namespace kairos::internal {
namespace {

using testing::FakeCallbackName;
using testing::RecordBuffer;

const Event* Find(const TraceData& data, EventKind kind, uint32_t correlation) {
  for (const auto& track : data.events_by_track) {
    for (const Event& e : track) {
      if (e.kind == kind && e.correlation == correlation) return &e;
    }
  }
  return nullptr;
}

TEST_CASE("out-of-order records across buffers are correlated", "[correlation]") {
  // GPU work first, its launches two buffers later, the external ids in between.
  RecordBuffer b1, b2, b3;
  b1.Add(testing::Kernel(3, 5000, 6000, "_Z4stepv"));
  b1.Add(testing::Memcpy(2, 3000, 4000, 1 << 20));
  b2.Add(testing::External(3, 501));
  b2.Add(testing::External(2, 500));
  b3.Add(testing::Runtime(211, 3, 1500, 1600));
  b3.Add(testing::Runtime(41, 2, 1000, 1200));
  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(b1.data(), b1.size());
  c.ConvertBuffer(b2.data(), b2.size());
  c.ConvertBuffer(b3.data(), b3.size());

  TraceData data;
  data.pid = 99;
  Track cpu;
  cpu.type = TrackType::kThread;
  cpu.pid = 99;
  cpu.tid = 1234;
  const uint32_t cpu_track = data.AddTrack(cpu);
  data.kernels.push_back(KernelDetail{});  // rows from another source stay valid

  const MergeResult m = MergeIntoTraceData(c, data);
  CHECK(m.gpu_events == 2);
  CHECK(m.uncorrelated_gpu == 0);
  CHECK(m.flows == 2);
  CHECK(m.linked_to_cpu == 4);
  CHECK(m.devices == std::vector<uint32_t>{0});

  REQUIRE(data.tracks.size() == 2);  // runtime rows reuse the CPU thread's track
  CHECK(data.events_by_track[cpu_track].size() == 2);
  const Track& gpu = data.tracks[1];
  CHECK(gpu.type == TrackType::kGpuStream);
  CHECK(gpu.pid == 0);
  CHECK(gpu.tid == 7);

  const Event* kernel = Find(data, EventKind::kKernel, 3);
  const Event* launch = Find(data, EventKind::kRuntime, 3);
  const Event* copy = Find(data, EventKind::kMemcpy, 2);
  const Event* copy_call = Find(data, EventKind::kRuntime, 2);
  REQUIRE(kernel != nullptr);
  REQUIRE(launch != nullptr);
  REQUIRE(copy != nullptr);
  REQUIRE(copy_call != nullptr);
  CHECK(kernel->flags == kFlagFlowIn);
  CHECK(launch->flags == kFlagFlowOut);
  CHECK(copy->flags == kFlagFlowIn);
  CHECK(copy_call->flags == kFlagFlowOut);
  CHECK(kernel->external_id == 501);
  CHECK(launch->external_id == 501);
  CHECK(copy->external_id == 500);
  CHECK(kernel->detail == 1);  // appended after the existing row
  CHECK(data.kernels.size() == 2);
  CHECK(data.kernels[1].grid[0] == 4096);
  CHECK(data.strings.Get(kernel->name) == "step()");
  CHECK(data.strings.Get(launch->name) == "cudaLaunchKernel");
  CHECK(data.strings.Get(copy_call->name) == "cudaMemcpyAsync");
}

TEST_CASE("no flow without both ends; uncorrelated GPU work is counted", "[correlation]") {
  RecordBuffer b;
  b.Add(testing::Runtime(20, 8, 100, 200));             // cudaMalloc: not a flow start
  b.Add(testing::Kernel(8, 300, 400, "_Z4stepv"));       // same id, but no flow
  b.Add(testing::Kernel(9, 500, 600, "_Z4stepv"));       // launch not in the trace
  b.Add(testing::Runtime(211, 10, 700, 800));            // launch with no GPU work
  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(b.data(), b.size());
  TraceData data;
  const MergeResult m = MergeIntoTraceData(c, data);
  CHECK(m.gpu_events == 2);
  CHECK(m.uncorrelated_gpu == 1);
  CHECK(m.flows == 0);
  CHECK(Find(data, EventKind::kKernel, 8)->flags == kFlagNone);
  CHECK(Find(data, EventKind::kRuntime, 8)->flags == kFlagNone);
  CHECK(Find(data, EventKind::kKernel, 9)->flags == kFlagNone);
  CHECK(Find(data, EventKind::kRuntime, 10)->flags == kFlagNone);
}

TEST_CASE("a graph launch fans out to every kernel of the graph", "[correlation]") {
  RecordBuffer b;
  b.Add(testing::Runtime(311, 50, 100, 200));
  for (int i = 0; i < 3; ++i) {
    auto k = testing::Kernel(50, 300 + 100 * i, 350 + 100 * i, "_Z4nodei");
    k.graphId = 12;
    k.graphNodeId = 1000 + i;
    b.Add(k);
  }
  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(b.data(), b.size());
  TraceData data;
  const MergeResult m = MergeIntoTraceData(c, data);
  CHECK(m.flows == 3);
  CHECK(data.kernels.size() == 3);  // node ids differ, so three rows
  size_t kernels = 0;
  for (const auto& track : data.events_by_track) {
    for (const Event& e : track) {
      if (e.kind != EventKind::kKernel) continue;
      ++kernels;
      CHECK(e.flags == kFlagFlowIn);
      CHECK(data.kernels[e.detail].graph_id == 12);
      CHECK(data.kernels[e.detail].graph_node_id ==
            static_cast<uint64_t>(1000 + (e.start_ns - 300) / 100));
    }
  }
  CHECK(kernels == 3);
  CHECK(Find(data, EventKind::kRuntime, 50)->flags == kFlagFlowOut);
  CHECK(data.strings.Get(Find(data, EventKind::kRuntime, 50)->name) == "cudaGraphLaunch");
}

TEST_CASE("the runtime call wins over the driver call it made", "[correlation]") {
  RecordBuffer b;
  b.Add(testing::Api(CUPTI_ACTIVITY_KIND_DRIVER, 307, 60, 120, 180));
  b.Add(testing::Runtime(211, 60, 100, 200));
  b.Add(testing::Kernel(60, 300, 400, "_Z4stepv"));
  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(b.data(), b.size());
  TraceData data;
  MergeIntoTraceData(c, data);
  CHECK(Find(data, EventKind::kRuntime, 60)->flags == kFlagFlowOut);
  CHECK(Find(data, EventKind::kDriver, 60)->flags == kFlagNone);
  CHECK(Find(data, EventKind::kKernel, 60)->flags == kFlagFlowIn);
}

TEST_CASE("sparse correlation ids (hash-map path) correlate the same as dense ones", "[correlation]") {
  // Ids 3e9 apart: the launch index cannot be a flat array over the id range.
  RecordBuffer b;
  b.Add(testing::Api(CUPTI_ACTIVITY_KIND_DRIVER, 307, 3000000000u, 120, 180));
  b.Add(testing::Runtime(211, 3000000000u, 100, 200));
  b.Add(testing::Kernel(3000000000u, 300, 400, "_Z4stepv"));
  b.Add(testing::Runtime(211, 7, 500, 600));
  b.Add(testing::Kernel(7, 700, 800, "_Z4stepv"));
  b.Add(testing::Kernel(8, 900, 950, "_Z4stepv"));  // launch not in the trace
  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(b.data(), b.size());
  TraceData data;
  const MergeResult m = MergeIntoTraceData(c, data);
  CHECK(m.flows == 2);
  CHECK(m.uncorrelated_gpu == 1);
  CHECK(Find(data, EventKind::kRuntime, 3000000000u)->flags == kFlagFlowOut);
  CHECK(Find(data, EventKind::kDriver, 3000000000u)->flags == kFlagNone);
  CHECK(Find(data, EventKind::kKernel, 3000000000u)->flags == kFlagFlowIn);
  CHECK(Find(data, EventKind::kRuntime, 7)->flags == kFlagFlowOut);
  CHECK(Find(data, EventKind::kKernel, 7)->flags == kFlagFlowIn);
  CHECK(Find(data, EventKind::kKernel, 8)->flags == kFlagNone);
}

TEST_CASE("GPU rows get Kineto's pid/tid conventions", "[correlation]") {
  RecordBuffer b;
  auto sync = testing::Zero<CUpti_ActivitySynchronization2>();
  sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  sync.start = 10;
  sync.end = 20;
  sync.contextId = 1;
  sync.streamId = 7;
  sync.correlationId = 70;
  b.Add(sync);
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  sync.streamId = 0xFFFFFFFFu;
  sync.correlationId = 71;
  b.Add(sync);
  b.Add(testing::Runtime(131, 70, 5, 25));
  b.Add(testing::Kernel(1, 30, 40, "_Z4stepv", /*device=*/3, /*stream=*/7));
  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(b.data(), b.size());
  TraceData data;
  data.pid = 4242;
  const MergeResult m = MergeIntoTraceData(c, data);
  CHECK(m.devices == std::vector<uint32_t>{3});  // context 1 runs on device 3
  const Event* stream_sync = Find(data, EventKind::kSync, 70);
  REQUIRE(stream_sync != nullptr);
  CHECK(data.tracks[stream_sync->track].pid == 3);
  CHECK(data.tracks[stream_sync->track].tid == 7 + kStreamSyncTidOffset);
  CHECK(stream_sync->flags == kFlagFlowIn);
  const Event* ctx_sync = Find(data, EventKind::kSync, 71);
  CHECK(data.tracks[ctx_sync->track].tid == kDeviceRowTid);
  const Event* call = Find(data, EventKind::kRuntime, 70);
  CHECK(data.tracks[call->track].pid == 4242);
  CHECK(data.tracks[call->track].tid == 1234);
}

}  // namespace
}  // namespace kairos::internal
