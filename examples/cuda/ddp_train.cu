// File: examples/cuda/ddp_train.cu
// Layer: sample CUDA workloads. One rank of a data-parallel training job: forward and backward
//        kernels, then an all-reduce of the gradients through NCCL, every step.
// Threading: single-threaded.
//
// Started by run_ddp.sh (RANK, WORLD_SIZE, LOCAL_RANK in the environment). Rank 0 makes the
// NCCL unique id and publishes it through KAIROS_DDP_ID_FILE (written to a temp name, then
// renamed, so readers never see half a file); the others wait for it.
// usage: ddp_train [steps] [host_us] [straggler_ms] [kill_at_step] [params_per_layer]
//   straggler_ms: extra host time per step on this rank (run_ddp.sh --straggler).
//   kill_at_step: this rank kills itself at that step (run_ddp.sh --kill), as an OOM-killed rank.
// The gradients' all-reduced values are checked every step; a failed collective (a dead peer)
// ends the program with exit code 3 after aborting the communicator.
// When kairos is preloaded, kairos_step() marks each step (looked up at run time, so the
// program runs unchanged without kairos).
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "common.h"

namespace {

constexpr int kLayers = 4;
constexpr size_t kDefaultParams = 1 << 18;  // per layer

__global__ void Forward(const float* in, float* act, const float* w, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) act[i] = in[i] * w[i] + 1.0f;
}

__global__ void Backward(const float* act, float* grad, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) grad[i] = act[i] * 0.5f;
}

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

#define CHECK_NCCL(expr, comm)                                                                   \
  do {                                                                                           \
    ncclResult_t r_ = (expr);                                                                    \
    if (r_ != ncclSuccess) {                                                                     \
      std::fprintf(stderr, "rank %d: %s failed: %s\n", rank, #expr, ncclGetErrorString(r_));    \
      if ((comm) != nullptr) ncclCommAbort(comm);                                                \
      std::exit(3);                                                                              \
    }                                                                                            \
  } while (0)

bool ExchangeId(int rank, const std::string& path, ncclUniqueId* id) {
  if (rank == 0) {
    if (ncclGetUniqueId(id) != ncclSuccess) return false;
    const std::string tmp = path + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (f == nullptr) return false;
    const bool ok = std::fwrite(id, sizeof(*id), 1, f) == 1;
    std::fclose(f);
    return ok && std::rename(tmp.c_str(), path.c_str()) == 0;
  }
  for (int i = 0; i < 3000; ++i) {  // up to 30 s
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
      const bool ok = std::fread(id, sizeof(*id), 1, f) == 1;
      std::fclose(f);
      if (ok) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = StepsArg(argc, argv, 20);
  const int host_us = argc > 2 ? std::atoi(argv[2]) : 2000;
  const int straggler_ms = argc > 3 ? std::atoi(argv[3]) : 0;
  const int kill_at = argc > 4 ? std::atoi(argv[4]) : -1;
  // Parameters per layer: fewer make each step's host copies and the reduction cheap, so that on
  // a loaded machine the ranks' arrival times differ by the injected delay, not by contention.
  const size_t params = argc > 5 && std::atol(argv[5]) > 0 ? static_cast<size_t>(std::atol(argv[5])) : kDefaultParams;
  const int rank = EnvInt("RANK", 0), world = EnvInt("WORLD_SIZE", 1), local = EnvInt("LOCAL_RANK", rank);
  const char* id_file = std::getenv("KAIROS_DDP_ID_FILE");
  auto step_marker = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "kairos_step"));
  // The straggler's extra host time as a range, so that a trace shows what was injected (a
  // sleep under load lasts longer than asked) and a test can compare an estimate against it.
  auto range_push = reinterpret_cast<void (*)(const char*)>(dlsym(RTLD_DEFAULT, "kairos_range_push"));
  auto range_pop = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "kairos_range_pop"));

  CHECK_CUDA(cudaSetDevice(local));
  ncclUniqueId id;
  if (!ExchangeId(rank, id_file != nullptr ? id_file : "/tmp/kairos_ddp_id", &id)) {
    std::fprintf(stderr, "rank %d: no NCCL unique id (KAIROS_DDP_ID_FILE)\n", rank);
    return 2;
  }
  ncclComm_t comm = nullptr;
  CHECK_NCCL(ncclCommInitRank(&comm, world, id, rank), comm);
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));

  float *input, *act, *weights, *grads;
  CHECK_CUDA(cudaMalloc(&input, params * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&act, params * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&weights, kLayers * params * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&grads, kLayers * params * sizeof(float)));
  std::vector<float> batch(params), host_grads(kLayers * params);

  const unsigned blocks = static_cast<unsigned>((params + 255) / 256);
  for (int step = 0; step < steps; ++step) {
    if (step == kill_at) raise(SIGKILL);
    // Host side of the step: data loading; a straggler's is slower.
    LoadBatchOnHost(batch.data(), batch.size(), host_us);
    if (straggler_ms > 0) {
      if (range_push != nullptr && range_pop != nullptr) range_push("straggler_delay");
      std::this_thread::sleep_for(std::chrono::milliseconds(straggler_ms));
      if (range_push != nullptr && range_pop != nullptr) range_pop();
    }
    CHECK_CUDA(cudaMemcpyAsync(input, batch.data(), params * sizeof(float), cudaMemcpyHostToDevice, stream));
    for (int l = 0; l < kLayers; ++l)
      Forward<<<blocks, 256, 0, stream>>>(input, act, weights + l * params, params);
    for (int l = kLayers - 1; l >= 0; --l) Backward<<<blocks, 256, 0, stream>>>(act, grads + l * params, params);
    // The gradient values this rank contributes (known, so the reduced result can be checked
    // whether or not the kernels' bodies run).
    for (size_t i = 0; i < host_grads.size(); i += 4096) host_grads[i] = static_cast<float>(rank + 1 + step);
    CHECK_CUDA(cudaMemcpyAsync(grads, host_grads.data(), host_grads.size() * sizeof(float), cudaMemcpyHostToDevice,
                               stream));
    CHECK_NCCL(ncclAllReduce(grads, grads, kLayers * params, ncclFloat, ncclSum, comm, stream), comm);
    CHECK_CUDA(cudaMemcpyAsync(host_grads.data(), grads, host_grads.size() * sizeof(float), cudaMemcpyDeviceToHost,
                               stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    const float expected = static_cast<float>(world * (world + 1) / 2 + world * step);
    for (size_t i = 0; i < host_grads.size(); i += 4096) {
      if (host_grads[i] != expected) {
        std::fprintf(stderr, "rank %d step %d: gradient %zu is %g, expected %g\n", rank, step, i, host_grads[i],
                     expected);
        return 4;
      }
    }
    if (step_marker != nullptr) step_marker();
  }
  CHECK_NCCL(ncclCommDestroy(comm), nullptr);
  std::printf("rank %d/%d: %d steps, all-reduce results correct\n", rank, world, steps);
  return 0;
}
