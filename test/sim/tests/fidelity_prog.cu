// File: test/sim/tests/fidelity_prog.cu
// Layer: simulator tests: a program in the style of NVIDIA's public samples (asyncAPI,
//        simpleStreams, simpleHyperQ, simpleMultiCopy, vectorAdd) and of a Triton-style
//        launcher, built with nvcc like a user's program and run unmodified on the
//        substitutes. It exercises the runtime calls those samples make (device attributes
//        and properties, device flags, host registration, profiler start/stop, 2D copies,
//        pitched allocation, function attributes, occupancy, host functions, stream-ordered
//        allocation, memory info, device reset) and the driver API directly (cuInit,
//        cuModuleLoadData, cuModuleGetFunction, cuLaunchKernel, cuMemcpy*, syncs), and checks
//        every result a simulated device can produce. Device code does not run on the
//        simulator, so no check reads a kernel's output.
// Usage: fidelity_prog [--no-sync-exit] [--reset]. Exit 0 on success; one line per failure.
// Threading: single-threaded except the host functions CUDA runs on its own thread.
#include <cuda.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

int g_failures = 0;

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "fidelity_prog.cu:%d: FAILED %s\n", __LINE__, #cond); \
      ++g_failures;                                                            \
    }                                                                          \
  } while (0)
#define RT(call) EXPECT((call) == cudaSuccess)
#define DRV(call) EXPECT((call) == CUDA_SUCCESS)

__global__ void fidelityPinnedKernel(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += 1.0f;
}

__global__ void fidelityOtherKernel(int* out) {
  if (out != nullptr) out[0] = 1;
}

// A PTX module for the driver-API path (what a JIT such as Triton hands to cuModuleLoadData).
const char kPtx[] =
    "//\n"
    ".version 9.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .entry fidelityDriverKernel(.param .u64 p)\n"
    "{\n"
    "  ret;\n"
    "}\n";

std::atomic<int> g_host_calls{0};
std::atomic<int> g_order{0};

void CUDART_CB HostFn(void* arg) {
  int expect = *static_cast<int*>(arg);
  int n = g_order.fetch_add(1);
  if (n != expect) std::fprintf(stderr, "host function %d ran as number %d\n", expect, n), ++g_failures;
  g_host_calls.fetch_add(1);
}

void CUDART_CB StreamCb(cudaStream_t, cudaError_t status, void* arg) {
  if (status != cudaSuccess) ++g_failures;
  HostFn(arg);
}

void DeviceQueries() {
  int count = 0;
  RT(cudaGetDeviceCount(&count));
  EXPECT(count == 1);
  // Every cudaDeviceAttr value CUDA 13 defines answers.
  const int defined[] = {1,   2,   3,   4,   5,   6,   7,   8,   9,   10,  11,  12,  13,  14,  15,  16,  17,
                         18,  19,  20,  21,  22,  23,  24,  25,  26,  27,  28,  29,  30,  31,  32,  33,  34,
                         35,  36,  37,  38,  39,  40,  41,  42,  43,  45,  46,  47,  48,  49,  50,  51,  52,
                         53,  54,  55,  56,  57,  58,  59,  60,  61,  62,  63,  64,  65,  66,  67,  68,  69,
                         70,  71,  72,  73,  74,  75,  76,  77,  78,  79,  80,  81,  82,  83,  84,  85,  86,
                         87,  88,  89,  90,  91,  92,  93,  94,  95,  96,  97,  98,  99,  100, 101, 106, 108,
                         109, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126,
                         127, 128, 129, 130, 131, 132, 133, 134, 135, 138, 139, 140, 141, 142, 143, 144, 145, 147};
  for (int a : defined) {
    int v = -7;
    if (cudaDeviceGetAttribute(&v, static_cast<cudaDeviceAttr>(a), 0) != cudaSuccess) {
      std::fprintf(stderr, "cudaDeviceGetAttribute(%d) failed\n", a);
      ++g_failures;
    }
  }
  int v = 0;
  EXPECT(cudaDeviceGetAttribute(&v, static_cast<cudaDeviceAttr>(44), 0) == cudaErrorInvalidValue);
  cudaGetLastError();
  RT(cudaDeviceGetAttribute(&v, cudaDevAttrComputeMode, 0));
  EXPECT(v == cudaComputeModeDefault);
  RT(cudaDeviceGetAttribute(&v, cudaDevAttrGpuOverlap, 0));
  EXPECT(v == 1);
  RT(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0));
  EXPECT(v == 132);
  cudaDeviceProp p;
  RT(cudaGetDeviceProperties(&p, 0));
  EXPECT(p.multiProcessorCount == 132 && p.major == 9 && p.minor == 0);
  EXPECT(p.asyncEngineCount == 3 && p.concurrentKernels == 1 && p.canMapHostMemory == 1);
  EXPECT(p.maxThreadsDim[2] == 64 && p.maxGridSize[0] == 2147483647 && p.warpSize == 32);
  EXPECT(p.sharedMemPerBlockOptin == 232448 && p.memoryPoolsSupported == 1);
  EXPECT(p.pciBusID == 0x18 && p.l2CacheSize == (50 << 20));
  RT(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
  unsigned flags = 0;
  RT(cudaGetDeviceFlags(&flags));
  EXPECT(flags == (cudaDeviceScheduleBlockingSync | cudaDeviceMapHost));
  EXPECT(cudaSetDeviceFlags(0x1000) == cudaErrorInvalidValue);
  cudaGetLastError();
  cudaFuncAttributes fa;
  RT(cudaFuncGetAttributes(&fa, fidelityPinnedKernel));
  EXPECT(fa.maxThreadsPerBlock == 1024 && fa.numRegs == 32 && fa.ptxVersion == 90);
  int blocks = 0;
  RT(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fidelityPinnedKernel, 256, 0));
  EXPECT(blocks == 8);  // 2048 threads per SM / 256
  RT(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fidelityPinnedKernel, 1024, 0));
  EXPECT(blocks == 2);
  size_t free_b = 0, total_b = 0;
  RT(cudaMemGetInfo(&free_b, &total_b));
  EXPECT(total_b == (80ull << 30) && free_b <= total_b);
}

