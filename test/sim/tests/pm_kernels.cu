// File: test/sim/tests/pm_kernels.cu
// Kernels for the PM-sampling tests (sim_pm_test.cc), compiled by nvcc like a user's.
// Durations are pinned by name through KAIROS_SIM_KERNEL_TIMES (pmFull, pmQuarter,
// pmSmem), so each launch's shape decides only what the counters read.
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
