// File: test/sim/src/nccl_comm.cc
// Layer: CUDA/CUPTI simulator, substitute libnccl.so.2: segment attach, the rendezvous protocol
//        and the progress engine (see nccl_comm.h).
// Threading: see nccl_comm.h.
#include "nccl_comm.h"
#include "nccl_profiler_plugin.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "nccl_hook.h"
#include "sim_common.h"

namespace kairos::sim::nccl {

const Settings& GetSettings() {
  static const Settings s = [] {
    Settings v;
    v.bw_bytes_per_ns = std::max(0.001, std::atof(EnvOr("KAIROS_SIM_NCCL_BW_GBPS", "100")));
    v.latency_ns = static_cast<uint64_t>(std::max<long long>(0, EnvInt("KAIROS_SIM_NCCL_LATENCY_US", 8))) * 1000;
    v.timeout_ns = static_cast<uint64_t>(std::max<long long>(1, EnvInt("KAIROS_SIM_NCCL_TIMEOUT_MS", 30000))) *
                   1000000;
    v.max_bytes = static_cast<size_t>(std::max<long long>(4096, EnvInt("KAIROS_SIM_NCCL_MAX_BYTES", 16 << 20)));
    return v;
  }();
  return s;
}

size_t TypeSize(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
  }
}

namespace {

const char* TypeSuffix(ncclDataType_t t) {
  static const char* const kNames[] = {"i8", "u8", "i32", "u32", "i64", "u64", "f16", "f32", "f64", "bf16"};
  return static_cast<int>(t) >= 0 && static_cast<int>(t) < 10 ? kNames[t] : "u8";
}

// NCCL's kernel spelling of a reduction: Min and Max share one kernel, Avg is a sum followed by a
// division (integers) or a pre-multiplied sum (floats).
const char* RedOpName(ncclRedOp_t op, ncclDataType_t t) {
  switch (op) {
    case ncclProd: return "Prod";
    case ncclMax: case ncclMin: return "MinMax";
    case ncclAvg:
      return (t == ncclFloat16 || t == ncclFloat32 || t == ncclFloat64 || t == ncclBfloat16) ? "PreMulSum"
                                                                                            : "SumPostDiv";
    default: return "Sum";
  }
}

}  // namespace

std::string KernelName(const Op& op) {
  std::string reduce = std::string("_") + RedOpName(op.redop, op.dtype) + "_" + TypeSuffix(op.dtype);
  switch (op.kind) {
    case OpKind::kAllReduce: return "ncclDevKernel_AllReduce" + reduce + "_RING_LL";
    case OpKind::kReduce: return "ncclDevKernel_Reduce" + reduce + "_RING_LL";
    case OpKind::kReduceScatter: return "ncclDevKernel_ReduceScatter" + reduce + "_RING_LL";
    case OpKind::kBroadcast: return "ncclDevKernel_Broadcast_RING_LL";
    case OpKind::kAllGather: return "ncclDevKernel_AllGather_RING_LL";
    case OpKind::kSend: case OpKind::kRecv: return "ncclDevKernel_SendRecv";
  }
  return "ncclDevKernel_SendRecv";
}

uint64_t TransferNs(const Op& op) {
  const Settings& s = GetSettings();
  const double n = op.comm->nranks;
  const double bytes = static_cast<double>(op.count) * TypeSize(op.dtype);
  double moved = bytes;  // bytes each rank moves over its link (ring algorithms)
  switch (op.kind) {
    case OpKind::kAllReduce: moved = 2.0 * (n - 1) / n * bytes; break;
    case OpKind::kAllGather: case OpKind::kReduceScatter: moved = (n - 1) * bytes; break;
    default: break;
  }
  if (n <= 1 && op.kind != OpKind::kSend && op.kind != OpKind::kRecv) moved = 0;
  return s.latency_ns + static_cast<uint64_t>(moved / s.bw_bytes_per_ns);
}