void Memory() {
  const int n = 1 << 16;
  std::vector<float> host(n, 2.0f);
  // Host registration and mapped pointers (simpleStreams, simpleZeroCopy).
  RT(cudaHostRegister(host.data(), n * sizeof(float), cudaHostRegisterMapped));
  EXPECT(cudaHostRegister(host.data(), 16, 0) == cudaErrorHostMemoryAlreadyRegistered);
  cudaGetLastError();
  void* mapped = nullptr;
  RT(cudaHostGetDevicePointer(&mapped, host.data(), 0));
  EXPECT(mapped == host.data());
  float* dev = nullptr;
  RT(cudaMalloc(&dev, n * sizeof(float)));
  cudaStream_t s;
  RT(cudaStreamCreate(&s));
  RT(cudaMemcpyAsync(dev, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, s));
  fidelityPinnedKernel<<<n / 256, 256, 0, s>>>(dev, n);
  RT(cudaGetLastError());
  std::vector<float> back(n, 0.0f);
  RT(cudaMemcpyAsync(back.data(), dev, n * sizeof(float), cudaMemcpyDeviceToHost, s));
  RT(cudaStreamSynchronize(s));
  EXPECT(back[0] == 2.0f && back[n - 1] == 2.0f);  // copies move bytes; kernels do not run
  RT(cudaHostUnregister(host.data()));
  EXPECT(cudaHostUnregister(host.data()) == cudaErrorHostMemoryNotRegistered);
  cudaGetLastError();

  // Pitched 2D copies (simpleMultiCopy-style matrices).
  const size_t w = 100, h = 8;
  char* pitched = nullptr;
  size_t pitch = 0;
  RT(cudaMallocPitch(reinterpret_cast<void**>(&pitched), &pitch, w, h));
  EXPECT(pitch == 512);
  std::vector<char> src(w * h), dst(w * h, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 7);
  RT(cudaMemcpy2D(pitched, pitch, src.data(), w, w, h, cudaMemcpyHostToDevice));
  RT(cudaMemcpy2DAsync(dst.data(), w, pitched, pitch, w, h, cudaMemcpyDeviceToHost, s));
  RT(cudaStreamSynchronize(s));
  EXPECT(std::memcmp(src.data(), dst.data(), src.size()) == 0);
  EXPECT(cudaMemcpy2D(pitched, 50, src.data(), w, w, h, cudaMemcpyHostToDevice) == cudaErrorInvalidPitchValue);
  cudaGetLastError();
  RT(cudaFree(pitched));

  // Stream-ordered allocation from the default pool.
  void* a = nullptr;
  RT(cudaMallocAsync(&a, 1 << 20, s));
  RT(cudaMemsetAsync(a, 0, 1 << 20, s));
  RT(cudaFreeAsync(a, s));
  cudaMemPool_t pool;
  RT(cudaDeviceGetDefaultMemPool(&pool, 0));
  uint64_t threshold = 1 << 30;
  RT(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  RT(cudaMemPoolTrimTo(pool, 0));
  RT(cudaStreamSynchronize(s));
  RT(cudaStreamDestroy(s));
  RT(cudaFree(dev));
}

void HostFunctions() {
  cudaStream_t s;
  RT(cudaStreamCreate(&s));
  static int ids[3] = {0, 1, 2};
  g_order = 0;
  g_host_calls = 0;
  fidelityOtherKernel<<<1, 32, 0, s>>>(nullptr);
  RT(cudaLaunchHostFunc(s, HostFn, &ids[0]));
  fidelityOtherKernel<<<1, 32, 0, s>>>(nullptr);
  RT(cudaStreamAddCallback(s, StreamCb, &ids[1], 0));
  RT(cudaLaunchHostFunc(s, HostFn, &ids[2]));
  RT(cudaStreamSynchronize(s));
  EXPECT(g_host_calls.load() == 3);  // the sync waited for all three, in stream order
  RT(cudaStreamDestroy(s));
}

void Events() {
  // asyncAPI / simpleStreams timing pattern.
  cudaEvent_t start, stop;
  RT(cudaEventCreate(&start));
  RT(cudaEventCreateWithFlags(&stop, cudaEventBlockingSync));
  RT(cudaEventRecord(start, 0));
  for (int i = 0; i < 4; ++i) fidelityOtherKernel<<<1, 32>>>(nullptr);
  RT(cudaEventRecordWithFlags(stop, 0, cudaEventRecordDefault));
  RT(cudaEventSynchronize(stop));
  float ms = 0;
  RT(cudaEventElapsedTime(&ms, start, stop));
  EXPECT(ms > 0.0f);
  RT(cudaEventDestroy(start));
  RT(cudaEventDestroy(stop));
}

void DriverApi() {
  // Triton-style: the program itself calls the driver.
  DRV(cuInit(0));
  CUdevice dev;
  DRV(cuDeviceGet(&dev, 0));
  CUcontext ctx = nullptr;
  DRV(cuCtxGetCurrent(&ctx));  // the runtime already made the primary context current
  EXPECT(ctx != nullptr);
  CUmodule mod;
  DRV(cuModuleLoadData(&mod, kPtx));
  CUfunction fn;
  DRV(cuModuleGetFunction(&fn, mod, "fidelityDriverKernel"));
  CUfunction missing;
  EXPECT(cuModuleGetFunction(&missing, mod, "noSuchKernel") == CUDA_ERROR_NOT_FOUND);
  CUdeviceptr buf;
  DRV(cuMemAlloc(&buf, 4096));
  std::vector<char> h(4096, 5), back(4096, 0);
  DRV(cuMemcpyHtoD(buf, h.data(), h.size()));
  void* args[] = {&buf};
  for (int i = 0; i < 3; ++i) DRV(cuLaunchKernel(fn, 2, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr));
  DRV(cuStreamSynchronize(nullptr));
  DRV(cuMemcpyDtoH(back.data(), buf, back.size()));
  EXPECT(back[4095] == 5);
  DRV(cuCtxSynchronize());
  DRV(cuMemFree(buf));
  DRV(cuModuleUnload(mod));
}

}  // namespace

int main(int argc, char** argv) {
  bool no_sync_exit = false, reset = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-sync-exit") == 0) no_sync_exit = true;
    if (std::strcmp(argv[i], "--reset") == 0) reset = true;
  }
  RT(cudaSetDevice(0));
  RT(cudaProfilerStart());
  DeviceQueries();
  Memory();
  HostFunctions();
  Events();
  DriverApi();
  RT(cudaProfilerStop());
  if (reset) {
    // Mid-trace reset: everything is released, the next call gets a fresh context.
    RT(cudaDeviceReset());
    float* d = nullptr;
    RT(cudaMalloc(&d, 1024));
    fidelityOtherKernel<<<1, 32>>>(nullptr);
    RT(cudaDeviceSynchronize());
    RT(cudaFree(d));
  }
  // Pinned kernels last; with --no-sync-exit the program returns while they are queued.
  for (int i = 0; i < 5; ++i) fidelityPinnedKernel<<<1, 64>>>(nullptr, 0);
  if (!no_sync_exit) RT(cudaDeviceSynchronize());
  if (g_failures == 0) std::printf("fidelity_prog: all checks passed\n");
  return g_failures == 0 ? 0 : 1;
}
