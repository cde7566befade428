// File: test/sim/src/cudart_more.cc
// Layer: CUDA/CUPTI simulator, substitute libcudart.so.13: the runtime calls public sample
//        programs use beyond a training loop's: device properties and flags, host memory
//        registration, profiler start/stop, 2D copies and pitched allocation, function
//        attributes and occupancy, host functions on streams, device reset and
//        stream-ordered allocation with its memory pool.
// Threading: any thread; state in Rt() under its mutex; host functions run on one worker
//            thread, as CUDA runs them on a driver thread.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>
#include <queue>
#include <thread>
#include <vector>

#include "cudart_ops.h"
#include "cudart_state.h"
#include "sim_common.h"

using namespace kairos::sim;  // NOLINT: this file is the runtime's C surface

#define KSIM_RT extern "C" __attribute__((visibility("default")))
#define RT_CBID(name) CUPTI_RUNTIME_TRACE_CBID_##name

namespace {

bool HaveDevice(int dev) { return dev >= 0 && static_cast<size_t>(dev) < Rt().devices.size(); }

int Attr(const DeviceSpec& d, cudaDeviceAttr a) {
  int v = 0;
  DeviceAttributeValue(d, a, &v);
  return v;
}

}  // namespace

void kairos::sim::FillDeviceProperties(const DeviceSpec& d, int device, cudaDeviceProp* p) {
  // Every field of the CUDA 13 cudaDeviceProp, from the same table as cudaDeviceGetAttribute
  // so the two never disagree.
  std::memset(p, 0, sizeof(*p));
  std::snprintf(p->name, sizeof(p->name), "%s", d.name.c_str());
  p->uuid.bytes[0] = 0x4b;
  p->uuid.bytes[15] = static_cast<char>(device);
  p->totalGlobalMem = d.memory_bytes;
  p->sharedMemPerBlock = static_cast<size_t>(d.shared_per_block);
  p->regsPerBlock = Attr(d, cudaDevAttrMaxRegistersPerBlock);
  p->warpSize = 32;
  p->memPitch = static_cast<size_t>(Attr(d, cudaDevAttrMaxPitch));
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = Attr(d, cudaDevAttrMaxBlockDimX);
  p->maxThreadsDim[1] = Attr(d, cudaDevAttrMaxBlockDimY);
  p->maxThreadsDim[2] = Attr(d, cudaDevAttrMaxBlockDimZ);
  p->maxGridSize[0] = Attr(d, cudaDevAttrMaxGridDimX);
  p->maxGridSize[1] = Attr(d, cudaDevAttrMaxGridDimY);
  p->maxGridSize[2] = Attr(d, cudaDevAttrMaxGridDimZ);
  p->totalConstMem = static_cast<size_t>(Attr(d, cudaDevAttrTotalConstantMemory));
  p->major = d.cc_major;
  p->minor = d.cc_minor;
  p->textureAlignment = static_cast<size_t>(Attr(d, cudaDevAttrTextureAlignment));
  p->texturePitchAlignment = static_cast<size_t>(Attr(d, cudaDevAttrTexturePitchAlignment));
  p->multiProcessorCount = d.sm_count;
  p->integrated = 0;
  p->canMapHostMemory = 1;
  p->maxTexture1D = Attr(d, cudaDevAttrMaxTexture1DWidth);
  p->maxTexture1DMipmap = Attr(d, cudaDevAttrMaxTexture1DMipmappedWidth);
  p->maxTexture2D[0] = Attr(d, cudaDevAttrMaxTexture2DWidth);
  p->maxTexture2D[1] = Attr(d, cudaDevAttrMaxTexture2DHeight);
  p->maxTexture2DMipmap[0] = Attr(d, cudaDevAttrMaxTexture2DMipmappedWidth);
  p->maxTexture2DMipmap[1] = Attr(d, cudaDevAttrMaxTexture2DMipmappedHeight);
  p->maxTexture2DLinear[0] = Attr(d, cudaDevAttrMaxTexture2DLinearWidth);
  p->maxTexture2DLinear[1] = Attr(d, cudaDevAttrMaxTexture2DLinearHeight);
  p->maxTexture2DLinear[2] = Attr(d, cudaDevAttrMaxTexture2DLinearPitch);
  p->maxTexture2DGather[0] = Attr(d, cudaDevAttrMaxTexture2DGatherWidth);
  p->maxTexture2DGather[1] = Attr(d, cudaDevAttrMaxTexture2DGatherHeight);
  p->maxTexture3D[0] = Attr(d, cudaDevAttrMaxTexture3DWidth);
  p->maxTexture3D[1] = Attr(d, cudaDevAttrMaxTexture3DHeight);
  p->maxTexture3D[2] = Attr(d, cudaDevAttrMaxTexture3DDepth);
  p->maxTexture3DAlt[0] = Attr(d, cudaDevAttrMaxTexture3DWidthAlt);
  p->maxTexture3DAlt[1] = Attr(d, cudaDevAttrMaxTexture3DHeightAlt);
  p->maxTexture3DAlt[2] = Attr(d, cudaDevAttrMaxTexture3DDepthAlt);
  p->maxTextureCubemap = Attr(d, cudaDevAttrMaxTextureCubemapWidth);
  p->maxTexture1DLayered[0] = Attr(d, cudaDevAttrMaxTexture1DLayeredWidth);
  p->maxTexture1DLayered[1] = Attr(d, cudaDevAttrMaxTexture1DLayeredLayers);
  p->maxTexture2DLayered[0] = Attr(d, cudaDevAttrMaxTexture2DLayeredWidth);
  p->maxTexture2DLayered[1] = Attr(d, cudaDevAttrMaxTexture2DLayeredHeight);
  p->maxTexture2DLayered[2] = Attr(d, cudaDevAttrMaxTexture2DLayeredLayers);
  p->maxTextureCubemapLayered[0] = Attr(d, cudaDevAttrMaxTextureCubemapLayeredWidth);
  p->maxTextureCubemapLayered[1] = Attr(d, cudaDevAttrMaxTextureCubemapLayeredLayers);
  p->maxSurface1D = Attr(d, cudaDevAttrMaxSurface1DWidth);
  p->maxSurface2D[0] = Attr(d, cudaDevAttrMaxSurface2DWidth);
  p->maxSurface2D[1] = Attr(d, cudaDevAttrMaxSurface2DHeight);
  p->maxSurface3D[0] = Attr(d, cudaDevAttrMaxSurface3DWidth);
  p->maxSurface3D[1] = Attr(d, cudaDevAttrMaxSurface3DHeight);
  p->maxSurface3D[2] = Attr(d, cudaDevAttrMaxSurface3DDepth);
  p->maxSurface1DLayered[0] = Attr(d, cudaDevAttrMaxSurface1DLayeredWidth);
  p->maxSurface1DLayered[1] = Attr(d, cudaDevAttrMaxSurface1DLayeredLayers);
  p->maxSurface2DLayered[0] = Attr(d, cudaDevAttrMaxSurface2DLayeredWidth);
  p->maxSurface2DLayered[1] = Attr(d, cudaDevAttrMaxSurface2DLayeredHeight);
  p->maxSurface2DLayered[2] = Attr(d, cudaDevAttrMaxSurface2DLayeredLayers);
  p->maxSurfaceCubemap = Attr(d, cudaDevAttrMaxSurfaceCubemapWidth);
  p->maxSurfaceCubemapLayered[0] = Attr(d, cudaDevAttrMaxSurfaceCubemapLayeredWidth);
  p->maxSurfaceCubemapLayered[1] = Attr(d, cudaDevAttrMaxSurfaceCubemapLayeredLayers);
  p->surfaceAlignment = static_cast<size_t>(Attr(d, cudaDevAttrSurfaceAlignment));
  p->concurrentKernels = 1;
  p->ECCEnabled = Attr(d, cudaDevAttrEccEnabled);
  p->pciBusID = d.pci_bus_id;
  p->pciDeviceID = Attr(d, cudaDevAttrPciDeviceId);
  p->pciDomainID = Attr(d, cudaDevAttrPciDomainId);
  p->tccDriver = 0;
  p->asyncEngineCount = Attr(d, cudaDevAttrAsyncEngineCount);
  p->unifiedAddressing = 1;
  p->memoryBusWidth = d.memory_bus_width;
  p->l2CacheSize = d.l2_bytes;
  p->persistingL2CacheMaxSize = Attr(d, cudaDevAttrMaxPersistingL2CacheSize);
  p->maxThreadsPerMultiProcessor = d.max_threads_per_sm;
  p->streamPrioritiesSupported = 1;
  p->globalL1CacheSupported = 1;
  p->localL1CacheSupported = 1;
  p->sharedMemPerMultiprocessor = static_cast<size_t>(d.shared_per_sm);
  p->regsPerMultiprocessor = d.regs_per_sm;
  p->managedMemory = 1;
  p->isMultiGpuBoard = 0;
  p->multiGpuBoardGroupID = 0;
  p->hostNativeAtomicSupported = Attr(d, cudaDevAttrHostNativeAtomicSupported);
  p->pageableMemoryAccess = Attr(d, cudaDevAttrPageableMemoryAccess);
  p->concurrentManagedAccess = 1;
  p->computePreemptionSupported = 1;
  p->canUseHostPointerForRegisteredMem = 1;
  p->cooperativeLaunch = 1;
  p->sharedMemPerBlockOptin = static_cast<size_t>(Attr(d, cudaDevAttrMaxSharedMemoryPerBlockOptin));
  p->pageableMemoryAccessUsesHostPageTables = 0;
  p->directManagedMemAccessFromHost = 0;
  p->maxBlocksPerMultiProcessor = d.max_blocks_per_sm;
  p->accessPolicyMaxWindowSize = Attr(d, cudaDevAttrMaxAccessPolicyWindowSize);
  p->reservedSharedMemPerBlock = static_cast<size_t>(Attr(d, cudaDevAttrReservedSharedMemoryPerBlock));
  p->hostRegisterSupported = 1;
  p->sparseCudaArraySupported = 0;
  p->hostRegisterReadOnlySupported = 1;
  p->timelineSemaphoreInteropSupported = 0;
  p->memoryPoolsSupported = 1;
  p->gpuDirectRDMASupported = 0;
  p->gpuDirectRDMAFlushWritesOptions = 0;
  p->gpuDirectRDMAWritesOrdering = 0;
  p->memoryPoolSupportedHandleTypes = 0;
  p->deferredMappingCudaArraySupported = 0;
  p->ipcEventSupported = 0;
  p->clusterLaunch = Attr(d, cudaDevAttrClusterLaunch);
  p->unifiedFunctionPointers = 1;
  p->deviceNumaConfig = 0;
  p->deviceNumaId = -1;
  p->mpsEnabled = 0;
  p->hostNumaId = -1;
  p->gpuPciDeviceID = static_cast<unsigned>(d.pci_device_id) << 16 | 0x10de;
  p->gpuPciSubsystemID = 0;
  p->hostNumaMultinodeIpcSupported = 0;
}

