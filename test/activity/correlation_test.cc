// File: correlation_test.cc
// Layer: test (kairos_activity). Correlation of runtime calls, GPU work and CPU ranges, with
// records delivered out of order and across buffers, and the merge into TraceData.
// Threading: single-threaded.
#include "activity/correlation.h"

#include <catch2/catch.hpp>

#include "cupti_records.h"
#include "model/detail_values.h"
#include "model/memory_totals.h"

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

CUpti_ActivityMemory4 MemRecord(uint32_t corr, uint64_t ts, uint64_t addr, uint64_t bytes, bool alloc,
                                CUpti_ActivityMemoryKind kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) {
  auto r = testing::Zero<CUpti_ActivityMemory4>();
  r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  r.memoryOperationType =
      alloc ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  r.memoryKind = kind;
  r.correlationId = corr;
  r.address = addr;
  r.bytes = bytes;
  r.timestamp = ts;
  r.deviceId = 0;
  r.contextId = 1;
  r.streamId = 7;
  return r;
}

const MemoryDetail& MemoryAt(const TraceData& data, uint32_t correlation) {
  const Event* e = Find(data, EventKind::kInstant, correlation);
  REQUIRE(e != nullptr);
  REQUIRE(IsMemoryEvent(*e));
  return data.memory.at(e->detail);
}

TEST_CASE("MEMORY2 records: thread and range of the call, absolute totals, bad input counted", "[memory]") {
  RecordBuffer b1, b2;
  // The free arrives a buffer before its allocation; the allocation's call after it.
  b1.Add(MemRecord(11, 2050, 0xA000, 4096, false));
  b1.Add(testing::Runtime(CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, 11, 2000, 2100));
  b2.Add(MemRecord(10, 1050, 0xA000, 4096, true));
  b2.Add(testing::External(10, 700));
  b2.Add(testing::Runtime(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 10, 1000, 1100));
  b2.Add(MemRecord(12, 3000, 0xB000, 1024, false));  // allocated before the window; no call
  b2.Add(MemRecord(13, 4000, 0xC000, 8192, true));
  b2.Add(MemRecord(14, 5000, 0xC000, 2048, true));   // same address, its free was lost
  b2.Add(MemRecord(15, 6000, 0xD000, 512, true, CUPTI_ACTIVITY_MEMORY_KIND_PINNED));
  auto bad = MemRecord(16, 7000, 0xE000, 64, true);
  bad.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID;
  b2.Add(bad);
  auto pool = testing::Zero<CUpti_ActivityMemoryPool3>();
  pool.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
  pool.timestamp = 500;
  b2.Add(pool);
  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(b1.data(), b1.size());
  c.ConvertBuffer(b2.data(), b2.size());
  CHECK(c.stats().memory_records == 7);
  CHECK(c.stats().memory_bad_op == 1);
  CHECK(c.stats().memory_pool_records == 1);
  CHECK(c.stats().unknown_kind == 0);

  TraceData data;
  data.pid = 99;
  const MergeResult m = MergeIntoTraceData(c, data);
  CHECK(m.memory_without_call == 4);  // 12-15 have no API record
  CHECK(m.devices == std::vector<uint32_t>{0});
  const Event* alloc = Find(data, EventKind::kInstant, 10);
  REQUIRE(alloc != nullptr);
  CHECK(data.strings.Get(alloc->name) == "[memory]");
  CHECK(data.tracks[alloc->track].tid == 1234);  // the cudaMalloc's thread
  CHECK(alloc->external_id == 700);
  CHECK(data.tracks[Find(data, EventKind::kInstant, 12)->track].tid == 99);  // main thread row
  data.SortTracks();

  const int64_t base = 1 << 20;
  const MemoryTotalsResult t = ComputeMemoryTotals(data, {{0, base, uint64_t{80} << 30}}, 1000);
  CHECK(t.events == 6);
  CHECK(t.frees_before_window == 1);
  CHECK(t.address_reused == 1);
  CHECK(MemoryAt(data, 10).total_allocated == base + 4096);
  CHECK(MemoryAt(data, 10).bytes == 4096);
  CHECK(MemoryAt(data, 10).device_type == 1);
  CHECK(MemoryAt(data, 10).stream == kNoStream);  // not stream-ordered
  CHECK(MemoryAt(data, 11).total_allocated == base);
  CHECK(MemoryAt(data, 11).bytes == -4096);
  CHECK(MemoryAt(data, 11).flags == 0);
  CHECK(MemoryAt(data, 12).total_allocated == base - 1024);
  CHECK(MemoryAt(data, 12).flags == kMemoryFreeBeforeWindow);
  CHECK(MemoryAt(data, 13).total_allocated == base - 1024 + 8192);
  CHECK(MemoryAt(data, 14).total_allocated == base - 1024 + 2048);  // the lost free counted
  CHECK(MemoryAt(data, 14).total_reserved == base - 1024 + 2048);
  const MemoryDetail& pinned = MemoryAt(data, 15);  // host memory: its own total
  CHECK(pinned.device_type == 0);
  CHECK(pinned.device == -1);
  CHECK(pinned.total_allocated == 512);

  AddMemoryCounters(data);
  REQUIRE(data.counter_tracks.size() == 2);  // one device: allocated, reserved
  CHECK(data.counter_tracks[0].name == "GPU memory allocated");
  CHECK(data.counter_tracks[0].device == 0);
  CHECK(data.counter_samples.size() == 10);
  CHECK(data.counter_samples.front().value == static_cast<double>(base + 4096));
  CHECK(MemoryBaselineJson({{0, 5, 9}}) ==
        "[{\"device\": 0, \"bytes_in_use\": 5, \"device_total_bytes\": 9, \"source\": "
        "\"cuMemGetInfo at window open (total - free)\"}]");
}

