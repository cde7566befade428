// File: test/sim/tests/nccl_test.cc
// Layer: simulator tests. The substitute libnccl.so.2 across real processes: every collective's
// result checked element by element, send/recv in a group, ncclCommInitAll in one process, and
// a rank that dies mid-job making the others fail with ncclRemoteError instead of hanging.
// Usage: ksim_nccl_test collectives|killed|initall   (exit 0 = pass; one line per failure)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "nccl.h"

namespace {

int g_failures = 0;
int g_rank = -1;

#define CHECK(cond, ...)                                               \
  do {                                                                 \
    if (!(cond)) {                                                     \
      std::fprintf(stderr, "rank %d: %s:%d: ", g_rank, __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                               \
      std::fprintf(stderr, "\n");                                      \
      ++g_failures;                                                    \
    }                                                                  \
  } while (0)

#define NCCL_OK(call)                                                                \
  do {                                                                               \
    ncclResult_t r_ = (call);                                                        \
    CHECK(r_ == ncclSuccess, "%s -> %d (%s)", #call, r_, ncclGetErrorString(r_));  \
  } while (0)

constexpr int kRanks = 4;

template <typename T>
T* DevAlloc(size_t n) {
  void* p = nullptr;
  cudaMalloc(&p, n * sizeof(T));
  return static_cast<T*>(p);
}

template <typename T>
void Upload(T* dev, const std::vector<T>& host) {
  cudaMemcpy(dev, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
}

template <typename T>
std::vector<T> Download(const T* dev, size_t n, cudaStream_t s) {
  cudaStreamSynchronize(s);
  std::vector<T> out(n);
  cudaMemcpy(out.data(), dev, n * sizeof(T), cudaMemcpyDeviceToHost);
  return out;
}

void Collectives(ncclComm_t comm, int rank, cudaStream_t s) {
  int count = -1, me = -1;
  NCCL_OK(ncclCommCount(comm, &count));
  NCCL_OK(ncclCommUserRank(comm, &me));
  CHECK(count == kRanks && me == rank, "count %d rank %d", count, me);
  const size_t n = 1000;
  float* fs = DevAlloc<float>(n * kRanks);
  float* fr = DevAlloc<float>(n * kRanks);
  std::vector<float> mine(n);
  for (size_t i = 0; i < n; ++i) mine[i] = static_cast<float>(rank + 1) * static_cast<float>(i);
  Upload(fs, mine);
  // AllReduce sum, max, avg.
  NCCL_OK(ncclAllReduce(fs, fr, n, ncclFloat, ncclSum, comm, s));
  auto out = Download(fr, n, s);
  for (size_t i = 0; i < n; ++i) CHECK(out[i] == 10.0f * i, "allreduce sum [%zu] %g", i, out[i]);
  NCCL_OK(ncclAllReduce(fs, fr, n, ncclFloat, ncclMax, comm, s));
  out = Download(fr, n, s);
  CHECK(out[7] == 4.0f * 7, "allreduce max %g", out[7]);
  NCCL_OK(ncclAllReduce(fs, fr, n, ncclFloat, ncclAvg, comm, s));
  out = Download(fr, n, s);
  CHECK(out[8] == 2.5f * 8, "allreduce avg %g", out[8]);
  // In place, int64.
  int64_t* is = DevAlloc<int64_t>(3);
  Upload(is, std::vector<int64_t>{rank, -rank, int64_t{1} << 40});
  NCCL_OK(ncclAllReduce(is, is, 3, ncclInt64, ncclSum, comm, s));
  auto iout = Download(is, 3, s);
  CHECK(iout[0] == 6 && iout[1] == -6 && iout[2] == (int64_t{4} << 40), "int64 in place %lld %lld", (long long)iout[0],
        (long long)iout[1]);
  // Half precision sums (1.5 * 4 = 6 is exact in binary16: 0x4600).
  uint16_t* hs = DevAlloc<uint16_t>(1);
  Upload(hs, std::vector<uint16_t>{0x3e00});  // 1.5
  NCCL_OK(ncclAllReduce(hs, hs, 1, ncclHalf, ncclSum, comm, s));
  CHECK(Download(hs, 1, s)[0] == 0x4600, "half sum 0x%x", Download(hs, 1, s)[0]);
  // Broadcast from rank 2, Reduce (prod) to rank 1.
  Upload(fs, std::vector<float>(n, static_cast<float>(rank + 1)));
  NCCL_OK(ncclBroadcast(fs, fr, n, ncclFloat, 2, comm, s));
  CHECK(Download(fr, n, s)[n - 1] == 3.0f, "broadcast");
  Upload(fr, std::vector<float>(n, -1.0f));
  NCCL_OK(ncclReduce(fs, fr, n, ncclFloat, ncclProd, 1, comm, s));
  out = Download(fr, n, s);
  CHECK(out[0] == (rank == 1 ? 24.0f : -1.0f), "reduce prod at root only: %g", out[0]);
  // AllGather and ReduceScatter.
  Upload(fs, std::vector<float>(n, static_cast<float>(rank)));
  NCCL_OK(ncclAllGather(fs, fr, n, ncclFloat, comm, s));
  out = Download(fr, n * kRanks, s);
  for (int r = 0; r < kRanks; ++r) CHECK(out[r * n + 5] == static_cast<float>(r), "allgather block %d", r);
  std::vector<float> blocks(n * kRanks);
  for (size_t i = 0; i < blocks.size(); ++i) blocks[i] = static_cast<float>(i / n) * 10 + rank;
  Upload(fs, blocks);
  NCCL_OK(ncclReduceScatter(fs, fr, n, ncclFloat, ncclSum, comm, s));
  out = Download(fr, n, s);
  CHECK(out[3] == 40.0f * rank + 6, "reducescatter %g", out[3]);
  // A ring exchange in one group: send to the right, receive from the left.
  int32_t* ps = DevAlloc<int32_t>(4);
  int32_t* pr = DevAlloc<int32_t>(4);
  Upload(ps, std::vector<int32_t>(4, 100 + rank));
  NCCL_OK(ncclGroupStart());
  NCCL_OK(ncclSend(ps, 4, ncclInt32, (rank + 1) % kRanks, comm, s));
  NCCL_OK(ncclRecv(pr, 4, ncclInt32, (rank + kRanks - 1) % kRanks, comm, s));
  NCCL_OK(ncclGroupEnd());
  CHECK(Download(pr, 4, s)[3] == 100 + (rank + kRanks - 1) % kRanks, "ring recv");
  ncclResult_t async = ncclInternalError;
  NCCL_OK(ncclCommGetAsyncError(comm, &async));
  CHECK(async == ncclSuccess, "async error %d", async);
}

int RunRank(int mode_killed, int rank, const ncclUniqueId& id) {
  g_rank = rank;
  cudaSetDevice(0);
  cudaStream_t s;
  cudaStreamCreate(&s);
  ncclComm_t comm = nullptr;
  NCCL_OK(ncclCommInitRank(&comm, kRanks, id, rank));
  if (comm == nullptr) return 1;
  if (!mode_killed) {
    Collectives(comm, rank, s);
    NCCL_OK(ncclCommDestroy(comm));
    return g_failures == 0 ? 0 : 1;
  }
  float* buf = DevAlloc<float>(16);
  NCCL_OK(ncclAllReduce(buf, buf, 16, ncclFloat, ncclSum, comm, s));
  if (rank == 3) raise(SIGKILL);  // dies without a word, like an OOM-killed rank
  const auto t0 = std::chrono::steady_clock::now();
  const ncclResult_t r = ncclAllReduce(buf, buf, 16, ncclFloat, ncclSum, comm, s);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(r == ncclRemoteError, "allreduce after a peer died -> %d", r);
  ncclResult_t async = ncclSuccess;
  NCCL_OK(ncclCommGetAsyncError(comm, &async));
  CHECK(async == ncclRemoteError, "async error %d", async);
  // Dead-peer detection, not the (long) timeout, ends the wait.
  CHECK(secs < 20.0, "took %.1f s", secs);
  // The stream is usable afterwards (the failed kernel ended).
  CHECK(cudaStreamSynchronize(s) == cudaSuccess, "stream sync");
  NCCL_OK(ncclCommAbort(comm));
  return g_failures == 0 ? 0 : 1;
}

int InitAll() {
  g_rank = 0;
  ncclComm_t comms[2];
  NCCL_OK(ncclCommInitAll(comms, 2, nullptr));
  int dev = -1;
  NCCL_OK(ncclCommCuDevice(comms[1], &dev));
  CHECK(dev == 1, "device of comm 1: %d", dev);
  double* bufs[2];
  cudaStream_t streams[2];
  for (int i = 0; i < 2; ++i) {
    cudaSetDevice(i);
    cudaStreamCreate(&streams[i]);
    bufs[i] = DevAlloc<double>(2);
    Upload(bufs[i], std::vector<double>{1.0 + i, 0.5});
  }
  NCCL_OK(ncclGroupStart());
  for (int i = 0; i < 2; ++i) NCCL_OK(ncclAllReduce(bufs[i], bufs[i], 2, ncclDouble, ncclSum, comms[i], streams[i]));
  NCCL_OK(ncclGroupEnd());
  for (int i = 0; i < 2; ++i) {
    auto v = Download(bufs[i], 2, streams[i]);
    CHECK(v[0] == 3.0 && v[1] == 1.0, "initall device %d: %g %g", i, v[0], v[1]);
    NCCL_OK(ncclCommDestroy(comms[i]));
  }
  return g_failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "collectives";
  if (mode == "initall") {
    const int rc = InitAll();
    std::printf("initall: %s\n", rc == 0 ? "PASS" : "FAIL");
    return rc;
  }
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) return 2;
  std::vector<pid_t> kids;
  for (int r = 0; r < kRanks; ++r) {
    const pid_t pid = fork();
    if (pid == 0) _exit(RunRank(mode == "killed", r, id));
    kids.push_back(pid);
  }
  int bad = 0;
  for (int r = 0; r < kRanks; ++r) {
    int status = 0;
    waitpid(kids[static_cast<size_t>(r)], &status, 0);
    const bool killed_ok = mode == "killed" && r == 3 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    if (!killed_ok && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      std::fprintf(stderr, "rank %d failed (status 0x%x)\n", r, status);
      ++bad;
    }
  }
  std::printf("%s: %s\n", mode.c_str(), bad == 0 ? "PASS" : "FAIL");
  return bad == 0 ? 0 : 1;
}