// ---- Device flags ----

KSIM_RT cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  ApiScope api(RT_CBID(cudaSetDeviceFlags_v3020), "cudaSetDeviceFlags");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  constexpr unsigned kKnown = cudaDeviceScheduleMask | cudaDeviceMapHost | cudaDeviceLmemResizeToMax |
                              cudaDeviceSyncMemops;
  unsigned sched = flags & cudaDeviceScheduleMask;
  if ((flags & ~kKnown) != 0 || (sched != 0 && sched != cudaDeviceScheduleSpin && sched != cudaDeviceScheduleYield &&
                                 sched != cudaDeviceScheduleBlockingSync)) {
    return api.Finish(cudaErrorInvalidValue);
  }
  if (!HaveDevice(CurrentDevice())) return api.Finish(NoDeviceError());
  std::lock_guard<std::mutex> lock(Rt().mu);
  Rt().device_flags[CurrentDevice()] = flags;
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
  ApiScope api(RT_CBID(cudaGetDeviceFlags_v7000), "cudaGetDeviceFlags");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (flags == nullptr) return api.Finish(cudaErrorInvalidValue);
  if (!HaveDevice(CurrentDevice())) return api.Finish(NoDeviceError());
  std::lock_guard<std::mutex> lock(Rt().mu);
  auto it = Rt().device_flags.find(CurrentDevice());
  // Host memory mapping is always on (unified addressing), as cudaGetDeviceFlags reports.
  *flags = (it != Rt().device_flags.end() ? it->second : 0u) | cudaDeviceMapHost;
  return api.Finish(cudaSuccess);
}

