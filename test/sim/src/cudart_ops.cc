// File: test/sim/src/cudart_ops.cc
// Layer: CUDA/CUPTI simulator, substitute libcudart.so.13: copies, memsets,
//        streams and events.
// Threading: any thread; state in Rt() under its mutex, host waits unlocked.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>

#include "cudart_ops.h"
#include "cudart_state.h"
#include "sim_common.h"

using namespace kairos::sim;  // NOLINT: this file is the runtime's C surface

#define KSIM_RT extern "C" __attribute__((visibility("default")))
#define RT_CBID(name) CUPTI_RUNTIME_TRACE_CBID_##name

namespace kairos::sim {

cudaError_t EnqueueCopy(Runtime& rt, Stream* s, void* dst, const void* src, size_t n, cudaMemcpyKind kind,
                        bool async, uint32_t corr, uint32_t graph_id, uint64_t node_id, uint64_t* end_out,
                        const Copy2DShape* shape) {
  uintptr_t base = 0;
  // The extent each side spans: the whole pitched block for a 2D copy.
  const size_t dspan = shape != nullptr ? shape->dpitch * (shape->height - 1) + shape->width : n;
  const size_t sspan = shape != nullptr ? shape->spitch * (shape->height - 1) + shape->width : n;
  const Alloc* da = rt.FindLocked(dst, dspan, &base);
  const Alloc* sa = rt.FindLocked(src, sspan, &base);
  bool d_dev = da != nullptr && da->kind != MemKind::kPinned;
  bool s_dev = sa != nullptr && sa->kind != MemKind::kPinned;
  if (kind == cudaMemcpyDefault) {
    kind = s_dev ? (d_dev ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost)
                 : (d_dev ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost);
  }
  bool want_d_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  bool want_s_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if ((want_d_dev && !d_dev) || (want_s_dev && !s_dev) || kind > cudaMemcpyDefault) {
    KSIM_DIAG("memcpy: pointer does not match cudaMemcpyKind %d (or is not a live allocation)", kind);
    return cudaErrorInvalidValue;
  }
  const DeviceSpec& spec = s->ctx->spec;
  uint8_t copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
  CopyPath path = CopyPath::kHostToHost;
  bool pinned_host = false;
  int src_dev = s->ctx->device, dst_dev = s->ctx->device;
  switch (kind) {
    case cudaMemcpyHostToDevice:
      copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
      pinned_host = sa != nullptr;
      path = pinned_host ? CopyPath::kHostToDevicePinned : CopyPath::kHostToDevicePageable;
      break;
    case cudaMemcpyDeviceToHost:
      copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
      pinned_host = da != nullptr;
      path = pinned_host ? CopyPath::kDeviceToHostPinned : CopyPath::kDeviceToHostPageable;
      break;
    case cudaMemcpyDeviceToDevice:
      src_dev = sa->device;
      dst_dev = da->device;
      copy_kind = src_dev == dst_dev ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOD : CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
      path = src_dev == dst_dev ? CopyPath::kDeviceToDevice : CopyPath::kPeer;
      break;
    default:
      break;
  }
  uint8_t src_kind = sa == nullptr ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE
                     : sa->kind == MemKind::kDevice ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE
                     : sa->kind == MemKind::kManaged ? CUPTI_ACTIVITY_MEMORY_KIND_MANAGED
                                                     : CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  uint8_t dst_kind = da == nullptr ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE
                     : da->kind == MemKind::kDevice ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE
                     : da->kind == MemKind::kManaged ? CUPTI_ACTIVITY_MEMORY_KIND_MANAGED
                                                     : CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  uint64_t start = 0, end = 0;
  rt.ScheduleLocked(s, CopyDurationNs(spec, path, n), &start, &end);
  // Device memory is host memory: the bytes move now, in program order.
  if (shape != nullptr) {
    for (size_t row = 0; row < shape->height; ++row) {
      std::memmove(static_cast<uint8_t*>(dst) + row * shape->dpitch,
                   static_cast<const uint8_t*>(src) + row * shape->spitch, shape->width);
    }
  } else if (n > 0 && dst != src) {
    std::memmove(dst, src, n);
  }
  EmitMemcpy(s->ctx, s, copy_kind, src_kind, dst_kind, async, n, start, end, corr, graph_id, node_id, src_dev,
             dst_dev);
  // A copy from/to pageable memory is synchronous for the host even when
  // issued with cudaMemcpyAsync (the driver stages it).
  bool host_waits = !async || (kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyHostToHost && !pinned_host);
  *end_out = host_waits ? end : 0;
  return cudaSuccess;
}

cudaError_t EnqueueMemset(Runtime& rt, Stream* s, void* dst, int value, size_t n, bool async, uint32_t corr,
                          uint32_t graph_id, uint64_t node_id) {
  const Alloc* a = rt.FindLocked(dst, n, nullptr);
  if (a == nullptr || a->kind == MemKind::kPinned) return cudaErrorInvalidValue;
  uint64_t start = 0, end = 0;
  rt.ScheduleLocked(s, MemsetDurationNs(s->ctx->spec, n), &start, &end);
  std::memset(dst, value, n);
  EmitMemset(s->ctx, s, static_cast<uint32_t>(value), n,
             a->kind == MemKind::kManaged ? CUPTI_ACTIVITY_MEMORY_KIND_MANAGED : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
             async, start, end, corr, graph_id, node_id);
  return cudaSuccess;
}

cudaError_t CopyApi(ApiScope& api, void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t stream,
                    bool async) {
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  Runtime& rt = Rt();
  std::unique_lock<std::mutex> lock(rt.mu);
  Stream* s = rt.StreamLocked(stream, CurrentDevice());
  if (s == nullptr) return api.Finish(rt.devices.empty() ? cudaErrorNoDevice : cudaErrorInvalidResourceHandle);
  if (s->capture != nullptr) {
    GraphNode node{NodeType::kMemcpy, rt.next_node_id++};
    node.dst = dst;
    node.src = src;
    node.bytes = n;
    node.copy_kind = kind;
    s->capture->nodes.push_back(node);
    return api.Finish(cudaSuccess);
  }
  uint64_t wait_until = 0;
  cudaError_t err = EnqueueCopy(rt, s, dst, src, n, kind, async, api.correlation(), 0, 0, &wait_until);
  lock.unlock();
  if (err == cudaSuccess) SleepUntilMono(wait_until);
  return api.Finish(err);
}

cudaError_t MemsetApi(ApiScope& api, void* dst, int value, size_t n, cudaStream_t stream, bool async) {
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  Runtime& rt = Rt();
  std::unique_lock<std::mutex> lock(rt.mu);
  Stream* s = rt.StreamLocked(stream, CurrentDevice());
  if (s == nullptr) return api.Finish(rt.devices.empty() ? cudaErrorNoDevice : cudaErrorInvalidResourceHandle);
  if (s->capture != nullptr) {
    GraphNode node{NodeType::kMemset, rt.next_node_id++};
    node.dst = dst;
    node.bytes = n;
    node.value = value;
    s->capture->nodes.push_back(node);
    return api.Finish(cudaSuccess);
  }
  cudaError_t err = EnqueueMemset(rt, s, dst, value, n, async, api.correlation(), 0, 0);
  lock.unlock();
  return api.Finish(err);
}

}  // namespace kairos::sim

