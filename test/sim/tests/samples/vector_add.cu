// File: test/sim/tests/samples/vector_add.cu
// Layer: simulator tests, sample-style program (the kind of NVIDIA's vectorAdd): C = A + B on
//        the device, every element checked on the host.
// Threading: host code, single-threaded.
#include <vector>

#include "sample_check.h"

__global__ void sampleVectorAdd(const float* a, const float* b, float* c, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  const int n = 20000;  // not a multiple of the block: the tail threads must do nothing
  std::vector<float> a(n), b(n), c(n, -1.0f);
  for (int i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 1000) / 7.0f;
    b[i] = static_cast<float>((i * 13) % 997) / 3.0f;
  }
  float *da, *db, *dc;
  SAMPLE_CHECK(cudaMalloc(&da, n * sizeof(float)));
  SAMPLE_CHECK(cudaMalloc(&db, n * sizeof(float)));
  SAMPLE_CHECK(cudaMalloc(&dc, (n + 256) * sizeof(float)));
  SAMPLE_CHECK(cudaMemset(dc, 0xff, (n + 256) * sizeof(float)));
  SAMPLE_CHECK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  SAMPLE_CHECK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const int threads = 256, blocks = (n + threads - 1) / threads;
  sampleVectorAdd<<<blocks, threads>>>(da, db, dc, n);
  SAMPLE_CHECK(cudaGetLastError());
  SAMPLE_CHECK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
  unsigned tail = 0;
  SAMPLE_CHECK(cudaMemcpy(&tail, dc + n, sizeof(tail), cudaMemcpyDeviceToHost));
  bool ok = tail == 0xffffffffu;  // untouched past n
  for (int i = 0; i < n && ok; ++i) {
    if (c[i] != a[i] + b[i]) {  // one IEEE addition: exact on both sides (a NaN fails too)
      std::printf("mismatch at %d: %f + %f != %f\n", i, a[i], b[i], c[i]);
      ok = false;
    }
  }
  SAMPLE_CHECK(cudaFree(da));
  SAMPLE_CHECK(cudaFree(db));
  SAMPLE_CHECK(cudaFree(dc));
  return SampleVerdict("vector_add", ok);
}
