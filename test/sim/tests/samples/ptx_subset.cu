// File: test/sim/tests/samples/ptx_subset.cu
// Layer: simulator tests, kernel execution: kernels that use the rest of the interpreter's
//        subset (2D grids, dynamic shared memory with barriers, f64, integer division and
//        shifts, conversions, selects, vector and byte loads, local arrays, atomics, a
//        __device__ variable), each checked exactly against the same arithmetic on the host.
//        Modes for the limits: --unsupported (a warp shuffle: the kernel must not run),
//        --fault (a kernel writes through a pageable host pointer: stopped, no crash),
//        --loop (a kernel that never ends: stopped by KAIROS_SIM_EXEC_MAX_INSTRUCTIONS).
// Threading: host code, single-threaded.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "sample_check.h"

__device__ int subsetCounter;

// 2D grid of 2D blocks; integer ops a compiler cannot fold.
__global__ void subsetIntOps(int* out, int width, int salt) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int i = y * width + x;
  int a = i * 37 - salt, b = (i % 13) + 1;
  unsigned u = static_cast<unsigned>(a) * 2654435761u;
  int r = a / b + a % b;
  r ^= static_cast<int>(u >> 7);
  r += min(a, b * 100) - max(a, -b);
  r += (i & 1) ? (a << 3) : (a >> 2);
  long long w = static_cast<long long>(a) * 1000003LL;
  r += static_cast<int>(w >> 17);
  out[i] = r;
}

