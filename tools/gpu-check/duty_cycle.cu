// File: tools/gpu-check/duty_cycle.cu
// Layer: real-GPU kit workload (docs/REAL_GPU.md), built by pack.sh for sm_90 + compute_90.
// Threading: one host thread, the default stream.
//
// A known duty cycle for PM sampling: each step launches one full-wave kernel that spins for
// `busy_us` of GPU time (read from %globaltimer, so the length does not depend on the clock
// rate), waits for it, then leaves the GPU idle for `idle_us` on the host. The GPU is busy
// busy_us / (busy_us + idle_us + launch and sync overhead) of the time, and while the kernel
// runs every SM holds 4 resident blocks of 256 threads: SM active near 100% inside kernels,
// near 0 between them. The trace's own kernel intervals give the busy fraction that the PM
// samples' mean must agree with. Under the simulator the kernel does not execute; its duration
// is pinned with KAIROS_SIM_KERNEL_TIMES=duty_spin=<busy_us>.
// Usage: duty_cycle [steps=200] [busy_us=2000] [idle_us=2000]
#include <dlfcn.h>
#include <unistd.h>

#include "common.h"

__global__ void duty_spin(unsigned long long ns, int* sink) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
  if (threadIdx.x == 0 && now == 0) *sink = 1;  // never true; keeps the loop observable
}

int main(int argc, char** argv) {
  const int steps = StepsArg(argc, argv, 200);
  const int busy_us = argc > 2 ? std::atoi(argv[2]) : 2000;
  const int idle_us = argc > 3 ? std::atoi(argv[3]) : 2000;
  int sms = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  if (sms <= 0) sms = 1;
  int* sink = nullptr;
  CHECK_CUDA(cudaMalloc(&sink, sizeof(int)));
  auto step_fn = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "kairos_step"));
  auto t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) {
    duty_spin<<<sms * 4, 256>>>(static_cast<unsigned long long>(busy_us) * 1000ull, sink);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    usleep(static_cast<useconds_t>(idle_us));
    if (step_fn != nullptr) step_fn();
  }
  std::printf("duty_cycle: %d steps of %d us busy + %d us idle on %d SMs in %.1f ms\n", steps,
              busy_us, idle_us, sms, MsSince(t0));
  CHECK_CUDA(cudaFree(sink));
  return 0;
}
