// File: examples/cuda/well_fed.cu
// Layer: sample CUDA workload: the clean reference, no antipattern.
// Threading: one host thread, one non-default stream.
//
// Data lives on the device, kernels are large (a full grid, hundreds of microseconds each)
// and queued back to back without host synchronisation; the host syncs once at the end.
// The summary should report a busy GPU and no findings (the detectors' false-positive check).
// Usage: well_fed [steps=10]
#include "common.h"

__global__ void big_matmul(const float* a, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] * 2.0f;
}

__global__ void big_update(float* w, const float* g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= 0.01f * g[i];
}

int main(int argc, char** argv) {
  const int steps = StepsArg(argc, argv, 10);
  const int n = 1 << 20;
  float *d_a, *d_c;
  CHECK_CUDA(cudaMalloc(&d_a, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&d_c, n * sizeof(float)));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  auto t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) {
    for (int k = 0; k < 4; ++k) big_matmul<<<n / 256, 256, 0, s>>>(d_a, d_c, n);
    big_update<<<n / 256, 256, 0, s>>>(d_a, d_c, n);
  }
  CHECK_CUDA(cudaStreamSynchronize(s));
  std::printf("well_fed: %d steps in %.1f ms\n", steps, MsSince(t0));
  CHECK_CUDA(cudaStreamDestroy(s));
  cudaFree(d_a);
  cudaFree(d_c);
  return 0;
}