namespace {

// libnccl links the toolkit's libcudart like a program does; the simulator's libcudart, which
// must be the one loaded at run time, provides the placement hooks.
using BeginFn = cudaError_t (*)(int, cudaStream_t, const char*, uint32_t, KSimNcclKernel*);
using EndFn = void (*)(const KSimNcclKernel*, uint64_t);
struct Hooks {
  BeginFn begin;
  EndFn end;
};
const Hooks& GetHooks() {
  static const Hooks h{reinterpret_cast<BeginFn>(dlsym(RTLD_DEFAULT, "KSimNcclKernelBegin")),
                       reinterpret_cast<EndFn>(dlsym(RTLD_DEFAULT, "KSimNcclKernelEnd"))};
  return h;
}

std::string ShmName(const ncclUniqueId& id) {
  // The id is "KSIMNCCL" + 32 hex digits (ncclGetUniqueId); anything else is rejected earlier.
  return std::string("/ksim_nccl_") + std::string(id.internal + 8, 32);
}

size_t RegionBytes() { return GetSettings().max_bytes; }

size_t MapBytes(int nranks) {
  const size_t header = (sizeof(Shared) + 4095) / 4096 * 4096;
  return header + RegionBytes() * static_cast<size_t>(nranks) * static_cast<size_t>(nranks + 1);
}

char* CollRegion(ncclComm* c, int rank) { return c->data + RegionBytes() * static_cast<size_t>(rank); }
char* MailRegion(ncclComm* c, int src, int dst) {
  return c->data + RegionBytes() * static_cast<size_t>(c->nranks + src * c->nranks + dst);
}

bool PidDead(int pid) {
  if (pid <= 0 || pid == getpid()) return false;
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  // A killed rank whose launcher has not reaped it yet is a zombie: dead all the same.
  char path[64], buf[256];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char* paren = std::strrchr(buf, ')');
  return paren != nullptr && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

// Tells the ranks waiting on this segment that something they may wait for changed. The
// futex is process-shared (no FUTEX_PRIVATE_FLAG): the segment is mapped by every rank.
void Publish(Shared* sh) {
  sh->progress.fetch_add(1, std::memory_order_release);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&sh->progress), FUTEX_WAKE, INT32_MAX, nullptr,
          nullptr, 0);
}

// Waits with a deadline; between checks of `ready` it looks for failed peers (every ~5 ms).
class Waiter {
 public:
  explicit Waiter(uint64_t deadline) : deadline_(deadline) {}
  // Returns ncclSuccess while waiting may go on, else the failure (and marks the segments aborted).
  // `seen` is the segment's progress count read before the caller found nothing to do: a
  // single-communicator wait sleeps on it (woken by Publish, or after 5 ms to check that the
  // peers are alive); a group spanning several segments polls every 50 us.
  ncclResult_t Idle(const std::vector<ncclComm*>& comms, uint32_t seen) {
    if (comms.size() == 1) {
      std::atomic<uint32_t>& progress = comms.front()->shared->progress;
      timespec ts{0, 5000000};
      syscall(SYS_futex, reinterpret_cast<uint32_t*>(&progress), FUTEX_WAIT, seen, &ts, nullptr, 0);
      // A peer moved on since the caller looked: let it look again before judging the peers.
      // (A peer that published and then died may have published exactly what this rank needs:
      // the operation can still complete, and must.)
      if (progress.load(std::memory_order_acquire) != seen) return ncclSuccess;
    } else {
      timespec ts{0, 50000};
      nanosleep(&ts, nullptr);
    }
    const uint64_t now = MonoNowNs();
    if (now < next_check_) return ncclSuccess;
    next_check_ = now + 5000000;
    for (ncclComm* c : comms) {
      const int aborted = c->shared->aborted.load(std::memory_order_acquire);
      if (aborted != 0) return Fail(comms, c, "rank " + std::to_string(aborted - 1) + " failed or aborted");
      for (int r = 0; r < c->nranks; ++r) {
        if (r != c->rank && c->shared->left[r].load(std::memory_order_acquire) == 0 &&
            PidDead(c->shared->pid[r].load(std::memory_order_relaxed)))
          return Fail(comms, c, "rank " + std::to_string(r) + " (pid " +
                                    std::to_string(c->shared->pid[r].load()) + ") exited");
      }
    }
    if (now > deadline_)
      return Fail(comms, comms.front(),
                  "timed out after " + std::to_string(GetSettings().timeout_ns / 1000000) +
                      " ms (KAIROS_SIM_NCCL_TIMEOUT_MS) waiting for peers");
    return ncclSuccess;
  }

 private:
  ncclResult_t Fail(const std::vector<ncclComm*>& comms, ncclComm* culprit, const std::string& why) {
    for (ncclComm* c : comms) {
      int expected = 0;
      c->shared->aborted.compare_exchange_strong(expected, c->rank + 1);
      Publish(c->shared);
      c->async_error = ncclRemoteError;
      c->last_error = why;
    }
    std::fprintf(stderr, "[kairos-sim] NCCL rank %d: %s\n", culprit->rank, why.c_str());
    return ncclRemoteError;
  }
  uint64_t deadline_;
  uint64_t next_check_ = 0;
};

}  // namespace

