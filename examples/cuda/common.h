// File: examples/cuda/common.h
// Layer: sample CUDA workloads (built with nvcc; run on a GPU or under the
//        kairos simulator).
// Threading: single-threaded helpers.
//
// Shared helpers for the sample programs: step-count parsing, error checks
// that report and exit (samples, not library code), and a host "data loader"
// that burns real CPU time.
#ifndef KAIROS_EXAMPLES_CUDA_COMMON_H_
#define KAIROS_EXAMPLES_CUDA_COMMON_H_

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#define CHECK_CUDA(expr)                                                               \
  do {                                                                                 \
    cudaError_t err_ = (expr);                                                         \
    if (err_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(err_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

inline int StepsArg(int argc, char** argv, int fallback) {
  int steps = argc > 1 ? std::atoi(argv[1]) : fallback;
  return steps > 0 ? steps : fallback;
}

// Simulates host-side data loading/augmentation: fills `out` for `us` µs.
inline void LoadBatchOnHost(float* out, size_t n, int us) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  unsigned x = 12345;
  size_t i = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    x = x * 1664525u + 1013904223u;
    out[i++ % n] = static_cast<float>(x >> 8) * (1.0f / 16777216.0f);
  }
}

inline double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

#endif  // KAIROS_EXAMPLES_CUDA_COMMON_H_