// ---- Host memory registration (pinned program memory) ----

KSIM_RT cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
  ApiScope api(RT_CBID(cudaHostRegister_v4000), "cudaHostRegister");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  constexpr unsigned kKnown = cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory |
                              cudaHostRegisterReadOnly;
  if (ptr == nullptr || size == 0 || (flags & ~kKnown) != 0) return api.Finish(cudaErrorInvalidValue);
  // I/O memory (a device BAR) does not exist on the simulated machine.
  if ((flags & cudaHostRegisterIoMemory) != 0) return api.Finish(cudaErrorNotSupported);
  Runtime& rt = Rt();
  std::lock_guard<std::mutex> lock(rt.mu);
  if (rt.ContextLocked(CurrentDevice()) == nullptr) return api.Finish(NoDeviceError());
  auto addr = reinterpret_cast<uintptr_t>(ptr);
  auto next = rt.allocs.lower_bound(addr);
  bool overlaps = (next != rt.allocs.end() && next->first < addr + size) ||
                  (next != rt.allocs.begin() && std::prev(next)->first + std::prev(next)->second.size > addr);
  if (overlaps) return api.Finish(cudaErrorHostMemoryAlreadyRegistered);
  Alloc a{size, MemKind::kPinned, CurrentDevice()};
  a.registered = true;
  rt.allocs[addr] = a;
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaHostUnregister(void* ptr) {
  ApiScope api(RT_CBID(cudaHostUnregister_v4000), "cudaHostUnregister");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  std::lock_guard<std::mutex> lock(Rt().mu);
  auto it = Rt().allocs.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == Rt().allocs.end() || !it->second.registered) return api.Finish(cudaErrorHostMemoryNotRegistered);
  Rt().allocs.erase(it);
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaHostGetDevicePointer(void** device_ptr, void* host_ptr, unsigned int flags) {
  ApiScope api(RT_CBID(cudaHostGetDevicePointer_v3020), "cudaHostGetDevicePointer");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (device_ptr == nullptr || flags != 0) return api.Finish(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(Rt().mu);
  const Alloc* a = Rt().FindLocked(host_ptr, 1, nullptr);
  if (a == nullptr || a->kind != MemKind::kPinned) return api.Finish(cudaErrorInvalidValue);
  *device_ptr = host_ptr;  // unified addressing: the device sees pinned memory at its host address
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaHostGetFlags(unsigned int* flags, void* host_ptr) {
  ApiScope api(RT_CBID(cudaHostGetFlags_v3020), "cudaHostGetFlags");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (flags == nullptr) return api.Finish(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(Rt().mu);
  const Alloc* a = Rt().FindLocked(host_ptr, 1, nullptr);
  if (a == nullptr || a->kind != MemKind::kPinned) return api.Finish(cudaErrorInvalidValue);
  *flags = cudaHostAllocMapped;
  return api.Finish(cudaSuccess);
}

// ---- Profiler start/stop ----
// They do nothing to the device; a CUPTI subscriber sees them as runtime API callbacks
// (cudaProfilerStart_v4000 / Stop), which is how tools scope collection to them.

KSIM_RT cudaError_t cudaProfilerStart(void) {
  ApiScope api(RT_CBID(cudaProfilerStart_v4000), "cudaProfilerStart");
  return api.Finish(api.blocked());
}

KSIM_RT cudaError_t cudaProfilerStop(void) {
  ApiScope api(RT_CBID(cudaProfilerStop_v4000), "cudaProfilerStop");
  return api.Finish(api.blocked());
}

// ---- 2D copies and pitched allocation ----

namespace {

cudaError_t Copy2D(ApiScope& api, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                   size_t height, cudaMemcpyKind kind, cudaStream_t stream, bool async) {
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (width > dpitch || width > spitch) return api.Finish(cudaErrorInvalidPitchValue);
  if (width == 0 || height == 0) return api.Finish(cudaSuccess);
  Runtime& rt = Rt();
  std::unique_lock<std::mutex> lock(rt.mu);
  Stream* s = rt.StreamLocked(stream, CurrentDevice());
  if (s == nullptr) return api.Finish(rt.devices.empty() ? cudaErrorNoDevice : cudaErrorInvalidResourceHandle);
  Copy2DShape shape{dpitch, spitch, width, height};
  uint64_t wait_until = 0;
  cudaError_t err = EnqueueCopy(rt, s, dst, src, width * height, kind, async, api.correlation(), 0, 0, &wait_until,
                                &shape);
  lock.unlock();
  if (err == cudaSuccess) SleepUntilMono(wait_until);
  return api.Finish(err);
}

}  // namespace

KSIM_RT cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                 size_t height, cudaMemcpyKind kind) {
  ApiScope api(RT_CBID(cudaMemcpy2D_v3020), "cudaMemcpy2D");
  return Copy2D(api, dst, dpitch, src, spitch, width, height, kind, nullptr, false);
}

KSIM_RT cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                      size_t height, cudaMemcpyKind kind, cudaStream_t stream) {
  ApiScope api(RT_CBID(cudaMemcpy2DAsync_v3020), "cudaMemcpy2DAsync");
  return Copy2D(api, dst, dpitch, src, spitch, width, height, kind, stream, true);
}

KSIM_RT cudaError_t cudaMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height) {
  ApiScope api(RT_CBID(cudaMallocPitch_v3020), "cudaMallocPitch");
  if (pitch == nullptr) return api.Finish(cudaErrorInvalidValue);
  // Rows are aligned like the device's texture pitch alignment allows; 512 bytes on H100.
  constexpr size_t kPitchAlign = 512;
  *pitch = (width + kPitchAlign - 1) / kPitchAlign * kPitchAlign;
  return AllocCommon(api, ptr, *pitch * height, MemKind::kDevice);
}

