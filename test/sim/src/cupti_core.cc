// File: test/sim/src/cupti_core.cc
// Layer: CUDA/CUPTI simulator, substitute libcupti.so.13: shared state and
//        the private hooks the substitute runtime calls (sim_private.h).
// Threading: hooks run on application threads; see cupti_core.h.
#include "cupti_core.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "sim_common.h"
#include "sim_private.h"

namespace kairos::sim {
namespace {

StoreFaults ReadStoreFaults() {
  StoreFaults f;
  const char* withhold = EnvOr("KAIROS_SIM_CUPTI_WITHHOLD_BUFFERS", "0");
  f.withhold_buffers = std::strcmp(withhold, "all") == 0 ? -1 : std::atoll(withhold);
  f.completion_delay_ms = EnvInt("KAIROS_SIM_CUPTI_COMPLETE_DELAY_MS", 0);
  f.hold_incomplete = EnvInt("KAIROS_SIM_CUPTI_HOLD_INCOMPLETE", 1) != 0;
  f.reorder = EnvInt("KAIROS_SIM_CUPTI_REORDER", 0) != 0;
  return f;
}

bool OverheadEnabled() { return Core().kinds[CUPTI_ACTIVITY_KIND_OVERHEAD].load() != 0; }

// External correlation stacks are per thread and per kind.
thread_local std::vector<uint64_t> t_external[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];

void StopWorkerAtExit() { Core().store.Shutdown(); }

}  // namespace

std::vector<uint64_t>* ExternalStack(int kind) { return &t_external[kind]; }

CuptiCore::CuptiCore() : store(ReadStoreFaults()) {
  for (auto& k : kinds) k.store(0);
  for (size_t i = 0; i < kMaxCbid; ++i) {
    runtime_filter[i].store(1);
    driver_filter[i].store(1);
    for (int d = 0; d < kNumDomains; ++d) callback_enabled[d][i].store(0);
  }
  // Defaults of cupti_activity.h (facts doc §3).
  size_attrs[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE] = 3200000;
  size_attrs[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_CDP] = 8u << 20;
  size_attrs[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT] = 250;
  size_attrs[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE] = 3;
  size_attrs[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_DEVICE_GRAPHS] = 16u << 20;
  byte_attrs[CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER] = 0;
  byte_attrs[CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED] = 0;
  byte_attrs[CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER] = 1;
  other_subscriber = EnvOr("KAIROS_SIM_CUPTI_OTHER_SUBSCRIBER", "");
  // KAIROS_SIM_CUPTI_FAIL="cuptiActivityEnable=999,cuptiSubscribe=39" or "*=999".
  std::string spec = EnvOr("KAIROS_SIM_CUPTI_FAIL", "");
  size_t pos = 0;
  while (pos < spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    std::string item = spec.substr(pos, comma - pos);
    size_t eq = item.find('=');
    if (eq != std::string::npos) {
      int code = std::atoi(item.c_str() + eq + 1);
      std::string name = item.substr(0, eq);
      if (name == "*") {
        forced_all_ = code;
      } else {
        forced_[name] = code;
      }
    }
    pos = comma + 1;
  }
  store.set_overhead_enabled(&OverheadEnabled);
}

CUptiResult CuptiCore::ForcedResult(const char* function) const {
  if (forced_all_ != 0) return static_cast<CUptiResult>(forced_all_);
  if (forced_.empty()) return CUPTI_SUCCESS;
  auto it = forced_.find(function);
  return it == forced_.end() ? CUPTI_SUCCESS : static_cast<CUptiResult>(it->second);
}

CuptiCore& Core() {
  // Leaked on purpose: records can be written from static destructors of the
  // application, after any static of ours would have been destroyed.
  static CuptiCore* core = [] {
    auto* c = new CuptiCore();
    std::atexit(&StopWorkerAtExit);
    return c;
  }();
  return *core;
}

}  // namespace kairos::sim

using kairos::sim::Core;
using kairos::sim::CuptiCore;

namespace {

void FireApiCallback(KSimApiCall* call, CUpti_ApiCallbackSite site) {
  CuptiCore& core = Core();
  CUpti_CallbackFunc cb = core.subscriber_callback.load();
  if (cb == nullptr || call->cbid >= kairos::sim::kMaxCbid ||
      core.callback_enabled[call->domain][call->cbid].load() == 0) {
    return;
  }
  CUpti_CallbackData data;
  std::memset(&data, 0, sizeof(data));
  data.callbackSite = site;
  data.functionName = call->function_name;
  data.functionParams = call->params;
  data.functionReturnValue = &call->return_value;
  data.symbolName = call->symbol_name;
  data.context = call->context;
  data.contextUid = call->context_uid;
  data.correlationData = &call->correlation_data;
  data.correlationId = call->correlation_id;
  cb(core.subscriber_userdata.load(), call->domain, call->cbid, &data);
}

}  // namespace

