// File: test/sim/src/nccl_comm.h
// Layer: CUDA/CUPTI simulator, substitute libnccl.so.2: communicators, the shared-memory
//        rendezvous between ranks (processes, or devices of one process) and the progress
//        engine that runs a group of operations to completion.
// Threading: a communicator is used by one thread at a time (NCCL's rule); the shared segment
//            is written by every rank with atomics (release/acquire pairs per protocol step).
//
// Protocol (one segment per unique id, /dev/shm/ksim_nccl_<id>):
//  - collectives use one slot: generation g posts data into the rank's region and sets
//    arrived[rank]=g (after every rank departed g-1); once all arrived, each rank computes its
//    result from all regions, then sets departed[rank]=g.
//  - send/recv use one mailbox per (src,dst): message n is written once consumed==n-1, the
//    receiver posts its start time for n, reads the data and sets consumed=n.
//  A rank waits with a deadline (KAIROS_SIM_NCCL_TIMEOUT_MS) and checks that the peers it waits
//  for are alive; a dead or aborted peer makes the operation fail with ncclRemoteError and marks
//  the segment aborted so every other rank fails at once instead of waiting its own timeout.
#ifndef KAIROS_TEST_SIM_SRC_NCCL_COMM_H_
#define KAIROS_TEST_SIM_SRC_NCCL_COMM_H_

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nccl.h"

namespace kairos::sim::nccl {

inline constexpr int kMaxRanks = 64;

enum class OpKind : int32_t { kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter, kSend, kRecv };

struct Signature {
  int32_t kind, dtype, redop, root;
  uint64_t count;
};

struct Mailbox {
  std::atomic<uint64_t> sent;
  std::atomic<uint64_t> posted;    // receiver's start time for message n is in recv_start[n % 2]
  std::atomic<uint64_t> consumed;
  uint64_t send_start;
  uint64_t recv_start[2];
  uint64_t bytes;
};

struct Shared {
  std::atomic<int32_t> nranks;
  std::atomic<int32_t> joined;
  std::atomic<int32_t> aborted;  // 0, or 1 + the rank that failed/aborted first
  std::atomic<int32_t> pid[kMaxRanks];
  // 1 once the rank destroyed its communicator cleanly: it has finished every operation it
  // took part in, so its process exiting afterwards is not a failure for the others.
  std::atomic<int32_t> left[kMaxRanks];
  std::atomic<uint64_t> arrived[kMaxRanks];
  std::atomic<uint64_t> departed[kMaxRanks];
  uint64_t start[kMaxRanks];
  Signature sig[kMaxRanks];
  Mailbox mb[kMaxRanks][kMaxRanks];  // [src][dst]
  // Bumped (then futex-woken, process-shared) after every store above that another rank may
  // wait for, so a waiting rank sleeps in the kernel and resumes as soon as a peer moves on,
  // as a host blocked in cudaStreamSynchronize resumes when the collective ends.
  std::atomic<uint32_t> progress;
};

struct Settings {
  double bw_bytes_per_ns;   // KAIROS_SIM_NCCL_BW_GBPS (GB/s == bytes/ns)
  uint64_t latency_ns;      // KAIROS_SIM_NCCL_LATENCY_US
  uint64_t timeout_ns;      // KAIROS_SIM_NCCL_TIMEOUT_MS
  size_t max_bytes;         // KAIROS_SIM_NCCL_MAX_BYTES: per-rank message capacity
};
const Settings& GetSettings();

}  // namespace kairos::sim::nccl

struct ncclComm {
  int rank = 0;
  int nranks = 0;
  int device = 0;
  std::string shm_name;
  kairos::sim::nccl::Shared* shared = nullptr;
  char* data = nullptr;  // coll regions [nranks], then p2p mailboxes [nranks][nranks]
  size_t map_bytes = 0;
  uint64_t coll_seq = 0;
  std::vector<uint64_t> send_seq, recv_seq;
  ncclResult_t async_error = ncclSuccess;
  std::string last_error;
  // The profiler plugin's context for this communicator and the events it asked for
  // (nccl_profiler_plugin.h); mask 0 without a plugin.
  void* profiler_context = nullptr;
  int profiler_mask = 0;
  uint64_t comm_hash = 0;
};

namespace kairos::sim::nccl {

// One enqueued operation (ncclAllReduce & co., or one side of ncclSend/ncclRecv).
struct Op {
  OpKind kind;
  ncclComm* comm;
  const void* sendbuf;
  void* recvbuf;
  size_t count;  // per NCCL's argument (sendcount for AllGather, recvcount for ReduceScatter)
  ncclDataType_t dtype;
  ncclRedOp_t redop;
  int root_or_peer;
  cudaStream_t stream;
  // Progress state.
  int stage = 0;
  uint64_t seq = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  int kernel = -1;
};

size_t TypeSize(ncclDataType_t t);  // 0 if invalid
// "ncclDevKernel_AllReduce_Sum_f32_RING_LL" & co.
std::string KernelName(const Op& op);
// The ring/p2p transfer time of `op` once every rank is there.
uint64_t TransferNs(const Op& op);

// Joins (or creates) the segment of `id` as `rank` of `nranks` without waiting for the others.
ncclResult_t Attach(ncclComm* comm, const ncclUniqueId& id, int nranks, int rank);
// Waits until every rank of each communicator joined.
ncclResult_t WaitJoined(const std::vector<ncclComm*>& comms);
void Detach(ncclComm* comm, bool abort);

// Runs `ops` (one group) to completion: kernels, rendezvous, data movement.
ncclResult_t Execute(std::vector<Op>& ops);

// Element-wise data movement of a completed rendezvous (nccl_reduce.cc).
void ReduceInto(void* out, const char* const* inputs, int n, size_t count, ncclDataType_t t, ncclRedOp_t op);

}  // namespace kairos::sim::nccl

#endif  // KAIROS_TEST_SIM_SRC_NCCL_COMM_H_
