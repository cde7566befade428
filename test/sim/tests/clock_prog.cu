// File: test/sim/tests/clock_prog.cu
// Layer: simulator tests: the workload of the clock-agreement test. For `seconds` it pushes
//        a kairos CPU range around each kernel launch (ranges are stamped with the raw clock,
//        the launch's runtime record by CUPTI's timestamp callback), about 150 launches a
//        second, then synchronizes and exits. kairos is preloaded; its range entry points are
//        looked up at run time so the program needs no kairos headers or link.
// Usage: clock_prog <seconds>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>

__global__ void clockKernel(int* out) {
  if (out != nullptr) out[0] = 1;
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
  auto push = reinterpret_cast<void (*)(const char*)>(dlsym(RTLD_DEFAULT, "kairos_range_push"));
  auto pop = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "kairos_range_pop"));
  if (push == nullptr || pop == nullptr) {
    std::fprintf(stderr, "clock_prog: kairos is not preloaded\n");
    return 2;
  }
  timespec t0, now, pause{0, 5000000};  // ~150 launches a second: the CPU ring keeps every range
  clock_gettime(CLOCK_MONOTONIC, &t0);
  long launches = 0;
  for (;;) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (static_cast<double>(now.tv_sec - t0.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec - t0.tv_nsec) >= seconds) {
      break;
    }
    push("launch");
    clockKernel<<<1, 32>>>(nullptr);
    pop();
    ++launches;
    nanosleep(&pause, nullptr);
  }
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  std::printf("clock_prog: %ld launches\n", launches);
  return 0;
}
