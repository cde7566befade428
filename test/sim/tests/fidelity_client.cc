// File: test/sim/tests/fidelity_client.cc
// Layer: simulator tests: a third-party-style CUPTI client written only against the CUDA 13
//        CUPTI headers (no simulator header), loaded with CUDA_INJECTION64_PATH. It checks
//        facts that hold for real CUPTI, so the simulator is tested against them and not
//        against itself:
//        - timestamps come from the client's timestamp callback whatever its unit: with a
//          TSC-like clock (2.5 ticks per ns, arbitrary epoch) kernels pinned to a duration
//          and a pinned copy of known size show the modelled durations within 1%;
//        - exactly one API record (runtime or driver) per kernel, copy and memset, so one
//          flow per launch; API correlation ids are unique;
//        - records are exactly their documented struct size apart;
//        - driver calls the program makes itself (cuLaunchKernel, cuMemcpyHtoD_v2) have
//          DRIVER records; no runtime call has a DRIVER record under its id;
//        - stream-ordered allocations produce MEMORY2 (isAsync) and MEMORY_POOL records.
//        KSIM_FIDELITY_CLOCK=zero|backwards registers a bad clock instead: then only the
//        structural checks apply (records delivered, in order, nothing lost).
// Prints "fidelity-client: PASS ..." or one "fidelity-client: FAIL ..." line per failure.
// Threading: buffer callbacks may run on CUPTI's thread; tables behind one mutex.
#include <cupti.h>
#include <time.h>

#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

enum class ClockMode { kTsc, kZero, kBackwards };
ClockMode g_mode = ClockMode::kTsc;
constexpr double kTicksPerNs = 2.5;
constexpr uint64_t kEpochTicks = 123456789012345ull;

uint64_t MonoNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::atomic<uint64_t> g_backwards{~0ull >> 2};
uint64_t Timestamp() {
  switch (g_mode) {
    case ClockMode::kZero: return 0;
    case ClockMode::kBackwards: return g_backwards.fetch_sub(1000);
    default: return kEpochTicks + static_cast<uint64_t>(static_cast<double>(MonoNs()) * kTicksPerNs);
  }
}
double TicksToNs(uint64_t a, uint64_t b) { return (static_cast<double>(b) - static_cast<double>(a)) / kTicksPerNs; }

struct Api {
  uint32_t kind, cbid;
  uint64_t start, end;
};
struct Gpu {
  uint32_t kind;
  uint64_t start, end;
  uint64_t bytes;
  std::string name;
  uint32_t copy_kind;
};

std::mutex g_mu;
std::vector<std::string> g_fail;
std::multimap<uint32_t, Api> g_api;   // by correlation id
std::multimap<uint32_t, Gpu> g_gpu;   // by correlation id
std::vector<uint32_t> g_api_order;    // runtime API correlation ids in delivery order
size_t g_records = 0, g_pool_records = 0, g_async_memory = 0;

void Fail(const std::string& s) { g_fail.push_back(s); }

size_t DocumentedSize(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return sizeof(CUpti_ActivityMemoryPool3);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    default: return 0;
  }
}

void Handle(const CUpti_Activity* rec) {
  ++g_records;
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      g_gpu.emplace(k->correlationId, Gpu{rec->kind, k->start, k->end, 0, k->name != nullptr ? k->name : "", 0});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
      g_gpu.emplace(m->correlationId, Gpu{rec->kind, m->start, m->end, m->bytes, "memcpy", m->copyKind});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
      g_gpu.emplace(m->correlationId, Gpu{rec->kind, m->start, m->end, m->bytes, "memset", 0});
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(rec);
      g_api.emplace(a->correlationId, Api{rec->kind, a->cbid, a->start, a->end});
      if (rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME) g_api_order.push_back(a->correlationId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: ++g_pool_records; break;
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemory4*>(rec);
      if (m->isAsync != 0) ++g_async_memory;
      break;
    }
    default: break;
  }
}

void BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 256 * 1024;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::lock_guard<std::mutex> lock(g_mu);
  CUpti_Activity* rec = nullptr;
  const uint8_t* prev = nullptr;
  uint32_t prev_kind = 0;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    const auto* p = reinterpret_cast<const uint8_t*>(rec);
    size_t expect = prev == nullptr ? 0 : DocumentedSize(prev_kind);
    if (prev != nullptr && expect != 0 && static_cast<size_t>(p - prev) != expect) {
      Fail("record stride " + std::to_string(p - prev) + " after kind " + std::to_string(prev_kind) +
           ", documented " + std::to_string(expect));
    }
    if (prev == nullptr && p != buffer) Fail("first record not at the buffer start");
    prev = p;
    prev_kind = rec->kind;
    Handle(rec);
  }
  std::free(buffer);
}

bool IsLaunchCbid(uint32_t kind, uint32_t cbid) {
  if (kind == CUPTI_ACTIVITY_KIND_DRIVER) return cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 ||
         cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000;
}

