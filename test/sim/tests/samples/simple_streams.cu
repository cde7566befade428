// File: test/sim/tests/samples/simple_streams.cu
// Layer: simulator tests, sample-style program (the kind of NVIDIA's simpleStreams): blocking-
//        sync device flags, generic host memory pinned with cudaHostRegister, a kernel per
//        stream that adds a device-side factor several times, the chunks copied back per
//        stream, repeated; every element checked. Built with -Xfatbin -compress=false.
// Threading: host code, single-threaded.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "sample_check.h"

__global__ void sampleInitArray(int* data, const int* factor, int iterations) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < iterations; ++k) data[i] += *factor;
}

int main() {
  const int nstreams = 4, nreps = 3, iterations = 5, c = 5;
  const int n = 1 << 15;
  const size_t bytes = n * sizeof(int);
  SAMPLE_CHECK(cudaSetDeviceFlags(cudaDeviceBlockingSync | cudaDeviceMapHost));
  // Generic memory, aligned to 4 KiB, then pinned in place.
  void* raw = std::malloc(bytes + 4096);
  int* h = reinterpret_cast<int*>((reinterpret_cast<uintptr_t>(raw) + 4095) & ~uintptr_t{4095});
  SAMPLE_CHECK(cudaHostRegister(h, bytes, cudaHostRegisterMapped));
  int *d, *dc;
  SAMPLE_CHECK(cudaMalloc(&d, bytes));
  SAMPLE_CHECK(cudaMalloc(&dc, sizeof(int)));
  SAMPLE_CHECK(cudaMemcpy(dc, &c, sizeof(int), cudaMemcpyHostToDevice));
  cudaStream_t streams[nstreams];
  for (auto& s : streams) SAMPLE_CHECK(cudaStreamCreate(&s));
  cudaEvent_t start, stop;
  SAMPLE_CHECK(cudaEventCreateWithFlags(&start, cudaEventBlockingSync));
  SAMPLE_CHECK(cudaEventCreateWithFlags(&stop, cudaEventBlockingSync));

  // Non-streamed: one kernel, one copy.
  SAMPLE_CHECK(cudaMemset(d, 0, bytes));
  sampleInitArray<<<n / 256, 256>>>(d, dc, iterations);
  SAMPLE_CHECK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int i = 0; i < n && ok; ++i) ok = h[i] == c * iterations;
  if (!ok) std::printf("non-streamed result wrong: h[0] = %d\n", h[0]);

  // Streamed: each stream computes and copies its own chunk, nreps times.
  std::memset(h, 0xff, bytes);
  SAMPLE_CHECK(cudaMemset(d, 0, bytes));
  SAMPLE_CHECK(cudaEventRecord(start, 0));
  const int chunk = n / nstreams;
  for (int r = 0; r < nreps; ++r) {
    for (int s = 0; s < nstreams; ++s) {
      sampleInitArray<<<chunk / 256, 256, 0, streams[s]>>>(d + s * chunk, dc, iterations);
    }
    for (int s = 0; s < nstreams; ++s) {
      SAMPLE_CHECK(cudaMemcpyAsync(h + s * chunk, d + s * chunk, chunk * sizeof(int), cudaMemcpyDeviceToHost,
                                   streams[s]));
    }
  }
  SAMPLE_CHECK(cudaEventRecord(stop, 0));
  SAMPLE_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  SAMPLE_CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::printf("streamed: %.3f ms\n", ms);
  for (int i = 0; i < n && ok; ++i) {
    if (h[i] != c * iterations * nreps) {
      std::printf("h[%d] = %d, expected %d\n", i, h[i], c * iterations * nreps);
      ok = false;
    }
  }
  for (auto& s : streams) SAMPLE_CHECK(cudaStreamDestroy(s));
  SAMPLE_CHECK(cudaEventDestroy(start));
  SAMPLE_CHECK(cudaEventDestroy(stop));
  SAMPLE_CHECK(cudaHostUnregister(h));
  std::free(raw);
  SAMPLE_CHECK(cudaFree(d));
  SAMPLE_CHECK(cudaFree(dc));
  return SampleVerdict("simple_streams", ok);
}
