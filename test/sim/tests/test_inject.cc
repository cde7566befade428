// File: test/sim/tests/test_inject.cc
// Layer: simulator tests: a minimal CUDA injection library.
// Threading: InitializeInjection is called once by the substitute runtime.
//
// Proves CUDA_INJECTION64_PATH handling: it counts its initializations in an
// environment variable the test process reads back.
#include <cstdio>
#include <cstdlib>

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  const char* prev = std::getenv("KSIM_INJECTED");
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%d", (prev != nullptr ? std::atoi(prev) : 0) + 1);
  setenv("KSIM_INJECTED", buf, 1);
  return 1;
}