KSIM_RT cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
  ApiScope api(RT_CBID(cudaMemcpy_v3020), "cudaMemcpy");
  return CopyApi(api, dst, src, n, kind, nullptr, false);
}

KSIM_RT cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t s) {
  ApiScope api(RT_CBID(cudaMemcpyAsync_v3020), "cudaMemcpyAsync");
  return CopyApi(api, dst, src, n, kind, s, true);
}

KSIM_RT cudaError_t cudaMemcpyPeer(void* dst, int, const void* src, int, size_t n) {
  ApiScope api(RT_CBID(cudaMemcpyPeer_v4000), "cudaMemcpyPeer");
  return CopyApi(api, dst, src, n, cudaMemcpyDeviceToDevice, nullptr, false);
}

KSIM_RT cudaError_t cudaMemcpyPeerAsync(void* dst, int, const void* src, int, size_t n, cudaStream_t s) {
  ApiScope api(RT_CBID(cudaMemcpyPeerAsync_v4000), "cudaMemcpyPeerAsync");
  return CopyApi(api, dst, src, n, cudaMemcpyDeviceToDevice, s, true);
}

KSIM_RT cudaError_t cudaMemset(void* dst, int value, size_t n) {
  ApiScope api(RT_CBID(cudaMemset_v3020), "cudaMemset");
  return MemsetApi(api, dst, value, n, nullptr, false);
}

