// File: tools/gpu-check/alloc_pattern.cu
// Layer: real-GPU kit workload (docs/REAL_GPU.md), built by pack.sh for sm_90 + compute_90.
// Threading: one host thread, two streams.
//
// A known allocation pattern for memory recording. Before any step: a 64 MiB "weights"
// allocation that is never freed. Each step: cudaMalloc 8 MiB + 4 MiB and cudaFree both
// (churn), cudaMallocAsync 2 MiB on stream A and 1 MiB on stream B and cudaFreeAsync both on
// their streams, and 1 MiB cudaMalloc that is never freed (a leak of 1 MiB per step). So a
// window of N whole steps records 5N allocations and 4N frees, leaves N MiB allocated, and
// its peak over the pre-window baseline is at least the leak so far plus 8 + 4 + 2 + 1 MiB.
// The program prints the same numbers it expects, for the checker to compare.
// Usage: alloc_pattern [steps=20]
#include <dlfcn.h>

#include <vector>

#include "common.h"

__global__ void touch(char* p, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = 1;
}

int main(int argc, char** argv) {
  const int steps = StepsArg(argc, argv, 20);
  const size_t mib = 1u << 20;
  cudaStream_t a, b;
  CHECK_CUDA(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  char* weights = nullptr;
  CHECK_CUDA(cudaMalloc(&weights, 64 * mib));
  std::vector<char*> leaked;
  auto step_fn = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "kairos_step"));
  for (int step = 0; step < steps; ++step) {
    char *x = nullptr, *y = nullptr, *p = nullptr, *q = nullptr, *leak = nullptr;
    CHECK_CUDA(cudaMalloc(&x, 8 * mib));
    CHECK_CUDA(cudaMalloc(&y, 4 * mib));
    CHECK_CUDA(cudaMallocAsync(&p, 2 * mib, a));
    CHECK_CUDA(cudaMallocAsync(&q, 1 * mib, b));
    touch<<<(mib + 255) / 256, 256, 0, a>>>(p, mib);
    touch<<<(mib + 255) / 256, 256, 0, b>>>(q, mib);
    CHECK_CUDA(cudaFreeAsync(p, a));
    CHECK_CUDA(cudaFreeAsync(q, b));
    CHECK_CUDA(cudaMalloc(&leak, 1 * mib));
    leaked.push_back(leak);
    CHECK_CUDA(cudaStreamSynchronize(a));
    CHECK_CUDA(cudaStreamSynchronize(b));
    CHECK_CUDA(cudaFree(x));
    CHECK_CUDA(cudaFree(y));
    if (step_fn != nullptr) step_fn();
  }
  std::printf("alloc_pattern: %d steps: per step 5 allocations (8+4+2+1+1 MiB), 4 frees, 1 MiB leaked\n",
              steps);
  for (char* l : leaked) cudaFree(l);
  cudaFree(weights);
  cudaStreamDestroy(a);
  cudaStreamDestroy(b);
  return 0;
}
