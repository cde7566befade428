// File: test/sim/src/cudart_ops.h
// Layer: CUDA/CUPTI simulator, substitute libcudart.so.13: copy and memset
//        enqueueing shared by direct calls and graph launches.
// Threading: call with Rt().mu held.
#ifndef KAIROS_TEST_SIM_SRC_CUDART_OPS_H_
#define KAIROS_TEST_SIM_SRC_CUDART_OPS_H_

#include "cudart_state.h"

namespace kairos::sim {

// A 2D copy: `height` rows of `width` bytes, `dpitch`/`spitch` bytes apart.
struct Copy2DShape {
  size_t dpitch, spitch, width, height;
};

// Schedules a copy on `s`, moves the bytes and emits its record (one record, `n` bytes,
// also for a 2D copy). `*end_out` is the time the host must wait until (0 when the call is
// asynchronous).
cudaError_t EnqueueCopy(Runtime& rt, Stream* s, void* dst, const void* src, size_t n, cudaMemcpyKind kind,
                        bool async, uint32_t corr, uint32_t graph_id, uint64_t node_id, uint64_t* end_out,
                        const Copy2DShape* shape = nullptr);
cudaError_t EnqueueMemset(Runtime& rt, Stream* s, void* dst, int value, size_t n, bool async, uint32_t corr,
                          uint32_t graph_id, uint64_t node_id);

// The bodies of the copy, memset, allocation, free, launch and synchronize entry points,
// shared by the runtime API (cudart_*.cc) and the driver API (cuda_driver.cc): each runs
// inside the caller's ApiScope and finishes it.
cudaError_t CopyApi(ApiScope& api, void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t stream,
                    bool async);
cudaError_t MemsetApi(ApiScope& api, void* dst, int value, size_t n, cudaStream_t stream, bool async);
cudaError_t AllocCommon(ApiScope& api, void** ptr, size_t size, MemKind kind);
cudaError_t FreeCommon(ApiScope& api, void* ptr, bool host);
// `args`: the launch's argument array, for kernel execution (ptx_launch.h); may be null.
cudaError_t LaunchCommon(ApiScope& api, const KernelInfo* k, dim3 grid, dim3 block, size_t shared,
                         cudaStream_t stream, void** args = nullptr);
cudaError_t StreamSyncCommon(ApiScope& api, cudaStream_t stream);
cudaError_t DeviceSyncCommon(ApiScope& api);
cudaError_t NoDeviceError();
cudaError_t CreateStreamCommon(ApiScope& api, cudaStream_t* out, unsigned flags, int priority);
cudaError_t DestroyStreamCommon(ApiScope& api, cudaStream_t stream);
// The value of a cudaDeviceAttr (== CUdevice_attribute) for `d`; cudaErrorInvalidValue for a
// value CUDA 13 does not define.
cudaError_t DeviceAttributeValue(const DeviceSpec& d, int attr, int* value);
// Blocks until the host functions queued on `s` (and on every stream of `ctx` when `s` is
// nullptr) have run.
void WaitHostFuncs(const Stream* s, const Context* ctx);
void FillDeviceProperties(const DeviceSpec& d, int device, cudaDeviceProp* prop);

}  // namespace kairos::sim

#endif  // KAIROS_TEST_SIM_SRC_CUDART_OPS_H_
