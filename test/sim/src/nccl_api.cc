// File: test/sim/src/nccl_api.cc
// Layer: CUDA/CUPTI simulator, substitute libnccl.so.2: NCCL's public C API (nccl.h) over the
//        rendezvous and progress engine of nccl_comm.cc.
// Threading: as NCCL: a communicator is used by one thread at a time; groups are per thread.
//
// Each API call is also an NVTX range in domain "NCCL" (real NCCL names its ranges after the API
// function too). The simulator appends its parameters as text ("ncclAllReduce count=1024
// rank=2 nranks=4") for a human reader; real NCCL carries them in an NVTX extended payload.
// Profilers learn them from the profiler plugin (nccl_profiler_plugin.h), as with NCCL 2.26+.
#include <sys/random.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "nccl.h"
#include "nccl_comm.h"
#include "nccl_profiler_plugin.h"
#include "sim_common.h"

using namespace kairos::sim::nccl;  // NOLINT: this file is the library's C surface

#define KSIM_NCCL extern "C" __attribute__((visibility("default")))

namespace {

nvtxDomainHandle_t Domain() {
  static nvtxDomainHandle_t d = nvtxDomainCreateA("NCCL");
  return d;
}

// The NVTX range of one API call.
class Range {
 public:
  Range(const char* fn, const ncclComm* comm, size_t count) {
    char msg[160];
    if (comm != nullptr) {
      std::snprintf(msg, sizeof(msg), "%s count=%zu rank=%d nranks=%d", fn, count, comm->rank, comm->nranks);
    } else {
      std::snprintf(msg, sizeof(msg), "%s", fn);
    }
    nvtxEventAttributes_t a;
    std::memset(&a, 0, sizeof(a));
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = msg;
    nvtxDomainRangePushEx(Domain(), &a);
  }
  ~Range() { nvtxDomainRangePop(Domain()); }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
};

struct GroupState {
  int depth = 0;
  std::vector<Op> ops;
  ncclResult_t error = ncclSuccess;
};

GroupState& Group() {
  thread_local GroupState g;
  return g;
}

ncclResult_t Enqueue(const Op& op) {
  ncclComm* c = op.comm;
  if (c == nullptr || c->shared == nullptr) return ncclInvalidArgument;
  if (TypeSize(op.dtype) == 0 || static_cast<int>(op.redop) < 0 || op.redop >= ncclNumOps) {
    c->last_error = "invalid data type or reduction";
    return ncclInvalidArgument;
  }
  if ((op.count != 0 && op.kind != OpKind::kRecv && op.sendbuf == nullptr && op.kind != OpKind::kBroadcast) ||
      (op.count != 0 && op.kind != OpKind::kSend && op.recvbuf == nullptr)) {
    c->last_error = "null buffer";
    return ncclInvalidArgument;
  }
  if (op.root_or_peer < 0 || op.root_or_peer >= c->nranks) {
    c->last_error = "root/peer out of range";
    return ncclInvalidArgument;
  }
  if (c->async_error != ncclSuccess) return c->async_error;
  GroupState& g = Group();
  if (g.depth > 0) {
    g.ops.push_back(op);
    return ncclSuccess;
  }
  std::vector<Op> one{op};
  return Execute(one);
}

Op MakeOp(OpKind kind, ncclComm_t comm, const void* send, void* recv, size_t count, ncclDataType_t t,
          ncclRedOp_t red, int root, cudaStream_t stream) {
  Op op{};
  op.kind = kind;
  op.comm = comm;
  op.sendbuf = send;
  op.recvbuf = recv;
  op.count = count;
  op.dtype = t;
  op.redop = red;
  op.root_or_peer = root;
  op.stream = stream;
  return op;
}

ncclResult_t InitOne(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank, bool wait) {
  if (out == nullptr || nranks < 1 || nranks > kMaxRanks || rank < 0 || rank >= nranks) return ncclInvalidArgument;
  auto comm = std::make_unique<ncclComm>();
  if (cudaGetDevice(&comm->device) != cudaSuccess) return ncclUnhandledCudaError;
  // Creates the device's context, as NCCL does at init.
  if (cudaFree(nullptr) != cudaSuccess) return ncclUnhandledCudaError;
  ncclResult_t r = Attach(comm.get(), id, nranks, rank);
  if (r == ncclSuccess && wait) r = WaitJoined({comm.get()});
  if (r != ncclSuccess) {
    if (!comm->last_error.empty()) std::fprintf(stderr, "[kairos-sim] NCCL init: %s\n", comm->last_error.c_str());
    Detach(comm.get(), /*abort=*/true);
    return r;
  }
  if (wait) ProfilerAttach(comm.get());  // ncclCommInitAll attaches once all have joined
  *out = comm.release();
  return ncclSuccess;
}

}  // namespace

