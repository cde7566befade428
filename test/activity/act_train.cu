// File: act_train.cu
// Layer: test program (nvcc). An unmodified training-like loop: no kairos calls, no kairos
// headers. activity_attach_test runs it under LD_PRELOAD=libkairos.so and under
// CUDA_INJECTION64_PATH=libkairos.so and checks the trace against what it launched:
// per step 1 H2D copy, 3 kernels, 1 memset, 1 stream sync; then one 2-kernel graph launch.
// Usage: act_train [steps=10]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

__global__ void act_fwd(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f;
}
__global__ void act_bwd(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] + 1.0f;
}
__global__ void act_opt(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] -= 0.01f;
}

#define CK(e)                                                          \
  do {                                                                 \
    cudaError_t err_ = (e);                                            \
    if (err_ != cudaSuccess) {                                         \
      std::fprintf(stderr, "%s failed: %d\n", #e, static_cast<int>(err_)); \
      return 1;                                                        \
    }                                                                  \
  } while (0)

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 10;
  const int n = 1 << 14;
  float* h = nullptr;
  float* d = nullptr;
  cudaStream_t s;
  CK(cudaMallocHost(&h, n * sizeof(float)));
  CK(cudaMalloc(&d, n * sizeof(float)));
  CK(cudaStreamCreate(&s));
  for (int step = 0; step < steps; ++step) {
    CK(cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyHostToDevice, s));
    act_fwd<<<n / 256, 256, 0, s>>>(d, n);
    act_bwd<<<n / 256, 256, 0, s>>>(d, n);
    act_opt<<<n / 256, 256, 0, s>>>(d, n);
    CK(cudaMemsetAsync(h == nullptr ? nullptr : d, 0, 64, s));
    CK(cudaStreamSynchronize(s));
  }
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  act_fwd<<<n / 256, 256, 0, s>>>(d, n);
  act_bwd<<<n / 256, 256, 0, s>>>(d, n);
  CK(cudaStreamEndCapture(s, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphLaunch(exec, s));
  CK(cudaStreamSynchronize(s));
  std::printf("act_train: %d steps\n", steps);
  return 0;
}
