// File: examples/cuda/train_loop.cu
// Layer: sample CUDA workload: a training-like loop.
// Threading: one host thread, two compute streams and a copy stream.
//
// Per step: load a batch on the host, copy it to the GPU from pinned memory,
// run forward kernels on one stream and backward kernels on a second stream,
// an NCCL-named all-reduce kernel, optimizer kernels, then one sync.
// When kairos is preloaded, kairos_step() marks each step (looked up at run time, so the
// program runs unchanged without kairos), which lets a trace cover chosen iterations.
// Usage: train_loop [steps=20]
#include <dlfcn.h>

#include "common.h"

__global__ void forward_gemm_bf16(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * 0.5f;
}
__global__ void forward_layernorm(float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = y[i] - 0.1f;
}
__global__ void backward_gemm_dgrad(const float* y, float* g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) g[i] = y[i] * 2.0f;
}
__global__ void backward_gemm_wgrad(const float* y, float* g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) g[i] += y[i];
}
// Named like NCCL's device kernels so tools classify it as communication.
__global__ void ncclDevKernel_AllReduce_Sum_f32_RING_LL(float* g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) g[i] *= 0.125f;
}
__global__ void adam_update(float* w, const float* g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= 0.001f * g[i];
}

int main(int argc, char** argv) {
  const int steps = StepsArg(argc, argv, 20);
  const int n = 1 << 20;
  const size_t bytes = n * sizeof(float);
  const unsigned block = 256, grid = (n + block - 1) / block;
  float *h_batch, *d_x, *d_y, *d_g, *d_w;
  CHECK_CUDA(cudaMallocHost(&h_batch, bytes));
  CHECK_CUDA(cudaMalloc(&d_x, bytes));
  CHECK_CUDA(cudaMalloc(&d_y, bytes));
  CHECK_CUDA(cudaMalloc(&d_g, bytes));
  CHECK_CUDA(cudaMalloc(&d_w, bytes));
  CHECK_CUDA(cudaMemset(d_w, 0, bytes));
  cudaStream_t copy, fwd, bwd;
  CHECK_CUDA(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&fwd, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&bwd, cudaStreamNonBlocking));
  cudaEvent_t copied, forward_done, backward_done;
  CHECK_CUDA(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
  CHECK_CUDA(cudaEventCreateWithFlags(&forward_done, cudaEventDisableTiming));
  CHECK_CUDA(cudaEventCreateWithFlags(&backward_done, cudaEventDisableTiming));
  auto step_fn = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "kairos_step"));
  auto t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) {
    LoadBatchOnHost(h_batch, n, 300);
    CHECK_CUDA(cudaMemcpyAsync(d_x, h_batch, bytes, cudaMemcpyHostToDevice, copy));
    CHECK_CUDA(cudaEventRecord(copied, copy));
    CHECK_CUDA(cudaStreamWaitEvent(fwd, copied, 0));
    for (int layer = 0; layer < 4; ++layer) {
      forward_gemm_bf16<<<grid, block, 0, fwd>>>(d_x, d_y, n);
      forward_layernorm<<<grid, block, 0, fwd>>>(d_y, n);
    }
    CHECK_CUDA(cudaEventRecord(forward_done, fwd));
    CHECK_CUDA(cudaStreamWaitEvent(bwd, forward_done, 0));
    for (int layer = 0; layer < 4; ++layer) {
      backward_gemm_dgrad<<<grid, block, 0, bwd>>>(d_y, d_g, n);
      backward_gemm_wgrad<<<grid, block, 0, bwd>>>(d_y, d_g, n);
    }
    ncclDevKernel_AllReduce_Sum_f32_RING_LL<<<32, 512, 0, bwd>>>(d_g, n);
    CHECK_CUDA(cudaEventRecord(backward_done, bwd));
    CHECK_CUDA(cudaStreamWaitEvent(fwd, backward_done, 0));
    adam_update<<<grid, block, 0, fwd>>>(d_w, d_g, n);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaStreamSynchronize(fwd));
    if (step_fn != nullptr) step_fn();
  }
  float w0 = -1.0f;
  CHECK_CUDA(cudaMemcpy(&w0, d_w, sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("train_loop: %d steps in %.1f ms\n", steps, MsSince(t0));
  cudaEventDestroy(copied);
  cudaEventDestroy(forward_done);
  cudaEventDestroy(backward_done);
  cudaStreamDestroy(copy);
  cudaStreamDestroy(fwd);
  cudaStreamDestroy(bwd);
  cudaFree(d_x);
  cudaFree(d_y);
  cudaFree(d_g);
  cudaFree(d_w);
  cudaFreeHost(h_batch);
  return 0;
}
