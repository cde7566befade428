// File: test/sim/tests/samples/async_api.cu
// Layer: simulator tests, sample-style program (the kind of NVIDIA's asyncAPI): copies and an
//        increment kernel issued asynchronously on the NULL stream, an event polled with
//        cudaEventQuery while the host counts, then the result checked. Built with -rdc=true
//        (the registered wrapper is nvlink's, the PTX hangs off it).
// Threading: host code, single-threaded.
#include <cstring>

#include "sample_check.h"

__global__ void sampleIncrement(int* data, int inc) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  data[i] = data[i] + inc;
}

int main() {
  const int n = 1 << 16, inc = 26;
  int* h = nullptr;
  int* d = nullptr;
  SAMPLE_CHECK(cudaMallocHost(&h, n * sizeof(int)));
  std::memset(h, 0, n * sizeof(int));
  SAMPLE_CHECK(cudaMalloc(&d, n * sizeof(int)));
  SAMPLE_CHECK(cudaMemset(d, 0xff, n * sizeof(int)));
  cudaEvent_t start, stop;
  SAMPLE_CHECK(cudaEventCreate(&start));
  SAMPLE_CHECK(cudaEventCreate(&stop));
  SAMPLE_CHECK(cudaDeviceSynchronize());
  SAMPLE_CHECK(cudaEventRecord(start, 0));
  SAMPLE_CHECK(cudaMemcpyAsync(d, h, n * sizeof(int), cudaMemcpyHostToDevice, 0));
  sampleIncrement<<<n / 512, 512, 0, 0>>>(d, inc);
  SAMPLE_CHECK(cudaMemcpyAsync(h, d, n * sizeof(int), cudaMemcpyDeviceToHost, 0));
  SAMPLE_CHECK(cudaEventRecord(stop, 0));
  unsigned long polls = 0;
  while (cudaEventQuery(stop) == cudaErrorNotReady) ++polls;
  float ms = 0;
  SAMPLE_CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::printf("gpu time %.3f ms, host polled %lu times\n", ms, polls);
  bool ok = ms > 0;
  for (int i = 0; i < n && ok; ++i) {
    if (h[i] != inc) {
      std::printf("data[%d] = %d, expected %d\n", i, h[i], inc);
      ok = false;
    }
  }
  SAMPLE_CHECK(cudaEventDestroy(start));
  SAMPLE_CHECK(cudaEventDestroy(stop));
  SAMPLE_CHECK(cudaFreeHost(h));
  SAMPLE_CHECK(cudaFree(d));
  return SampleVerdict("async_api", ok);
}
