// File: test/sim/src/cudart_api.cc
// Layer: CUDA/CUPTI simulator, substitute libcudart.so.13: device, memory,
//        copy, stream, event and error entry points.
// Threading: any thread; state in Rt() under its mutex, host waits unlocked.
//
// Each entry point opens an ApiScope with the callback id a CUDA 13 runtime
// reports for it (cupti_runtime_cbid.h), does the simulated work and returns
// the error a real runtime returns for the same misuse.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "cudart_ops.h"
#include "cudart_state.h"
#include "sim_common.h"

using namespace kairos::sim;  // NOLINT: this file is the runtime's C surface

#define KSIM_RT extern "C" __attribute__((visibility("default")))
#define RT_CBID(name) CUPTI_RUNTIME_TRACE_CBID_##name

namespace {

constexpr size_t kAllocAlign = 256;

bool HaveDevice(int dev) { return dev >= 0 && static_cast<size_t>(dev) < Rt().devices.size(); }


uint8_t CuptiMemKind(const Alloc* a) {
  if (a == nullptr) return CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  switch (a->kind) {
    case MemKind::kDevice: return CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    case MemKind::kPinned: return CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    case MemKind::kManaged: return CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  }
  return CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
}

void EmitMemory(CUpti_ActivityMemoryOperationType op, const Alloc& a, uintptr_t addr, uint32_t corr,
                const Context* ctx) {
  if (!KSimKindEnabled(CUPTI_ACTIVITY_KIND_MEMORY2)) return;
  CUpti_ActivityMemory4 r;
  std::memset(&r, 0, sizeof(r));
  r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  r.memoryOperationType = op;
  r.memoryKind = static_cast<CUpti_ActivityMemoryKind>(CuptiMemKind(&a));
  r.correlationId = corr;
  r.address = addr;
  r.bytes = a.size;
  r.timestamp = KSimCuptiNow();
  r.processId = static_cast<uint32_t>(getpid());
  r.deviceId = static_cast<uint32_t>(a.device);
  r.contextId = ctx != nullptr ? ctx->context_id : 0;
  KSimEmitRecord(&r, sizeof(r));
}

}  // namespace

namespace kairos::sim {

cudaError_t NoDeviceError() { return Rt().devices.empty() ? cudaErrorNoDevice : cudaErrorInvalidDevice; }

cudaError_t AllocCommon(ApiScope& api, void** ptr, size_t size, MemKind kind) {
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (ptr == nullptr) return api.Finish(cudaErrorInvalidValue);
  Runtime& rt = Rt();
  int dev = CurrentDevice();
  std::unique_lock<std::mutex> lock(rt.mu);
  Context* ctx = rt.ContextLocked(dev);
  if (ctx == nullptr) return api.Finish(NoDeviceError());
  if (size == 0) {
    *ptr = nullptr;
    return api.Finish(cudaSuccess);
  }
  if (kind != MemKind::kPinned && ctx->used_bytes + size > ctx->spec.memory_bytes) {
    return api.Finish(cudaErrorMemoryAllocation);
  }
  void* p = std::aligned_alloc(kAllocAlign, (size + kAllocAlign - 1) / kAllocAlign * kAllocAlign);
  if (p == nullptr) return api.Finish(cudaErrorMemoryAllocation);
  // Touch every page now, as pinning does for host memory and as a device's memory is simply
  // there: the first copy into the buffer then costs its memmove, not its page faults.
  std::memset(p, 0, size);
  Alloc a{size, kind, dev};
  rt.allocs[reinterpret_cast<uintptr_t>(p)] = a;
  if (kind != MemKind::kPinned) ctx->used_bytes += size;
  *ptr = p;
  lock.unlock();
  EmitMemory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, a, reinterpret_cast<uintptr_t>(p),
             api.correlation(), ctx);
  return api.Finish(cudaSuccess);
}

cudaError_t FreeCommon(ApiScope& api, void* ptr, bool host) {
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (ptr == nullptr) return api.Finish(cudaSuccess);
  Runtime& rt = Rt();
  std::unique_lock<std::mutex> lock(rt.mu);
  auto it = rt.allocs.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == rt.allocs.end() || (it->second.kind == MemKind::kPinned) != host) {
    // Double free or a pointer the runtime never returned.
    return api.Finish(cudaErrorInvalidValue);
  }
  Alloc a = it->second;
  Context* ctx = rt.ContextLocked(a.device);
  // cudaFree synchronizes the device before releasing memory.
  uint64_t tail = ctx != nullptr ? rt.ContextTailLocked(ctx) : 0;
  rt.allocs.erase(it);
  if (ctx != nullptr && a.kind != MemKind::kPinned) ctx->used_bytes -= a.size;
  lock.unlock();
  if (!host) SleepUntilMono(tail);
  std::free(ptr);
  EmitMemory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, a, reinterpret_cast<uintptr_t>(ptr), api.correlation(),
             ctx);
  return api.Finish(cudaSuccess);
}

}  // namespace kairos::sim

