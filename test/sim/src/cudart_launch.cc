// File: test/sim/src/cudart_launch.cc
// Layer: CUDA/CUPTI simulator, substitute libcudart.so.13: the hidden
//        registration/launch entry points nvcc 13 host code calls, explicit
//        launches, and stream capture into graphs.
// Threading: registration runs in static constructors; launches from any
//            thread (the <<<>>> call configuration is per thread).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cudart_ops.h"
#include "cudart_state.h"
#include "ptx_launch.h"
#include "sim_common.h"

using namespace kairos::sim;  // NOLINT: this file is the runtime's C surface

#define KSIM_RT extern "C" __attribute__((visibility("default")))
#define RT_CBID(name) CUPTI_RUNTIME_TRACE_CBID_##name

namespace {

struct CallConfig {
  dim3 grid;
  dim3 block;
  size_t shared;
  cudaStream_t stream;
};

std::vector<CallConfig>& ConfigStack() {
  thread_local std::vector<CallConfig> stack;
  return stack;
}

// A fat binary handle: the simulator only needs a stable, unique address.
struct FatBinary {
  const void* wrapper;
};

const KernelInfo* FindKernelByStub(const void* host_fun) {
  std::lock_guard<std::mutex> lock(Rt().mu);
  auto it = Rt().kernels.find(host_fun);
  return it == Rt().kernels.end() ? nullptr : it->second.get();
}

const KernelInfo* ValidKernel(const void* handle) {
  std::lock_guard<std::mutex> lock(Rt().mu);
  for (const auto& entry : Rt().kernels) {
    if (entry.second.get() == handle) return entry.second.get();
  }
  return nullptr;
}

LaunchShape Shape(dim3 g, dim3 b, size_t shared) {
  LaunchShape s;
  s.grid[0] = g.x;
  s.grid[1] = g.y;
  s.grid[2] = g.z;
  s.block[0] = b.x;
  s.block[1] = b.y;
  s.block[2] = b.z;
  s.dynamic_shared = shared;
  return s;
}

cudaError_t Launch(CUpti_CallbackId cbid, const char* api_name, const KernelInfo* k, const void* func, dim3 grid,
                   dim3 block, void** args, size_t shared, cudaStream_t stream) {
  cudaLaunchKernel_v7000_params params{func, grid, block, args, shared, stream};
  ApiScope api(cbid, api_name, &params, k != nullptr ? k->name.c_str() : nullptr);
  return LaunchCommon(api, k, grid, block, shared, stream, args);
}

}  // namespace

cudaError_t kairos::sim::LaunchCommon(ApiScope& api, const KernelInfo* k, dim3 grid, dim3 block, size_t shared,
                                      cudaStream_t stream, void** args) {
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (k == nullptr) return api.Finish(cudaErrorInvalidDeviceFunction);
  uint64_t threads = static_cast<uint64_t>(block.x) * block.y * block.z;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || threads == 0 || threads > 1024 || block.z > 64 ||
      grid.y > 65535 || grid.z > 65535) {
    return api.Finish(cudaErrorInvalidConfiguration);
  }
  Runtime& rt = Rt();
  std::unique_lock<std::mutex> lock(rt.mu);
  Stream* s = rt.StreamLocked(stream, CurrentDevice());
  if (s == nullptr) return api.Finish(rt.devices.empty() ? cudaErrorNoDevice : cudaErrorInvalidResourceHandle);
  // As on a device: more dynamic shared memory than the function's limit (48 KiB unless
  // cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize) raised it) fails.
  if (shared > static_cast<size_t>(k->max_dynamic_shared)) return api.Finish(cudaErrorInvalidValue);
  LaunchShape shape = Shape(grid, block, shared);
  if (s->capture != nullptr) {
    GraphNode node{NodeType::kKernel, rt.next_node_id++};
    node.kernel = k;
    node.shape = shape;
    s->capture->nodes.push_back(node);
    return api.Finish(cudaSuccess);
  }
  uint64_t queued = MonoNowNs();
  uint64_t start = 0, end = 0;
  rt.ScheduleLocked(s, rt.KernelNs(s->ctx, k, shape), &start, &end);
  Context* ctx = s->ctx;
  Stream* stream_obj = s;
  EmitKernel(ctx, stream_obj, k, shape, queued, start, end, api.correlation(), 0, 0);
  RunKernelBody(rt, k, shape, args);  // KAIROS_SIM_EXEC_KERNELS: the body, in issue order
  lock.unlock();
  return api.Finish(cudaSuccess);
}

// ---- Registration (called from nvcc-generated static constructors) ----

KSIM_RT void** __cudaRegisterFatBinary(void* fat_cubin) {
  // Leaked: the handle must outlive every kernel record that names it.
  auto* fb = new FatBinary{fat_cubin};
  PtxNoteFatBinary(fb, fat_cubin);
  return reinterpret_cast<void**>(fb);
}