// ---- Function attributes and occupancy ----

namespace {

const KernelInfo* KernelByStub(const void* func) {
  auto it = Rt().kernels.find(func);
  return it == Rt().kernels.end() ? nullptr : it->second.get();
}

cudaError_t Occupancy(ApiScope& api, int* blocks, const void* func, int block_size, size_t dyn_smem) {
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (blocks == nullptr) return api.Finish(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(Rt().mu);
  if (KernelByStub(func) == nullptr) return api.Finish(cudaErrorInvalidDeviceFunction);
  if (!HaveDevice(CurrentDevice())) return api.Finish(NoDeviceError());
  *blocks = ResidentBlocksPerSm(Rt().devices[CurrentDevice()], block_size, dyn_smem);
  return api.Finish(cudaSuccess);
}

}  // namespace

KSIM_RT cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  ApiScope api(RT_CBID(cudaFuncGetAttributes_v3020), "cudaFuncGetAttributes");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (attr == nullptr) return api.Finish(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(Rt().mu);
  if (KernelByStub(func) == nullptr) return api.Finish(cudaErrorInvalidDeviceFunction);
  const DeviceSpec& d = Rt().devices.empty() ? DeviceSpec() : Rt().devices[std::max(0, CurrentDevice())];
  std::memset(attr, 0, sizeof(*attr));
  // The simulator does not read the cubin: the same fixed values as kernel records carry.
  attr->maxThreadsPerBlock = 1024;
  attr->numRegs = 32;
  attr->ptxVersion = d.cc_major * 10 + d.cc_minor;
  attr->binaryVersion = attr->ptxVersion;
  attr->maxDynamicSharedSizeBytes = KernelByStub(func)->max_dynamic_shared;
  attr->preferredShmemCarveout = KernelByStub(func)->shared_carveout;
  return api.Finish(cudaSuccess);
}

// Per function (the simulator keeps one value for every device, which all share one spec
// preset in practice). The dynamic shared-memory limit is enforced at launch.
KSIM_RT cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  ApiScope api(RT_CBID(cudaFuncSetAttribute_v9000), "cudaFuncSetAttribute");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  std::lock_guard<std::mutex> lock(Rt().mu);
  auto it = Rt().kernels.find(func);
  if (it == Rt().kernels.end()) return api.Finish(cudaErrorInvalidDeviceFunction);
  KernelInfo& k = *it->second;
  const DeviceSpec& d = Rt().devices.empty() ? DeviceSpec() : Rt().devices[std::max(0, CurrentDevice())];
  switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
      // Up to the opt-in maximum (cudaDevAttrMaxSharedMemoryPerBlockOptin: the SM's shared
      // memory less the 1 KiB the driver reserves per block); the kernels have no static
      // shared memory here (the simulator does not read cubins).
      if (value < 0 || value > d.shared_per_sm - 1024) return api.Finish(cudaErrorInvalidValue);
      k.max_dynamic_shared = value;
      return api.Finish(cudaSuccess);
    case cudaFuncAttributePreferredSharedMemoryCarveout:
      if (value < -1 || value > 100) return api.Finish(cudaErrorInvalidValue);
      k.shared_carveout = value;
      return api.Finish(cudaSuccess);
    case cudaFuncAttributeClusterDimMustBeSet:
    case cudaFuncAttributeRequiredClusterWidth:
    case cudaFuncAttributeRequiredClusterHeight:
    case cudaFuncAttributeRequiredClusterDepth:
    case cudaFuncAttributeNonPortableClusterSizeAllowed:
    case cudaFuncAttributeClusterSchedulingPolicyPreference:
      // Accepted; the simulator models no thread-block clusters.
      if (value < 0) return api.Finish(cudaErrorInvalidValue);
      return api.Finish(cudaSuccess);
    default:
      return api.Finish(cudaErrorInvalidValue);
  }
}