// ---- Errors and versions ----

KSIM_RT const char* cudaGetErrorName(cudaError_t err) {
  switch (err) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorDevicesUnavailable: return "cudaErrorDevicesUnavailable";
    case cudaErrorInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    case cudaErrorStreamCaptureUnsupported: return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorIllegalState: return "cudaErrorIllegalState";
    case cudaErrorUnknown: return "cudaErrorUnknown";
    default: return "cudaErrorUnknown";
  }
}

KSIM_RT const char* cudaGetErrorString(cudaError_t err) {
  switch (err) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorDevicesUnavailable: return "CUDA-capable device(s) is/are busy or unavailable";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorNotSupported: return "operation not supported";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case cudaErrorIllegalState: return "the operation cannot be performed in the present state";
    default: return "unknown error";
  }
}

KSIM_RT cudaError_t cudaGetLastError(void) {
  ApiScope api(RT_CBID(cudaGetLastError_v3020), "cudaGetLastError");
  cudaError_t err = LastError();
  LastError() = cudaSuccess;
  if (api.blocked() != cudaSuccess) err = api.blocked();
  api.Finish(cudaSuccess);
  return err;
}

KSIM_RT cudaError_t cudaPeekAtLastError(void) {
  ApiScope api(RT_CBID(cudaPeekAtLastError_v3020), "cudaPeekAtLastError");
  api.Finish(cudaSuccess);
  return api.blocked() != cudaSuccess ? api.blocked() : LastError();
}