TEST_CASE("a memory operation after the closing edge goes even when its call record is gone",
          "[memory]") {
  // Found by the real-GPU kit's dry run: the next step's allocation, made while the session
  // thread was stopping CUPTI; its cudaMalloc record ended after the flush began (DropAfter
  // removed it) but the allocation's own record stayed, one allocation too many.
  RecordBuffer buf;
  buf.Add(testing::Runtime(20, 1, 1000, 1100));   // cudaMalloc inside the window
  buf.Add(MemRecord(1, 1050, 0x1000, 4096, true));
  buf.Add(MemRecord(2, 2050, 0x2000, 4096, true));  // the next step's: its call already dropped
  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(buf.data(), buf.size());
  REQUIRE(c.events().size() == 3);
  c.DropLaunchedAfter(2000);
  REQUIRE(c.events().size() == 2);
  CHECK(c.events()[0].correlation == 1);
  CHECK(c.events()[1].correlation == 1);
  CHECK(c.stats().out_of_range == 1);
}

TEST_CASE("memory totals stay bounded: live addresses beyond the bound are counted", "[memory]") {
  TraceData data;
  data.pid = 1;
  Track t;
  const uint32_t track = data.AddTrack(t);
  for (uint32_t i = 0; i < 10; ++i) {
    MemoryDetail m{};
    m.addr = 0x1000 + i;
    m.bytes = i < 5 ? 100 : -100;  // 5 allocations, then frees of the same addresses - 5
    if (i >= 5) m.addr = 0x1000 + (i - 5);
    m.device_type = 1;
    m.stream = kNoStream;
    Event e{};
    e.kind = EventKind::kInstant;
    e.aux = kAuxMemory;
    e.start_ns = e.end_ns = 100 + i;
    e.track = track;
    e.detail = static_cast<uint32_t>(data.memory.size());
    data.memory.push_back(m);
    data.events_by_track[track].push_back(e);
  }
  const MemoryTotalsResult r = ComputeMemoryTotals(data, {}, 3);
  CHECK(r.tracked_overflow == 2);           // the 4th and 5th allocation were not tracked
  CHECK(r.frees_before_window == 2);        // so their frees look like pre-window frees
  CHECK(data.memory.back().total_allocated == 0);  // the totals are still exact
}