KSIM_RT cudaError_t cudaMemsetAsync(void* dst, int value, size_t n, cudaStream_t s) {
  ApiScope api(RT_CBID(cudaMemsetAsync_v3020), "cudaMemsetAsync");
  return MemsetApi(api, dst, value, n, s, true);
}

// ---- Streams ----

cudaError_t kairos::sim::CreateStreamCommon(ApiScope& api, cudaStream_t* out, unsigned flags, int priority) {
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (out == nullptr) return api.Finish(cudaErrorInvalidValue);
  Runtime& rt = Rt();
  std::unique_lock<std::mutex> lock(rt.mu);
  Context* ctx = rt.ContextLocked(CurrentDevice());
  if (ctx == nullptr) return api.Finish(rt.devices.empty() ? cudaErrorNoDevice : cudaErrorInvalidDevice);
  auto s = std::make_unique<Stream>();
  s->magic = kKSimStreamMagic;
  s->stream_id = rt.next_stream_id++;
  s->context_id = ctx->context_id;
  s->ctx = ctx;
  s->non_blocking = (flags & cudaStreamNonBlocking) != 0;
  s->priority = std::max(-5, std::min(0, priority));
  Stream* raw = s.get();
  ctx->streams.push_back(raw);
  rt.streams[raw] = std::move(s);
  *out = reinterpret_cast<cudaStream_t>(raw);
  lock.unlock();
  KSimResourceCallback(CUPTI_CBID_RESOURCE_STREAM_CREATED, reinterpret_cast<CUcontext>(ctx), raw, nullptr);
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaStreamCreate(cudaStream_t* s) {
  ApiScope api(RT_CBID(cudaStreamCreate_v3020), "cudaStreamCreate");
  return CreateStreamCommon(api, s, cudaStreamDefault, 0);
}

KSIM_RT cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int flags) {
  ApiScope api(RT_CBID(cudaStreamCreateWithFlags_v5000), "cudaStreamCreateWithFlags");
  return CreateStreamCommon(api, s, flags, 0);
}

KSIM_RT cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned int flags, int priority) {
  ApiScope api(RT_CBID(cudaStreamCreateWithPriority_v5050), "cudaStreamCreateWithPriority");
  return CreateStreamCommon(api, s, flags, priority);
}

