// File: mem_train.cu
// Layer: test program (nvcc). A training-like loop with a known device-memory pattern, for
// the memory-recording tests (activity_attach_test "[memory]", docs/MEMORY.md). No kairos
// headers: kairos_step is looked up at run time (present when libkairos.so is preloaded).
// Before the loop: 64 MiB of "weights" and a 1 MiB buffer that step 3 frees (churn, pooled;
// leak frees it after the loop). Each step first sleeps 20 ms, so the window (opened at a step
// boundary) reads its baseline before the step allocates. Per step:
//   leak:   in a kairos range "leaky_step": cudaMalloc 1 MiB activations, a kernel, cudaMalloc
//           256 KiB that is never freed, cudaFree of the activations
//   churn:  4 x (cudaMalloc 2 MiB, a kernel, cudaFree)
//   pooled: on each of two streams cudaMallocAsync 2 MiB, a kernel, cudaFreeAsync
//   tight:  (no sleep, no steps) `steps` cudaMalloc(4 KiB)/cudaFree pairs, timed: the
//           application-thread cost of memory recording (docs/PERFORMANCE.md)
// Usage: mem_train leak|churn|pooled|tight [steps=8]
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void mem_touch(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 1.0f;
}

#define CK(e)                                                              \
  do {                                                                     \
    cudaError_t err_ = (e);                                                \
    if (err_ != cudaSuccess) {                                             \
      std::fprintf(stderr, "%s failed: %d\n", #e, static_cast<int>(err_)); \
      return 1;                                                            \
    }                                                                      \
  } while (0)

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "leak";
  const int steps = argc > 2 ? std::atoi(argv[2]) : 8;
  auto step_fn = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "kairos_step"));
  auto push_fn = reinterpret_cast<void (*)(const char*)>(dlsym(RTLD_DEFAULT, "kairos_range_push"));
  auto pop_fn = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "kairos_range_pop"));
  const bool leak = std::strcmp(mode, "leak") == 0;
  void* weights = nullptr;
  void* early = nullptr;
  CK(cudaMalloc(&weights, 64 << 20));
  CK(cudaMalloc(&early, 1 << 20));
  if (std::strcmp(mode, "tight") == 0) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i) {
      void* p = nullptr;
      CK(cudaMalloc(&p, 4096));
      CK(cudaFree(p));
    }
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    std::printf("mem_train tight: %d pairs, %.1f ns per pair\n", steps, ns / steps);
    return 0;
  }
  cudaStream_t s[2];
  CK(cudaStreamCreate(&s[0]));
  CK(cudaStreamCreate(&s[1]));
  for (int step = 0; step < steps; ++step) {
    usleep(20000);
    if (leak) {
      void* act = nullptr;
      void* leaked = nullptr;
      if (push_fn != nullptr) push_fn("leaky_step");
      CK(cudaMalloc(&act, 1 << 20));
      mem_touch<<<64, 256>>>(static_cast<float*>(act), 1 << 14);
      CK(cudaMalloc(&leaked, 256 << 10));
      CK(cudaFree(act));
      if (pop_fn != nullptr) pop_fn();
    } else if (std::strcmp(mode, "churn") == 0) {
      for (int i = 0; i < 4; ++i) {
        void* p = nullptr;
        CK(cudaMalloc(&p, 2 << 20));
        mem_touch<<<64, 256>>>(static_cast<float*>(p), 1 << 14);
        CK(cudaFree(p));
      }
    } else {
      for (int i = 0; i < 2; ++i) {
        void* p = nullptr;
        CK(cudaMallocAsync(&p, 2 << 20, s[i]));
        mem_touch<<<64, 256, 0, s[i]>>>(static_cast<float*>(p), 1 << 14);
        CK(cudaFreeAsync(p, s[i]));
      }
    }
    if (step == 3 && !leak) CK(cudaFree(early));
    CK(cudaDeviceSynchronize());
    if (step_fn != nullptr) step_fn();
  }
  if (leak) CK(cudaFree(early));
  CK(cudaFree(weights));
  std::printf("mem_train %s: %d steps\n", mode, steps);
  return 0;
}
