// File: test/sim/tests/samples/diff_kernels.cu
// Layer: simulator tests, kernel execution: device code only, compiled to PTX for
//        ptx_diff_test.cc, which runs every kernel here (and those of the sample programs)
//        on both engines with random inputs and compares every byte. Each kernel aims at a
//        place where the fast path (test/sim/src/ptx_fast.cc) leaves the reference's
//        per-lane walk: contiguous and split groups, guarded and unguarded memory
//        operations, one-address loads, several lanes storing to one address, signed and
//        narrow loads, an access that faults part way through a group.
// Threading: n/a (device code).

// Signed and narrow loads (sign or zero extension), 64-bit index arithmetic, guarded stores.
__global__ void diffWidths(const signed char* s8, const unsigned short* u16, const int* s32, long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<long long>(s8[i]) * 3 + u16[i] - static_cast<long long>(s32[i]) * 7;
}

// Every lane reads one address (a uniform load) and stores to one address (the last lane wins).
__global__ void diffSameAddress(const int* in, int* out, int k) {
  int v = in[k & 63];
  out[k & 15] = v + static_cast<int>(threadIdx.x);
  out[64 + threadIdx.x] = v ^ k;
}

// Lanes diverge on data, loop different counts and meet again; float arithmetic on the way.
__global__ void diffDiverge(const float* in, float* out, const unsigned* sel, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = in[i & 255];
  unsigned s = sel[i & 255];
  for (unsigned j = 0; j < (s & 7u); ++j) {
    if ((s >> j) & 1u) {
      acc = fmaf(acc, 0.5f, in[(i + j) & 255]);
    } else {
      acc = acc * 1.25f - static_cast<float>(j);
    }
  }
  if (i < n) out[i] = acc;
}

// Strided stores: with a large stride the address leaves the buffer part way through a group,
// so the launch stops at one lane with the earlier lanes' stores kept.
__global__ void diffStride(int* out, int stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[static_cast<long long>(i) * stride] = i;
}

// Shared memory with barriers, then one atomic per block into global memory.
__global__ void diffReduce(const unsigned* in, unsigned* out, int n) {
  __shared__ unsigned part[256];
  unsigned t = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + t;
  part[t] = i < static_cast<unsigned>(n) ? in[i & 1023] : 0u;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) part[t] += part[t + s];
    __syncthreads();
  }
  if (t == 0) atomicAdd(&out[blockIdx.x & 7], part[0]);
}

// 64-bit multiply, unsigned compares and 32-bit wrap-around.
__global__ void diffInt64(const unsigned long long* in, unsigned long long* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long x = in[i & 511];
  unsigned w = static_cast<unsigned>(x) * 2654435761u + i;
  if (w < n || x > 0x8000000000000000ull) x = x * 0x9E3779B97F4A7C15ull + w;
  out[i & 511] = x - (static_cast<unsigned long long>(w) << 7);
}

// Small ifs that nvcc turns into predicated instructions writing a register that held one
// value in every lane (a guarded write must leave the other lanes' value in place).
__global__ void diffPredicated(const int* in, int* out, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = k * 3 + 1;
  if (in[i & 255] & 1) v = in[(i + 1) & 255];
  int w = k;
  if (threadIdx.x & 2) w = v - 5;
  out[i & 1023] = v + w;
}