KSIM_RT cudaError_t cudaRuntimeGetVersion(int* v) {
  ApiScope api(RT_CBID(cudaRuntimeGetVersion_v3020), "cudaRuntimeGetVersion");
  if (v == nullptr) return api.Finish(cudaErrorInvalidValue);
  *v = CUDART_VERSION;
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaDriverGetVersion(int* v) {
  ApiScope api(RT_CBID(cudaDriverGetVersion_v3020), "cudaDriverGetVersion");
  if (v == nullptr) return api.Finish(cudaErrorInvalidValue);
  *v = CUDART_VERSION;
  return api.Finish(cudaSuccess);
}

// ---- Devices ----

KSIM_RT cudaError_t cudaGetDeviceCount(int* count) {
  ApiScope api(RT_CBID(cudaGetDeviceCount_v3020), "cudaGetDeviceCount");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (count == nullptr) return api.Finish(cudaErrorInvalidValue);
  *count = static_cast<int>(Rt().devices.size());
  return api.Finish(*count == 0 ? cudaErrorNoDevice : cudaSuccess);
}

KSIM_RT cudaError_t cudaSetDevice(int device) {
  ApiScope api(RT_CBID(cudaSetDevice_v3020), "cudaSetDevice");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (!HaveDevice(device)) return api.Finish(NoDeviceError());
  CurrentDevice() = device;
  std::lock_guard<std::mutex> lock(Rt().mu);
  Rt().ContextLocked(device);
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaGetDevice(int* device) {
  ApiScope api(RT_CBID(cudaGetDevice_v3020), "cudaGetDevice");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (device == nullptr) return api.Finish(cudaErrorInvalidValue);
  if (Rt().devices.empty()) return api.Finish(cudaErrorNoDevice);
  *device = CurrentDevice();
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  ApiScope api(RT_CBID(cudaGetDeviceProperties_v12000), "cudaGetDeviceProperties");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (prop == nullptr) return api.Finish(cudaErrorInvalidValue);
  if (!HaveDevice(device)) return api.Finish(NoDeviceError());
  const DeviceSpec& d = Rt().devices[device];
  FillDeviceProperties(d, device, prop);
  return api.Finish(cudaSuccess);
}

cudaError_t kairos::sim::DeviceAttributeValue(const DeviceSpec& d, int attr, int* value) {
  // Every value cudaDeviceAttr defines in CUDA 13 (driver_types.h) answers: the simulated
  // device's value, the H100/A100 value where the simulator has no field for it, and 0 for
  // features a simulated device does not have (textures and surfaces are not simulated,
  // so their limits are the hardware's, but the texture calls themselves return 801).
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = 1024; break;
    case cudaDevAttrMaxBlockDimX: case cudaDevAttrMaxBlockDimY: *value = 1024; break;
    case cudaDevAttrMaxBlockDimZ: *value = 64; break;
    case cudaDevAttrMaxGridDimX: *value = 2147483647; break;
    case cudaDevAttrMaxGridDimY: case cudaDevAttrMaxGridDimZ: *value = 65535; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = d.shared_per_block; break;
    case cudaDevAttrTotalConstantMemory: *value = 65536; break;
    case cudaDevAttrWarpSize: *value = 32; break;
    case cudaDevAttrMaxPitch: *value = 2147483647; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = 65536; break;
    case cudaDevAttrClockRate: *value = d.clock_khz; break;
    case cudaDevAttrTextureAlignment: *value = 512; break;
    case cudaDevAttrGpuOverlap: *value = 1; break;
    case cudaDevAttrMultiProcessorCount: *value = d.sm_count; break;
    case cudaDevAttrKernelExecTimeout: *value = 0; break;
    case cudaDevAttrIntegrated: *value = 0; break;
    case cudaDevAttrCanMapHostMemory: *value = 1; break;
    case cudaDevAttrComputeMode: *value = cudaComputeModeDefault; break;
    case cudaDevAttrMaxTexture1DWidth: *value = 131072; break;
    case cudaDevAttrMaxTexture2DWidth: case cudaDevAttrMaxTexture2DHeight: *value = 131072; break;
    case cudaDevAttrMaxTexture3DWidth: case cudaDevAttrMaxTexture3DHeight: case cudaDevAttrMaxTexture3DDepth:
      *value = 16384; break;
    case cudaDevAttrMaxTexture2DLayeredWidth: case cudaDevAttrMaxTexture2DLayeredHeight: *value = 32768; break;
    case cudaDevAttrMaxTexture2DLayeredLayers: *value = 2048; break;
    case cudaDevAttrSurfaceAlignment: *value = 512; break;
    case cudaDevAttrConcurrentKernels: *value = 1; break;
    case cudaDevAttrEccEnabled: *value = 1; break;
    case cudaDevAttrPciBusId: *value = d.pci_bus_id; break;
    case cudaDevAttrPciDeviceId: *value = 0; break;
    case cudaDevAttrTccDriver: *value = 0; break;
    case cudaDevAttrMemoryClockRate: *value = d.memory_clock_khz; break;
    case cudaDevAttrGlobalMemoryBusWidth: *value = d.memory_bus_width; break;
    case cudaDevAttrL2CacheSize: *value = d.l2_bytes; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = d.max_threads_per_sm; break;
    case cudaDevAttrAsyncEngineCount: *value = 3; break;
    case cudaDevAttrUnifiedAddressing: *value = 1; break;
    case cudaDevAttrMaxTexture1DLayeredWidth: *value = 32768; break;
    case cudaDevAttrMaxTexture1DLayeredLayers: *value = 2048; break;
    case cudaDevAttrMaxTexture2DGatherWidth: case cudaDevAttrMaxTexture2DGatherHeight: *value = 32768; break;
    case cudaDevAttrMaxTexture3DWidthAlt: case cudaDevAttrMaxTexture3DHeightAlt: *value = 8192; break;
    case cudaDevAttrMaxTexture3DDepthAlt: *value = 32768; break;
    case cudaDevAttrPciDomainId: *value = 0; break;
    case cudaDevAttrTexturePitchAlignment: *value = 32; break;
    case cudaDevAttrMaxTextureCubemapWidth: case cudaDevAttrMaxTextureCubemapLayeredWidth: *value = 32768; break;
    case cudaDevAttrMaxTextureCubemapLayeredLayers: *value = 2046; break;
    case cudaDevAttrMaxSurface1DWidth: case cudaDevAttrMaxSurface2DWidth: case cudaDevAttrMaxSurface2DHeight:
      *value = 32768; break;
    case cudaDevAttrMaxSurface3DWidth: case cudaDevAttrMaxSurface3DHeight: case cudaDevAttrMaxSurface3DDepth:
      *value = 16384; break;
    case cudaDevAttrMaxSurface1DLayeredWidth: case cudaDevAttrMaxSurface2DLayeredWidth:
    case cudaDevAttrMaxSurface2DLayeredHeight: case cudaDevAttrMaxSurfaceCubemapWidth:
    case cudaDevAttrMaxSurfaceCubemapLayeredWidth: *value = 32768; break;
    case cudaDevAttrMaxSurface1DLayeredLayers: case cudaDevAttrMaxSurface2DLayeredLayers: *value = 2048; break;
    case cudaDevAttrMaxSurfaceCubemapLayeredLayers: *value = 2046; break;
    case cudaDevAttrMaxTexture1DLinearWidth: *value = 268435456; break;
    case cudaDevAttrMaxTexture2DLinearWidth: case cudaDevAttrMaxTexture2DLinearHeight: *value = 131072; break;
    case cudaDevAttrMaxTexture2DLinearPitch: *value = 2097120; break;
    case cudaDevAttrMaxTexture2DMipmappedWidth: case cudaDevAttrMaxTexture2DMipmappedHeight: *value = 32768; break;
    case cudaDevAttrComputeCapabilityMajor: *value = d.cc_major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = d.cc_minor; break;
    case cudaDevAttrMaxTexture1DMipmappedWidth: *value = 32768; break;
    case cudaDevAttrStreamPrioritiesSupported: *value = 1; break;
    case cudaDevAttrGlobalL1CacheSupported: case cudaDevAttrLocalL1CacheSupported: *value = 1; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = d.shared_per_sm; break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: *value = d.regs_per_sm; break;
    case cudaDevAttrManagedMemory: *value = 1; break;
    case cudaDevAttrIsMultiGpuBoard: *value = 0; break;
    case cudaDevAttrMultiGpuBoardGroupID: *value = 0; break;
    case cudaDevAttrHostNativeAtomicSupported: *value = 0; break;
    case cudaDevAttrSingleToDoublePrecisionPerfRatio: *value = 2; break;
    case cudaDevAttrPageableMemoryAccess: *value = 0; break;
    case cudaDevAttrConcurrentManagedAccess: *value = 1; break;
    case cudaDevAttrComputePreemptionSupported: *value = 1; break;
    case cudaDevAttrCanUseHostPointerForRegisteredMem: *value = 1; break;
    case cudaDevAttrReserved92: case cudaDevAttrReserved93: case cudaDevAttrReserved94: case cudaDevAttrReserved96:
    case cudaDevAttrReserved122: case cudaDevAttrReserved123: case cudaDevAttrReserved124:
    case cudaDevAttrReserved127: case cudaDevAttrReserved128: case cudaDevAttrReserved129:
    case cudaDevAttrReserved132: case cudaDevAttrReserved141: case cudaDevAttrReserved145:
      *value = 0; break;
    case cudaDevAttrCooperativeLaunch: *value = 1; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = d.shared_per_sm - 1024; break;
    case cudaDevAttrCanFlushRemoteWrites: *value = 0; break;
    case cudaDevAttrHostRegisterSupported: *value = 1; break;
    case cudaDevAttrPageableMemoryAccessUsesHostPageTables: *value = 0; break;
    case cudaDevAttrDirectManagedMemAccessFromHost: *value = 0; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = d.max_blocks_per_sm; break;
    case cudaDevAttrMaxPersistingL2CacheSize: *value = d.l2_bytes / 4 * 3; break;
    case cudaDevAttrMaxAccessPolicyWindowSize: *value = 134213632; break;
    case cudaDevAttrReservedSharedMemoryPerBlock: *value = 1024; break;
    case cudaDevAttrSparseCudaArraySupported: *value = 0; break;
    case cudaDevAttrHostRegisterReadOnlySupported: *value = 1; break;
    case cudaDevAttrTimelineSemaphoreInteropSupported: *value = 0; break;
    case cudaDevAttrMemoryPoolsSupported: *value = 1; break;
    case cudaDevAttrGPUDirectRDMASupported: *value = 0; break;
    case cudaDevAttrGPUDirectRDMAFlushWritesOptions: *value = 0; break;
    case cudaDevAttrGPUDirectRDMAWritesOrdering: *value = 0; break;
    case cudaDevAttrMemoryPoolSupportedHandleTypes: *value = 0; break;  // no IPC
    case cudaDevAttrClusterLaunch: *value = d.cc_major >= 9 ? 1 : 0; break;
    case cudaDevAttrDeferredMappingCudaArraySupported: *value = 0; break;
    case cudaDevAttrIpcEventSupport: *value = 0; break;
    case cudaDevAttrMemSyncDomainCount: *value = d.cc_major >= 9 ? 4 : 1; break;
    case cudaDevAttrNumaConfig: *value = 0; break;
    case cudaDevAttrNumaId: *value = -1; break;
    case cudaDevAttrMpsEnabled: *value = 0; break;
    case cudaDevAttrHostNumaId: *value = -1; break;
    case cudaDevAttrD3D12CigSupported: case cudaDevAttrVulkanCigSupported: *value = 0; break;
    case cudaDevAttrGpuPciDeviceId: *value = d.pci_device_id; break;
    case cudaDevAttrGpuPciSubsystemId: *value = 0; break;
    case cudaDevAttrHostNumaMemoryPoolsSupported: case cudaDevAttrHostNumaMultinodeIpcSupported: *value = 0; break;
    case cudaDevAttrHostMemoryPoolsSupported: *value = 0; break;
    case cudaDevAttrOnlyPartialHostNativeAtomicSupported: *value = 0; break;
    default: return cudaErrorInvalidValue;  // not a value CUDA 13 defines
  }
  return cudaSuccess;
}

KSIM_RT cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  ApiScope api(RT_CBID(cudaDeviceGetAttribute_v5000), "cudaDeviceGetAttribute");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  if (value == nullptr) return api.Finish(cudaErrorInvalidValue);
  if (!HaveDevice(device)) return api.Finish(NoDeviceError());
  return api.Finish(DeviceAttributeValue(Rt().devices[device], static_cast<int>(attr), value));
}