ncclResult_t Attach(ncclComm* comm, const ncclUniqueId& id, int nranks, int rank) {
  if (std::memcmp(id.internal, "KSIMNCCL", 8) != 0) {
    comm->last_error = "unique id was not made by ncclGetUniqueId";
    return ncclInvalidArgument;
  }
  comm->shm_name = ShmName(id);
  comm->nranks = nranks;
  comm->rank = rank;
  const int fd = shm_open(comm->shm_name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return ncclSystemError;
  const size_t bytes = MapBytes(nranks);
  struct stat st {};
  // Grow only: a rank that arrives later must never truncate what another one wrote.
  if (fstat(fd, &st) != 0 || (static_cast<size_t>(st.st_size) < bytes && ftruncate(fd, bytes) != 0)) {
    close(fd);
    return ncclSystemError;
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return ncclSystemError;
  comm->shared = static_cast<Shared*>(p);
  comm->data = static_cast<char*>(p) + (sizeof(Shared) + 4095) / 4096 * 4096;
  comm->map_bytes = bytes;
  comm->send_seq.assign(static_cast<size_t>(nranks), 0);
  comm->recv_seq.assign(static_cast<size_t>(nranks), 0);
  Shared* sh = comm->shared;
  int expected = 0;
  if (!sh->nranks.compare_exchange_strong(expected, nranks) && expected != nranks) {
    comm->last_error = "ranks disagree on the communicator size";
    return ncclInvalidUsage;
  }
  int zero = 0;
  if (!sh->pid[rank].compare_exchange_strong(zero, static_cast<int32_t>(getpid()))) {
    comm->last_error = "rank " + std::to_string(rank) + " joined twice";
    return ncclInvalidUsage;
  }
  sh->joined.fetch_add(1, std::memory_order_acq_rel);
  Publish(sh);
  return ncclSuccess;
}

ncclResult_t WaitJoined(const std::vector<ncclComm*>& comms) {
  Waiter w(MonoNowNs() + GetSettings().timeout_ns);
  for (ncclComm* c : comms) {
    while (true) {
      const uint32_t seen = c->shared->progress.load(std::memory_order_acquire);
      if (c->shared->joined.load(std::memory_order_acquire) >= c->nranks) break;
      if (ncclResult_t r = w.Idle(comms, seen); r != ncclSuccess) {
        shm_unlink(c->shm_name.c_str());
        return r;
      }
    }
    // Everyone has it mapped: the name is no longer needed (no /dev/shm leftovers).
    shm_unlink(c->shm_name.c_str());
  }
  return ncclSuccess;
}

void Detach(ncclComm* comm, bool abort) {
  if (comm->shared == nullptr) return;
  if (abort) {
    int expected = 0;
    comm->shared->aborted.compare_exchange_strong(expected, comm->rank + 1);
  } else {
    comm->shared->left[comm->rank].store(1, std::memory_order_release);
  }
  Publish(comm->shared);
  munmap(comm->shared, comm->map_bytes);
  comm->shared = nullptr;
  shm_unlink(comm->shm_name.c_str());  // only matters when the join never completed
}

namespace {

bool IsP2p(OpKind k) { return k == OpKind::kSend || k == OpKind::kRecv; }

// Bytes rank `rank` contributes to a collective slot.
size_t ContributedBytes(const Op& op, int rank) {
  const size_t es = TypeSize(op.dtype);
  switch (op.kind) {
    case OpKind::kBroadcast: return rank == op.root_or_peer ? op.count * es : 0;
    case OpKind::kReduceScatter: return op.count * es * static_cast<size_t>(op.comm->nranks);
    default: return op.count * es;
  }
}

void FinishCollective(Op& op) {
  ncclComm* c = op.comm;
  const int n = c->nranks;
  const size_t es = TypeSize(op.dtype);
  std::vector<const char*> in(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) in[static_cast<size_t>(r)] = CollRegion(c, r);
  switch (op.kind) {
    case OpKind::kAllReduce:
      ReduceInto(op.recvbuf, in.data(), n, op.count, op.dtype, op.redop);
      break;
    case OpKind::kReduce:
      if (c->rank == op.root_or_peer) ReduceInto(op.recvbuf, in.data(), n, op.count, op.dtype, op.redop);
      break;
    case OpKind::kBroadcast:
      std::memmove(op.recvbuf, in[static_cast<size_t>(op.root_or_peer)], op.count * es);
      break;
    case OpKind::kAllGather:
      for (int r = 0; r < n; ++r)
        std::memcpy(static_cast<char*>(op.recvbuf) + static_cast<size_t>(r) * op.count * es, in[static_cast<size_t>(r)],
                    op.count * es);
      break;
    case OpKind::kReduceScatter:
      for (auto& p : in) p += static_cast<size_t>(c->rank) * op.count * es;
      ReduceInto(op.recvbuf, in.data(), n, op.count, op.dtype, op.redop);
      break;
    default: break;
  }
}

// One step of `op`; returns true when it moved on. Sets *err on a protocol error.
bool Step(Op& op, ncclResult_t* err) {
  ncclComm* c = op.comm;
  Shared* sh = c->shared;
  const int me = c->rank, n = c->nranks;
  if (!IsP2p(op.kind)) {
    if (op.stage == 0) {
      for (int r = 0; r < n; ++r)
        if (sh->departed[r].load(std::memory_order_acquire) + 1 < op.seq) return false;
      const size_t bytes = ContributedBytes(op, me);
      if (bytes != 0) std::memcpy(CollRegion(c, me), op.sendbuf, bytes);
      sh->start[me] = op.start;
      sh->sig[me] = Signature{static_cast<int32_t>(op.kind), op.dtype, op.redop, op.root_or_peer, op.count};
      sh->arrived[me].store(op.seq, std::memory_order_release);
      Publish(sh);
      op.stage = 1;
      return true;
    }
    uint64_t last = 0;
    for (int r = 0; r < n; ++r) {
      if (sh->arrived[r].load(std::memory_order_acquire) < op.seq) return false;
      last = std::max(last, sh->start[r]);
    }
    for (int r = 0; r < n; ++r) {
      const Signature& s = sh->sig[r];
      if (s.kind != sh->sig[me].kind || s.dtype != op.dtype || s.count != op.count || s.root != op.root_or_peer ||
          s.redop != sh->sig[me].redop) {
        c->last_error = "rank " + std::to_string(r) + " called a different collective (or count/type/op/root)";
        *err = ncclInvalidUsage;
      }
    }
    if (*err == ncclSuccess) FinishCollective(op);
    op.end = last + TransferNs(op);
    sh->departed[me].store(op.seq, std::memory_order_release);
    Publish(sh);
    op.stage = 2;
    return true;
  }
  const int peer = op.root_or_peer;
  const size_t bytes = op.count * TypeSize(op.dtype);
  if (op.kind == OpKind::kSend) {
    Mailbox& mb = sh->mb[me][peer];
    if (op.stage == 0) {
      if (mb.consumed.load(std::memory_order_acquire) + 1 < op.seq) return false;
      std::memcpy(MailRegion(c, me, peer), op.sendbuf, bytes);
      mb.bytes = bytes;
      mb.send_start = op.start;
      mb.sent.store(op.seq, std::memory_order_release);
      Publish(sh);
      op.stage = 1;
      return true;
    }
    if (mb.posted.load(std::memory_order_acquire) < op.seq) return false;
    op.end = std::max(op.start, mb.recv_start[op.seq % 2]) + TransferNs(op);
    op.stage = 2;
    return true;
  }
  Mailbox& mb = sh->mb[peer][me];
  if (op.stage == 0) {
    mb.recv_start[op.seq % 2] = op.start;
    mb.posted.store(op.seq, std::memory_order_release);
    Publish(sh);
    op.stage = 1;
    return true;
  }
  if (mb.sent.load(std::memory_order_acquire) < op.seq) return false;
  if (mb.bytes != bytes) {
    c->last_error = "send/recv size mismatch with rank " + std::to_string(peer);
    *err = ncclInvalidUsage;
  } else {
    std::memcpy(op.recvbuf, MailRegion(c, peer, me), bytes);
  }
  op.end = std::max(op.start, mb.send_start) + TransferNs(op);
  mb.consumed.store(op.seq, std::memory_order_release);
  Publish(sh);
  op.stage = 2;
  return true;
}

// Ops of one communicator, channel and direction run in order.
bool SameQueue(const Op& a, const Op& b) {
  if (a.comm != b.comm) return false;
  if (IsP2p(a.kind) != IsP2p(b.kind)) return false;
  return !IsP2p(a.kind) || (a.kind == b.kind && a.root_or_peer == b.root_or_peer);
}

}  // namespace

ncclResult_t Execute(std::vector<Op>& ops) {
  if (ops.empty()) return ncclSuccess;
  for (const Op& op : ops) {
    const int me = op.comm->rank;
    size_t bytes = IsP2p(op.kind) ? op.count * TypeSize(op.dtype) : ContributedBytes(op, me);
    if (op.kind == OpKind::kAllGather) bytes = op.count * TypeSize(op.dtype);
    if (bytes > RegionBytes()) {
      op.comm->last_error = "message of " + std::to_string(bytes) +
                            " bytes exceeds the simulator's capacity (KAIROS_SIM_NCCL_MAX_BYTES)";
      return ncclInvalidUsage;
    }
  }
  // One kernel per (communicator, stream), as NCCL launches one kernel per group and channel set.
  struct Kernel {
    ncclComm* comm;
    cudaStream_t stream;
    KSimNcclKernel k;
    uint64_t end;
    std::string name;
  };
  std::vector<Kernel> kernels;
  for (Op& op : ops) {
    for (size_t i = 0; i < kernels.size(); ++i)
      if (kernels[i].comm == op.comm && kernels[i].stream == op.stream) op.kernel = static_cast<int>(i);
    if (op.kernel >= 0) continue;
    bool all_p2p = true;
    for (const Op& o : ops) all_p2p = all_p2p && (o.comm != op.comm || IsP2p(o.kind));
    op.kernel = static_cast<int>(kernels.size());
    kernels.push_back(Kernel{op.comm, op.stream, {}, 0, all_p2p ? "ncclDevKernel_SendRecv" : KernelName(op)});
  }
  if (GetHooks().begin == nullptr || GetHooks().end == nullptr) {
    ops.front().comm->last_error = "the simulator's libnccl.so.2 needs the simulator's libcudart.so.13";
    return ncclSystemError;
  }
  // Per kernel, as NCCL enqueues: the profiler plugin's operation events start, the kernel is
  // launched on this thread, and the events stop ("enqueued"), before any rank waits.
  ProfilerGroup group(ops);
  for (size_t ki = 0; ki < kernels.size(); ++ki) {
    Kernel& kernel = kernels[ki];
    std::vector<void*> events;
    for (Op& op : ops) {
      if (op.kernel != static_cast<int>(ki)) continue;
      if (IsP2p(op.kind)) {
        auto& seqs = op.kind == OpKind::kSend ? op.comm->send_seq : op.comm->recv_seq;
        op.seq = ++seqs[static_cast<size_t>(op.root_or_peer)];
      } else {
        op.seq = ++op.comm->coll_seq;
      }
      events.push_back(ProfilerStartOp(op, group.handle()));
    }
    const uint32_t channels = kernel.comm->nranks > 1 ? 2 : 1;
    const cudaError_t launched =
        GetHooks().begin(kernel.comm->device, kernel.stream, kernel.name.c_str(), channels, &kernel.k);
    for (void* e : events) ProfilerStop(e);
    if (launched != cudaSuccess) {
      kernel.comm->last_error = "kernel launch failed";
      return ncclUnhandledCudaError;
    }
  }
  for (Op& op : ops) op.start = kernels[static_cast<size_t>(op.kernel)].k.start;
  std::vector<ncclComm*> comms;
  for (const Kernel& k : kernels)
    if (std::find(comms.begin(), comms.end(), k.comm) == comms.end()) comms.push_back(k.comm);
  Waiter waiter(MonoNowNs() + GetSettings().timeout_ns);
  ncclResult_t result = ncclSuccess;
  for (;;) {
    // Read before looking: a peer's Publish after this read wakes the wait below.
    const uint32_t seen = comms.front()->shared->progress.load(std::memory_order_acquire);
    bool all_done = true, progressed = false;
    for (size_t i = 0; i < ops.size(); ++i) {
      Op& op = ops[i];
      if (op.stage == 2) continue;
      all_done = false;
      bool blocked = false;
      for (size_t j = 0; j < i && !blocked; ++j) blocked = ops[j].stage != 2 && SameQueue(ops[j], op);
      if (blocked) continue;
      while (op.stage != 2 && Step(op, &result)) progressed = true;
    }
    if (all_done) break;
    if (progressed) continue;
    if (ncclResult_t r = waiter.Idle(comms, seen); r != ncclSuccess) {
      result = r;
      break;
    }
  }
  // A failed group's kernels end where the failure was noticed: the time the GPU spent waiting.
  const uint64_t now = MonoNowNs();
  for (const Op& op : ops) {
    Kernel& k = kernels[static_cast<size_t>(op.kernel)];
    k.end = std::max(k.end, op.stage == 2 ? op.end : now);
  }
  for (Kernel& k : kernels) GetHooks().end(&k.k, k.end);
  if (result != ncclSuccess) {
    for (ncclComm* c : comms) c->async_error = result;
  }
  return result;
}

}  // namespace kairos::sim::nccl