KSIM_API uint32_t KSimThreadId(void) {
  if (Core().thread_id_type.load() == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
    return static_cast<uint32_t>(syscall(SYS_gettid));
  }
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(pthread_self()));
}

KSIM_API void KSimApiEnter(KSimApiCall* call, uint32_t parent_correlation) {
  CuptiCore& core = Core();
  call->correlation_id =
      parent_correlation != 0 ? parent_correlation : core.next_correlation.fetch_add(1);
  call->correlation_data = 0;
  call->return_value = 0;
  call->start_mono_ns = kairos::sim::MonoNowNs();
  FireApiCallback(call, CUPTI_API_ENTER);
  // CPU-side records take their timestamps from the timebase at the moment (as CUPTI calls
  // the client's timestamp callback), after the ENTER callback like CUPTI's own stamp.
  call->start_cupti = core.timebase.Now();
}

KSIM_API void KSimApiExit(KSimApiCall* call) {
  CuptiCore& core = Core();
  uint64_t end_cupti = core.timebase.Now();
  FireApiCallback(call, CUPTI_API_EXIT);
  if (!core.store.registered()) return;
  bool runtime = call->domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  // One external-correlation record per kind with a pushed id precedes the API record.
  // Every call the program makes is outermost (the runtime makes no driver calls that
  // CUPTI reports), so runtime and driver calls both get them.
  if (core.kinds[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION].load() != 0) {
    for (int kind = 0; kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; ++kind) {
      std::vector<uint64_t>* stack = kairos::sim::ExternalStack(kind);
      if (stack->empty()) continue;
      CUpti_ActivityExternalCorrelation r;
      std::memset(&r, 0, sizeof(r));
      r.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
      r.externalKind = static_cast<CUpti_ExternalCorrelationKind>(kind);
      r.externalId = stack->back();
      r.correlationId = call->correlation_id;
      core.store.Append(&r, sizeof(r));
    }
  }
  CUpti_ActivityKind kind = runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
  const std::atomic<uint8_t>* filter = runtime ? core.runtime_filter : core.driver_filter;
  if (core.kinds[kind].load() == 0 || call->cbid >= kairos::sim::kMaxCbid ||
      filter[call->cbid].load() == 0) {
    return;
  }
  CUpti_ActivityAPI r;
  std::memset(&r, 0, sizeof(r));
  r.kind = kind;
  r.cbid = call->cbid;
  r.start = call->start_cupti;
  r.end = end_cupti;
  r.processId = static_cast<uint32_t>(getpid());
  r.threadId = KSimThreadId();
  r.correlationId = call->correlation_id;
  r.returnValue = static_cast<uint32_t>(call->return_value);
  core.store.Append(&r, sizeof(r));
}

KSIM_API int KSimKindEnabled(CUpti_ActivityKind kind) {
  if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT) return 0;
  return Core().kinds[kind].load() != 0 && Core().store.registered() ? 1 : 0;
}

KSIM_API int KSimLatencyTimestamps(void) { return Core().latency_timestamps.load() ? 1 : 0; }

KSIM_API uint64_t KSimToCuptiTime(uint64_t mono_ns) { return Core().timebase.FromMono(mono_ns); }

KSIM_API uint64_t KSimCuptiNow(void) { return Core().timebase.Now(); }

KSIM_API void KSimEmitGpuRecord(const void* record, size_t size, uint64_t complete_mono_ns) {
  Core().store.QueueGpu(record, size, complete_mono_ns);
}

KSIM_API void KSimEmitRecord(const void* record, size_t size) { Core().store.Append(record, size); }

KSIM_API void KSimResourceCallback(CUpti_CallbackId cbid, CUcontext context, void* resource_handle,
                                   void* resource_descriptor) {
  CuptiCore& core = Core();
  CUpti_CallbackFunc cb = core.subscriber_callback.load();
  if (cb == nullptr || core.callback_enabled[CUPTI_CB_DOMAIN_RESOURCE][cbid].load() == 0) return;
  CUpti_ResourceData data;
  std::memset(&data, 0, sizeof(data));
  data.context = context;
  data.resourceHandle.stream = static_cast<CUstream>(resource_handle);
  data.resourceDescriptor = resource_descriptor;
  cb(core.subscriber_userdata.load(), CUPTI_CB_DOMAIN_RESOURCE, cbid, &data);
}

KSIM_API void KSimSynchronizeCallback(CUpti_CallbackId cbid, CUcontext context, CUstream stream) {
  CuptiCore& core = Core();
  CUpti_CallbackFunc cb = core.subscriber_callback.load();
  if (cb == nullptr || core.callback_enabled[CUPTI_CB_DOMAIN_SYNCHRONIZE][cbid].load() == 0) return;
  CUpti_SynchronizeData data;
  data.context = context;
  data.stream = stream;
  cb(core.subscriber_userdata.load(), CUPTI_CB_DOMAIN_SYNCHRONIZE, cbid, &data);
}

KSIM_API void KSimSetContextReplay(KSimContextReplayFunc replay) { Core().context_replay.store(replay); }
