// File: test/sim/src/cudart_state.cc
// Layer: CUDA/CUPTI simulator, substitute libcudart.so.13: runtime state,
//        timeline scheduling, API scopes and record emission.
// Threading: see cudart_state.h.
#include "cudart_state.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "sim_common.h"
#include "sim_counters.h"

namespace kairos::sim {
namespace {

void ReplayContexts() {
  Runtime& rt = Rt();
  std::vector<const Context*> live;
  {
    std::lock_guard<std::mutex> lock(rt.mu);
    for (const auto& c : rt.contexts) {
      if (c != nullptr) live.push_back(c.get());
    }
  }
  for (const Context* c : live) EmitContextRecords(c);
}

// What the runtime and driver do at the first call: the runtime loads the driver library
// (libcuda.so.1; the substitute is an empty shim over this library, found on the same
// LD_LIBRARY_PATH: a tool can tell "CUDA initialised" from "libcudart merely linked" by it),
// then cuInit loads the CUDA_INJECTION64_PATH tool once.
void InjectOnce() {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    KSIM_DIAG("libcuda.so.1 not loaded: %s", dlerror());
  }
  const char* path = EnvOr("CUDA_INJECTION64_PATH", "");
  if (*path == '\0' || std::strcmp(path, "none") == 0) return;
  // RTLD_LOCAL, as the real driver does (seen on an H100: the tool's symbols were not in the
  // global scope afterwards); a tool that wants them there promotes itself.
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    KSIM_DIAG("CUDA_INJECTION64_PATH=%s: dlopen failed: %s", path, dlerror());
    return;
  }
  using InitFn = int (*)();
  auto init = reinterpret_cast<InitFn>(dlsym(handle, "InitializeInjection"));
  if (init == nullptr) {
    KSIM_DIAG("CUDA_INJECTION64_PATH=%s: no InitializeInjection symbol", path);
    return;
  }
  int ok = init();
  KSIM_DIAG("CUDA_INJECTION64_PATH=%s: InitializeInjection returned %d", path, ok);
}

}  // namespace

Runtime& Rt() {
  static Runtime* rt = [] {
    auto* r = new Runtime();
    r->devices = LoadDevices();
    r->contexts.resize(r->devices.size());
    r->kernel_times = LoadKernelTimes();
    r->stop_after = EnvInt("KAIROS_SIM_STOP_DEVICE_AFTER", -1);
    r->stop_error = static_cast<int>(EnvInt("KAIROS_SIM_STOP_DEVICE_ERROR", cudaErrorDevicesUnavailable));
    KSimSetContextReplay(&ReplayContexts);
    return r;
  }();
  return *rt;
}

int& CurrentDevice() {
  thread_local int device = 0;
  return device;
}

cudaError_t& LastError() {
  thread_local cudaError_t err = cudaSuccess;
  return err;
}

Context* Runtime::ContextLocked(int device) {
  if (device < 0 || static_cast<size_t>(device) >= devices.size()) return nullptr;
  if (contexts[device] != nullptr) return contexts[device].get();
  MarkDriverInitialized();
  auto ctx = std::make_unique<Context>();
  ctx->magic = kKSimContextMagic;
  ctx->context_id = next_context_id++;
  ctx->device_id = static_cast<uint32_t>(device);
  ctx->null_stream_id = 7;
  ctx->device = device;
  ctx->spec = devices[device];
  ctx->null_stream.magic = kKSimStreamMagic;
  ctx->null_stream.stream_id = 7;
  ctx->null_stream.context_id = ctx->context_id;
  ctx->null_stream.ctx = ctx.get();
  ctx->null_stream.is_null = true;
  Context* raw = ctx.get();
  contexts[device] = std::move(ctx);
  created_contexts.push_back(raw);
  return raw;
}

Stream* Runtime::StreamLocked(cudaStream_t s, int device) {
  Context* ctx = ContextLocked(device);
  if (ctx == nullptr) return nullptr;
  if (s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread) return &ctx->null_stream;
  auto it = streams.find(reinterpret_cast<Stream*>(s));
  return it == streams.end() ? nullptr : it->second.get();
}

const Alloc* Runtime::FindLocked(const void* p, size_t bytes, uintptr_t* base) const {
  auto addr = reinterpret_cast<uintptr_t>(p);
  auto it = allocs.upper_bound(addr);
  if (it == allocs.begin()) return nullptr;
  --it;
  if (addr + bytes > it->first + it->second.size || addr < it->first) return nullptr;
  if (base != nullptr) *base = it->first;
  return &it->second;
}