KSIM_RT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* func, int block_size,
                                                                  size_t dyn_smem) {
  ApiScope api(RT_CBID(cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6050),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  return Occupancy(api, blocks, func, block_size, dyn_smem);
}

KSIM_RT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, const void* func,
                                                                           int block_size, size_t dyn_smem,
                                                                           unsigned int) {
  ApiScope api(RT_CBID(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags");
  return Occupancy(api, blocks, func, block_size, dyn_smem);
}

// ---- Host functions on streams ----

namespace {

struct HostTask {
  uint64_t due_mono;
  uint64_t seq;
  void (*fn)(void*);
  void* data;
  // cudaStreamAddCallback's form (fn == nullptr)
  cudaStreamCallback_t callback;
  cudaStream_t stream;
  const void* stream_key;
  const void* ctx_key;
  bool operator>(const HostTask& o) const { return due_mono != o.due_mono ? due_mono > o.due_mono : seq > o.seq; }
};

std::priority_queue<HostTask, std::vector<HostTask>, std::greater<HostTask>>& HostQueue() {
  static auto* q = new std::priority_queue<HostTask, std::vector<HostTask>, std::greater<HostTask>>();
  return *q;
}

// One worker runs host functions in stream order at their simulated times (CUDA runs them
// on a driver thread). Started on first use; leaked with the runtime.
void HostWorker() {
  Runtime& rt = Rt();
  std::unique_lock<std::mutex> lock(rt.mu);
  for (;;) {
    if (HostQueue().empty()) {
      rt.host_cv.wait(lock);
      continue;
    }
    HostTask t = HostQueue().top();
    uint64_t now = MonoNowNs();
    if (t.due_mono > now) {
      lock.unlock();
      SleepUntilMono(std::min(t.due_mono, now + 1000000));  // re-check: earlier tasks may arrive
      lock.lock();
      continue;
    }
    HostQueue().pop();
    lock.unlock();
    if (t.fn != nullptr) {
      t.fn(t.data);
    } else {
      t.callback(t.stream, cudaSuccess, t.data);
    }
    lock.lock();
    if (--rt.host_pending[t.stream_key] == 0) rt.host_pending.erase(t.stream_key);
    if (--rt.host_pending[t.ctx_key] == 0) rt.host_pending.erase(t.ctx_key);
    rt.host_cv.notify_all();
  }
}

cudaError_t EnqueueHost(ApiScope& api, cudaStream_t stream, void (*fn)(void*), cudaStreamCallback_t cb, void* data) {
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (fn == nullptr && cb == nullptr) return api.Finish(cudaErrorInvalidValue);
  Runtime& rt = Rt();
  static std::once_flag started;
  std::call_once(started, [] { std::thread(HostWorker).detach(); });
  std::lock_guard<std::mutex> lock(rt.mu);
  Stream* s = rt.StreamLocked(stream, CurrentDevice());
  if (s == nullptr) return api.Finish(rt.devices.empty() ? cudaErrorNoDevice : cudaErrorInvalidResourceHandle);
  if (s->capture != nullptr) return api.Finish(cudaErrorStreamCaptureUnsupported);
  uint64_t start = 0, end = 0;
  rt.ScheduleLocked(s, 0, &start, &end);
  static uint64_t seq = 0;
  HostTask t{end, ++seq, fn, data, cb, stream, s, s->ctx};
  HostQueue().push(t);
  ++rt.host_pending[s];
  ++rt.host_pending[s->ctx];
  rt.host_cv.notify_all();
  return api.Finish(cudaSuccess);
}

}  // namespace

void kairos::sim::WaitHostFuncs(const Stream* s, const Context* ctx) {
  Runtime& rt = Rt();
  const void* key = s != nullptr ? static_cast<const void*>(s) : static_cast<const void*>(ctx);
  std::unique_lock<std::mutex> lock(rt.mu);
  rt.host_cv.wait(lock, [&] { return rt.host_pending.count(key) == 0; });
}

KSIM_RT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* data) {
  ApiScope api(RT_CBID(cudaLaunchHostFunc_v10000), "cudaLaunchHostFunc");
  if (fn == nullptr) return api.Finish(cudaErrorInvalidValue);
  return EnqueueHost(api, stream, fn, nullptr, data);
}

KSIM_RT cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t cb, void* data,
                                          unsigned int flags) {
  ApiScope api(RT_CBID(cudaStreamAddCallback_v5000), "cudaStreamAddCallback");
  if (cb == nullptr || flags != 0) return api.Finish(cudaErrorInvalidValue);
  return EnqueueHost(api, stream, nullptr, cb, data);
}

