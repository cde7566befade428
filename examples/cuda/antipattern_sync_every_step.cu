// File: examples/cuda/antipattern_sync_every_step.cu
// Layer: sample CUDA workload: antipattern "device sync after every step".
// Threading: one host thread, one stream.
//
// Calls cudaDeviceSynchronize after every kernel (e.g. to read a loss value),
// so the host never runs ahead and the GPU idles during every launch.
// Usage: antipattern_sync_every_step [steps=200]
#include "common.h"

__global__ void layer(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.99f + 0.01f;
}

int main(int argc, char** argv) {
  const int steps = StepsArg(argc, argv, 200);
  const int n = 1 << 20;
  float* d_x;
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  CHECK_CUDA(cudaMalloc(&d_x, n * sizeof(float)));
  auto t0 = std::chrono::steady_clock::now();
  float loss = 0.0f;
  for (int step = 0; step < steps; ++step) {
    layer<<<(n + 255) / 256, 256, 0, s>>>(d_x, n);
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(&loss, d_x, sizeof(float), cudaMemcpyDeviceToHost));
  }
  std::printf("antipattern_sync_every_step: %d steps in %.1f ms\n", steps, MsSince(t0));
  cudaFree(d_x);
  cudaStreamDestroy(s);
  return 0;
}