KSIM_RT void __cudaRegisterFatBinaryEnd(void**) {}

KSIM_RT void __cudaUnregisterFatBinary(void**) {}

KSIM_RT char __cudaInitModule(void**) { return 1; }

KSIM_RT void __cudaRegisterFunction(void** handle, const char* host_fun, char*, const char* device_name, int, uint3*,
                                    uint3*, dim3*, dim3*, int*) {
  if (host_fun == nullptr || device_name == nullptr) return;
  PtxNoteFunction(handle, host_fun);
  auto info = std::make_unique<KernelInfo>();
  info->name = device_name;
  info->host_fun = host_fun;
  std::lock_guard<std::mutex> lock(Rt().mu);
  Rt().kernels[host_fun] = std::move(info);
}

KSIM_RT void __cudaRegisterVar(void** handle, char* host_var, char*, const char* device_name, int, size_t size, int,
                               int) {
  PtxNoteVariable(handle, device_name, host_var, size);
  // __device__/__constant__ variables live in the host shadow itself, so
  // cudaMemcpyToSymbol-style access sees the same bytes.
  KSIM_DIAG("registered variable %s (%zu bytes) at %p", device_name, size, static_cast<void*>(host_var));
}

KSIM_RT void __cudaRegisterManagedVar(void**, void** host_var_ptr, char*, const char* device_name, int, size_t size,
                                      int, int) {
  KSIM_DIAG("registered managed variable %s (%zu bytes) at %p", device_name, size, static_cast<void*>(host_var_ptr));
}

// ---- <<<>>> launch path (CUDA 13) ----

KSIM_RT unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, struct CUstream_st* stream) {
  ConfigStack().push_back(CallConfig{grid, block, shared, reinterpret_cast<cudaStream_t>(stream)});
  return 0;
}

KSIM_RT cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block, size_t* shared, void* stream) {
  auto& stack = ConfigStack();
  if (stack.empty()) return cudaErrorInvalidConfiguration;
  CallConfig c = stack.back();
  stack.pop_back();
  if (grid != nullptr) *grid = c.grid;
  if (block != nullptr) *block = c.block;
  if (shared != nullptr) *shared = c.shared;
  if (stream != nullptr) *static_cast<cudaStream_t*>(stream) = c.stream;
  return cudaSuccess;
}

KSIM_RT cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* host_fun) {
  if (kernel == nullptr) return cudaErrorInvalidValue;
  const KernelInfo* k = FindKernelByStub(host_fun);
  if (k == nullptr) return cudaErrorInvalidDeviceFunction;
  *kernel = reinterpret_cast<cudaKernel_t>(const_cast<KernelInfo*>(k));
  return cudaSuccess;
}

KSIM_RT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                                       cudaStream_t stream) {
  const KernelInfo* k = ValidKernel(kernel);
  return Launch(RT_CBID(__cudaLaunchKernel_v13000), "__cudaLaunchKernel", k, k != nullptr ? k->host_fun : nullptr,
                grid, block, args, shared, stream);
}

KSIM_RT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                                            cudaStream_t stream) {
  const KernelInfo* k = ValidKernel(kernel);
  return Launch(RT_CBID(__cudaLaunchKernel_ptsz_v13000), "__cudaLaunchKernel_ptsz", k,
                k != nullptr ? k->host_fun : nullptr, grid, block, args, shared, stream);
}

KSIM_RT cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared,
                                     cudaStream_t stream) {
  return Launch(RT_CBID(cudaLaunchKernel_v7000), "cudaLaunchKernel", FindKernelByStub(func), func, grid, block, args,
                shared, stream);
}

// ---- Graphs (stream capture) ----

namespace {

Graph* NewGraph(Runtime& rt, bool exec) {
  auto g = std::make_unique<Graph>();
  g->magic = kKSimGraphMagic;
  g->graph_id = rt.next_graph_id++;
  g->exec = exec;
  Graph* raw = g.get();
  rt.graphs[raw] = std::move(g);
  return raw;
}

Graph* FindGraph(const void* handle, bool exec) {
  auto it = Rt().graphs.find(static_cast<Graph*>(const_cast<void*>(handle)));
  return (it == Rt().graphs.end() || it->second->exec != exec) ? nullptr : it->second.get();
}

}  // namespace