// Issue 25 item 4: a framework allocator's events (kairos_memory_event, flagged
// kMemoryOwnTotals) carry the allocator's own totals. ComputeMemoryTotals computes CUPTI's
// rows only: on the same device, the allocator's rows keep their values (no baseline, no
// negative-total raise applied to them) and do not move CUPTI's running total.
TEST_CASE("memory totals: a framework allocator's rows keep their own totals", "[memory]") {
  struct Op { int64_t ts; uint64_t addr; int64_t bytes; int64_t total; bool own; };
  const Op ops[] = {{100, 0xA000, 2097152, 0, false},       // cudaMalloc of a segment
                    {110, 0xA000, 512, 512, true},          // the allocator's block in it
                    {120, 0xA200, -1024, 7, true},          // a free it reports (its totals)
                    {130, 0xB000, -4096, 0, false},         // a pre-window free, no baseline
                    {140, 0xA000, -2097152, 0, false}};
  TraceData data;
  data.pid = 1;
  const uint32_t track = data.AddTrack(Track{});
  for (const Op& op : ops) {
    MemoryDetail m{};
    m.addr = op.addr;
    m.bytes = op.bytes;
    m.total_allocated = op.total;
    m.total_reserved = op.own ? 4194304 : 0;
    m.device_type = 1;
    m.stream = kNoStream;
    if (op.own) m.flags = kMemoryOwnTotals;
    Event e{};
    e.kind = EventKind::kInstant;
    e.aux = kAuxMemory;
    e.start_ns = e.end_ns = op.ts;
    e.track = track;
    e.detail = static_cast<uint32_t>(data.memory.size());
    data.memory.push_back(m);
    data.events_by_track[track].push_back(e);
  }
  const MemoryTotalsResult r = ComputeMemoryTotals(data, {{0, 1000, uint64_t{80} << 30}}, 100);
  CHECK(r.events == 3);  // CUPTI's rows only
  CHECK(r.frees_before_window == 1);
  CHECK(data.memory[1].total_allocated == 512);
  CHECK(data.memory[1].total_reserved == 4194304);
  CHECK(data.memory[2].total_allocated == 7);
  CHECK((data.memory[2].flags & kMemoryFreeBeforeWindow) == 0);
  // CUPTI's: 1000 + 2 MiB, - 4096 (the baseline's 1000 cannot cover it: raised by 3096).
  CHECK(data.memory[0].total_allocated == 1000 + 2097152 + 3096);
  CHECK(data.memory[3].total_allocated == 1000 + 2097152 - 4096 + 3096);
  CHECK(data.memory[4].total_allocated == 0);
  CHECK(data.memory[2].total_allocated == 7);  // the raise skipped the allocator's rows
}