uint64_t Runtime::ContextTailLocked(const Context* ctx) const {
  uint64_t tail = ctx->null_stream.tail;
  for (const Stream* s : ctx->streams) tail = std::max(tail, s->tail);
  return tail;
}

void Runtime::ScheduleLocked(Stream* s, uint64_t duration, uint64_t* start, uint64_t* end) {
  Context* ctx = s->ctx;
  uint64_t t = MonoNowNs() + static_cast<uint64_t>(ctx->spec.launch_latency_us * 1000.0);
  t = std::max(t, s->tail);
  if (s->is_null) {
    // Legacy default stream: waits for all blocking streams of the context.
    for (const Stream* o : ctx->streams) {
      if (!o->non_blocking) t = std::max(t, o->tail);
    }
  } else if (!s->non_blocking) {
    t = std::max(t, ctx->null_stream.tail);
  }
  *start = t;
  *end = t + duration;
  s->tail = *end;
}

uint64_t Runtime::KernelNs(const Context* ctx, const KernelInfo* k, const LaunchShape& shape) const {
  for (const auto& entry : kernel_times) {
    if (k->name.find(entry.first) != std::string::npos) return entry.second;
  }
  return KernelDurationNs(ctx->spec, shape);
}

void EmitContextRecords(const Context* ctx) {
  if (KSimKindEnabled(CUPTI_ACTIVITY_KIND_DEVICE)) {
    CUpti_ActivityDevice5 d;
    std::memset(&d, 0, sizeof(d));
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.globalMemoryBandwidth = static_cast<uint64_t>(ctx->spec.hbm_gbps * 1e6);  // KB/s
    d.globalMemorySize = ctx->spec.memory_bytes;
    d.constantMemorySize = 64 << 10;
    d.l2CacheSize = static_cast<uint32_t>(ctx->spec.l2_bytes);
    d.numThreadsPerWarp = 32;
    d.coreClockRate = static_cast<uint32_t>(ctx->spec.clock_khz);
    d.numMemcpyEngines = 5;
    d.numMultiprocessors = static_cast<uint32_t>(ctx->spec.sm_count);
    d.maxWarpsPerMultiprocessor = static_cast<uint32_t>(ctx->spec.max_threads_per_sm / 32);
    d.maxBlocksPerMultiprocessor = static_cast<uint32_t>(ctx->spec.max_blocks_per_sm);
    d.maxSharedMemoryPerMultiprocessor = static_cast<uint32_t>(ctx->spec.shared_per_sm);
    d.maxRegistersPerMultiprocessor = static_cast<uint32_t>(ctx->spec.regs_per_sm);
    d.maxRegistersPerBlock = 65536;
    d.maxSharedMemoryPerBlock = static_cast<uint32_t>(ctx->spec.shared_per_block);
    d.maxThreadsPerBlock = 1024;
    d.maxBlockDimX = 1024;
    d.maxBlockDimY = 1024;
    d.maxBlockDimZ = 64;
    d.maxGridDimX = 2147483647u;
    d.maxGridDimY = 65535;
    d.maxGridDimZ = 65535;
    d.computeCapabilityMajor = static_cast<uint32_t>(ctx->spec.cc_major);
    d.computeCapabilityMinor = static_cast<uint32_t>(ctx->spec.cc_minor);
    d.id = static_cast<uint32_t>(ctx->device);
    d.uuid.bytes[0] = static_cast<char>(0x4b);
    d.uuid.bytes[15] = static_cast<char>(ctx->device);
    d.name = strdup(ctx->spec.name.c_str());  // the client frees it, as with CUPTI
    d.isCudaVisible = 1;
    KSimEmitRecord(&d, sizeof(d));
  }
  if (KSimKindEnabled(CUPTI_ACTIVITY_KIND_CONTEXT)) {
    CUpti_ActivityContext3 c;
    std::memset(&c, 0, sizeof(c));
    c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
    c.contextId = ctx->context_id;
    c.deviceId = static_cast<uint32_t>(ctx->device);
    c.computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA;
    c.nullStreamId = static_cast<uint16_t>(ctx->null_stream_id);
    c.numMultiprocessors = static_cast<uint16_t>(ctx->spec.sm_count);
    KSimEmitRecord(&c, sizeof(c));
  }
}