KSIM_NCCL ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return ncclInvalidArgument;
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

KSIM_NCCL ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  Range range("ncclGetUniqueId", nullptr, 0);
  if (id == nullptr) return ncclInvalidArgument;
  unsigned char rnd[16];
  if (getrandom(rnd, sizeof(rnd), 0) != static_cast<ssize_t>(sizeof(rnd))) return ncclSystemError;
  std::memset(id, 0, sizeof(*id));
  std::memcpy(id->internal, "KSIMNCCL", 8);
  static const char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 16; ++i) {
    id->internal[8 + 2 * i] = kHex[rnd[i] >> 4];
    id->internal[9 + 2 * i] = kHex[rnd[i] & 15];
  }
  return ncclSuccess;
}

KSIM_NCCL ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  Range range("ncclCommInitRank", nullptr, 0);
  return InitOne(comm, nranks, id, rank, /*wait=*/true);
}

KSIM_NCCL ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                             ncclConfig_t* config) {
  // The simulator honours no config field; non-blocking mode still completes before returning,
  // which a non-blocking caller sees as an immediate ncclSuccess.
  (void)config;
  Range range("ncclCommInitRankConfig", nullptr, 0);
  return InitOne(comm, nranks, id, rank, /*wait=*/true);
}

KSIM_NCCL ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  Range range("ncclCommInitAll", nullptr, 0);
  if (comms == nullptr || ndev < 1 || ndev > kMaxRanks) return ncclInvalidArgument;
  ncclUniqueId id;
  if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess) return r;
  int saved = 0;
  cudaGetDevice(&saved);
  std::vector<ncclComm*> made;
  ncclResult_t r = ncclSuccess;
  for (int i = 0; i < ndev && r == ncclSuccess; ++i) {
    if (cudaSetDevice(devlist != nullptr ? devlist[i] : i) != cudaSuccess) {
      r = ncclUnhandledCudaError;
      break;
    }
    ncclComm_t c = nullptr;
    r = InitOne(&c, ndev, id, i, /*wait=*/false);
    if (r == ncclSuccess) made.push_back(c);
  }
  cudaSetDevice(saved);
  if (r == ncclSuccess) r = WaitJoined(made);
  if (r != ncclSuccess) {
    for (ncclComm* c : made) {
      Detach(c, /*abort=*/true);
      delete c;
    }
    return r;
  }
  for (int i = 0; i < ndev; ++i) {
    ProfilerAttach(made[static_cast<size_t>(i)]);
    comms[i] = made[static_cast<size_t>(i)];
  }
  return ncclSuccess;
}

KSIM_NCCL ncclResult_t ncclCommFinalize(ncclComm_t comm) { return comm == nullptr ? ncclInvalidArgument : ncclSuccess; }

KSIM_NCCL ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  Range range("ncclCommDestroy", comm, 0);
  ProfilerDetach(comm);
  Detach(comm, /*abort=*/false);
  delete comm;
  return ncclSuccess;
}

KSIM_NCCL ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  Range range("ncclCommAbort", comm, 0);
  ProfilerDetach(comm);
  Detach(comm, /*abort=*/true);
  delete comm;
  return ncclSuccess;
}

