// File: test/sim/tests/samples/sample_check.h
// Layer: simulator tests, sample-style programs: the error check and verdict line every
//        program here shares (the programs exit 0 only when their own result check passes).
// Threading: host code, single-threaded.
#ifndef KAIROS_TEST_SIM_TESTS_SAMPLES_SAMPLE_CHECK_H_
#define KAIROS_TEST_SIM_TESTS_SAMPLES_SAMPLE_CHECK_H_

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define SAMPLE_CHECK(call)                                                                    \
  do {                                                                                        \
    cudaError_t err_ = (call);                                                                \
    if (err_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #call,                    \
                   cudaGetErrorName(err_));                                                   \
      std::exit(2);                                                                           \
    }                                                                                         \
  } while (0)

inline int SampleVerdict(const char* name, bool ok) {
  std::printf("%s: %s\n", name, ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}

#endif  // KAIROS_TEST_SIM_TESTS_SAMPLES_SAMPLE_CHECK_H_
