// File: examples/cuda/antipattern_fp32_gemm.cu
// Layer: sample CUDA workload: antipattern "tensor cores idle" (tensor_cores_idle).
// Threading: one host thread, one non-default stream.
//
// A well-fed loop whose matrix multiplies run in plain fp32 on CUDA cores: the GEMM kernel
// carries cuBLAS's fp32 name (ampere_sgemm_...), which is how a trace tells an fp32 GEMM from
// a tensor-core one. With `bf16` as the second argument the same loop runs a kernel named as
// cuBLAS's bf16 tensor-core GEMM: the control, which must not fire.
// Usage: antipattern_fp32_gemm [steps=10] [fp32|bf16]
#include <cstring>

#include "common.h"

__global__ void ampere_sgemm_128x64_nn(const float* a, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] * 2.0f;
}

__global__ void ampere_bf16_s16816gemm_bf16_128x64_nn(const float* a, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] * 2.0f;
}

__global__ void sgd_update(float* w, const float* g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= 0.01f * g[i];
}

int main(int argc, char** argv) {
  const int steps = StepsArg(argc, argv, 10);
  const bool bf16 = argc > 2 && std::strcmp(argv[2], "bf16") == 0;
  const int n = 1 << 20;
  float *d_a, *d_c;
  CHECK_CUDA(cudaMalloc(&d_a, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&d_c, n * sizeof(float)));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  auto t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) {
    for (int k = 0; k < 4; ++k) {
      if (bf16) {
        ampere_bf16_s16816gemm_bf16_128x64_nn<<<n / 256, 256, 0, s>>>(d_a, d_c, n);
      } else {
        ampere_sgemm_128x64_nn<<<n / 256, 256, 0, s>>>(d_a, d_c, n);
      }
    }
    sgd_update<<<n / 256, 256, 0, s>>>(d_a, d_c, n);
  }
  CHECK_CUDA(cudaStreamSynchronize(s));
  std::printf("antipattern_fp32_gemm (%s): %d steps in %.1f ms\n", bf16 ? "bf16" : "fp32", steps,
              MsSince(t0));
  CHECK_CUDA(cudaStreamDestroy(s));
  cudaFree(d_a);
  cudaFree(d_c);
  return 0;
}