KSIM_NCCL const char* ncclGetErrorString(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

KSIM_NCCL const char* ncclGetLastError(ncclComm_t comm) {
  return comm != nullptr ? comm->last_error.c_str() : "";
}

KSIM_NCCL ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* async_error) {
  if (comm == nullptr || async_error == nullptr) return ncclInvalidArgument;
  *async_error = comm->async_error;
  return ncclSuccess;
}

KSIM_NCCL ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (comm == nullptr || count == nullptr) return ncclInvalidArgument;
  *count = comm->nranks;
  return ncclSuccess;
}

KSIM_NCCL ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (comm == nullptr || device == nullptr) return ncclInvalidArgument;
  *device = comm->device;
  return ncclSuccess;
}

KSIM_NCCL ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (comm == nullptr || rank == nullptr) return ncclInvalidArgument;
  *rank = comm->rank;
  return ncclSuccess;
}

KSIM_NCCL ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t t, ncclRedOp_t op,
                                     ncclComm_t comm, cudaStream_t stream) {
  Range range("ncclAllReduce", comm, count);
  return Enqueue(MakeOp(OpKind::kAllReduce, comm, send, recv, count, t, op, 0, stream));
}

KSIM_NCCL ncclResult_t ncclReduce(const void* send, void* recv, size_t count, ncclDataType_t t, ncclRedOp_t op,
                                  int root, ncclComm_t comm, cudaStream_t stream) {
  Range range("ncclReduce", comm, count);
  return Enqueue(MakeOp(OpKind::kReduce, comm, send, recv, count, t, op, root, stream));
}

KSIM_NCCL ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t t, int root,
                                     ncclComm_t comm, cudaStream_t stream) {
  Range range("ncclBroadcast", comm, count);
  if (comm != nullptr && comm->rank == root && send == nullptr && count != 0) return ncclInvalidArgument;
  return Enqueue(MakeOp(OpKind::kBroadcast, comm, send, recv, count, t, ncclSum, root, stream));
}

KSIM_NCCL ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t t, int root, ncclComm_t comm,
                                 cudaStream_t stream) {
  return ncclBroadcast(buff, buff, count, t, root, comm, stream);
}

KSIM_NCCL ncclResult_t ncclAllGather(const void* send, void* recv, size_t sendcount, ncclDataType_t t,
                                     ncclComm_t comm, cudaStream_t stream) {
  Range range("ncclAllGather", comm, sendcount);
  return Enqueue(MakeOp(OpKind::kAllGather, comm, send, recv, sendcount, t, ncclSum, 0, stream));
}

KSIM_NCCL ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t recvcount, ncclDataType_t t,
                                         ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  Range range("ncclReduceScatter", comm, recvcount);
  return Enqueue(MakeOp(OpKind::kReduceScatter, comm, send, recv, recvcount, t, op, 0, stream));
}

KSIM_NCCL ncclResult_t ncclSend(const void* send, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                                cudaStream_t stream) {
  Range range("ncclSend", comm, count);
  return Enqueue(MakeOp(OpKind::kSend, comm, send, nullptr, count, t, ncclSum, peer, stream));
}

KSIM_NCCL ncclResult_t ncclRecv(void* recv, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                                cudaStream_t stream) {
  Range range("ncclRecv", comm, count);
  return Enqueue(MakeOp(OpKind::kRecv, comm, nullptr, recv, count, t, ncclSum, peer, stream));
}

KSIM_NCCL ncclResult_t ncclGroupStart(void) {
  ++Group().depth;
  return ncclSuccess;
}

KSIM_NCCL ncclResult_t ncclGroupEnd(void) {
  GroupState& g = Group();
  if (g.depth <= 0) return ncclInvalidUsage;
  if (--g.depth > 0) return ncclSuccess;
  std::vector<Op> ops;
  ops.swap(g.ops);
  Range range("ncclGroupEnd", ops.empty() ? nullptr : ops.front().comm, 0);
  return Execute(ops);
}
