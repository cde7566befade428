// File: test/sim/src/cupti_api.cc
// Layer: CUDA/CUPTI simulator, substitute libcupti.so.13: public entry points.
// Threading: every function is safe to call from any thread, as in CUPTI.
//
// Semantics follow cupti_activity.h / cupti_callbacks.h for a host where a
// driver is present; KAIROS_SIM_CUPTI_FAIL can force any call to fail.
#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "cupti_core.h"
#include "cupti_entry.h"
#include "cupti_records.h"
#include "sim_common.h"
#include "sim_private.h"

using kairos::sim::Core;
using kairos::sim::CuptiCore;
using kairos::sim::Fail;

namespace {

bool LegacyKind(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_EVENT:
    case CUPTI_ACTIVITY_KIND_METRIC:
    case CUPTI_ACTIVITY_KIND_EVENT_INSTANCE:
    case CUPTI_ACTIVITY_KIND_METRIC_INSTANCE:
    case CUPTI_ACTIVITY_KIND_SOURCE_LOCATOR:
    case CUPTI_ACTIVITY_KIND_GLOBAL_ACCESS:
    case CUPTI_ACTIVITY_KIND_BRANCH:
    case CUPTI_ACTIVITY_KIND_INSTRUCTION_EXECUTION:
    case CUPTI_ACTIVITY_KIND_SHARED_ACCESS:
    case CUPTI_ACTIVITY_KIND_PC_SAMPLING:
    case CUPTI_ACTIVITY_KIND_PC_SAMPLING_RECORD_INFO:
    case CUPTI_ACTIVITY_KIND_INSTRUCTION_CORRELATION:
    case CUPTI_ACTIVITY_KIND_INSTANTANEOUS_EVENT:
    case CUPTI_ACTIVITY_KIND_INSTANTANEOUS_EVENT_INSTANCE:
    case CUPTI_ACTIVITY_KIND_INSTANTANEOUS_METRIC:
    case CUPTI_ACTIVITY_KIND_INSTANTANEOUS_METRIC_INSTANCE:
      return true;
    default:
      return false;
  }
}

CUptiResult SetKind(CUpti_ActivityKind kind, uint8_t on) {
  if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT) {
    return Fail(CUPTI_ERROR_INVALID_KIND);
  }
  if (LegacyKind(kind)) return Fail(CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED);
  uint8_t was = Core().kinds[kind].exchange(on);
  if (on != 0 && was == 0 &&
      (kind == CUPTI_ACTIVITY_KIND_DEVICE || kind == CUPTI_ACTIVITY_KIND_CONTEXT)) {
    // Device and context records describe objects that may already exist.
    if (auto replay = Core().context_replay.load()) replay();
  }
  return CUPTI_SUCCESS;
}


}  // namespace