// ---- Stream-ordered allocation and the default memory pool ----

namespace {

struct MemPool {
  int device;
  uint64_t release_threshold = 0;
  uint64_t reserved = 0;  // bytes currently handed out
  bool announced = false;
};

MemPool& DefaultPool(int device) {
  static auto* pools = new std::map<int, MemPool>();
  auto it = pools->find(device);
  if (it == pools->end()) it = pools->emplace(device, MemPool{device}).first;
  return it->second;
}

void EmitPool(CUpti_ActivityMemoryPoolOperationType op, const MemPool& pool, uint32_t corr) {
  if (!KSimKindEnabled(CUPTI_ACTIVITY_KIND_MEMORY_POOL)) return;
  CUpti_ActivityMemoryPool3 r;
  std::memset(&r, 0, sizeof(r));
  r.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
  r.memoryPoolOperationType = op;
  r.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  r.correlationId = corr;
  r.processId = static_cast<uint32_t>(getpid());
  r.deviceId = static_cast<uint32_t>(pool.device);
  r.address = reinterpret_cast<uintptr_t>(&pool);
  r.size = pool.reserved;
  r.releaseThreshold = pool.release_threshold;
  r.timestamp = KSimCuptiNow();
  r.utilizedSize = pool.reserved;
  KSimEmitRecord(&r, sizeof(r));
}

void EmitPoolMemory(CUpti_ActivityMemoryOperationType op, uintptr_t addr, size_t bytes, const MemPool& pool,
                    const Stream* s, uint32_t corr) {
  if (!KSimKindEnabled(CUPTI_ACTIVITY_KIND_MEMORY2)) return;
  CUpti_ActivityMemory4 r;
  std::memset(&r, 0, sizeof(r));
  r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  r.memoryOperationType = op;
  r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  r.correlationId = corr;
  r.address = addr;
  r.bytes = bytes;
  r.timestamp = KSimCuptiNow();
  r.processId = static_cast<uint32_t>(getpid());
  r.deviceId = static_cast<uint32_t>(pool.device);
  r.contextId = s->ctx->context_id;
  r.streamId = s->stream_id;
  r.isAsync = 1;
  r.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  r.memoryPoolConfig.address = reinterpret_cast<uintptr_t>(&pool);
  r.memoryPoolConfig.releaseThreshold = pool.release_threshold;
  r.memoryPoolConfig.pool.size = pool.reserved;
  r.memoryPoolConfig.utilizedSize = pool.reserved;
  KSimEmitRecord(&r, sizeof(r));
}

}  // namespace

