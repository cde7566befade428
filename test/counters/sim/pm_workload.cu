// File: test/counters/sim/pm_workload.cu
// Layer: test workload for the PM-sampling end-to-end test (sim_pm_sampling_test.cc), built
// with nvcc and run unmodified under the simulator with libkairos preloaded.
// Threading: one host thread.
//
// Usage: pm_workload <mode> <steps>
//   duty:      per step a full-wave kernel (many blocks per SM), a sync, then the host idles
//              as long as the kernel ran (KAIROS_SIM_KERNEL_TIMES fixes its time): ~50% busy.
//   quarter:   kernels with one block for each of a quarter of the SMs, back to back.
//   telemetry: steps of 10 ms: a 1 MiB host-to-device copy, a full-wave kernel, a sync,
//              kairos_step() when libkairos is loaded, then idle until the step's 10 ms.
//              Halfway through it allocates 64 MiB more (kept to the end), so device memory
//              in use steps up; it prints both sizes ("device bytes: Y then Y+64MiB").
//   occupancy: the same full-wave grid twice, without and with 96 KiB of dynamic shared
//              memory per block (which limits resident blocks to 2 per SM, so occupancy
//              drops to 25%), each followed by a sync and 3 ms idle.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define CHECK_CUDA(expr)                                                              \
  do {                                                                                \
    cudaError_t e_ = (expr);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s: %s\n", #expr, cudaGetErrorString(e_));                \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

__global__ void full_wave(float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = y[i] * 0.5f + 1.0f;
}
__global__ void quarter_wave(float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += 1.0f;
}
__global__ void smem_limited(float* y, int n) {
  extern __shared__ float tile[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? y[i] : 0.0f;
  __syncthreads();
  if (i < n) y[i] = tile[threadIdx.x] * 2.0f;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "duty";
  const int steps = argc > 2 ? std::atoi(argv[2]) : 10;
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const int block = 256;
  const int n = sms * 32 * block;  // 32 blocks per SM: several full waves
  float* y = nullptr;
  CHECK_CUDA(cudaMalloc(&y, n * sizeof(float)));
  CHECK_CUDA(cudaMemset(y, 0, n * sizeof(float)));
  CHECK_CUDA(cudaDeviceSynchronize());
  // kairos_step from the preloaded libkairos, when there is one (the workload does not link it).
  auto step_fn = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "kairos_step"));
  std::vector<float> host((1 << 20) / sizeof(float), 1.0f);
  auto next = std::chrono::steady_clock::now();
  float* extra = nullptr;
  const size_t y_bytes = n * sizeof(float), extra_bytes = size_t{64} << 20;
  for (int s = 0; s < steps; ++s) {
    if (std::strcmp(mode, "telemetry") == 0) {
      if (s == steps / 2) CHECK_CUDA(cudaMalloc(&extra, extra_bytes));
      CHECK_CUDA(cudaMemcpy(y, host.data(), 1 << 20, cudaMemcpyHostToDevice));
      full_wave<<<n / block, block>>>(y, n);
      CHECK_CUDA(cudaDeviceSynchronize());
      if (step_fn != nullptr) step_fn();
      next += std::chrono::milliseconds(10);
      std::this_thread::sleep_until(next);
    } else if (std::strcmp(mode, "duty") == 0) {
      auto t0 = std::chrono::steady_clock::now();
      full_wave<<<n / block, block>>>(y, n);
      CHECK_CUDA(cudaDeviceSynchronize());
      std::this_thread::sleep_for(std::chrono::steady_clock::now() - t0);  // idle as long
    } else if (std::strcmp(mode, "quarter") == 0) {
      quarter_wave<<<sms / 4, block>>>(y, n);
      CHECK_CUDA(cudaDeviceSynchronize());
    } else {
      // Each kernel alone on the GPU, with idle time around it, so no PM sample mixes the two
      // (occupancy is a share of active cycles: the idle part of a sample does not dilute it).
      full_wave<<<n / block, block>>>(y, n);
      CHECK_CUDA(cudaDeviceSynchronize());
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
      // Over 48 KiB of dynamic shared memory needs the opt-in, as on a real device.
      CHECK_CUDA(cudaFuncSetAttribute(smem_limited, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      96 * 1024));
      smem_limited<<<n / block, block, 96 * 1024>>>(y, n);
      CHECK_CUDA(cudaDeviceSynchronize());
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
  }
  if (extra != nullptr) {
    CHECK_CUDA(cudaFree(extra));
    std::printf("device bytes: %zu then %zu\n", y_bytes, y_bytes + extra_bytes);
  }
  CHECK_CUDA(cudaFree(y));
  std::printf("pm_workload %s %d steps done\n", mode, steps);
  return 0;
}
