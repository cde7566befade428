// File: test/sim/tests/pm_kernels.cu
// Kernels for the PM-sampling tests (sim_pm_test.cc), compiled by nvcc like a user's.
// Durations are pinned by name through KAIROS_SIM_KERNEL_TIMES (pmFull, pmQuarter,
// pmSmem), so each launch's shape decides only what the counters read. pmSmem launches with
// more than 48 KiB of dynamic shared memory need PmSmemOptIn first, as on a real device.
#include <cuda_runtime.h>

__global__ void pmFull(float* y) { if (y) y[blockIdx.x] = 1.0f; }
__global__ void pmQuarter(float* y) { if (y) y[blockIdx.x] = 2.0f; }
__global__ void pmSmem(float* y) {
  extern __shared__ float tile[];
  tile[threadIdx.x] = 1.0f;
  if (y) y[blockIdx.x] = tile[0];
}

extern "C" int PmLaunchFull(unsigned grid) { pmFull<<<grid, 256>>>(nullptr); return cudaGetLastError(); }
extern "C" int PmLaunchQuarter(unsigned grid) { pmQuarter<<<grid, 256>>>(nullptr); return cudaGetLastError(); }
extern "C" int PmLaunchSmem(unsigned grid, size_t shared) {
  pmSmem<<<grid, 256, shared>>>(nullptr);
  return cudaGetLastError();
}
// Over 48 KiB of dynamic shared memory a kernel must opt in, as on a real device.
extern "C" int PmSmemOptIn(int bytes) {
  return cudaFuncSetAttribute(pmSmem, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}
// pmSmem's dynamic shared-memory limit and the occupancy API's blocks per SM at 256 threads.
extern "C" int PmSmemLimits(size_t shared, int* max_dynamic_shared, int* blocks_per_sm) {
  cudaFuncAttributes a;
  if (cudaError_t e = cudaFuncGetAttributes(&a, pmSmem); e != cudaSuccess) return e;
  *max_dynamic_shared = a.maxDynamicSharedSizeBytes;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, pmSmem, 256, shared);
}