KSIM_RT cudaError_t cudaMallocAsync(void** ptr, size_t size, cudaStream_t stream) {
  ApiScope api(RT_CBID(cudaMallocAsync_v11020), "cudaMallocAsync");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (ptr == nullptr) return api.Finish(cudaErrorInvalidValue);
  Runtime& rt = Rt();
  std::unique_lock<std::mutex> lock(rt.mu);
  Stream* s = rt.StreamLocked(stream, CurrentDevice());
  if (s == nullptr) return api.Finish(rt.devices.empty() ? cudaErrorNoDevice : cudaErrorInvalidResourceHandle);
  if (size == 0) {
    *ptr = nullptr;
    return api.Finish(cudaSuccess);
  }
  Context* ctx = s->ctx;
  if (ctx->used_bytes + size > ctx->spec.memory_bytes) return api.Finish(cudaErrorMemoryAllocation);
  void* p = std::aligned_alloc(256, (size + 255) / 256 * 256);
  if (p == nullptr) return api.Finish(cudaErrorMemoryAllocation);
  Alloc a{size, MemKind::kDevice, ctx->device};
  a.from_pool = true;
  rt.allocs[reinterpret_cast<uintptr_t>(p)] = a;
  ctx->used_bytes += size;
  MemPool& pool = DefaultPool(ctx->device);
  pool.reserved += size;
  bool announce = !pool.announced;
  pool.announced = true;
  *ptr = p;
  if (announce) EmitPool(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED, pool, api.correlation());
  EmitPoolMemory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, reinterpret_cast<uintptr_t>(p), size, pool, s,
                 api.correlation());
  lock.unlock();
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) {
  ApiScope api(RT_CBID(cudaFreeAsync_v11020), "cudaFreeAsync");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (ptr == nullptr) return api.Finish(cudaSuccess);
  Runtime& rt = Rt();
  std::unique_lock<std::mutex> lock(rt.mu);
  Stream* s = rt.StreamLocked(stream, CurrentDevice());
  if (s == nullptr) return api.Finish(rt.devices.empty() ? cudaErrorNoDevice : cudaErrorInvalidResourceHandle);
  auto it = rt.allocs.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == rt.allocs.end() || it->second.kind != MemKind::kDevice) return api.Finish(cudaErrorInvalidValue);
  Alloc a = it->second;
  rt.allocs.erase(it);
  Context* ctx = rt.ContextLocked(a.device);
  if (ctx != nullptr) ctx->used_bytes -= a.size;
  MemPool& pool = DefaultPool(a.device);
  if (a.from_pool) pool.reserved -= std::min<uint64_t>(pool.reserved, a.size);
  // Device memory is host memory and simulated kernels never touch it, so the bytes can go
  // back now: nothing queued before the free on this stream will read them.
  std::free(ptr);
  EmitPoolMemory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, reinterpret_cast<uintptr_t>(ptr), a.size, pool, s,
                 api.correlation());
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  ApiScope api(RT_CBID(cudaDeviceGetDefaultMemPool_v11020), "cudaDeviceGetDefaultMemPool");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (pool == nullptr) return api.Finish(cudaErrorInvalidValue);
  if (!HaveDevice(device)) return api.Finish(NoDeviceError());
  std::lock_guard<std::mutex> lock(Rt().mu);
  *pool = reinterpret_cast<cudaMemPool_t>(&DefaultPool(device));
  return api.Finish(cudaSuccess);
}