KSIM_RT cudaError_t cudaStreamGetPriority(cudaStream_t stream, int* priority) {
  ApiScope api(RT_CBID(cudaStreamGetPriority_v5050), "cudaStreamGetPriority");
  if (priority == nullptr) return api.Finish(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(Rt().mu);
  Stream* s = Rt().StreamLocked(stream, CurrentDevice());
  if (s == nullptr) return api.Finish(cudaErrorInvalidResourceHandle);
  *priority = s->priority;
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  ApiScope api(RT_CBID(cudaStreamDestroy_v5050), "cudaStreamDestroy");
  return DestroyStreamCommon(api, stream);
}

cudaError_t kairos::sim::DestroyStreamCommon(ApiScope& api, cudaStream_t stream) {
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  Runtime& rt = Rt();
  std::unique_lock<std::mutex> lock(rt.mu);
  auto it = rt.streams.find(reinterpret_cast<Stream*>(stream));
  if (it == rt.streams.end()) return api.Finish(cudaErrorInvalidResourceHandle);
  Stream* s = it->second.get();
  Context* ctx = s->ctx;
  lock.unlock();
  // The callback runs unlocked (the client may call the runtime from it);
  // then the stream is looked up again in case another thread destroyed it.
  KSimResourceCallback(CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING, reinterpret_cast<CUcontext>(ctx), s, nullptr);
  lock.lock();
  it = rt.streams.find(reinterpret_cast<Stream*>(stream));
  if (it == rt.streams.end()) return api.Finish(cudaErrorInvalidResourceHandle);
  // Work already queued still completes; the null stream inherits its end so
  // a later device sync still waits for it.
  ctx->null_stream.tail = std::max(ctx->null_stream.tail, s->tail);
  ctx->streams.erase(std::remove(ctx->streams.begin(), ctx->streams.end(), s), ctx->streams.end());
  rt.streams.erase(it);
  lock.unlock();
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  ApiScope api(RT_CBID(cudaStreamSynchronize_v3020), "cudaStreamSynchronize");
  return StreamSyncCommon(api, stream);
}

cudaError_t kairos::sim::StreamSyncCommon(ApiScope& api, cudaStream_t stream) {
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  Runtime& rt = Rt();
  std::unique_lock<std::mutex> lock(rt.mu);
  Stream* s = rt.StreamLocked(stream, CurrentDevice());
  if (s == nullptr) return api.Finish(rt.devices.empty() ? cudaErrorNoDevice : cudaErrorInvalidResourceHandle);
  if (s->capture != nullptr) return api.Finish(cudaErrorStreamCaptureUnsupported);
  uint64_t tail = s->tail;
  Stream snapshot = *s;  // the stream may be destroyed by another thread while we wait
  const Stream* key = s;  // only compared, never dereferenced after this
  lock.unlock();
  uint64_t t0 = MonoNowNs();
  SleepUntilMono(tail);
  WaitHostFuncs(key, nullptr);
  KSimSynchronizeCallback(CUPTI_CBID_SYNCHRONIZE_STREAM_SYNCHRONIZED, reinterpret_cast<CUcontext>(snapshot.ctx),
                          reinterpret_cast<CUstream>(stream));
  EmitSync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, snapshot.ctx, &snapshot, nullptr, t0,
           MonoNowNs(), api.correlation(), cudaSuccess);
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaStreamQuery(cudaStream_t stream) {
  ApiScope api(RT_CBID(cudaStreamQuery_v3020), "cudaStreamQuery");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  std::lock_guard<std::mutex> lock(Rt().mu);
  Stream* s = Rt().StreamLocked(stream, CurrentDevice());
  if (s == nullptr) return api.Finish(cudaErrorInvalidResourceHandle);
  return api.Finish(s->tail > MonoNowNs() ? cudaErrorNotReady : cudaSuccess);
}

// ---- Events ----

namespace {

Event* FindEvent(cudaEvent_t e) {
  auto it = Rt().events.find(reinterpret_cast<Event*>(e));
  return it == Rt().events.end() ? nullptr : it->second.get();
}

cudaError_t CreateEvent(ApiScope& api, cudaEvent_t* out, unsigned flags) {
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (out == nullptr) return api.Finish(cudaErrorInvalidValue);
  Runtime& rt = Rt();
  std::lock_guard<std::mutex> lock(rt.mu);
  if (rt.ContextLocked(CurrentDevice()) == nullptr) return api.Finish(cudaErrorNoDevice);
  auto e = std::make_unique<Event>();
  e->id = rt.next_event_id++;
  e->flags = flags;
  Event* raw = e.get();
  rt.events[raw] = std::move(e);
  *out = reinterpret_cast<cudaEvent_t>(raw);
  return api.Finish(cudaSuccess);
}

cudaError_t RecordEvent(ApiScope& api, cudaEvent_t event, cudaStream_t stream) {
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  Runtime& rt = Rt();
  std::lock_guard<std::mutex> lock(rt.mu);
  Event* e = FindEvent(event);
  Stream* s = rt.StreamLocked(stream, CurrentDevice());
  if (e == nullptr || s == nullptr) return api.Finish(cudaErrorInvalidResourceHandle);
  // Inside a capture an event only orders captured work (not modelled).
  if (s->capture != nullptr) return api.Finish(cudaSuccess);
  uint64_t start = 0, end = 0;
  rt.ScheduleLocked(s, 0, &start, &end);
  e->recorded = true;
  e->time = end;
  return api.Finish(cudaSuccess);
}

}  // namespace

KSIM_RT cudaError_t cudaEventCreate(cudaEvent_t* e) {
  ApiScope api(RT_CBID(cudaEventCreate_v3020), "cudaEventCreate");
  return CreateEvent(api, e, cudaEventDefault);
}

KSIM_RT cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int flags) {
  ApiScope api(RT_CBID(cudaEventCreateWithFlags_v3020), "cudaEventCreateWithFlags");
  return CreateEvent(api, e, flags);
}

