// File: examples/cuda/antipattern_host_bound.cu
// Layer: sample CUDA workload: antipattern "host-bound data loading".
// Threading: one host thread, default stream.
//
// Each step spends ~5 ms preparing a batch on the CPU and then runs well under
// a millisecond of GPU work, so the GPU idles most of the time.
// Usage: antipattern_host_bound [steps=20]
#include "common.h"

__global__ void train_step(const float* x, float* w, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] += x[i];
}

int main(int argc, char** argv) {
  const int steps = StepsArg(argc, argv, 20);
  const int n = 1 << 18;
  float* h_x;
  float *d_x, *d_w;
  CHECK_CUDA(cudaMallocHost(&h_x, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&d_x, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&d_w, n * sizeof(float)));
  auto t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) {
    LoadBatchOnHost(h_x, n, 5000);
    CHECK_CUDA(cudaMemcpyAsync(d_x, h_x, n * sizeof(float), cudaMemcpyHostToDevice, 0));
    train_step<<<(n + 255) / 256, 256>>>(d_x, d_w, n);
    CHECK_CUDA(cudaStreamSynchronize(0));
  }
  std::printf("antipattern_host_bound: %d steps in %.1f ms\n", steps, MsSince(t0));
  cudaFree(d_x);
  cudaFree(d_w);
  cudaFreeHost(h_x);
  return 0;
}