ApiScope::ApiScope(CUpti_CallbackId cbid, const char* name, const void* params, const char* symbol,
                   CUpti_CallbackDomain domain) {
  Runtime& rt = Rt();
  InjectOnce();
  std::memset(&call_, 0, sizeof(call_));
  call_.domain = domain;
  call_.cbid = cbid;
  call_.function_name = name;
  call_.params = params;
  call_.symbol_name = symbol;
  {
    std::lock_guard<std::mutex> lock(rt.mu);
    int dev = CurrentDevice();
    if (dev >= 0 && static_cast<size_t>(dev) < rt.contexts.size() && rt.contexts[dev] != nullptr) {
      call_.context = reinterpret_cast<CUcontext>(rt.contexts[dev].get());
      call_.context_uid = rt.contexts[dev]->context_id;
    }
  }
  long long n = rt.api_calls.fetch_add(1) + 1;
  if (rt.stop_after >= 0 && n > rt.stop_after) {
    blocked_ = static_cast<cudaError_t>(rt.stop_error);
    KSIM_DIAG("%s: device stopped (KAIROS_SIM_STOP_DEVICE_AFTER=%lld)", name, rt.stop_after);
  }
  KSimApiEnter(&call_, 0);
}

cudaError_t ApiScope::Finish(cudaError_t err) {
  if (finished_) return err;
  finished_ = true;
  call_.return_value = static_cast<int>(err);
  if (err != cudaSuccess && err != cudaErrorNotReady) {
    LastError() = err;
    KSIM_DIAG("%s returns %d (%s)", call_.function_name, static_cast<int>(err), cudaGetErrorName(err));
  }
  KSimApiExit(&call_);
  return err;
}

ApiScope::~ApiScope() {
  if (!finished_) Finish(cudaSuccess);
  // Every entry point declares its ApiScope before taking Rt().mu, so the
  // lock is free here and the client may call the runtime from the callback.
  std::vector<Context*> created;
  {
    std::lock_guard<std::mutex> lock(Rt().mu);
    created.swap(Rt().created_contexts);
  }
  for (Context* ctx : created) {
    KSimResourceCallback(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, reinterpret_cast<CUcontext>(ctx), nullptr, nullptr);
    EmitContextRecords(ctx);
  }
}

CUpti_ActivityKind KernelRecordKindNow() {
  if (KSimKindEnabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) return CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  if (KSimKindEnabled(CUPTI_ACTIVITY_KIND_KERNEL)) return CUPTI_ACTIVITY_KIND_KERNEL;
  return CUPTI_ACTIVITY_KIND_INVALID;
}

void EmitKernel(const Context* ctx, const Stream* s, const KernelInfo* k, const LaunchShape& shape,
                uint64_t queued, uint64_t start, uint64_t end, uint32_t corr, uint32_t graph_id,
                uint64_t node_id, int kind_at_launch) {
  PmNoteKernel(ctx, k, shape, start, end);  // PM sampling's view of the timeline
  const CUpti_ActivityKind kind =
      kind_at_launch >= 0 ? static_cast<CUpti_ActivityKind>(kind_at_launch) : KernelRecordKindNow();
  if (kind == CUPTI_ACTIVITY_KIND_INVALID) return;
  static std::atomic<int64_t> grid_id{1};
  CUpti_ActivityKernel10 r;
  std::memset(&r, 0, sizeof(r));
  r.kind = kind;
  r.registersPerThread = 32;
  r.start = start;  // CLOCK_MONOTONIC: libcupti converts at completion
  r.end = end;
  r.completed = r.end;
  r.deviceId = static_cast<uint32_t>(ctx->device);
  r.contextId = ctx->context_id;
  r.streamId = s->stream_id;
  r.gridX = static_cast<int32_t>(shape.grid[0]);
  r.gridY = static_cast<int32_t>(shape.grid[1]);
  r.gridZ = static_cast<int32_t>(shape.grid[2]);
  r.blockX = static_cast<int32_t>(shape.block[0]);
  r.blockY = static_cast<int32_t>(shape.block[1]);
  r.blockZ = static_cast<int32_t>(shape.block[2]);
  r.dynamicSharedMemory = static_cast<int32_t>(shape.dynamic_shared);
  r.correlationId = corr;
  r.gridId = grid_id.fetch_add(1);
  r.name = k->name.c_str();  // owned by the (leaked) kernel registry
  if (KSimLatencyTimestamps()) {
    r.queued = queued;
    r.submitted = std::min(start, queued + 1000);
  }
  r.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
  r.sharedMemoryExecuted = static_cast<uint32_t>(ctx->spec.shared_per_block);
  r.graphNodeId = node_id;
  r.graphId = graph_id;
  r.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
  KSimEmitGpuRecord(&r, sizeof(r), end);
}