KSIM_RT cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  ApiScope api(RT_CBID(cudaDeviceGetStreamPriorityRange_v5050), "cudaDeviceGetStreamPriorityRange");
  if (least != nullptr) *least = 0;
  if (greatest != nullptr) *greatest = -5;
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
  ApiScope api(RT_CBID(cudaMemGetInfo_v3020), "cudaMemGetInfo");
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  std::lock_guard<std::mutex> lock(Rt().mu);
  Context* ctx = Rt().ContextLocked(CurrentDevice());
  if (ctx == nullptr) return api.Finish(NoDeviceError());
  if (free_bytes != nullptr) *free_bytes = ctx->spec.memory_bytes - ctx->used_bytes;
  if (total != nullptr) *total = ctx->spec.memory_bytes;
  return api.Finish(cudaSuccess);
}

KSIM_RT cudaError_t cudaDeviceSynchronize(void) {
  ApiScope api(RT_CBID(cudaDeviceSynchronize_v3020), "cudaDeviceSynchronize");
  return DeviceSyncCommon(api);
}

cudaError_t kairos::sim::DeviceSyncCommon(ApiScope& api) {
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  Runtime& rt = Rt();
  std::unique_lock<std::mutex> lock(rt.mu);
  Context* ctx = rt.ContextLocked(CurrentDevice());
  if (ctx == nullptr) return api.Finish(NoDeviceError());
  uint64_t tail = rt.ContextTailLocked(ctx);
  lock.unlock();
  uint64_t t0 = MonoNowNs();
  SleepUntilMono(tail);
  WaitHostFuncs(nullptr, ctx);
  KSimSynchronizeCallback(CUPTI_CBID_SYNCHRONIZE_CONTEXT_SYNCHRONIZED, reinterpret_cast<CUcontext>(ctx), nullptr);
  EmitSync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, ctx, nullptr, nullptr, t0, MonoNowNs(),
           api.correlation(), cudaSuccess);
  return api.Finish(cudaSuccess);
}