// Dynamic shared memory: reverse a block's tile, with a barrier between writing and reading.
__global__ void subsetReverse(const float* in, float* out) {
  extern __shared__ float tile[];
  int t = threadIdx.x;
  tile[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = tile[blockDim.x - 1 - t];
}

// f64, conversions and a select.
__global__ void subsetDouble(const double* in, double* out, int* rounded, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = in[i];
  double s = sqrt(fabs(v)) / 3.0 - v * 0.25;
  out[i] = v < 0 ? -s : s;
  rounded[i] = static_cast<int>(v * 10.0);
}

// Byte and vector loads, a local array indexed at run time, atomics, a __device__ variable.
__global__ void subsetMemory(const unsigned char* bytes, const float4* quads, float* sums, int* hist, float* total,
                             int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int local[8];
  for (int k = 0; k < 8; ++k) local[k] = k * k + i;
  float4 q = quads[i];
  int pick = bytes[i] & 7;
  sums[i] = q.x + q.y + q.z + q.w + static_cast<float>(local[pick]);
  atomicAdd(&hist[bytes[i] % 4], 1);
  atomicAdd(total, 1.0f);
  atomicAdd(&subsetCounter, 1);
}

__global__ void subsetReadCounter(int* out) { out[0] = subsetCounter; }

__global__ void subsetShuffle(int* out) {
  int v = threadIdx.x;
  v += __shfl_down_sync(0xffffffffu, v, 1);
  out[threadIdx.x] = v;
}

__global__ void subsetStore(int* out) { out[threadIdx.x] = 7; }

// Waits for a flag nobody sets (volatile: the compiler must keep the loop).
__global__ void subsetForever(int* out) {
  volatile int* flag = out + 1;
  while (*flag == 0) {
  }
  out[0] = 1;
}

int HostIntOp(int i, int salt) {
  int a = i * 37 - salt, b = (i % 13) + 1;
  unsigned u = static_cast<unsigned>(a) * 2654435761u;
  int r = a / b + a % b;
  r ^= static_cast<int>(u >> 7);
  r += std::min(a, b * 100) - std::max(a, -b);
  r += (i & 1) ? (a << 3) : (a >> 2);
  long long w = static_cast<long long>(a) * 1000003LL;
  r += static_cast<int>(w >> 17);
  return r;
}

int RunChecks() {
  bool ok = true;
  // Integer ops over a 2D grid.
  const int width = 64, height = 48, salt = 12345;
  int* di;
  SAMPLE_CHECK(cudaMalloc(&di, width * height * sizeof(int)));
  subsetIntOps<<<dim3(width / 16, height / 8), dim3(16, 8)>>>(di, width, salt);
  std::vector<int> hi(width * height);
  SAMPLE_CHECK(cudaMemcpy(hi.data(), di, hi.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < width * height && ok; ++i) {
    if (hi[i] != HostIntOp(i, salt)) {
      std::printf("int ops: [%d] = %d, expected %d\n", i, hi[i], HostIntOp(i, salt));
      ok = false;
    }
  }
  // Reverse through dynamic shared memory.
  const int blocks = 5, threads = 96;
  std::vector<float> fin(blocks * threads), fout(blocks * threads);
  for (size_t i = 0; i < fin.size(); ++i) fin[i] = static_cast<float>(i) * 0.5f;
  float *dfin, *dfout;
  SAMPLE_CHECK(cudaMalloc(&dfin, fin.size() * sizeof(float)));
  SAMPLE_CHECK(cudaMalloc(&dfout, fin.size() * sizeof(float)));
  SAMPLE_CHECK(cudaMemcpy(dfin, fin.data(), fin.size() * sizeof(float), cudaMemcpyHostToDevice));
  subsetReverse<<<blocks, threads, threads * sizeof(float)>>>(dfin, dfout);
  SAMPLE_CHECK(cudaMemcpy(fout.data(), dfout, fout.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks && ok; ++b) {
    for (int t = 0; t < threads && ok; ++t) {
      if (fout[b * threads + t] != fin[b * threads + threads - 1 - t]) {
        std::printf("reverse: block %d thread %d wrong\n", b, t);
        ok = false;
      }
    }
  }
  // Doubles.
  const int nd = 300;
  std::vector<double> din(nd), dout(nd);
  std::vector<int> rnd(nd);
  for (int i = 0; i < nd; ++i) din[i] = (i - 150) * 0.37;
  double *ddin, *ddout;
  int* drnd;
  SAMPLE_CHECK(cudaMalloc(&ddin, nd * sizeof(double)));
  SAMPLE_CHECK(cudaMalloc(&ddout, nd * sizeof(double)));
  SAMPLE_CHECK(cudaMalloc(&drnd, nd * sizeof(int)));
  SAMPLE_CHECK(cudaMemcpy(ddin, din.data(), nd * sizeof(double), cudaMemcpyHostToDevice));
  subsetDouble<<<(nd + 127) / 128, 128>>>(ddin, ddout, drnd, nd);
  SAMPLE_CHECK(cudaMemcpy(dout.data(), ddout, nd * sizeof(double), cudaMemcpyDeviceToHost));
  SAMPLE_CHECK(cudaMemcpy(rnd.data(), drnd, nd * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < nd && ok; ++i) {
    double v = din[i];
    double s = std::sqrt(std::fabs(v)) / 3.0 - v * 0.25;
    double want = v < 0 ? -s : s;
    // nvcc may fuse v * 0.25 into the subtraction (one rounding): allow an ulp or two.
    if (std::fabs(dout[i] - want) > 1e-12 * std::max(1.0, std::fabs(want)) || rnd[i] != static_cast<int>(v * 10.0)) {
      std::printf("double: [%d] = %.17g / %d, expected %.17g / %d\n", i, dout[i], rnd[i], want,
                  static_cast<int>(v * 10.0));
      ok = false;
    }
  }
  // Bytes, float4, local array, atomics, __device__ variable.
  const int nm = 1000;
  std::vector<unsigned char> bytes(nm);
  std::vector<float> quads(4 * nm);
  for (int i = 0; i < nm; ++i) {
    bytes[i] = static_cast<unsigned char>((i * 29) & 0xff);
    for (int k = 0; k < 4; ++k) quads[4 * i + k] = static_cast<float>(i + k) * 0.25f;
  }
  unsigned char* db;
  float4* dq;
  float *dsums, *dtotal;
  int *dhist, *dcount;
  SAMPLE_CHECK(cudaMalloc(&db, nm));
  SAMPLE_CHECK(cudaMalloc(&dq, nm * sizeof(float4)));
  SAMPLE_CHECK(cudaMalloc(&dsums, nm * sizeof(float)));
  SAMPLE_CHECK(cudaMalloc(&dhist, 4 * sizeof(int)));
  SAMPLE_CHECK(cudaMalloc(&dtotal, sizeof(float)));
  SAMPLE_CHECK(cudaMalloc(&dcount, sizeof(int)));
  SAMPLE_CHECK(cudaMemset(dhist, 0, 4 * sizeof(int)));
  SAMPLE_CHECK(cudaMemset(dtotal, 0, sizeof(float)));
  SAMPLE_CHECK(cudaMemcpy(db, bytes.data(), nm, cudaMemcpyHostToDevice));
  SAMPLE_CHECK(cudaMemcpy(dq, quads.data(), nm * sizeof(float4), cudaMemcpyHostToDevice));
  subsetMemory<<<(nm + 255) / 256, 256>>>(db, dq, dsums, dhist, dtotal, nm);
  subsetReadCounter<<<1, 1>>>(dcount);
  std::vector<float> sums(nm);
  int hist[4], count = 0;
  float total = 0;
  SAMPLE_CHECK(cudaMemcpy(sums.data(), dsums, nm * sizeof(float), cudaMemcpyDeviceToHost));
  SAMPLE_CHECK(cudaMemcpy(hist, dhist, sizeof(hist), cudaMemcpyDeviceToHost));
  SAMPLE_CHECK(cudaMemcpy(&total, dtotal, sizeof(float), cudaMemcpyDeviceToHost));
  SAMPLE_CHECK(cudaMemcpy(&count, dcount, sizeof(int), cudaMemcpyDeviceToHost));
  int want_hist[4] = {0, 0, 0, 0};
  for (int i = 0; i < nm && ok; ++i) {
    ++want_hist[bytes[i] % 4];
    int pick = bytes[i] & 7;
    float want = quads[4 * i] + quads[4 * i + 1] + quads[4 * i + 2] + quads[4 * i + 3] +
                 static_cast<float>(pick * pick + i);
    if (sums[i] != want) {
      std::printf("memory: sums[%d] = %f, expected %f\n", i, sums[i], want);
      ok = false;
    }
  }
  for (int k = 0; k < 4 && ok; ++k) {
    if (hist[k] != want_hist[k]) {
      std::printf("atomics: hist[%d] = %d, expected %d\n", k, hist[k], want_hist[k]);
      ok = false;
    }
  }
  if (ok && (total != static_cast<float>(nm) || count != nm)) {
    std::printf("atomics: total %f, counter %d, expected %d\n", total, count, nm);
    ok = false;
  }
  return SampleVerdict("ptx_subset", ok);
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  int* d;
  SAMPLE_CHECK(cudaMalloc(&d, 64 * sizeof(int)));
  SAMPLE_CHECK(cudaMemset(d, 0, 64 * sizeof(int)));
  int h[64];
  if (mode == "--unsupported") {
    subsetShuffle<<<1, 32>>>(d);
    SAMPLE_CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    bool untouched = true;
    for (int v : h) untouched = untouched && v == 0;
    return SampleVerdict("ptx_subset --unsupported (kernel left memory as it was)", untouched);
  }
  if (mode == "--fault") {
    static int pageable[64];
    subsetStore<<<1, 32>>>(pageable);  // not device-accessible memory
    subsetStore<<<1, 32>>>(d);          // the next kernel still runs
    SAMPLE_CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    return SampleVerdict("ptx_subset --fault (no crash, later kernel ran)", pageable[0] == 0 && h[0] == 7);
  }
  if (mode == "--loop") {
    subsetForever<<<1, 1>>>(d);
    subsetStore<<<1, 32>>>(d);
    SAMPLE_CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    return SampleVerdict("ptx_subset --loop (stopped, later kernel ran)", h[0] == 7);
  }
  return RunChecks();
}