void EmitMemcpy(const Context* ctx, const Stream* s, uint8_t copy_kind, uint8_t src_kind, uint8_t dst_kind,
                bool async, uint64_t bytes, uint64_t start, uint64_t end, uint32_t corr, uint32_t graph_id,
                uint64_t node_id, int src_device, int dst_device) {
  PmNoteCopy(ctx, bytes, copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, start, end);  // PM sampling
  if (KSimKindEnabled(CUPTI_ACTIVITY_KIND_MEMCPY)) {
    CUpti_ActivityMemcpy6 r;
    std::memset(&r, 0, sizeof(r));
    r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    r.copyKind = copy_kind;
    r.srcKind = src_kind;
    r.dstKind = dst_kind;
    r.flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
    r.bytes = bytes;
    r.start = start;
    r.end = end;
    r.deviceId = static_cast<uint32_t>(ctx->device);
    r.contextId = ctx->context_id;
    r.streamId = s->stream_id;
    r.correlationId = corr;
    r.runtimeCorrelationId = corr;
    r.graphNodeId = node_id;
    r.graphId = graph_id;
    r.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
    r.copyCount = 1;
    KSimEmitGpuRecord(&r, sizeof(r), end);
  }
  if (copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP && KSimKindEnabled(CUPTI_ACTIVITY_KIND_MEMCPY2)) {
    CUpti_ActivityMemcpyPtoP4 p;
    std::memset(&p, 0, sizeof(p));
    p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    p.copyKind = copy_kind;
    p.srcKind = src_kind;
    p.dstKind = dst_kind;
    p.flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
    p.bytes = bytes;
    p.start = start;
    p.end = end;
    p.deviceId = static_cast<uint32_t>(ctx->device);
    p.contextId = ctx->context_id;
    p.streamId = s->stream_id;
    p.srcDeviceId = static_cast<uint32_t>(src_device);
    p.dstDeviceId = static_cast<uint32_t>(dst_device);
    p.srcContextId = p.dstContextId = ctx->context_id;
    p.correlationId = corr;
    p.graphNodeId = node_id;
    p.graphId = graph_id;
    p.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
    KSimEmitGpuRecord(&p, sizeof(p), end);
  }
}

void EmitMemset(const Context* ctx, const Stream* s, uint32_t value, uint64_t bytes, uint16_t mem_kind, bool async,
                uint64_t start, uint64_t end, uint32_t corr, uint32_t graph_id, uint64_t node_id) {
  PmNoteCopy(ctx, bytes, false, start, end);  // PM sampling
  if (!KSimKindEnabled(CUPTI_ACTIVITY_KIND_MEMSET)) return;
  CUpti_ActivityMemset4 r;
  std::memset(&r, 0, sizeof(r));
  r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  r.value = value;
  r.bytes = bytes;
  r.start = start;
  r.end = end;
  r.deviceId = static_cast<uint32_t>(ctx->device);
  r.contextId = ctx->context_id;
  r.streamId = s->stream_id;
  r.correlationId = corr;
  r.flags = async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
  r.memoryKind = mem_kind;
  r.graphNodeId = node_id;
  r.graphId = graph_id;
  r.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
  KSimEmitGpuRecord(&r, sizeof(r), end);
}

void EmitSync(CUpti_ActivitySynchronizationType type, const Context* ctx, const Stream* s, const Event* e,
              uint64_t start, uint64_t end, uint32_t corr, cudaError_t result) {
  if (!KSimKindEnabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) return;
  CUpti_ActivitySynchronization2 r;
  std::memset(&r, 0, sizeof(r));
  r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  r.type = type;
  r.start = KSimToCuptiTime(start);  // a CPU-side record: written now, in the CUPTI base
  r.end = KSimToCuptiTime(end);
  r.correlationId = corr;
  r.contextId = ctx != nullptr ? ctx->context_id : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  r.streamId = s != nullptr ? s->stream_id : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  r.cudaEventId = e != nullptr ? e->id : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  r.cudaEventSyncId = e != nullptr ? e->id : 0;
  r.returnValue = static_cast<uint32_t>(result);
  KSimEmitRecord(&r, sizeof(r));
}

}  // namespace kairos::sim
