// File: examples/cuda/antipattern_few_blocks.cu
// Layer: sample CUDA workload: antipattern "kernels with too few blocks".
// Threading: one host thread, default stream.
//
// A large reduction launched with 8 blocks on a 132-SM device: most SMs
// stay empty (the kernel records show grid 8 against 132 SMs).
// Usage: antipattern_few_blocks [steps=20]
#include "common.h"

__global__ void reduce_rows(const float* x, float* out, int n) {
  float acc = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) acc += x[i];
  atomicAdd(out, acc);
}

int main(int argc, char** argv) {
  const int steps = StepsArg(argc, argv, 20);
  const int n = 1 << 22;
  float *d_x, *d_out;
  CHECK_CUDA(cudaMalloc(&d_x, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&d_out, sizeof(float)));
  auto t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) {
    for (int i = 0; i < 10; ++i) reduce_rows<<<8, 1024>>>(d_x, d_out, n);
    CHECK_CUDA(cudaDeviceSynchronize());
  }
  std::printf("antipattern_few_blocks: %d steps in %.1f ms\n", steps, MsSince(t0));
  cudaFree(d_x);
  cudaFree(d_out);
  return 0;
}