// Issue 30: frees of addresses the window never saw allocated, beyond what the baseline
// holds (no baseline here: cuMemGetInfo unavailable), and an address reused without its free.
// The old totals went to -1536 and drew the "GPU memory allocated" counter below zero; now the
// device starts from the deficit the frees prove, every total is >= 0, and the trace says so.
TEST_CASE("memory totals never go negative: unknown frees raise the start", "[memory][abuse]") {
  struct Op { int64_t ts; uint64_t addr; int64_t bytes; };
  const Op ops[] = {{100, 0xB000, -1024},  // allocated before the window
                    {200, 0xA000, 4096},
                    {300, 0xA000, 2048},   // reused: the free of the 4096 was lost
                    {400, 0xA000, -2048},
                    {500, 0xC000, -512}};  // allocated before the window
  auto fill = [&ops](TraceData& data) {
    data.pid = 1;
    const uint32_t track = data.AddTrack(Track{});
    for (const Op& op : ops) {
      MemoryDetail m{};
      m.addr = op.addr;
      m.bytes = op.bytes;
      m.device_type = 1;
      m.device = 2;
      m.stream = kNoStream;
      Event e{};
      e.kind = EventKind::kInstant;
      e.aux = kAuxMemory;
      e.start_ns = e.end_ns = op.ts;
      e.track = track;
      e.detail = static_cast<uint32_t>(data.memory.size());
      data.memory.push_back(m);
      data.events_by_track[track].push_back(e);
    }
  };
  TraceData data;
  fill(data);
  const MemoryTotalsResult r = ComputeMemoryTotals(data, {}, 100);
  CHECK(r.frees_before_window == 2);
  CHECK(r.address_reused == 1);
  std::vector<int64_t> totals;
  for (const MemoryDetail& m : data.memory) totals.push_back(m.total_allocated);
  // Running sums -1024, 3072, 1024, -1024, -1536, raised by 1536.
  CHECK(totals == std::vector<int64_t>{512, 4608, 2560, 512, 0});
  CHECK(data.memory[1].total_reserved == 4608);
  REQUIRE(data.warnings.size() == 1);
  CHECK(data.warnings[0] == "memory: GPU 2: the window freed 1536 bytes more than its baseline and allocations "
                            "account for; its totals start from 1536 bytes in use (the least the frees prove)");
  AddMemoryCounters(data);
  REQUIRE(data.counter_samples.size() == 10);
  for (const CounterSample& c : data.counter_samples) CHECK(c.value >= 0);
  // A baseline that covers the frees changes nothing: no raise, no warning.
  TraceData again;
  fill(again);
  ComputeMemoryTotals(again, {{2, 1536, uint64_t{80} << 30}}, 100);
  CHECK(again.memory.back().total_allocated == 0);
  CHECK(again.warnings.empty());
}

// Issue 30: CUPTI memory records no driver should send: 2^64-1 bytes, an unknown memory
// kind, a double free, a free before its allocation in the same buffer. Sizes are clamped to
// 2^50, totals stay exact and never negative, nothing is dropped silently.
TEST_CASE("absurd CUPTI memory records: clamped sizes, double frees, exact totals", "[memory][abuse]") {
  RecordBuffer b;
  b.Add(MemRecord(1, 1000, 0xA000, UINT64_MAX, true));   // 16 EiB
  b.Add(MemRecord(2, 2000, 0xA000, UINT64_MAX, false));
  b.Add(MemRecord(3, 3000, 0xB000, 4096, false));        // freed before its allocation...
  b.Add(MemRecord(4, 4000, 0xB000, 4096, true));         // ...which comes later
  b.Add(MemRecord(5, 5000, 0xB000, 4096, false));
  b.Add(MemRecord(6, 6000, 0xB000, 4096, false));        // freed twice
  auto odd = MemRecord(7, 7000, 0xC000, 512, true);
  odd.memoryKind = static_cast<CUpti_ActivityMemoryKind>(200);  // no such kind
  b.Add(odd);
  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(b.data(), b.size());
  CHECK(c.stats().memory_records == 7);
  TraceData data;
  data.pid = 9;
  MergeIntoTraceData(c, data);
  data.SortTracks();
  CHECK(MemoryAt(data, 1).bytes == kMemoryBytesLimit);
  CHECK(MemoryAt(data, 2).bytes == -kMemoryBytesLimit);
  CHECK(MemoryAt(data, 7).device_type == 1);  // an unknown kind counts against the device
  const MemoryTotalsResult t = ComputeMemoryTotals(data, {{0, 10000, uint64_t{80} << 30}}, 100);
  CHECK(t.events == 7);
  CHECK(t.frees_before_window == 2);  // the early free and the second free of 0xB000
  std::vector<int64_t> totals;
  for (uint32_t corr = 1; corr <= 7; ++corr) totals.push_back(MemoryAt(data, corr).total_allocated);
  CHECK(totals == std::vector<int64_t>{10000 + kMemoryBytesLimit, 10000, 10000 - 4096, 10000, 10000 - 4096,
                                       10000 - 8192, 10000 - 8192 + 512});
  CHECK(data.warnings.empty());  // the baseline covers the frees
  AddMemoryCounters(data);
  for (const CounterSample& s : data.counter_samples) CHECK(s.value >= 0);
}

}  // namespace
}  // namespace kairos::internal
