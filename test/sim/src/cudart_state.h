// File: test/sim/src/cudart_state.h
// Layer: CUDA/CUPTI simulator, substitute libcudart.so.13: runtime state and
//        the simulated timeline.
// Threading: one process-wide Runtime (leaked); `mu` guards every container
//            and stream tail. Host blocking (syncs) happens with `mu` released.
//
// Streams are in-order queues on a timeline measured on CLOCK_MONOTONIC: each
// stream remembers when its last queued operation ends ("tail"). New work
// starts at max(now + launch latency, tail, legacy-default-stream barrier) and
// ends after its cost-model duration. Synchronizing sleeps until the tail.
#ifndef KAIROS_TEST_SIM_SRC_CUDART_STATE_H_
#define KAIROS_TEST_SIM_SRC_CUDART_STATE_H_

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device_model.h"
#include "sim_private.h"

namespace kairos::sim {

struct Context;

struct Stream : KSimStreamHeader {
  Context* ctx = nullptr;
  bool is_null = false;
  bool non_blocking = false;
  int priority = 0;
  uint64_t tail = 0;  // monotonic ns when the last queued op ends
  struct Graph* capture = nullptr;
};

struct Context : KSimContextHeader {
  int device = 0;
  DeviceSpec spec;
  Stream null_stream;
  std::vector<Stream*> streams;  // created streams (live)
  uint64_t used_bytes = 0;
};

enum class MemKind { kDevice, kPinned, kManaged };

struct Alloc {
  size_t size;
  MemKind kind;
  int device;
  bool registered = false;  // cudaHostRegister'ed program memory (never freed by us)
  bool from_pool = false;   // cudaMallocAsync
};

struct KernelInfo {
  std::string name;  // mangled device name from __cudaRegisterFunction
  const void* host_fun;
  // cudaFuncSetAttribute; the defaults are a real device's (48 KiB without opt-in).
  int max_dynamic_shared = 48 << 10;
  int shared_carveout = -1;
};

enum class NodeType { kKernel, kMemcpy, kMemset };

struct GraphNode {
  NodeType type;
  uint64_t node_id;
  // kernel
  const KernelInfo* kernel = nullptr;
  LaunchShape shape{};
  // memcpy / memset
  void* dst = nullptr;
  const void* src = nullptr;
  size_t bytes = 0;
  cudaMemcpyKind copy_kind = cudaMemcpyDefault;
  int value = 0;
};

struct Graph : KSimGraphHeader {
  std::vector<GraphNode> nodes;
  bool exec = false;
};

struct Event {
  uint32_t id;
  unsigned flags;
  bool recorded = false;
  uint64_t time = 0;  // monotonic ns at which the event completes
};

struct Runtime {
  std::mutex mu;
  std::vector<DeviceSpec> devices;
  std::vector<std::pair<std::string, uint64_t>> kernel_times;
  std::vector<std::unique_ptr<Context>> contexts;  // index = device; null until first use
  std::map<uintptr_t, Alloc> allocs;
  std::map<const void*, std::unique_ptr<KernelInfo>> kernels;  // by host stub
  std::map<Stream*, std::unique_ptr<Stream>> streams;
  std::map<Event*, std::unique_ptr<Event>> events;
  std::map<Graph*, std::unique_ptr<Graph>> graphs;
  uint32_t next_context_id = 1;
  uint32_t next_stream_id = 13;  // real CUPTI: null stream 7, created streams from 13 on
  uint32_t next_event_id = 1;
  uint32_t next_graph_id = 1;
  uint64_t next_node_id = 1;
  uint64_t next_grid_id = 1;
  long long stop_after = -1;  // KAIROS_SIM_STOP_DEVICE_AFTER
  int stop_error = cudaErrorDevicesUnavailable;
  std::atomic<long long> api_calls{0};
  // Contexts created under `mu` whose CONTEXT_CREATED callback and records
  // are still due; ApiScope::Finish delivers them with `mu` released so the
  // client may call back into the runtime.
  std::vector<Context*> created_contexts;
  // Device flags set by cudaSetDeviceFlags, by device.
  std::map<int, unsigned> device_flags;
  // Host functions (cudaLaunchHostFunc, cudaStreamAddCallback) queued and not yet run, per
  // stream and per context; syncs wait for them. Guarded by `mu`, signalled on host_cv.
  std::map<const void*, int> host_pending;
  std::condition_variable host_cv;

