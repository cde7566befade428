// File: test/sim/tests/sim_kernels.cu
// Layer: simulator tests: device code and <<<>>> launch sites, compiled by
//        nvcc exactly as a user's program is (host stubs call the CUDA 13
//        hidden entry points __cudaPushCallConfiguration/__cudaLaunchKernel).
// Threading: callers decide; every helper is reentrant.
//
// The Catch2 tests are plain C++ (g++), so they reach the kernels through
// these extern "C" helpers; each returns the launch's cudaError_t.
#include <cuda_runtime.h>

__global__ void ksimScale(float* data, int n, float factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

// Name matched by KAIROS_SIM_KERNEL_TIMES in the tests to pin durations.
__global__ void ksimPinnedKernel(int* out) {
  if (out != nullptr) out[0] = 1;
}

extern "C" int KsimLaunchScale(float* data, int n, unsigned grid, unsigned block, cudaStream_t stream) {
  ksimScale<<<grid, block, 0, stream>>>(data, n, 2.0f);
  return static_cast<int>(cudaGetLastError());
}

extern "C" int KsimLaunchScaleShared(float* data, int n, unsigned grid, unsigned block, size_t shared,
                                     cudaStream_t stream) {
  ksimScale<<<dim3(grid, 2, 1), dim3(block, 1, 1), shared, stream>>>(data, n, 2.0f);
  return static_cast<int>(cudaGetLastError());
}

extern "C" int KsimLaunchPinned(cudaStream_t stream) {
  ksimPinnedKernel<<<1, 32, 0, stream>>>(nullptr);
  return static_cast<int>(cudaGetLastError());
}

// The explicit runtime API path (cbid 211) for the same kernel.
extern "C" int KsimLaunchExplicit(float* data, int n, cudaStream_t stream) {
  float factor = 3.0f;
  void* args[] = {&data, &n, &factor};
  return static_cast<int>(cudaLaunchKernel(reinterpret_cast<const void*>(&ksimScale), dim3(4), dim3(64), args, 0,
                                           stream));
}

extern "C" const void* KsimScaleHostStub() { return reinterpret_cast<const void*>(&ksimScale); }