namespace {

MemPool* FindPool(cudaMemPool_t handle) {
  for (int d = 0; d < static_cast<int>(Rt().devices.size()); ++d) {
    if (reinterpret_cast<cudaMemPool_t>(&DefaultPool(d)) == handle) return &DefaultPool(d);
  }
  return nullptr;
}

}  // namespace

KSIM_RT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t handle, cudaMemPoolAttr attr, void* value) {
  ApiScope api(RT_CBID(cudaMemPoolSetAttribute_v11020), "cudaMemPoolSetAttribute");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  std::lock_guard<std::mutex> lock(Rt().mu);
  MemPool* pool = FindPool(handle);
  if (pool == nullptr || value == nullptr) return api.Finish(cudaErrorInvalidValue);
  if (attr == cudaMemPoolAttrReleaseThreshold) {
    std::memcpy(&pool->release_threshold, value, sizeof(uint64_t));
  } else if (attr != cudaMemPoolReuseFollowEventDependencies && attr != cudaMemPoolReuseAllowOpportunistic &&
             attr != cudaMemPoolReuseAllowInternalDependencies) {
    return api.Finish(cudaErrorInvalidValue);  // the usage counters are read-only
  }
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t handle, cudaMemPoolAttr attr, void* value) {
  ApiScope api(RT_CBID(cudaMemPoolGetAttribute_v11020), "cudaMemPoolGetAttribute");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  std::lock_guard<std::mutex> lock(Rt().mu);
  MemPool* pool = FindPool(handle);
  if (pool == nullptr || value == nullptr) return api.Finish(cudaErrorInvalidValue);
  uint64_t v = 0;
  int flag = 1;
  switch (attr) {
    case cudaMemPoolAttrReleaseThreshold: v = pool->release_threshold; break;
    case cudaMemPoolAttrReservedMemCurrent: case cudaMemPoolAttrUsedMemCurrent:
    case cudaMemPoolAttrReservedMemHigh: case cudaMemPoolAttrUsedMemHigh: v = pool->reserved; break;
    case cudaMemPoolReuseFollowEventDependencies: case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies:
      std::memcpy(value, &flag, sizeof(flag));
      return api.Finish(cudaSuccess);
    default: return api.Finish(cudaErrorInvalidValue);
  }
  std::memcpy(value, &v, sizeof(v));
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t handle, size_t min_bytes) {
  ApiScope api(RT_CBID(cudaMemPoolTrimTo_v11020), "cudaMemPoolTrimTo");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  std::lock_guard<std::mutex> lock(Rt().mu);
  MemPool* pool = FindPool(handle);
  if (pool == nullptr) return api.Finish(cudaErrorInvalidValue);
  (void)min_bytes;  // freed blocks go back to the host at once: there is nothing to trim
  EmitPool(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED, *pool, api.correlation());
  return api.Finish(cudaSuccess);
}

// ---- Device reset ----

KSIM_RT cudaError_t cudaDeviceReset(void) {
  ApiScope api(RT_CBID(cudaDeviceReset_v3020), "cudaDeviceReset");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  Runtime& rt = Rt();
  int dev = CurrentDevice();
  if (!HaveDevice(dev)) return api.Finish(NoDeviceError());
  std::unique_lock<std::mutex> lock(rt.mu);
  Context* ctx = rt.contexts[dev].get();
  if (ctx == nullptr) return api.Finish(cudaSuccess);  // nothing was created on it
  uint64_t tail = rt.ContextTailLocked(ctx);
  lock.unlock();
  // Work already queued completes (its records are still delivered), host functions run.
  SleepUntilMono(tail);
  WaitHostFuncs(nullptr, ctx);
  KSimResourceCallback(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, reinterpret_cast<CUcontext>(ctx), nullptr,
                       nullptr);
  lock.lock();
  for (auto it = rt.allocs.begin(); it != rt.allocs.end();) {
    if (it->second.device == dev && !it->second.registered) {
      std::free(reinterpret_cast<void*>(it->first));
      it = rt.allocs.erase(it);
    } else if (it->second.device == dev) {
      it = rt.allocs.erase(it);  // the registration ends; the program's memory stays its own
    } else {
      ++it;
    }
  }
  for (Stream* s : ctx->streams) rt.streams.erase(s);
  DefaultPool(dev) = MemPool{dev};
  rt.device_flags.erase(dev);
  // The old context object is leaked: snapshots and records taken before the reset may still
  // point at it. The next call on this device creates a new context with a new id.
  rt.contexts[dev].release();
  return api.Finish(cudaSuccess);
}