  // Lazily creates the primary context of `device` (mu held).
  Context* ContextLocked(int device);
  // Resolves a stream handle (NULL, cudaStreamLegacy, cudaStreamPerThread,
  // or a created stream) for the current device; NULL if invalid (mu held).
  Stream* StreamLocked(cudaStream_t s, int device);
  // Looks an address up in the allocation table (mu held).
  const Alloc* FindLocked(const void* p, size_t bytes, uintptr_t* base) const;
  // Places `duration` ns of work on `s`; returns [start, end] (mu held).
  void ScheduleLocked(Stream* s, uint64_t duration, uint64_t* start, uint64_t* end);
  // Latest tail over all streams of a context (mu held).
  uint64_t ContextTailLocked(const Context* ctx) const;
  uint64_t KernelNs(const Context* ctx, const KernelInfo* k, const LaunchShape& shape) const;
};

Runtime& Rt();
// Device of the calling thread (cudaSetDevice).
int& CurrentDevice();
// The calling thread's last error (cudaGetLastError).
cudaError_t& LastError();

// Emits the context's CONTEXT and DEVICE records (when enabled).
void EmitContextRecords(const Context* ctx);

// Scoped runtime (or, from cuda_driver.cc, driver) API call: correlation id, callbacks, API record, last error,
// the stop-device fault knob and the one-time CUDA injection.
class ApiScope {
 public:
  ApiScope(CUpti_CallbackId cbid, const char* name, const void* params = nullptr,
           const char* symbol = nullptr, CUpti_CallbackDomain domain = CUPTI_CB_DOMAIN_RUNTIME_API);
  ~ApiScope();
  ApiScope(const ApiScope&) = delete;
  ApiScope& operator=(const ApiScope&) = delete;

  // Non-success when the stop-device knob has fired.
  cudaError_t blocked() const { return blocked_; }
  uint32_t correlation() const { return call_.correlation_id; }
  // Records the result; sets the thread's last error on failure.
  cudaError_t Finish(cudaError_t err);

 private:
  KSimApiCall call_;
  cudaError_t blocked_ = cudaSuccess;
  bool finished_ = false;
};

// Records emitted for GPU work.
// The kernel record kind CUPTI would produce for a launch made now (INVALID: none).
CUpti_ActivityKind KernelRecordKindNow();
// kind_at_launch: the KernelRecordKindNow() of the launch when the record is emitted later
// (a collective ends after its peers arrive): real CUPTI records a kernel when kernel records
// were enabled at its launch, whatever happens until it ends. -1: decide now.
void EmitKernel(const Context* ctx, const Stream* s, const KernelInfo* k, const LaunchShape& shape,
                uint64_t queued, uint64_t start, uint64_t end, uint32_t corr, uint32_t graph_id,
                uint64_t node_id, int kind_at_launch = -1);
void EmitMemcpy(const Context* ctx, const Stream* s, uint8_t copy_kind, uint8_t src_kind, uint8_t dst_kind,
                bool async, uint64_t bytes, uint64_t start, uint64_t end, uint32_t corr, uint32_t graph_id,
                uint64_t node_id, int src_device, int dst_device);
void EmitMemset(const Context* ctx, const Stream* s, uint32_t value, uint64_t bytes, uint16_t mem_kind, bool async,
                uint64_t start, uint64_t end, uint32_t corr, uint32_t graph_id, uint64_t node_id);
void EmitSync(CUpti_ActivitySynchronizationType type, const Context* ctx, const Stream* s, const Event* e,
              uint64_t start, uint64_t end, uint32_t corr, cudaError_t result);

// The runtime initializes the driver when it first makes a context (a real libcudart calls
// cuInit), so driver calls made afterwards by a tool on any thread succeed (cuda_driver.cc).
void MarkDriverInitialized();

}  // namespace kairos::sim

#endif  // KAIROS_TEST_SIM_SRC_CUDART_STATE_H_