KSIM_PUBLIC CUptiResult cuptiGetVersion(uint32_t* version) {
  KSIM_CUPTI_ENTRY("cuptiGetVersion");
  if (version == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiGetResultString(CUptiResult result, const char** str) {
  if (str == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  switch (result) {
    case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_INVALID_PARAMETER: *str = "CUPTI_ERROR_INVALID_PARAMETER"; break;
    case CUPTI_ERROR_INVALID_DEVICE: *str = "CUPTI_ERROR_INVALID_DEVICE"; break;
    case CUPTI_ERROR_INVALID_CONTEXT: *str = "CUPTI_ERROR_INVALID_CONTEXT"; break;
    case CUPTI_ERROR_INVALID_OPERATION: *str = "CUPTI_ERROR_INVALID_OPERATION"; break;
    case CUPTI_ERROR_OUT_OF_MEMORY: *str = "CUPTI_ERROR_OUT_OF_MEMORY"; break;
    case CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT: *str = "CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT"; break;
    case CUPTI_ERROR_API_NOT_IMPLEMENTED: *str = "CUPTI_ERROR_API_NOT_IMPLEMENTED"; break;
    case CUPTI_ERROR_MAX_LIMIT_REACHED: *str = "CUPTI_ERROR_MAX_LIMIT_REACHED"; break;
    case CUPTI_ERROR_NOT_READY: *str = "CUPTI_ERROR_NOT_READY"; break;
    case CUPTI_ERROR_NOT_INITIALIZED: *str = "CUPTI_ERROR_NOT_INITIALIZED"; break;
    case CUPTI_ERROR_QUEUE_EMPTY: *str = "CUPTI_ERROR_QUEUE_EMPTY"; break;
    case CUPTI_ERROR_INVALID_KIND: *str = "CUPTI_ERROR_INVALID_KIND"; break;
    case CUPTI_ERROR_NOT_SUPPORTED: *str = "CUPTI_ERROR_NOT_SUPPORTED"; break;
    case CUPTI_ERROR_HARDWARE_BUSY: *str = "CUPTI_ERROR_HARDWARE_BUSY"; break;
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: *str = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"; break;
    case CUPTI_ERROR_INVALID_METRIC_NAME: *str = "CUPTI_ERROR_INVALID_METRIC_NAME"; break;
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED: *str = "CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED"; break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"; break;
    case CUPTI_ERROR_UNKNOWN: *str = "CUPTI_ERROR_UNKNOWN"; break;
    default: *str = "CUPTI_ERROR_UNKNOWN"; return CUPTI_ERROR_INVALID_PARAMETER;
  }
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiGetErrorMessage(CUptiResult result, const char** str) {
  return cuptiGetResultString(result, str);
}

KSIM_PUBLIC CUptiResult cuptiGetLastError(void) { return Core().last_error.exchange(CUPTI_SUCCESS); }

KSIM_PUBLIC CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                       CUpti_BuffersCallbackCompleteFunc complete) {
  KSIM_CUPTI_ENTRY("cuptiActivityRegisterCallbacks");
  if (request == nullptr || complete == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  Core().store.Register(request, complete);
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  KSIM_CUPTI_ENTRY("cuptiActivityEnable");
  // KAIROS_SIM_CUPTI_ENABLE_DELAY_MS: the process's first enable is slow, as the real one's
  // first call sets up tracing on the device. The kind is on only when the call returns.
  static std::atomic<bool> first_enable{true};
  if (first_enable.exchange(false)) {
    const int ms = kairos::sim::EnvInt("KAIROS_SIM_CUPTI_ENABLE_DELAY_MS", 0);
    if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }
  return SetKind(kind, 1);
}

KSIM_PUBLIC CUptiResult cuptiActivityEnableAndDump(CUpti_ActivityKind kind) {
  KSIM_CUPTI_ENTRY("cuptiActivityEnableAndDump");
  return SetKind(kind, 1);
}

KSIM_PUBLIC CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  KSIM_CUPTI_ENTRY("cuptiActivityDisable");
  return SetKind(kind, 0);
}

KSIM_PUBLIC CUptiResult cuptiActivityEnableContext(CUcontext, CUpti_ActivityKind kind) {
  KSIM_CUPTI_ENTRY("cuptiActivityEnableContext");
  return SetKind(kind, 1);
}

KSIM_PUBLIC CUptiResult cuptiActivityDisableContext(CUcontext, CUpti_ActivityKind kind) {
  KSIM_CUPTI_ENTRY("cuptiActivityDisableContext");
  return SetKind(kind, 0);
}

KSIM_PUBLIC CUptiResult cuptiActivityFlushAll(uint32_t flag) {
  KSIM_CUPTI_ENTRY("cuptiActivityFlushAll");
  // KAIROS_SIM_CUPTI_FLUSH_DELAY_MS: every non-forced flush takes this long before it returns,
  // as a flush of many pending buffers, or a caller thread that lost its core, does. A tool
  // that flushes while opening its window opens it that much later than it meant to.
  if (flag == 0) {
    const int ms = kairos::sim::EnvInt("KAIROS_SIM_CUPTI_FLUSH_DELAY_MS", 0);
    if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }
  CUptiResult r = Core().store.FlushAll(flag);
  return r == CUPTI_SUCCESS ? r : Fail(r);
}

KSIM_PUBLIC CUptiResult cuptiActivityFlush(CUcontext, uint32_t, uint32_t flag) {
  KSIM_CUPTI_ENTRY("cuptiActivityFlush");
  CUptiResult r = Core().store.FlushAll(flag);
  return r == CUPTI_SUCCESS ? r : Fail(r);
}

KSIM_PUBLIC CUptiResult cuptiActivityFlushPeriod(uint32_t time) {
  KSIM_CUPTI_ENTRY("cuptiActivityFlushPeriod");
  Core().store.SetFlushPeriodMs(time);
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  KSIM_CUPTI_ENTRY("cuptiActivityGetNextRecord");
  if (buffer == nullptr || record == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  size_t off = 0;
  if (*record != nullptr) {
    uint8_t* cur = reinterpret_cast<uint8_t*>(*record);
    if (cur < buffer || cur >= buffer + valid) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
    uint32_t kind;
    std::memcpy(&kind, cur, sizeof(kind));
    size_t size = kairos::sim::RecordSize(kind);
    if (size == 0) return Fail(CUPTI_ERROR_INVALID_KIND);
    off = static_cast<size_t>(cur - buffer) + size;
  }
  if (off + sizeof(uint32_t) > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  uint32_t kind;
  std::memcpy(&kind, buffer + off, sizeof(kind));
  size_t size = kairos::sim::RecordSize(kind);
  if (size == 0) return Fail(CUPTI_ERROR_INVALID_KIND);
  if (off + size > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + off);
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  KSIM_CUPTI_ENTRY("cuptiActivityGetNumDroppedRecords");
  if (dropped == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *dropped = Core().store.TakeDropped();
  return CUPTI_SUCCESS;
}

namespace {

CUptiResult Attribute(bool set, CUpti_ActivityAttribute attr, size_t* value_size, void* value) {
  if (value_size == nullptr || value == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  CuptiCore& core = Core();
  std::lock_guard<std::mutex> lock(core.attr_mu);
  auto s = core.size_attrs.find(attr);
  if (s != core.size_attrs.end()) {
    if (*value_size < sizeof(size_t)) return Fail(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
    if (set) {
      std::memcpy(&s->second, value, sizeof(size_t));
    } else {
      std::memcpy(value, &s->second, sizeof(size_t));
    }
    *value_size = sizeof(size_t);
    return CUPTI_SUCCESS;
  }
  auto b = core.byte_attrs.find(attr);
  if (b != core.byte_attrs.end()) {
    if (*value_size < sizeof(uint8_t)) return Fail(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
    if (set) {
      std::memcpy(&b->second, value, 1);
    } else {
      std::memcpy(value, &b->second, 1);
    }
    *value_size = sizeof(uint8_t);
    return CUPTI_SUCCESS;
  }
  // The semaphore pool attributes are unsupported since CUDA 12.3.
  return Fail(CUPTI_ERROR_NOT_SUPPORTED);
}

}  // namespace

KSIM_PUBLIC CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t* value_size,
                                                  void* value) {
  KSIM_CUPTI_ENTRY("cuptiActivitySetAttribute");
  return Attribute(true, attr, value_size, value);
}

KSIM_PUBLIC CUptiResult cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t* value_size,
                                                  void* value) {
  KSIM_CUPTI_ENTRY("cuptiActivityGetAttribute");
  return Attribute(false, attr, value_size, value);
}

KSIM_PUBLIC CUptiResult cuptiGetTimestamp(uint64_t* timestamp) {
  KSIM_CUPTI_ENTRY("cuptiGetTimestamp");
  if (timestamp == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  // "Normalized to correspond with the ... timestamps reported in the activity records".
  *timestamp = Core().timebase.Now();
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc func) {
  KSIM_CUPTI_ENTRY("cuptiActivityRegisterTimestampCallback");
  if (func == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  Core().timebase.SetCallback(func);
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  KSIM_CUPTI_ENTRY("cuptiActivityPushExternalCorrelationId");
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  kairos::sim::ExternalStack(kind)->push_back(id);
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                              uint64_t* last_id) {
  KSIM_CUPTI_ENTRY("cuptiActivityPopExternalCorrelationId");
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  auto* stack = kairos::sim::ExternalStack(kind);
  if (stack->empty()) return Fail(CUPTI_ERROR_QUEUE_EMPTY);
  if (last_id != nullptr) *last_id = stack->back();
  stack->pop_back();
  return CUPTI_SUCCESS;
}

#define KSIM_BOOL_SETTER(fn, member)                 \
  KSIM_PUBLIC CUptiResult fn(uint8_t enable) {       \
    KSIM_CUPTI_ENTRY(#fn);                           \
    Core().member.store(enable != 0);                \
    return CUPTI_SUCCESS;                            \
  }
KSIM_BOOL_SETTER(cuptiActivityEnableLatencyTimestamps, latency_timestamps)
KSIM_BOOL_SETTER(cuptiActivityEnableCudaEventDeviceTimestamps, event_device_timestamps)

// Accepted and ignored: they change record contents the simulator does not
// model (launch attributes, HW trace, allocation source, device graphs).
#define KSIM_ACCEPT_FLAG(fn)                   \
  KSIM_PUBLIC CUptiResult fn(uint8_t) {        \
    KSIM_CUPTI_ENTRY(#fn);                     \
    return CUPTI_SUCCESS;                      \
  }
KSIM_ACCEPT_FLAG(cuptiActivityEnableLaunchAttributes)
KSIM_ACCEPT_FLAG(cuptiActivityEnableDeviceGraph)
KSIM_ACCEPT_FLAG(cuptiActivityEnableHWTrace)
KSIM_ACCEPT_FLAG(cuptiActivityEnableAllocationSource)
KSIM_ACCEPT_FLAG(cuptiActivityEnableAllSyncRecords)

KSIM_PUBLIC CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
  KSIM_CUPTI_ENTRY("cuptiActivityEnableRuntimeApi");
  if (cbid >= kairos::sim::kMaxCbid) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  Core().runtime_filter[cbid].store(enable != 0);
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
  KSIM_CUPTI_ENTRY("cuptiActivityEnableDriverApi");
  if (cbid >= kairos::sim::kMaxCbid) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  Core().driver_filter[cbid].store(enable != 0);
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  KSIM_CUPTI_ENTRY("cuptiSetThreadIdType");
  if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  Core().thread_id_type.store(type);
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiGetThreadIdType(CUpti_ActivityThreadIdType* type) {
  KSIM_CUPTI_ENTRY("cuptiGetThreadIdType");
  if (type == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *type = static_cast<CUpti_ActivityThreadIdType>(Core().thread_id_type.load());
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiFinalize(void) {
  KSIM_CUPTI_ENTRY("cuptiFinalize");
  CuptiCore& core = Core();
  for (auto& k : core.kinds) k.store(0);
  {
    std::lock_guard<std::mutex> lock(core.subscriber_mu);
    core.subscriber_callback.store(nullptr);
    core.subscriber_userdata.store(nullptr);
    core.subscriber_name.clear();
  }
  core.store.Reset();
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiGetContextId(CUcontext context, uint32_t* context_id) {
  KSIM_CUPTI_ENTRY("cuptiGetContextId");
  auto* h = reinterpret_cast<const KSimContextHeader*>(context);
  if (context_id == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (h == nullptr || h->magic != kKSimContextMagic) return Fail(CUPTI_ERROR_INVALID_CONTEXT);
  *context_id = h->context_id;
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t* device_id) {
  KSIM_CUPTI_ENTRY("cuptiGetDeviceId");
  auto* h = reinterpret_cast<const KSimContextHeader*>(context);
  if (device_id == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (h == nullptr || h->magic != kKSimContextMagic) return Fail(CUPTI_ERROR_INVALID_CONTEXT);
  *device_id = h->device_id;
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiGetStreamIdEx(CUcontext context, CUstream stream, uint8_t, uint32_t* stream_id) {
  KSIM_CUPTI_ENTRY("cuptiGetStreamIdEx");
  if (stream_id == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  auto* s = reinterpret_cast<const KSimStreamHeader*>(stream);
  if (s != nullptr && s->magic == kKSimStreamMagic) {
    *stream_id = s->stream_id;
    return CUPTI_SUCCESS;
  }
  auto* c = reinterpret_cast<const KSimContextHeader*>(context);
  if (s == nullptr && c != nullptr && c->magic == kKSimContextMagic) {
    *stream_id = c->null_stream_id;
    return CUPTI_SUCCESS;
  }
  return Fail(CUPTI_ERROR_INVALID_STREAM);
}

KSIM_PUBLIC CUptiResult cuptiGetStreamId(CUcontext context, CUstream stream, uint32_t* stream_id) {
  return cuptiGetStreamIdEx(context, stream, 0, stream_id);
}

KSIM_PUBLIC CUptiResult cuptiGetGraphId(CUgraph graph, uint32_t* id) {
  KSIM_CUPTI_ENTRY("cuptiGetGraphId");
  auto* g = reinterpret_cast<const KSimGraphHeader*>(graph);
  if (id == nullptr || g == nullptr || g->magic != kKSimGraphMagic) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *id = g->graph_id;
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiGetGraphExecId(CUgraphExec exec, uint32_t* id) {
  KSIM_CUPTI_ENTRY("cuptiGetGraphExecId");
  auto* g = reinterpret_cast<const KSimGraphHeader*>(exec);
  if (id == nullptr || g == nullptr || g->magic != kKSimGraphMagic) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *id = g->graph_id;
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiDeviceSupported(CUdevice, int* support) {
  KSIM_CUPTI_ENTRY("cuptiDeviceSupported");
  if (support == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *support = 1;
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiComputeCapabilitySupported(int major, int, int* support) {
  KSIM_CUPTI_ENTRY("cuptiComputeCapabilitySupported");
  if (support == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *support = major >= 7 ? 1 : 0;
  return CUPTI_SUCCESS;
}
