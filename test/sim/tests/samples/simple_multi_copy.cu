// File: test/sim/tests/samples/simple_multi_copy.cu
// Layer: simulator tests, sample-style program (the kind of NVIDIA's simpleMultiCopy): per
//        stream, an upload, a kernel that writes in + 1 (repeated inside the kernel) and a
//        download, on pinned buffers, in several rounds; every output checked against its
//        input. Built with PTX only for compute_75 plus SASS for sm_90.
// Threading: host code, single-threaded.
#include "sample_check.h"

__global__ void sampleIncKernel(int* out, const int* in, int n, int reps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    for (int r = 0; r < reps; ++r) out[i] = in[i] + 1;
  }
}

int main() {
  const int kStreams = 4, rounds = 3, n = 10000, reps = 6;
  const size_t bytes = n * sizeof(int);
  int *h_in[kStreams], *h_out[kStreams], *d_in[kStreams], *d_out[kStreams];
  cudaStream_t streams[kStreams];
  for (int s = 0; s < kStreams; ++s) {
    SAMPLE_CHECK(cudaHostAlloc(&h_in[s], bytes, cudaHostAllocDefault));
    SAMPLE_CHECK(cudaHostAlloc(&h_out[s], bytes, cudaHostAllocDefault));
    SAMPLE_CHECK(cudaMalloc(&d_in[s], bytes));
    SAMPLE_CHECK(cudaMalloc(&d_out[s], bytes));
    SAMPLE_CHECK(cudaStreamCreate(&streams[s]));
  }
  bool ok = true;
  for (int r = 0; r < rounds; ++r) {
    for (int s = 0; s < kStreams; ++s) {
      for (int i = 0; i < n; ++i) h_in[s][i] = i * 7 + s * 1000 + r;
    }
    for (int s = 0; s < kStreams; ++s) {
      SAMPLE_CHECK(cudaMemcpyAsync(d_in[s], h_in[s], bytes, cudaMemcpyHostToDevice, streams[s]));
      sampleIncKernel<<<(n + 127) / 128, 128, 0, streams[s]>>>(d_out[s], d_in[s], n, reps);
      SAMPLE_CHECK(cudaMemcpyAsync(h_out[s], d_out[s], bytes, cudaMemcpyDeviceToHost, streams[s]));
    }
    SAMPLE_CHECK(cudaDeviceSynchronize());
    for (int s = 0; s < kStreams && ok; ++s) {
      for (int i = 0; i < n && ok; ++i) {
        if (h_out[s][i] != h_in[s][i] + 1) {
          std::printf("round %d stream %d: out[%d] = %d, expected %d\n", r, s, i, h_out[s][i], h_in[s][i] + 1);
          ok = false;
        }
      }
    }
  }
  for (int s = 0; s < kStreams; ++s) {
    SAMPLE_CHECK(cudaStreamDestroy(streams[s]));
    SAMPLE_CHECK(cudaFreeHost(h_in[s]));
    SAMPLE_CHECK(cudaFreeHost(h_out[s]));
    SAMPLE_CHECK(cudaFree(d_in[s]));
    SAMPLE_CHECK(cudaFree(d_out[s]));
  }
  return SampleVerdict("simple_multi_copy", ok);
}