void Check() {
  const bool tsc = g_mode == ClockMode::kTsc;
  size_t kernels = 0, pinned = 0, driver_kernels = 0, pinned_copies = 0, incomplete = 0;
  // A program that exits without synchronizing leaves GPU work running; the forced flush at
  // exit hands it over with unknown (0) timestamps, as CUPTI does.
  const bool allow_incomplete = std::getenv("KSIM_FIDELITY_ALLOW_INCOMPLETE") != nullptr;
  // One API record per GPU record's correlation id; launches for kernels.
  for (const auto& [corr, g] : g_gpu) {
    auto range = g_api.equal_range(corr);
    size_t n = static_cast<size_t>(std::distance(range.first, range.second));
    if (n != 1) {
      Fail(g.name + " corr " + std::to_string(corr) + " has " + std::to_string(n) + " API records");
      continue;
    }
    const Api& api = range.first->second;
    if (g.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      ++kernels;
      if (!IsLaunchCbid(api.kind, api.cbid)) Fail(g.name + " launched by cbid " + std::to_string(api.cbid));
      if (g.name == "fidelityDriverKernel") {
        ++driver_kernels;
        if (api.kind != CUPTI_ACTIVITY_KIND_DRIVER) Fail("driver-API kernel without a DRIVER launch record");
      }
    }
    if (!tsc) continue;
    if (allow_incomplete && g.start == 0 && g.end == 0) {
      ++incomplete;
      continue;
    }
    if (g.start == 0 || g.end < g.start) {
      Fail(g.name + " has unknown or inverted timestamps");
      continue;
    }
    // A GPU operation cannot start before the call that issued it began.
    if (g.start < api.start) Fail(g.name + " starts before its API call");
    if (g.name.find("fidelityPinnedKernel") != std::string::npos && g.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      ++pinned;
      double ns = TicksToNs(g.start, g.end);
      if (std::fabs(ns - 100000.0) > 1000.0) Fail("pinned kernel lasts " + std::to_string(ns) + " ns, not 100 us");
    }
    if (g.kind == CUPTI_ACTIVITY_KIND_MEMCPY && g.bytes == (1u << 18) && g.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD &&
        api.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020) {
      ++pinned_copies;
      // Pinned H2D/D2H at 50 GB/s plus 1.5 us (docs/SIMULATOR.md cost model, H100 preset).
      double model = 1500.0 + static_cast<double>(g.bytes) / 50.0;
      double ns = TicksToNs(g.start, g.end);
      if (std::fabs(ns - model) > model * 0.01) Fail("pinned copy lasts " + std::to_string(ns) + " ns, model " + std::to_string(model));
    }
  }
  // Unique API correlation ids, and no runtime call shadowed by a driver record.
  for (auto it = g_api.begin(); it != g_api.end();) {
    auto next = g_api.upper_bound(it->first);
    if (std::distance(it, next) != 1) Fail("correlation id " + std::to_string(it->first) + " has several API records");
    if (tsc && it->second.end < it->second.start) Fail("API record ends before it starts");
    it = next;
  }
  size_t driver_copies = 0;
  for (const auto& [corr, api] : g_api) {
    if (api.kind == CUPTI_ACTIVITY_KIND_DRIVER && api.cbid == CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2 &&
        g_gpu.count(corr) == 1) {
      ++driver_copies;
    }
  }
  // Records keep their order whatever the clock says: API records arrive in call order.
  for (size_t i = 1; i < g_api_order.size(); ++i) {
    if (g_api_order[i] <= g_api_order[i - 1]) {
      Fail("runtime records out of call order");
      break;
    }
  }
  // The program launches 256+... kernels: 1 (Memory) + 2 (HostFunctions) + 4 (Events) + 5
  // pinned = 12 runtime kernels (13 with --reset), plus 3 through the driver API.
  const size_t want_kernels = std::getenv("KSIM_FIDELITY_RESET") != nullptr ? 16 : 15;
  if (kernels != want_kernels) Fail("kernels " + std::to_string(kernels) + ", want " + std::to_string(want_kernels));
  if (driver_kernels != 3) Fail("driver-API kernels " + std::to_string(driver_kernels) + ", want 3");
  if (driver_copies != 1) Fail("cuMemcpyHtoD_v2 DRIVER records with a copy: " + std::to_string(driver_copies));
  if (tsc && pinned + incomplete != 6) Fail("pinned kernels " + std::to_string(pinned) + ", want 6");
  if (tsc && pinned_copies != 1) Fail("pinned 256 KiB H2D copies " + std::to_string(pinned_copies) + ", want 1");
  if (g_pool_records < 2) Fail("MEMORY_POOL records " + std::to_string(g_pool_records) + ", want created + trimmed");
  if (g_async_memory != 2) Fail("async MEMORY2 records " + std::to_string(g_async_memory) + ", want 2");
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  if (dropped != 0) Fail("dropped " + std::to_string(dropped));
}

void AtExit() {
  // As NVIDIA's samples do: hand over everything, incomplete records included.
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(g_mu);
  Check();
  for (const std::string& f : g_fail) std::printf("fidelity-client: FAIL %s\n", f.c_str());
  if (g_fail.empty()) std::printf("fidelity-client: PASS records=%zu\n", g_records);
  std::fflush(stdout);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  const char* mode = std::getenv("KSIM_FIDELITY_CLOCK");
  if (mode != nullptr && std::strcmp(mode, "zero") == 0) g_mode = ClockMode::kZero;
  if (mode != nullptr && std::strcmp(mode, "backwards") == 0) g_mode = ClockMode::kBackwards;
  // Registered before any kind is enabled, as cupti_activity.h asks.
  if (cuptiActivityRegisterTimestampCallback(Timestamp) != CUPTI_SUCCESS) return 0;
  cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
  const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                      CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_RUNTIME,
                                      CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_MEMORY2,
                                      CUPTI_ACTIVITY_KIND_MEMORY_POOL,       CUPTI_ACTIVITY_KIND_OVERHEAD,
                                      CUPTI_ACTIVITY_KIND_SYNCHRONIZATION};
  for (CUpti_ActivityKind k : kinds) {
    if (cuptiActivityEnable(k) != CUPTI_SUCCESS) std::printf("fidelity-client: FAIL enable %d\n", k);
  }
  std::atexit(AtExit);
  return 1;
}
