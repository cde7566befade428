// File: examples/cuda/antipattern_pageable_copy.cu
// Layer: sample CUDA workload: antipattern "pageable host copies".
// Threading: one host thread, one stream.
//
// Copies batches from ordinary (pageable) host memory with cudaMemcpyAsync:
// the copy is staged by the driver, runs at a fraction of pinned bandwidth
// and blocks the host, so it cannot overlap with compute.
// Usage: antipattern_pageable_copy [steps=10]
#include <vector>

#include "common.h"

__global__ void touch(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

int main(int argc, char** argv) {
  const int steps = StepsArg(argc, argv, 10);
  const int n = 4 << 20;  // 16 MiB per batch
  std::vector<float> host(n, 1.0f);
  float* d_x;
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  CHECK_CUDA(cudaMalloc(&d_x, n * sizeof(float)));
  auto t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) {
    CHECK_CUDA(cudaMemcpyAsync(d_x, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, s));
    touch<<<(n + 255) / 256, 256, 0, s>>>(d_x, n);
    CHECK_CUDA(cudaMemcpyAsync(host.data(), d_x, n * sizeof(float), cudaMemcpyDeviceToHost, s));
    CHECK_CUDA(cudaStreamSynchronize(s));
  }
  std::printf("antipattern_pageable_copy: %d steps in %.1f ms (host[0]=%.0f)\n", steps, MsSince(t0), host[0]);
  cudaFree(d_x);
  cudaStreamDestroy(s);
  return 0;
}