// ---- Memory ----

KSIM_RT cudaError_t cudaMalloc(void** ptr, size_t size) {
  ApiScope api(RT_CBID(cudaMalloc_v3020), "cudaMalloc");
  return AllocCommon(api, ptr, size, MemKind::kDevice);
}

KSIM_RT cudaError_t cudaMallocManaged(void** ptr, size_t size, unsigned int) {
  ApiScope api(RT_CBID(cudaMallocManaged_v6000), "cudaMallocManaged");
  return AllocCommon(api, ptr, size, MemKind::kManaged);
}

KSIM_RT cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int) {
  ApiScope api(RT_CBID(cudaHostAlloc_v3020), "cudaHostAlloc");
  return AllocCommon(api, ptr, size, MemKind::kPinned);
}

KSIM_RT cudaError_t cudaMallocHost(void** ptr, size_t size) {
  ApiScope api(RT_CBID(cudaMallocHost_v3020), "cudaMallocHost");
  return AllocCommon(api, ptr, size, MemKind::kPinned);
}

KSIM_RT cudaError_t cudaFree(void* ptr) {
  ApiScope api(RT_CBID(cudaFree_v3020), "cudaFree");
  return FreeCommon(api, ptr, /*host=*/false);
}

KSIM_RT cudaError_t cudaFreeHost(void* ptr) {
  ApiScope api(RT_CBID(cudaFreeHost_v3020), "cudaFreeHost");
  return FreeCommon(api, ptr, /*host=*/true);
}
