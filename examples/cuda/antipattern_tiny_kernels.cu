// File: examples/cuda/antipattern_tiny_kernels.cu
// Layer: sample CUDA workload: antipattern "tiny kernels".
// Threading: one host thread, default stream.
//
// Launches hundreds of one-block element-wise kernels per step instead of one
// fused kernel: launch overhead dominates the GPU time.
// Usage: antipattern_tiny_kernels [steps=10]
#include "common.h"

__global__ void add_one(float* x) { x[threadIdx.x] += 1.0f; }

int main(int argc, char** argv) {
  const int steps = StepsArg(argc, argv, 10);
  const int launches = 500;
  float* d_x;
  CHECK_CUDA(cudaMalloc(&d_x, 32 * sizeof(float)));
  CHECK_CUDA(cudaMemset(d_x, 0, 32 * sizeof(float)));
  auto t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) {
    for (int i = 0; i < launches; ++i) add_one<<<1, 32>>>(d_x);
    CHECK_CUDA(cudaDeviceSynchronize());
  }
  std::printf("antipattern_tiny_kernels: %d steps x %d launches in %.1f ms\n", steps, launches, MsSince(t0));
  cudaFree(d_x);
  return 0;
}
