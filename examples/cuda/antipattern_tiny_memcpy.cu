// File: examples/cuda/antipattern_tiny_memcpy.cu
// Layer: sample CUDA workload: antipattern "many tiny memcpys in a loop".
// Threading: one host thread, default stream.
//
// Copies a parameter table element by element (64 B each) instead of one
// batched copy: every copy pays the fixed per-copy latency.
// Usage: antipattern_tiny_memcpy [steps=10]
#include "common.h"

__global__ void consume(const float* p, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = p[i];
}

int main(int argc, char** argv) {
  const int steps = StepsArg(argc, argv, 10);
  const int chunks = 200, chunk_floats = 16;
  float host[chunks * chunk_floats] = {};
  float *d_p, *d_out;
  CHECK_CUDA(cudaMalloc(&d_p, sizeof(host)));
  CHECK_CUDA(cudaMalloc(&d_out, sizeof(host)));
  auto t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) {
    for (int c = 0; c < chunks; ++c) {
      CHECK_CUDA(cudaMemcpy(d_p + c * chunk_floats, host + c * chunk_floats, chunk_floats * sizeof(float),
                            cudaMemcpyHostToDevice));
    }
    consume<<<(chunks * chunk_floats + 255) / 256, 256>>>(d_p, d_out, chunks * chunk_floats);
    CHECK_CUDA(cudaDeviceSynchronize());
  }
  std::printf("antipattern_tiny_memcpy: %d steps x %d copies in %.1f ms\n", steps, chunks, MsSince(t0));
  cudaFree(d_p);
  cudaFree(d_out);
  return 0;
}