KSIM_RT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
  ApiScope api(RT_CBID(cudaStreamBeginCapture_v10000), "cudaStreamBeginCapture");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  Runtime& rt = Rt();
  std::lock_guard<std::mutex> lock(rt.mu);
  Stream* s = rt.StreamLocked(stream, CurrentDevice());
  if (s == nullptr) return api.Finish(cudaErrorInvalidResourceHandle);
  // The legacy default stream cannot be captured.
  if (s->is_null) return api.Finish(cudaErrorStreamCaptureUnsupported);
  if (s->capture != nullptr) return api.Finish(cudaErrorIllegalState);
  s->capture = NewGraph(rt, /*exec=*/false);
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  ApiScope api(RT_CBID(cudaStreamEndCapture_v10000), "cudaStreamEndCapture");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (graph == nullptr) return api.Finish(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(Rt().mu);
  Stream* s = Rt().StreamLocked(stream, CurrentDevice());
  if (s == nullptr) return api.Finish(cudaErrorInvalidResourceHandle);
  if (s->capture == nullptr) return api.Finish(cudaErrorIllegalState);
  *graph = reinterpret_cast<cudaGraph_t>(s->capture);
  s->capture = nullptr;
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  ApiScope api(RT_CBID(cudaStreamIsCapturing_v10000), "cudaStreamIsCapturing");
  if (status == nullptr) return api.Finish(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(Rt().mu);
  Stream* s = Rt().StreamLocked(stream, CurrentDevice());
  if (s == nullptr) return api.Finish(cudaErrorInvalidResourceHandle);
  *status = s->capture != nullptr ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  ApiScope api(RT_CBID(cudaGraphInstantiate_v12000), "cudaGraphInstantiate");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (exec == nullptr) return api.Finish(cudaErrorInvalidValue);
  Runtime& rt = Rt();
  std::lock_guard<std::mutex> lock(rt.mu);
  Graph* g = FindGraph(graph, false);
  if (g == nullptr) return api.Finish(cudaErrorInvalidValue);
  Graph* e = NewGraph(rt, /*exec=*/true);
  e->nodes = g->nodes;
  for (GraphNode& n : e->nodes) n.node_id = rt.next_node_id++;  // exec nodes are new nodes
  *exec = reinterpret_cast<cudaGraphExec_t>(e);
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long f) {
  return cudaGraphInstantiate(exec, graph, f);
}

KSIM_RT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  ApiScope api(RT_CBID(cudaGraphLaunch_v10000), "cudaGraphLaunch");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  Runtime& rt = Rt();
  std::unique_lock<std::mutex> lock(rt.mu);
  Graph* e = FindGraph(exec, true);
  Stream* s = rt.StreamLocked(stream, CurrentDevice());
  if (e == nullptr || s == nullptr) return api.Finish(cudaErrorInvalidResourceHandle);
  uint64_t first_start = 0, last_end = 0;
  uint64_t queued = MonoNowNs();
  cudaError_t err = cudaSuccess;
  // Captured nodes run in capture order on the launch stream.
  for (const GraphNode& n : e->nodes) {
    uint64_t start = 0, end = 0;
    if (n.type == NodeType::kKernel) {
      rt.ScheduleLocked(s, rt.KernelNs(s->ctx, n.kernel, n.shape), &start, &end);
      EmitKernel(s->ctx, s, n.kernel, n.shape, queued, start, end, api.correlation(), e->graph_id, n.node_id);
    } else if (n.type == NodeType::kMemcpy) {
      uint64_t ignored = 0;
      uint64_t before = s->tail;
      err = EnqueueCopy(rt, s, n.dst, n.src, n.bytes, n.copy_kind, true, api.correlation(), e->graph_id, n.node_id,
                        &ignored);
      start = std::max(before, queued);
      end = s->tail;
    } else {
      uint64_t before = s->tail;
      err = EnqueueMemset(rt, s, n.dst, n.value, n.bytes, true, api.correlation(), e->graph_id, n.node_id);
      start = std::max(before, queued);
      end = s->tail;
    }
    if (err != cudaSuccess) break;
    if (first_start == 0) first_start = start;
    last_end = end;
  }
  if (err == cudaSuccess && KSimKindEnabled(CUPTI_ACTIVITY_KIND_GRAPH_TRACE) && !e->nodes.empty()) {
    CUpti_ActivityGraphTrace2 r;
    std::memset(&r, 0, sizeof(r));
    r.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
    r.correlationId = api.correlation();
    r.start = first_start;
    r.end = last_end;
    r.deviceId = r.endDeviceId = static_cast<uint32_t>(s->ctx->device);
    r.graphId = e->graph_id;
    r.contextId = r.endContextId = s->ctx->context_id;
    r.streamId = s->stream_id;
    KSimEmitGpuRecord(&r, sizeof(r), last_end);
  }
  lock.unlock();
  return api.Finish(err);
}

KSIM_RT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  ApiScope api(RT_CBID(cudaGraphExecDestroy_v10000), "cudaGraphExecDestroy");
  std::lock_guard<std::mutex> lock(Rt().mu);
  Graph* e = FindGraph(exec, true);
  if (e == nullptr) return api.Finish(cudaErrorInvalidValue);
  Rt().graphs.erase(e);
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  ApiScope api(RT_CBID(cudaGraphDestroy_v10000), "cudaGraphDestroy");
  std::lock_guard<std::mutex> lock(Rt().mu);
  Graph* g = FindGraph(graph, false);
  if (g == nullptr) return api.Finish(cudaErrorInvalidValue);
  Rt().graphs.erase(g);
  return api.Finish(cudaSuccess);
}
