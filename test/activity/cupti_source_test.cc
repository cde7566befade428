// File: cupti_source_test.cc
// Layer: test (kairos_activity). The "cuda" TraceSource end to end on a fake CUPTI table:
// kinds enabled, warm-up discarded, window, drops, fault paths and their messages, and the
// real toolkit libcupti on a machine without a driver.
// Threading: the fake delivers buffers from the test thread (as CUPTI does inside a flush).
#include "activity/cupti_source.h"
#include "activity/nccl_collectives.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "util/clock.h"
#include "cupti_records.h"

namespace kairos::internal {
namespace {

using testing::RecordBuffer;

// ---- Fake CUPTI: process-global state, reset per test ----
struct FakeState {
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  bool subscribed = false;
  std::vector<CUpti_ActivityKind> enabled;
  std::vector<CUpti_ActivityKind> disabled;
  std::vector<std::pair<uint32_t, uint64_t>> pushed;  // (kind, id)
  int pops = 0;
  int runtime_filters = 0, driver_filters = 0;
  size_t dropped = 0;
  CUptiResult enable_result = CUPTI_SUCCESS;
  CUpti_ActivityKind failing_kind = CUPTI_ACTIVITY_KIND_MEMSET;  // the kind enable_result hits
  CUptiResult subscribe_result = CUPTI_SUCCESS;
  CUptiResult flush_result = CUPTI_SUCCESS;
  const char* other_subscriber = "";
  std::vector<RecordBuffer> pending;  // records CUPTI "has", delivered at the next flush
  int flushes = 0;
};
FakeState* g_fake = nullptr;

CUptiResult FakeGetVersion(uint32_t* v) { *v = 130001; return CUPTI_SUCCESS; }
CUptiResult FakeResultString(CUptiResult r, const char** s) {
  switch (r) {
    case CUPTI_ERROR_UNKNOWN: *s = "CUPTI_ERROR_UNKNOWN"; return CUPTI_SUCCESS;
    case CUPTI_ERROR_NOT_INITIALIZED: *s = "CUPTI_ERROR_NOT_INITIALIZED"; return CUPTI_SUCCESS;
    default: *s = "CUPTI_ERROR_OTHER"; return CUPTI_SUCCESS;
  }
}
CUptiResult FakeRegister(CUpti_BuffersCallbackRequestFunc rq, CUpti_BuffersCallbackCompleteFunc c) {
  g_fake->request = rq;
  g_fake->complete = c;
  return CUPTI_SUCCESS;
}
CUptiResult FakeEnable(CUpti_ActivityKind k) {
  if (g_fake->enable_result != CUPTI_SUCCESS && k == g_fake->failing_kind) {
    return g_fake->enable_result;  // MEMSET: fail part-way, after kernels and memcpy were enabled
  }
  g_fake->enabled.push_back(k);
  return CUPTI_SUCCESS;
}
CUptiResult FakeDisable(CUpti_ActivityKind k) { g_fake->disabled.push_back(k); return CUPTI_SUCCESS; }
// Delivers every pending record buffer through the client's callbacks. All buffers are
// requested before any is completed, as when CUPTI fills several (per-thread) buffers at once;
// records that find no buffer are dropped and counted, as CUPTI does.
CUptiResult FakeFlushAll(uint32_t) {
  ++g_fake->flushes;
  if (g_fake->flush_result != CUPTI_SUCCESS) return g_fake->flush_result;
  std::vector<std::pair<uint8_t*, size_t>> got;
  for (RecordBuffer& r : g_fake->pending) {
    uint8_t* buf = nullptr;
    size_t size = 0, max = 0;
    g_fake->request(&buf, &size, &max);
    if (buf == nullptr || size < r.size()) {
      g_fake->dropped += CountCuptiRecords(r.data(), r.size());
      continue;
    }
    std::memcpy(buf, r.data(), r.size());
    got.emplace_back(buf, r.size());
  }
  for (const auto& [buf, n] : got) g_fake->complete(nullptr, 0, buf, 4096, n);
  g_fake->pending.clear();
  return CUPTI_SUCCESS;
}
CUptiResult FakeDropped(CUcontext, uint32_t, size_t* n) {
  *n = g_fake->dropped;
  g_fake->dropped = 0;
  return CUPTI_SUCCESS;
}
CUptiResult FakePush(CUpti_ExternalCorrelationKind k, uint64_t id) {
  g_fake->pushed.emplace_back(k, id);
  return CUPTI_SUCCESS;
}
CUptiResult FakePop(CUpti_ExternalCorrelationKind, uint64_t*) { ++g_fake->pops; return CUPTI_SUCCESS; }
CUptiResult FakeSubscribeV2(CUpti_SubscriberHandle* h, CUpti_CallbackFunc cb, void* ud,
                            CUpti_SubscriberParams* params) {
  if (g_fake->subscribe_result != CUPTI_SUCCESS) {
    if (params != nullptr && params->oldSubscriberName != nullptr) {
      std::strncpy(params->oldSubscriberName, g_fake->other_subscriber,
                   params->oldSubscriberSize);
    }
    *h = nullptr;
    return g_fake->subscribe_result;
  }
  g_fake->callback = cb;
  g_fake->userdata = ud;
  g_fake->subscribed = true;
  *h = reinterpret_cast<CUpti_SubscriberHandle>(g_fake);
  return CUPTI_SUCCESS;
}
CUptiResult FakeSubscribe(CUpti_SubscriberHandle* h, CUpti_CallbackFunc cb, void* ud) {
  return FakeSubscribeV2(h, cb, ud, nullptr);
}
CUptiResult FakeUnsubscribe(CUpti_SubscriberHandle) { g_fake->subscribed = false; return CUPTI_SUCCESS; }
CUptiResult FakeEnableDomain(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain) { return CUPTI_SUCCESS; }
CUptiResult FakeRuntimeFilter(CUpti_CallbackId, uint8_t) { ++g_fake->runtime_filters; return CUPTI_SUCCESS; }
CUptiResult FakeDriverFilter(CUpti_CallbackId, uint8_t) { ++g_fake->driver_filters; return CUPTI_SUCCESS; }

CuptiApi FakeApi() {
  CuptiApi api;
  api.version = 130001;
  api.GetVersion = FakeGetVersion;
  api.GetResultString = FakeResultString;
  api.GetCallbackName = testing::FakeCallbackName;
  api.ActivityRegisterCallbacks = FakeRegister;
  api.ActivityEnable = FakeEnable;
  api.ActivityDisable = FakeDisable;
  api.ActivityFlushAll = FakeFlushAll;
  api.ActivityGetNumDroppedRecords = FakeDropped;
  api.ActivityPushExternalCorrelationId = FakePush;
  api.ActivityPopExternalCorrelationId = FakePop;
  api.Subscribe = FakeSubscribe;
  api.Subscribe_v2 = FakeSubscribeV2;
  api.Unsubscribe = FakeUnsubscribe;
  api.EnableDomain = FakeEnableDomain;
  api.ActivityEnableRuntimeApi = FakeRuntimeFilter;
  api.ActivityEnableDriverApi = FakeDriverFilter;
  return api;
}

uint32_t g_range = 0;
uint32_t CurrentRange() { return g_range; }
bool FakeDevice(uint32_t device, DeviceInfo* out) {
  out->id = device;
  out->name = "Fake GPU";
  out->num_sms = 132;
  return true;
}

struct Fixture {
  Fixture() { g_fake = &state; g_range = 0; }
  ~Fixture() { g_fake = nullptr; }
  CuptiSourceOptions Options() {
    CuptiSourceOptions o;
    o.api = &api;
    o.buffer_size = 4096;
    o.buffer_count = 4;
    o.max_events = 1000;
    o.current_range_id = CurrentRange;
    o.device_info = FakeDevice;
    o.nccl_tallies = &tallies;
    return o;
  }
  FakeState state;
  CuptiApi api = FakeApi();
  NcclTallies tallies;  // the root's in a process
};

uint64_t Stat(const TraceData& d, const char* key) {
  auto it = d.stats.find(key);
  return it == d.stats.end() ? ~0ull : it->second;
}

std::string Meta(const TraceData& d, const std::string& key) {
  for (const auto& [k, v] : d.metadata) {
    if (k == key) return v;
  }
  return "<absent>";
}

// One call through CUPTI's API callback in `domain` with callback id `cbid`.
void CallApiAs(CUpti_CallbackDomain domain, uint32_t cbid, uint32_t correlation) {
  uint64_t correlation_data = 0;
  CUpti_CallbackData cb;
  std::memset(&cb, 0, sizeof(cb));
  cb.correlationData = &correlation_data;
  cb.correlationId = correlation;
  cb.callbackSite = CUPTI_API_ENTER;
  g_fake->callback(g_fake->userdata, domain, cbid, &cb);
  cb.callbackSite = CUPTI_API_EXIT;
  g_fake->callback(g_fake->userdata, domain, cbid, &cb);
}

// Simulates one runtime call through CUPTI's API callback (ENTER then EXIT): cudaLaunchKernel.
void CallApi(uint32_t correlation) { CallApiAs(CUPTI_CB_DOMAIN_RUNTIME_API, 211, correlation); }

TEST_CASE_METHOD(Fixture, "a session records, correlates and counts", "[cupti_source]") {
  CuptiSource source(Options());
  Config config;
  REQUIRE(source.StartWarmup(config).ok());
  CHECK(source.active());
  CHECK(source.missing_reason().empty());
  CHECK(state.enabled ==
        std::vector<CUpti_ActivityKind>{
            CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
            CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
            CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
            CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_OVERHEAD});
  CHECK(state.runtime_filters == 20);
  CHECK(state.driver_filters == 806 - 28);  // every driver cbid but the 28 kept
  CHECK(state.subscribed);

  // Warm-up work: delivered at StartRecording's flush and discarded.
  RecordBuffer warm;
  warm.Add(testing::Runtime(211, 1, 100, 200));
  warm.Add(testing::Kernel(1, 300, 400, "_Z4stepv"));
  state.pending.push_back(warm);
  source.StartRecording(1000);
  CHECK(state.flushes == 1);

  // Inside a CPU range (id 42): the callback pushes and pops the range id.
  g_range = 42;
  CallApi(2);
  g_range = 0;
  CallApi(3);
  g_range = 43;  // linked only through the callback's (correlation, range) pair below
  CallApi(5);
  g_range = 0;
  CHECK(state.pushed == std::vector<std::pair<uint32_t, uint64_t>>{
                            {kKairosCorrelationKind, 42}, {kKairosCorrelationKind, 43}});
  CHECK(state.pops == 2);

  RecordBuffer b1, b2;
  b1.Add(testing::Kernel(2, 1500, 1600, "_Z4stepv"));  // before its launch's buffer
  b1.Add(testing::Kernel(3, 1700, 1800, "_Z4stepv"));
  b1.Add(testing::Kernel(5, 1900, 1950, "_Z4stepv"));
  b2.Add(testing::External(2, 42));
  b2.Add(testing::Runtime(211, 2, 1100, 1200));
  b2.Add(testing::Runtime(211, 3, 1300, 1400));
  b2.Add(testing::Runtime(211, 5, 1450, 1480));
  b2.Add(testing::Kernel(4, 2500, 2600, "_Z4stepv"));  // ends after the window
  state.pending.push_back(b1);
  state.pending.push_back(b2);
  state.dropped = 0;
  source.StopRecording(2000);
  CHECK(state.disabled.size() == 9);

  TraceData data;
  data.pid = 7;
  source.Collect(data);
  size_t kernels = 0, runtime = 0, linked = 0, linked43 = 0, flows_in = 0, flows_out = 0;
  for (const auto& track : data.events_by_track) {
    for (const Event& e : track) {
      kernels += e.kind == EventKind::kKernel;
      runtime += e.kind == EventKind::kRuntime;
      linked += e.external_id == 42;
      linked43 += e.external_id == 43;
      flows_in += (e.flags & kFlagFlowIn) != 0;
      flows_out += (e.flags & kFlagFlowOut) != 0;
    }
  }
  CHECK(kernels == 3);
  CHECK(runtime == 3);
  CHECK(linked == 2);  // the call and its kernel
  CHECK(linked43 == 2);
  CHECK(flows_in == 3);
  CHECK(flows_out == 3);
  CHECK(Stat(data, "cupti_link_overflow") == 0);
  CHECK(Stat(data, "cupti_warmup_discarded") == 2);
  CHECK(Stat(data, "cupti_out_of_range") == 1);
  CHECK(Stat(data, "cupti_uncorrelated") == 0);
  CHECK(Stat(data, "cupti_dropped") == 0);
  CHECK(Stat(data, "cupti_buffers_refused") == 0);
  CHECK(Stat(data, "cupti_flush_failed") == 0);
  REQUIRE(data.devices.size() == 1);
  CHECK(data.devices[0].name == "Fake GPU");
  CHECK(Meta(data, "gpu_data_missing_reason") == "<absent>");
  REQUIRE(data.metadata_json.size() == 1);
  CHECK(data.metadata_json[0] == std::make_pair(std::string("cupti_version"), std::string("130001")));
  source.Reset();
  CHECK_FALSE(state.subscribed);
  CHECK(ProcessCuptiPool().buffer_count() == 0);  // released between sessions
}

// Real CUPTI's default flush (StartRecording's) holds back a buffer that holds a running
// kernel's record (cupti_activity.h), so warm-up's records can arrive after the window opened.
// They are warm-up's, not the window's losses.
TEST_CASE_METHOD(Fixture, "warm-up records in a buffer held back past the window's opening count as warm-up",
                 "[cupti_source]") {
  CuptiSource source(Options());
  Config config;
  REQUIRE(source.StartWarmup(config).ok());
  source.StartRecording(1000);  // nothing delivered: the buffer is held back
  RecordBuffer held;
  held.Add(testing::Kernel(1, 300, 400, "_Z4stepv"));    // warm-up's
  held.Add(testing::Kernel(2, 900, 1200, "_Z4stepv"));   // launched in warm-up, runs into the window
  held.Add(testing::Kernel(3, 1100, 1300, "_Z4stepv"));  // the window's
  held.Add(testing::Kernel(4, 1900, 2100, "_Z4stepv"));  // ends after the window
  state.pending.push_back(held);
  source.StopRecording(2000);
  TraceData data;
  data.pid = 7;
  source.Collect(data);
  size_t kernels = 0;
  for (const auto& track : data.events_by_track)
    for (const Event& e : track) kernels += e.kind == EventKind::kKernel;
  CHECK(kernels == 1);
  CHECK(Stat(data, "cupti_warmup_discarded") == 2);
  CHECK(Stat(data, "cupti_out_of_range") == 1);
  source.Reset();
}

// What NCCL hands its profiler plugin for one operation (nccl_profiler_abi.h).
kairos_nccl_event_descr_v4_t Coll(const char* func, size_t count, const char* dtype, uint64_t seq) {
  kairos_nccl_event_descr_v4_t d;
  std::memset(&d, 0, sizeof(d));
  d.type = kKairosNcclProfileColl;
  d.rank = 2;
  d.coll.seqNumber = seq;
  d.coll.func = func;
  d.coll.count = count;
  d.coll.root = 0;
  d.coll.datatype = dtype;
  return d;
}

TEST_CASE_METHOD(Fixture, "NCCL operations ride on the kernel launch that follows them",
                 "[cupti_source][nccl]") {
  void* comm = nullptr;
  int mask = 0;
  REQUIRE(NcclPluginInit(&tallies, &comm, &mask, nullptr, 0xC0FFEE, 1, 4, 2) == kKairosNcclSuccess);
  CHECK(mask == (kKairosNcclProfileColl | kKairosNcclProfileP2p));

  // No window: the thread's slot holds the operation from its start to its stop, no longer.
  void* h = nullptr;
  auto early = Coll("AllReduce", 100, "ncclFloat32", 1);
  REQUIRE(NcclPluginStartEvent(comm, &h, &early) == kKairosNcclSuccess);
  REQUIRE(h != nullptr);
  NcclPluginStopEvent(h);
  CollectiveRecord none;
  CHECK_FALSE(TakePendingCollective(&none));
  const uint64_t unlaunched_before = NcclCounters(tallies).without_launch;

  CuptiSource source(Options());
  Config config;
  REQUIRE(source.StartWarmup(config).ok());
  // Warm-up already keeps them: an iteration window opens at a step boundary, and its first
  // step's collectives are launched before StartRecording runs.
  auto first = Coll("AllReduce", 64, "ncclFloat16", 6);
  REQUIRE(NcclPluginStartEvent(comm, &h, &first) == kKairosNcclSuccess);
  REQUIRE(h != nullptr);
  CallApiAs(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 8);
  NcclPluginStopEvent(h);
  auto gone = Coll("AllReduce", 64, "ncclFloat16", 5);  // its kernel never reaches the trace
  NcclPluginStartEvent(comm, &h, &gone);
  CallApiAs(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 7);
  NcclPluginStopEvent(h);
  source.StartRecording(1000);

  // One all-reduce: the driver launch that follows takes it.
  auto ar = Coll("AllReduce", 1000, "ncclFloat32", 7);
  REQUIRE(NcclPluginStartEvent(comm, &h, &ar) == kKairosNcclSuccess);
  REQUIRE(h != nullptr);
  CallApiAs(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 9);
  CallApiAs(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 10);
  REQUIRE(NcclPluginStopEvent(h) == kKairosNcclSuccess);

  // A group of two on one launch: sums of what this rank sends and receives, no single type.
  void* g1 = nullptr;
  void* g2 = nullptr;
  auto ag = Coll("AllGather", 10, "ncclBfloat16", 8);
  auto rs = Coll("ReduceScatter", 10, "ncclFloat32", 9);
  NcclPluginStartEvent(comm, &g1, &ag);
  NcclPluginStartEvent(comm, &g2, &rs);
  CallApiAs(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 11);
  NcclPluginStopEvent(g1);
  NcclPluginStopEvent(g2);

  // Enqueued with no launch seen: dropped at its stop, counted; the next launch is plain.
  auto bc = Coll("Broadcast", 5, "ncclInt8", 10);
  NcclPluginStartEvent(comm, &h, &bc);
  NcclPluginStopEvent(h);
  CallApiAs(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 12);
  RecordBuffer kernels;  // the launches' kernels ran in the window
  for (uint32_t c : {8u, 10u, 11u, 12u}) kernels.Add(testing::Kernel(c, 1000 + 50 * c, 1020 + 50 * c, "ncclDevKernel"));
  state.pending.push_back(kernels);
  source.StopRecording(2000);

  // The window is closed: launches take nothing any more (and an unlaunched operation
  // after the window is not the window's).
  auto late = Coll("AllReduce", 1, "ncclFloat32", 11);
  NcclPluginStartEvent(comm, &h, &late);
  CallApiAs(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 13);
  NcclPluginStopEvent(h);
  NcclPluginStartEvent(comm, &h, &late);
  NcclPluginStopEvent(h);

  TraceData data;
  source.Collect(data);
  REQUIRE(data.collectives.size() == 3);
  CHECK(data.collectives[0].correlation == 8);
  CHECK(data.collectives[0].dtype == CollectiveDtype::kFloat16);
  const CollectiveRecord& a = data.collectives[1];
  CHECK(a.correlation == 10);
  CHECK(a.func == CollectiveFunc::kAllReduce);
  CHECK(a.dtype == CollectiveDtype::kFloat32);
  CHECK(a.coalesced == 1);
  CHECK(a.comm_rank == 2);
  CHECK(a.comm_size == 4);
  CHECK(a.in_nelems == 1000);
  CHECK(a.out_nelems == 1000);
  CHECK(a.comm_hash == 0xC0FFEE);
  CHECK(a.seq == 7);
  const CollectiveRecord& g = data.collectives[2];
  CHECK(g.correlation == 11);
  CHECK(g.func == CollectiveFunc::kAllGather);
  CHECK(g.dtype == CollectiveDtype::kUnknown);
  CHECK(g.coalesced == 2);
  CHECK(g.in_nelems == 10 + 40);   // all-gather sends 10, reduce-scatter 10 x 4
  CHECK(g.out_nelems == 40 + 10);
  CHECK(data.FindCollective(12) == nullptr);
  CHECK(Stat(data, "nccl_collective_launches") == 3);
  CHECK(Stat(data, "nccl_collective_overflow") == 0);
  CHECK(Stat(data, "nccl_ops_without_launch") == 1);
  CHECK(NcclCounters(tallies).without_launch - unlaunched_before == 3);  // + the late ones
  int32_t rank = -1, size = 0;
  REQUIRE(NcclLargestComm(tallies, &rank, &size));
  CHECK(size >= 4);
  source.Reset();
  NcclPluginFinalize(comm);
}

CUptiResult FakeRegisterTimestamp(CUpti_TimestampCallbackFunc) { return CUPTI_SUCCESS; }
// A CUPTI clock 7 ms ahead of CLOCK_REALTIME, were CUPTI to use its own.
CUptiResult FakeTimestampAhead(uint64_t* t) {
  *t = static_cast<uint64_t>(UnixNowNs() + 7000000);
  return CUPTI_SUCCESS;
}

TEST_CASE_METHOD(Fixture, "records stamped by kairos' own timestamp callback are not shifted",
                 "[cupti_source]") {
  // With the callback taken, CUPTI's timebase is CLOCK_REALTIME by definition: no offset is
  // measured (a measurement on a loaded machine shifted every record by its own error).
  api.ActivityRegisterTimestampCallback = FakeRegisterTimestamp;
  api.GetTimestamp = FakeTimestampAhead;
  CuptiSource source(Options());
  Config config;
  REQUIRE(source.StartWarmup(config).ok());
  source.StartRecording(1000);
  RecordBuffer b;
  b.Add(testing::Kernel(3, 1500, 1600, "_Z4stepv"));
  state.pending.push_back(b);
  source.StopRecording(2000);
  TraceData data;
  source.Collect(data);
  std::vector<Event> kernels;
  for (const auto& track : data.events_by_track) {
    for (const Event& e : track) {
      if (e.kind == EventKind::kKernel) kernels.push_back(e);
    }
  }
  REQUIRE(kernels.size() == 1);
  CHECK(kernels[0].start_ns == 1500);
  CHECK(kernels[0].end_ns == 1600);
  source.Reset();
}

TEST_CASE_METHOD(Fixture, "ACTIVITY_TYPES selects the kinds", "[cupti_source]") {
  CuptiSource source(Options());
  Config config;
  config.activity_types = ActivityBit(ActivityType::kKernel) | ActivityBit(ActivityType::kCpuOp);
  REQUIRE(source.StartWarmup(config).ok());
  CHECK(state.enabled == std::vector<CUpti_ActivityKind>{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  CHECK(state.runtime_filters == 0);
  source.Reset();

  config.activity_types = ActivityBit(ActivityType::kCpuOp);
  state.enabled.clear();
  REQUIRE(source.StartWarmup(config).ok());
  CHECK_FALSE(source.active());
  CHECK(source.missing_reason().empty());
  CHECK(state.enabled.empty());
}

TEST_CASE_METHOD(Fixture, "memory recording enables MEMORY2 and MEMORY_POOL only when asked", "[memory]") {
  CuptiSource source(Options());
  Config config;
  config.activity_types = ActivityBit(ActivityType::kKernel);
  config.profile_memory = true;
  REQUIRE(source.StartWarmup(config).ok());
  CHECK(state.enabled == std::vector<CUpti_ActivityKind>{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                         CUPTI_ACTIVITY_KIND_MEMORY2,
                                                         CUPTI_ACTIVITY_KIND_MEMORY_POOL});
  source.Reset();
  // The type name alone, with no other GPU kind, is enough to make the source active.
  config.activity_types = ActivityBit(ActivityType::kMemory);
  config.profile_memory = false;
  state.enabled.clear();
  REQUIRE(source.StartWarmup(config).ok());
  CHECK(source.active());
  CHECK(state.enabled == std::vector<CUpti_ActivityKind>{CUPTI_ACTIVITY_KIND_MEMORY2,
                                                         CUPTI_ACTIVITY_KIND_MEMORY_POOL});
  source.Reset();
  // Off (the default types): neither.
  state.enabled.clear();
  REQUIRE(source.StartWarmup(Config{}).ok());
  CHECK(std::find(state.enabled.begin(), state.enabled.end(), CUPTI_ACTIVITY_KIND_MEMORY2) == state.enabled.end());
  CHECK(std::find(state.enabled.begin(), state.enabled.end(), CUPTI_ACTIVITY_KIND_MEMORY_POOL) ==
        state.enabled.end());
  source.Reset();
}

TEST_CASE_METHOD(Fixture, "another subscriber: named, CPU-only, reason in metadata",
                 "[cupti_source]") {
  state.subscribe_result = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  state.other_subscriber = "CUPTI for Nsight Systems";
  CuptiSource source(Options());
  REQUIRE(source.StartWarmup(Config()).ok());
  CHECK_FALSE(source.active());
  const std::string reason =
      "another CUPTI subscriber is active (CUPTI for Nsight Systems); GPU activity disabled, "
      "CPU trace continues";
  CHECK(source.missing_reason() == reason);
  CHECK(state.enabled.empty());
  source.StartRecording(0);
  source.StopRecording(10);
  TraceData data;
  source.Collect(data);
  CHECK(Meta(data, "gpu_data_missing_reason") == reason);
  CHECK(data.warnings == std::vector<std::string>{reason});
  CHECK(data.EventCount() == 0);
}

TEST_CASE_METHOD(Fixture, "a failing CUPTI call undoes what was enabled", "[cupti_source]") {
  state.enable_result = CUPTI_ERROR_UNKNOWN;
  CuptiSource source(Options());
  REQUIRE(source.StartWarmup(Config()).ok());
  CHECK_FALSE(source.active());
  CHECK(source.missing_reason() ==
        "CUPTI cuptiActivityEnable(MEMSET) failed: CUPTI_ERROR_UNKNOWN (999) (no NVIDIA driver "
        "or GPU?); GPU activity disabled, CPU trace continues");
  CHECK(state.disabled == std::vector<CUpti_ActivityKind>{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                          CUPTI_ACTIVITY_KIND_MEMCPY,
                                                          CUPTI_ACTIVITY_KIND_MEMCPY2});
  CHECK_FALSE(state.subscribed);
}

TEST_CASE_METHOD(Fixture, "withheld buffers and CUPTI drops are counted exactly",
                 "[cupti_source]") {
  CuptiSourceOptions o = Options();
  o.buffer_count = 2;
  CuptiSource source(o);
  REQUIRE(source.StartWarmup(Config()).ok());
  source.StartRecording(1000);
  // Whether the pool's worker is still prefaulting a buffer when the requests come (it starts
  // one after warm-up and another after the first request) does not change the counts.
  // Five CUPTI buffers' worth of records but only two pool buffers: three requests are
  // refused and CUPTI drops (and counts) their records.
  for (int i = 0; i < 5; ++i) {
    RecordBuffer b;
    b.Add(testing::Runtime(211, 10 + i, 1100, 1200));
    state.pending.push_back(b);
  }
  source.StopRecording(2000);
  TraceData data;
  source.Collect(data);
  CHECK(Stat(data, "cupti_buffers_refused") == 3);
  CHECK(Stat(data, "cupti_dropped") == 3);
  CHECK(data.EventCount() == 2);
}

TEST_CASE_METHOD(Fixture, "a failed final flush is reported", "[cupti_source]") {
  CuptiSource source(Options());
  REQUIRE(source.StartWarmup(Config()).ok());
  source.StartRecording(1000);
  state.flush_result = CUPTI_ERROR_NOT_INITIALIZED;  // e.g. the device stopped
  source.StopRecording(2000);
  TraceData data;
  source.Collect(data);
  CHECK(Stat(data, "cupti_flush_failed") == 1);
  CHECK(data.warnings == std::vector<std::string>{
                             "CUPTI flush failed at the end of the window; GPU records still "
                             "held by CUPTI are missing"});
}

TEST_CASE_METHOD(Fixture, "an unknown CUPTI version is refused", "[cupti_source]") {
  api.version = 28;
  CuptiSource source(Options());
  REQUIRE(source.StartWarmup(Config()).ok());
  CHECK_FALSE(source.active());
  CHECK(source.missing_reason() ==
        "CUPTI API version 28 has record layouts kairos does not know (supported: "
        "130000..130001); GPU activity disabled");
  CHECK(state.enabled.empty());
}

TEST_CASE_METHOD(Fixture, "telemetry totals count in and between windows, never as late records",
                 "[cupti_source][telemetry]") {
  const std::vector<CUpti_ActivityKind> totals_kinds{
      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2};
  CuptiSource source(Options());
  std::string why;
  REQUIRE(source.StartActivityTotals(&why));
  CHECK(state.enabled == totals_kinds);  // kernel and copy records only
  CHECK_FALSE(state.subscribed);         // counting needs no API callbacks
  RecordBuffer before;
  before.Add(testing::Kernel(1, 1000000, 1200000, "_Z4stepv"));
  before.Add(testing::Memcpy(2, 1300000, 1400000, 4096));
  before.Add(testing::Kernel(5, 2100000, 2200000, "_Z4stepv"));  // after the edge: next time
  state.pending.push_back(before);
  CuptiSource::ActivityTotals t = source.TakeActivityTotals(0, 2000000);
  CHECK(t.kernels == 1);
  CHECK(t.memcpy_bytes == 4096);
  CHECK(t.busy_ns == 20 * CuptiTally::kSlotNs);  // 13 slot midpoints in the kernel, 7 in the copy
  CHECK(t.complete);

  // A window enables its own kinds; the totals count its kernels too.
  Config config;
  state.enabled.clear();
  REQUIRE(source.StartWarmup(config).ok());
  CHECK(state.enabled.size() == 9);
  source.StartRecording(3000000);
  RecordBuffer in_window;
  in_window.Add(testing::Kernel(3, 3100000, 3200000, "_Z4stepv"));
  state.pending.push_back(in_window);
  state.enabled.clear();
  source.StopRecording(4000000);
  CHECK(state.enabled == totals_kinds);  // back on while the trace is assembled
  // Between StopRecording and Collect: tallied, and not one of the window's late records.
  RecordBuffer after;
  after.Add(testing::Kernel(4, 4100000, 4200000, "_Z4stepv"));
  state.pending.push_back(after);
  t = source.TakeActivityTotals(0, 5000000);
  CHECK(t.kernels == 3);  // the one held back above, the window's, the one after it
  TraceData data;
  source.Collect(data);
  CHECK(Stat(data, "cupti_late_records") == 0);
  size_t kernels = 0;
  for (const auto& track : data.events_by_track)
    for (const Event& e : track) kernels += e.kind == EventKind::kKernel;
  CHECK(kernels == 1);
  state.enabled.clear();
  source.Reset();
  CHECK(state.enabled == totals_kinds);  // resumed after the window

  // Resuming fails after the next window: the totals say so from then on.
  REQUIRE(source.StartWarmup(config).ok());
  state.enable_result = CUPTI_ERROR_UNKNOWN;
  state.failing_kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  source.Reset();
  t = source.TakeActivityTotals(0, 6000000);
  CHECK(t.kernels == 0);
  CHECK_FALSE(t.complete);
}

TEST_CASE("real libcupti without a driver: one reason, CPU-only", "[cupti_source]") {
  CuptiSourceOptions o;
  o.library_path = KAIROS_REAL_CUPTI;
  o.buffer_size = 4096;
  o.buffer_count = 2;
  CuptiSource source(o);
  REQUIRE(source.StartWarmup(Config()).ok());
  CHECK_FALSE(source.active());
  CHECK(source.missing_reason() ==
        "CUPTI cuptiSubscribe failed: CUPTI_ERROR_UNKNOWN (999) (no NVIDIA driver or GPU?); "
        "GPU activity disabled, CPU trace continues");
  TraceData data;
  source.Collect(data);
  CHECK(Meta(data, "gpu_data_missing_reason") == source.missing_reason());
  CHECK(data.EventCount() == 0);
}

}  // namespace
}  // namespace kairos::internal
