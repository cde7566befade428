// File: test/sim/tests/samples/simple_hyperq.cu
// Layer: simulator tests, sample-style program (the kind of NVIDIA's simpleHyperQ): two
//        kernels per stream spin on clock() for a number of cycles derived from the device's
//        clock rate and store how long they spun; a one-block kernel sums those in shared
//        memory with __syncthreads(); the sum must be at least the cycles asked for.
// Threading: host code, single-threaded.
#include <ctime>

#include "sample_check.h"

__device__ void sampleSpin(clock_t* out, clock_t cycles) {
  unsigned start = static_cast<unsigned>(clock());
  clock_t spun = 0;
  while (spun < cycles) spun = static_cast<clock_t>(static_cast<unsigned>(clock()) - start);
  out[0] = spun;
}

__global__ void sampleSpinA(clock_t* out, clock_t cycles) { sampleSpin(out, cycles); }
__global__ void sampleSpinB(clock_t* out, clock_t cycles) { sampleSpin(out, cycles); }

// One block of 32 threads: strided partial sums, then a tree in shared memory.
__global__ void sampleSum(clock_t* values, int n) {
  __shared__ clock_t partial[32];
  clock_t mine = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) mine += values[i];
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (int half = 16; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) values[0] = partial[0];
}

int main() {
  const int nstreams = 8;
  int clock_khz = 0;
  SAMPLE_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const clock_t cycles = static_cast<clock_t>(clock_khz) * 2;  // 2 ms at the device clock
  clock_t* d = nullptr;
  clock_t* h = nullptr;
  SAMPLE_CHECK(cudaMalloc(&d, 2 * nstreams * sizeof(clock_t)));
  SAMPLE_CHECK(cudaMallocHost(&h, sizeof(clock_t)));
  cudaStream_t streams[nstreams];
  for (auto& s : streams) SAMPLE_CHECK(cudaStreamCreate(&s));
  cudaEvent_t start, stop;
  SAMPLE_CHECK(cudaEventCreate(&start));
  SAMPLE_CHECK(cudaEventCreate(&stop));
  SAMPLE_CHECK(cudaEventRecord(start, streams[0]));
  clock_t total = 0;
  for (int i = 0; i < nstreams; ++i) {
    sampleSpinA<<<1, 1, 0, streams[i]>>>(&d[2 * i], cycles);
    sampleSpinB<<<1, 1, 0, streams[i]>>>(&d[2 * i + 1], cycles);
    total += 2 * cycles;
  }
  SAMPLE_CHECK(cudaEventRecord(stop, streams[0]));
  sampleSum<<<1, 32>>>(d, 2 * nstreams);
  SAMPLE_CHECK(cudaMemcpy(h, d, sizeof(clock_t), cudaMemcpyDeviceToHost));
  float ms = 0;
  SAMPLE_CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::printf("sum %lld cycles (asked for %lld), %.3f ms\n", static_cast<long long>(h[0]),
              static_cast<long long>(total), ms);
  const bool ok = h[0] >= total;
  for (auto& s : streams) SAMPLE_CHECK(cudaStreamDestroy(s));
  SAMPLE_CHECK(cudaFree(d));
  SAMPLE_CHECK(cudaFreeHost(h));
  return SampleVerdict("simple_hyperq", ok);
}
