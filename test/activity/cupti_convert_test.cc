// File: cupti_convert_test.cc
// Layer: test (kairos_activity). CUPTI record -> Event conversion on hand-built CUDA 13 buffers.
// Threading: single-threaded.
#include "activity/cupti_convert.h"

#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <vector>

#include "activity/correlation.h"
#include "cupti_records.h"

namespace kairos::internal {
namespace {

using testing::RecordBuffer;
using testing::FakeCallbackName;

constexpr const char* kMatmul = "_Z6matmulPfS_S_i";

TEST_CASE("record strides are the CUDA 13.0 struct sizes", "[cupti_convert]") {
  CHECK(CuptiRecordSize(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == 216);
  CHECK(CuptiRecordSize(CUPTI_ACTIVITY_KIND_KERNEL) == 216);
  CHECK(CuptiRecordSize(CUPTI_ACTIVITY_KIND_MEMCPY) == 96);
  CHECK(CuptiRecordSize(CUPTI_ACTIVITY_KIND_MEMCPY2) == 96);
  CHECK(CuptiRecordSize(CUPTI_ACTIVITY_KIND_MEMSET) == 88);
  CHECK(CuptiRecordSize(CUPTI_ACTIVITY_KIND_RUNTIME) == 40);
  CHECK(CuptiRecordSize(CUPTI_ACTIVITY_KIND_DRIVER) == 40);
  CHECK(CuptiRecordSize(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) == 56);
  CHECK(CuptiRecordSize(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) == 24);
  CHECK(CuptiRecordSize(CUPTI_ACTIVITY_KIND_OVERHEAD) == 56);
  CHECK(CuptiRecordSize(CUPTI_ACTIVITY_KIND_CUDA_EVENT) == 56);
  CHECK(CuptiRecordSize(CUPTI_ACTIVITY_KIND_DEVICE) == 184);
  CHECK(CuptiRecordSize(CUPTI_ACTIVITY_KIND_GRAPH_TRACE) == 56);
  CHECK(CuptiRecordSize(0) == 0);
  CHECK(CuptiRecordSize(CUPTI_ACTIVITY_KIND_COUNT) == 0);
}

TEST_CASE("kernel record becomes an event and a detail row", "[cupti_convert]") {
  RecordBuffer buf;
  auto k = testing::Kernel(77, 1000, 3000, kMatmul, /*device=*/1, /*stream=*/13);
  k.gridY = 2;
  k.graphId = 5;
  k.graphNodeId = 0x100000002ull;
  k.queued = 900;
  buf.Add(k);
  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(buf.data(), buf.size());
  REQUIRE(c.events().size() == 1);
  const Event& e = c.events()[0];
  CHECK(e.kind == EventKind::kKernel);
  CHECK(e.start_ns == 1000);
  CHECK(e.end_ns == 3000);
  CHECK(c.strings().Get(e.name) == "matmul(float*, float*, float*, int)");
  CHECK(e.correlation == 77);
  CHECK(e.external_id == 0);
  CHECK(e.flags == kFlagNone);
  REQUIRE(c.tracks().size() == 1);
  CHECK(c.tracks()[e.track].type == TrackType::kGpuStream);
  CHECK(c.tracks()[e.track].device == 1);
  CHECK(c.tracks()[e.track].id == 13);
  REQUIRE(c.kernels().size() == 1);
  const KernelDetail& d = c.kernels()[e.detail];
  CHECK(d.grid[0] == 4096);
  CHECK(d.grid[1] == 2);
  CHECK(d.grid[2] == 1);
  CHECK(d.block[0] == 128);
  CHECK(d.device == 1);
  CHECK(d.context == 1);
  CHECK(d.stream == 13);
  CHECK(d.registers_per_thread == 31);
  CHECK(d.static_shared_memory == 1024);
  CHECK(d.dynamic_shared_memory == 2048);
  CHECK(d.queued == 900);
  CHECK(d.graph_id == 5);
  CHECK(d.graph_node_id == 0x100000002ull);
  CHECK(d.channel_id == 3);
  CHECK(d.channel_type == CUPTI_CHANNEL_TYPE_COMPUTE);
  CHECK(c.stats().records == 1);
  CHECK(c.stats().events == 1);
}

TEST_CASE("identical launch configurations share one detail row", "[cupti_convert]") {
  RecordBuffer buf;
  buf.Add(testing::Kernel(1, 100, 200, kMatmul));
  buf.Add(testing::Kernel(2, 300, 400, kMatmul));
  buf.Add(testing::Kernel(3, 500, 600, kMatmul, 0, 7, /*grid_x=*/64));
  buf.Add(testing::Kernel(4, 700, 800, kMatmul));
  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(buf.data(), buf.size());
  REQUIRE(c.events().size() == 4);
  CHECK(c.kernels().size() == 2);
  CHECK(c.events()[0].detail == 0);
  CHECK(c.events()[1].detail == 0);
  CHECK(c.events()[2].detail == 1);
  CHECK(c.events()[3].detail == 0);
  CHECK(c.events()[0].name == c.events()[3].name);
  CHECK(c.strings().size() == 2);  // "" and the demangled name
}

// Pages of [p, p + bytes) the kernel has resident (mincore).
size_t ResidentPages(const void* p, size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> v((bytes + page - 1) / page);
  if (mincore(const_cast<void*>(p), bytes, v.data()) != 0) return SIZE_MAX;
  size_t n = 0;
  for (unsigned char c : v) n += c & 1;
  return n;
}

TEST_CASE("event chunks grow one chunk at a time and never move an event", "[cupti_convert]") {
  constexpr size_t kChunk = EventChunks::kChunkEvents;
  const size_t chunk_pages = EventChunks::kChunkBytes / static_cast<size_t>(sysconf(_SC_PAGESIZE));
  EventChunks s;
  s.SetBound(3 * kChunk + 5);
  CHECK(s.capacity() == 0);
  // Ready ahead: the current chunk and the one the next 100 appends reach (the same one).
  CHECK(s.MakeReadyAhead(100) == EventChunks::kChunkBytes);
  REQUIRE(s.capacity() == kChunk);
  CHECK(ResidentPages(s.chunk(0), EventChunks::kChunkBytes) == chunk_pages);
  Event* first = s.Append();
  REQUIRE(first != nullptr);
  *first = Event{};
  first->correlation = 1;
  for (uint32_t i = 1; i < kChunk + 10; ++i) {
    Event* e = s.Append();
    REQUIRE(e != nullptr);
    *e = Event{};
    e->correlation = i + 1;
  }
  CHECK(s.size() == kChunk + 10);
  CHECK(s.capacity() == 2 * kChunk);   // grown by one chunk, not doubled
  CHECK(&s[0] == first);               // nothing moved
  // The second chunk was mapped by the append itself, so only what was written is resident
  // (one page; a kernel with multi-size THP may fault in a larger folio, never the chunk);
  // making it ready populates the rest without changing the ten events in it.
  CHECK(ResidentPages(s.chunk(1), EventChunks::kChunkBytes) < chunk_pages);
  CHECK(s.MakeReadyAhead(kChunk) == 2 * EventChunks::kChunkBytes);  // chunk 1 and chunk 2
  CHECK(ResidentPages(s.chunk(1), EventChunks::kChunkBytes) == chunk_pages);
  CHECK(s.capacity() == 3 * kChunk);
  for (uint32_t i = 0; i < kChunk + 10; ++i) REQUIRE(s[i].correlation == i + 1);
  uint64_t sum = 0;
  for (const Event& e : s) sum += e.correlation;
  CHECK(sum == uint64_t{kChunk + 10} * (kChunk + 11) / 2);
  // Up to the bound: 3 chunks + 5 events round up to 4 chunks, no more.
  while (s.Append() != nullptr) {}
  CHECK(s.size() == 4 * kChunk);
  CHECK(s.MakeReadyAhead(kChunk) == 0);  // all four written whole; a fifth is past the bound
  // Truncate hands whole chunks past the kept events back.
  s.Truncate(kChunk + 1);
  CHECK(s.size() == kChunk + 1);
  CHECK(s.capacity() == 2 * kChunk);
  CHECK(s[kChunk].correlation == kChunk + 1);
  CHECK(s.chunk_count() == 2);
  CHECK(s.chunk_size(0) == kChunk);
  CHECK(s.chunk_size(1) == 1);
  s.Release();
  CHECK(s.size() == 0);
  CHECK(s.capacity() == 0);
}

TEST_CASE("launch configurations cycling through more rows than one intern each",
          "[cupti_convert]") {
  // Three grid sizes on two streams in a cycle of six (the benchmark's shape): a last-row
  // check missed every one; the rows are still interned once each, in first-seen order.
  RecordBuffer buf;
  for (uint32_t i = 0; i < 60; ++i) {
    buf.Add(testing::Kernel(i + 1, 100 + 10 * i, 105 + 10 * i, kMatmul, 0, 7 + i % 2,
                            128 << (i % 3)));
  }
  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(buf.data(), buf.size());
  REQUIRE(c.events().size() == 60);
  REQUIRE(c.kernels().size() == 6);
  for (uint32_t i = 0; i < 60; ++i) {
    REQUIRE(c.events()[i].detail == i % 6);
    const KernelDetail& d = c.kernels()[c.events()[i].detail];
    CHECK(d.grid[0] == (128u << (i % 3)));
    CHECK(d.stream == 7 + i % 2);
  }
}

TEST_CASE("a window across several store chunks converts and merges every event",
          "[cupti_convert]") {
  // 40,000 launches (runtime call + kernel) fill five chunks of the event store; the merge
  // hands every chunk back.
  constexpr uint32_t kLaunches = 40000;
  RecordBuffer buf;
  for (uint32_t i = 0; i < kLaunches; ++i) {
    const uint64_t t = 1000 + 100 * uint64_t{i};
    buf.Add(testing::Runtime(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, i + 1, t, t + 10));
    buf.Add(testing::Kernel(i + 1, t + 20, t + 90, kMatmul));
  }
  CuptiConverter c(FakeCallbackName, 1u << 20);
  CHECK(c.PrepareStore() == EventChunks::kChunkBytes);  // a quarter chunk ahead: one chunk
  c.ConvertBuffer(buf.data(), buf.size());
  REQUIRE(c.events().size() == 2 * kLaunches);
  CHECK(c.events().capacity() == 5 * EventChunks::kChunkEvents);
  // The next buffer is expected to be as large: its 80,000 events ahead, 10 chunks in all;
  // the current (fifth, partly written) chunk and the five after it are populated.
  CHECK(c.PrepareStore() == 6 * EventChunks::kChunkBytes);
  CHECK(c.events().capacity() == 10 * EventChunks::kChunkEvents);
  for (uint32_t i = 0; i < kLaunches; ++i) {
    REQUIRE(c.events()[2 * i].kind == EventKind::kRuntime);
    REQUIRE(c.events()[2 * i + 1].kind == EventKind::kKernel);
    REQUIRE(c.events()[2 * i + 1].correlation == i + 1);
  }
  TraceData data;
  data.pid = 99;
  const MergeResult m = MergeIntoTraceData(c, data);
  CHECK(m.flows == kLaunches);
  CHECK(c.events().size() == 0);
  CHECK(c.events().capacity() == 0);
  size_t merged = 0;
  for (const auto& track : data.events_by_track) merged += track.size();
  CHECK(merged == 2 * kLaunches);
}

TEST_CASE("memcpy, memset, runtime and driver names follow Kineto", "[cupti_convert]") {
  RecordBuffer buf;
  buf.Add(testing::Memcpy(10, 100, 300, 4096));
  buf.Add(testing::Memset(11, 400, 500, 8));
  buf.Add(testing::Runtime(211, 12, 600, 700));
  buf.Add(testing::Runtime(505, 13, 800, 900));
  buf.Add(testing::Api(CUPTI_ACTIVITY_KIND_DRIVER, 307, 14, 1000, 1100));
  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(buf.data(), buf.size());
  REQUIRE(c.events().size() == 5);
  const auto& ev = c.events();
  CHECK(c.strings().Get(ev[0].name) == "Memcpy HtoD (Pageable -> Device)");
  CHECK(ev[0].correlation == 10);  // the runtime call's id, not the driver's
  CHECK(c.memcpys()[ev[0].detail].bytes == 4096);
  CHECK(c.memcpys()[ev[0].detail].copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
  CHECK(c.strings().Get(ev[1].name) == "Memset (Device)");
  CHECK(c.memsets()[ev[1].detail].bytes == 8);
  CHECK(c.strings().Get(ev[2].name) == "cudaLaunchKernel");
  CHECK(ev[2].aux == 211);
  CHECK(ev[2].kind == EventKind::kRuntime);
  CHECK(c.strings().Get(ev[3].name) == "cudaLaunchKernel");
  CHECK(ev[3].aux == 505);
  CHECK(c.strings().Get(ev[4].name) == "cuLaunchKernel");
  CHECK(ev[4].kind == EventKind::kDriver);
  CHECK(c.tracks()[ev[2].track].type == TrackType::kThread);
  CHECK(c.tracks()[ev[2].track].id == 1234);
}

TEST_CASE("noisy runtime and driver calls are dropped and counted", "[cupti_convert]") {
  RecordBuffer buf;
  buf.Add(testing::Runtime(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 1, 10, 20));
  buf.Add(testing::Runtime(CUPTI_RUNTIME_TRACE_CBID___cudaPushCallConfiguration_v13000, 2, 30,
                           40));
  buf.Add(testing::Api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, 3,
                       50, 60));
  buf.Add(testing::Runtime(20, 4, 70, 80));
  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(buf.data(), buf.size());
  CHECK(c.events().size() == 1);
  CHECK(c.stats().filtered_api == 3);
  CHECK(c.strings().Get(c.events()[0].name) == "cudaMalloc");
}

TEST_CASE("window bounds, bad timestamps and the event-store bound are counted",
          "[cupti_convert]") {
  RecordBuffer buf;
  buf.Add(testing::Kernel(1, 900, 1100, kMatmul));   // starts before the window
  buf.Add(testing::Kernel(2, 1000, 1500, kMatmul));  // inside
  buf.Add(testing::Kernel(3, 1900, 2100, kMatmul));  // ends after the window
  buf.Add(testing::Kernel(4, 0, 1500, kMatmul));     // unknown start
  buf.Add(testing::Kernel(5, 1600, 1500, kMatmul));  // end before start
  buf.Add(testing::Kernel(6, 1200, 1300, kMatmul));  // inside
  buf.Add(testing::Kernel(7, 1300, 1400, kMatmul));  // inside, store full
  CuptiConverter c(FakeCallbackName, 2);
  c.SetWindow(1000, 2000);
  c.ConvertBuffer(buf.data(), buf.size());
  REQUIRE(c.events().size() == 2);
  CHECK(c.events()[0].correlation == 2);
  CHECK(c.events()[1].correlation == 6);
  CHECK(c.stats().before_window == 1);  // warm-up's
  CHECK(c.stats().out_of_range == 1);   // the window's loss
  CHECK(c.stats().bad_timestamp == 2);
  CHECK(c.stats().store_full == 1);
  CHECK(c.stats().records == 7);
  c.DropAfter(1400);
  REQUIRE(c.events().size() == 1);
  CHECK(c.stats().out_of_range == 2);
  CHECK(c.stats().before_window == 1);
}

TEST_CASE("launches after the window's closing edge go, with the GPU work they launched",
          "[cupti_convert]") {
  RecordBuffer buf;
  buf.Add(testing::Runtime(211, 1, 1000, 1010));   // launch inside the window
  buf.Add(testing::Kernel(1, 1500, 2600, kMatmul));  // its kernel ends after the edge: kept
  buf.Add(testing::Runtime(211, 2, 1990, 2010));   // starts before the edge, ends after: kept
  buf.Add(testing::Kernel(2, 2100, 2200, kMatmul));
  buf.Add(testing::Runtime(211, 3, 2050, 2060));   // the next step's launch: dropped
  buf.Add(testing::Kernel(3, 2300, 2400, kMatmul));  // and its kernel
  buf.Add(testing::Memcpy(4, 2500, 2550, 64));       // launch not recorded: kept, uncorrelated
  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(buf.data(), buf.size());
  REQUIRE(c.events().size() == 7);
  c.DropLaunchedAfter(2000);
  REQUIRE(c.events().size() == 5);
  std::vector<uint32_t> corr;
  for (const Event& e : c.events()) corr.push_back(e.correlation);
  CHECK(corr == std::vector<uint32_t>{1, 1, 2, 2, 4});
  CHECK(c.stats().out_of_range == 2);
  CHECK(c.stats().events == 5);
}

TEST_CASE("a truncated tail or an unknown kind stops the walk and is counted",
          "[cupti_convert]") {
  RecordBuffer buf;
  buf.Add(testing::Runtime(211, 1, 10, 20));
  buf.Add(testing::Runtime(211, 2, 30, 40));
  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(buf.data(), buf.size() - 8);  // second record incomplete
  CHECK(c.events().size() == 1);
  CHECK(c.stats().truncated_buffers == 1);
  CHECK(CountCuptiRecords(buf.data(), buf.size()) == 2);
  CHECK(CountCuptiRecords(buf.data(), buf.size() - 8) == 1);

  RecordBuffer odd;
  odd.Add(testing::Runtime(211, 3, 10, 20));
  auto bogus = testing::Runtime(211, 4, 30, 40);
  bogus.kind = static_cast<CUpti_ActivityKind>(999);
  odd.Add(bogus);
  odd.Add(testing::Runtime(211, 5, 50, 60));
  CuptiConverter c2(FakeCallbackName, 100);
  c2.ConvertBuffer(odd.data(), odd.size());
  CHECK(c2.events().size() == 1);
  CHECK(c2.stats().truncated_buffers == 1);

  RecordBuffer known;
  auto device = testing::Zero<CUpti_ActivityDevice5>();
  device.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  known.Add(device);
  known.Add(testing::Runtime(211, 6, 50, 60));
  CuptiConverter c3(FakeCallbackName, 100);
  c3.ConvertBuffer(known.data(), known.size());
  CHECK(c3.events().size() == 1);
  CHECK(c3.stats().unknown_kind == 1);  // skipped by its stride, walk continues
  CHECK(c3.stats().truncated_buffers == 0);
}

TEST_CASE("sync rows resolve device from context and wait targets from CUDA events",
          "[cupti_convert]") {
  RecordBuffer first;
  auto sync = testing::Zero<CUpti_ActivitySynchronization2>();
  sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
  sync.start = 500;
  sync.end = 600;
  sync.correlationId = 40;
  sync.contextId = 9;
  sync.streamId = 21;
  sync.cudaEventId = 3;
  sync.cudaEventSyncId = 777;
  first.Add(sync);
  auto ssync = sync;
  ssync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  ssync.cudaEventSyncId = 0;
  ssync.correlationId = 41;
  first.Add(ssync);
  auto csync = ssync;
  csync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  csync.streamId = 0xFFFFFFFFu;
  csync.correlationId = 42;
  first.Add(csync);

  RecordBuffer second;  // the context's device is learned from a later buffer
  auto k = testing::Kernel(1, 100, 200, kMatmul, /*device=*/2, /*stream=*/21);
  k.contextId = 9;
  second.Add(k);
  auto ev = testing::Zero<CUpti_ActivityCudaEvent2>();
  ev.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
  ev.correlationId = 39;
  ev.contextId = 9;
  ev.streamId = 17;
  ev.eventId = 3;
  ev.deviceId = 2;
  ev.deviceTimestamp = 450;
  ev.cudaEventSyncId = 777;
  second.Add(ev);
  auto ovh = testing::Zero<CUpti_ActivityOverhead3>();
  ovh.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  ovh.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  ovh.start = 700;
  ovh.end = 800;
  second.Add(ovh);

  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(first.data(), first.size());
  c.ConvertBuffer(second.data(), second.size());
  c.Finalize();
  const auto& e = c.events();
  REQUIRE(e.size() == 6);
  CHECK(c.strings().Get(e[0].name) == "Stream Wait Event");
  CHECK(c.strings().Get(e[1].name) == "Stream Sync");
  CHECK(c.strings().Get(e[2].name) == "Context Sync");
  CHECK(c.strings().Get(e[4].name) == "cudaEvent");
  CHECK(e[4].start_ns == 450);
  CHECK(e[4].end_ns == 451);
  CHECK(c.strings().Get(e[5].name) == "Buffer Flush");
  CHECK(c.tracks()[e[5].track].type == TrackType::kOverhead);

  const LocalTrack& wait_track = c.tracks()[e[0].track];
  CHECK(wait_track.type == TrackType::kGpuStream);
  CHECK(wait_track.device == 2);
  CHECK(wait_track.id == 21);
  CHECK(c.tracks()[e[1].track].type == TrackType::kGpuStreamSync);
  CHECK(c.tracks()[e[1].track].device == 2);
  CHECK(c.tracks()[e[2].track].type == TrackType::kGpuDevice);

  const SyncDetail& wait = c.syncs()[e[0].detail];
  CHECK(wait.device == 2);
  CHECK(wait.context == 9);
  CHECK(wait.stream == 21);
  CHECK(wait.cuda_event_id == 3);
  CHECK(wait.wait_on_stream == 17);
  CHECK(wait.wait_on_event_record_correlation == 39);
  const SyncDetail& stream_sync = c.syncs()[e[1].detail];
  CHECK(stream_sync.sync_type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
  CHECK(stream_sync.wait_on_stream == -1);
  CHECK(c.syncs()[e[2].detail].stream == 0xFFFFFFFFu);
}

TEST_CASE("external correlation records map correlation ids to CPU ranges",
          "[cupti_convert]") {
  RecordBuffer buf;
  buf.Add(testing::External(5, 42));
  buf.Add(testing::Runtime(211, 5, 10, 20));
  CuptiConverter c(FakeCallbackName, 100);
  c.ConvertBuffer(buf.data(), buf.size());
  CHECK(c.events().size() == 1);
  REQUIRE(c.external_ids().size() == 1);
  CHECK(c.external_ids().at(5) == 42);
  CHECK(c.stats().external_correlations == 1);
}

}  // namespace
}  // namespace kairos::internal