KSIM_RT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  ApiScope api(RT_CBID(cudaEventRecord_v3020), "cudaEventRecord");
  return RecordEvent(api, e, s);
}

KSIM_RT cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned int) {
  ApiScope api(RT_CBID(cudaEventRecordWithFlags_v11010), "cudaEventRecordWithFlags");
  return RecordEvent(api, e, s);
}

KSIM_RT cudaError_t cudaEventQuery(cudaEvent_t event) {
  ApiScope api(RT_CBID(cudaEventQuery_v3020), "cudaEventQuery");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  std::lock_guard<std::mutex> lock(Rt().mu);
  Event* e = FindEvent(event);
  if (e == nullptr) return api.Finish(cudaErrorInvalidResourceHandle);
  return api.Finish(e->recorded && e->time > MonoNowNs() ? cudaErrorNotReady : cudaSuccess);
}

KSIM_RT cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  ApiScope api(RT_CBID(cudaEventSynchronize_v3020), "cudaEventSynchronize");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  Runtime& rt = Rt();
  std::unique_lock<std::mutex> lock(rt.mu);
  Event* e = FindEvent(event);
  if (e == nullptr) return api.Finish(cudaErrorInvalidResourceHandle);
  Event copy = *e;
  Context* ctx = rt.ContextLocked(CurrentDevice());
  lock.unlock();
  uint64_t t0 = MonoNowNs();
  if (copy.recorded) SleepUntilMono(copy.time);
  EmitSync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, ctx, nullptr, &copy, t0, MonoNowNs(),
           api.correlation(), cudaSuccess);
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  ApiScope api(RT_CBID(cudaEventElapsedTime_v12080), "cudaEventElapsedTime");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (ms == nullptr) return api.Finish(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(Rt().mu);
  Event* a = FindEvent(start);
  Event* b = FindEvent(end);
  if (a == nullptr || b == nullptr || !a->recorded || !b->recorded ||
      ((a->flags | b->flags) & cudaEventDisableTiming) != 0) {
    return api.Finish(cudaErrorInvalidResourceHandle);
  }
  uint64_t now = MonoNowNs();
  if (a->time > now || b->time > now) return api.Finish(cudaErrorNotReady);
  *ms = static_cast<float>((static_cast<double>(b->time) - static_cast<double>(a->time)) / 1e6);
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaEventDestroy(cudaEvent_t event) {
  ApiScope api(RT_CBID(cudaEventDestroy_v3020), "cudaEventDestroy");
  std::lock_guard<std::mutex> lock(Rt().mu);
  if (Rt().events.erase(reinterpret_cast<Event*>(event)) == 0) return api.Finish(cudaErrorInvalidResourceHandle);
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int) {
  ApiScope api(RT_CBID(cudaStreamWaitEvent_v3020), "cudaStreamWaitEvent");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  Runtime& rt = Rt();
  std::lock_guard<std::mutex> lock(rt.mu);
  Event* e = FindEvent(event);
  Stream* s = rt.StreamLocked(stream, CurrentDevice());
  if (e == nullptr || s == nullptr) return api.Finish(cudaErrorInvalidResourceHandle);
  if (e->recorded && s->capture == nullptr) s->tail = std::max(s->tail, e->time);
  uint64_t now = MonoNowNs();
  EmitSync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, s->ctx, s, e, now, now, api.correlation(),
           cudaSuccess);
  return api.Finish(cudaSuccess);
}
