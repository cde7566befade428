// File: test/sim/src/nccl_profiler_plugin.cc
// Layer: CUDA/CUPTI simulator, substitute libnccl.so.2: loading the profiler plugin (see
//        nccl_profiler_plugin.h).
#include "nccl_profiler_plugin.h"

#include "nccl_comm.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace kairos::sim::nccl {

namespace {

void* Open(const std::string& name, std::string* error) {
  void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = dlerror();
    *error = e != nullptr ? e : "dlopen failed";
  }
  return h;
}

const ProfilerV4* Load() {
  const char* env = std::getenv("NCCL_PROFILER_PLUGIN");
  std::string error;
  void* h = nullptr;
  if (env == nullptr || env[0] == '\0') {
    h = Open("libnccl-profiler.so", &error);  // optional: silent when absent
    if (h == nullptr) return nullptr;
  } else if (std::strcmp(env, "none") == 0) {
    return nullptr;
  } else {
    const std::string value = env;
    if (value.find('/') == std::string::npos) h = Open("libnccl-profiler-" + value + ".so", &error);
    if (h == nullptr) h = Open(value, &error);
    if (h == nullptr) {
      std::fprintf(stderr, "[kairos-sim] NCCL profiler plugin %s not loaded: %s\n", env, error.c_str());
      return nullptr;
    }
  }
  auto* table = static_cast<const ProfilerV4*>(dlsym(h, "ncclProfiler_v4"));
  if (table == nullptr || table->init == nullptr || table->startEvent == nullptr ||
      table->stopEvent == nullptr || table->finalize == nullptr) {
    std::fprintf(stderr, "[kairos-sim] NCCL profiler plugin %s has no ncclProfiler_v4\n",
                 env != nullptr ? env : "libnccl-profiler.so");
    return nullptr;
  }
  return table;  // the library stays loaded for the process's life, as in NCCL
}

}  // namespace

const ProfilerV4* Profiler() {
  static std::once_flag once;
  static const ProfilerV4* table = nullptr;
  std::call_once(once, [] { table = Load(); });
  return table;
}

// NCCL's own table has no ncclUint8 entry: it names it "Unknown", and so does the simulator.
const char* ProfilerDatatypeName(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: return "ncclInt8";
    case ncclInt32: return "ncclInt32";
    case ncclUint32: return "ncclUint32";
    case ncclInt64: return "ncclInt64";
    case ncclUint64: return "ncclUint64";
    case ncclFloat16: return "ncclFloat16";
    case ncclFloat32: return "ncclFloat32";
    case ncclFloat64: return "ncclFloat64";
    case ncclBfloat16: return "ncclBfloat16";
    default: return "Unknown";
  }
}

namespace {

const char* FuncName(OpKind k) {
  switch (k) {
    case OpKind::kAllReduce: return "AllReduce";
    case OpKind::kBroadcast: return "Broadcast";
    case OpKind::kReduce: return "Reduce";
    case OpKind::kAllGather: return "AllGather";
    case OpKind::kReduceScatter: return "ReduceScatter";
    case OpKind::kSend: return "Send";
    case OpKind::kRecv: return "Recv";
  }
  return "Invalid";
}

uint64_t HashOf(const std::string& s) {  // FNV-1a: a stable id of the communicator
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

void ProfilerAttach(ncclComm* comm) {
  const ProfilerV4* p = Profiler();
  if (p == nullptr || comm == nullptr) return;
  comm->comm_hash = HashOf(comm->shm_name);
  int mask = 0;
  void* context = nullptr;
  // NCCL passes the user's commName (NULL when none was configured) and its node count.
  if (p->init(&context, &mask, nullptr, comm->comm_hash, 1, comm->nranks, comm->rank, nullptr) != ncclSuccess) {
    return;  // NCCL disables the plugin for this communicator
  }
  comm->profiler_context = context;
  comm->profiler_mask = mask;
}

void ProfilerDetach(ncclComm* comm) {
  const ProfilerV4* p = Profiler();
  if (p == nullptr || comm == nullptr || comm->profiler_mask == 0) return;
  p->finalize(comm->profiler_context);
  comm->profiler_context = nullptr;
  comm->profiler_mask = 0;
}

ProfilerGroup::ProfilerGroup(const std::vector<Op>& ops) {
  const ProfilerV4* p = Profiler();
  if (p == nullptr || ops.empty() || !(ops.front().comm->profiler_mask & kProfileGroup)) return;
  comm_ = ops.front().comm;
  ProfilerEventDescrV4 d;
  std::memset(&d, 0, sizeof(d));
  d.type = kProfileGroup;
  d.rank = comm_->rank;
  p->startEvent(comm_->profiler_context, &handle_, &d);
}

ProfilerGroup::~ProfilerGroup() {
  if (handle_ != nullptr) Profiler()->stopEvent(handle_);
}

void* ProfilerStartOp(const Op& op, void* group) {
  const ProfilerV4* p = Profiler();
  ncclComm* c = op.comm;
  const bool p2p = op.kind == OpKind::kSend || op.kind == OpKind::kRecv;
  const uint8_t type = p2p ? kProfileP2p : kProfileColl;
  if (p == nullptr || !(c->profiler_mask & type)) return nullptr;
  ProfilerEventDescrV4 d;
  std::memset(&d, 0, sizeof(d));
  d.type = type;
  d.parentObj = group;
  d.rank = c->rank;
  if (p2p) {
    d.p2p.func = FuncName(op.kind);
    d.p2p.buff = op.kind == OpKind::kSend ? const_cast<void*>(op.sendbuf) : op.recvbuf;
    d.p2p.datatype = ProfilerDatatypeName(op.dtype);
    d.p2p.count = op.count;
    d.p2p.peer = op.root_or_peer;
    d.p2p.nChannels = 1;
  } else {
    d.coll.seqNumber = op.seq - 1;  // NCCL counts a communicator's operations from 0
    d.coll.func = FuncName(op.kind);
    d.coll.sendBuff = op.sendbuf;
    d.coll.recvBuff = op.recvbuf;
    d.coll.count = op.count;
    d.coll.root = op.root_or_peer;
    d.coll.datatype = ProfilerDatatypeName(op.dtype);
    d.coll.nChannels = c->nranks > 1 ? 2 : 1;
    d.coll.nWarps = 16;  // the 512-thread blocks the simulator launches
    d.coll.algo = "RING";
    d.coll.proto = "LL";
  }
  void* handle = nullptr;
  p->startEvent(c->profiler_context, &handle, &d);
  return handle;
}

void ProfilerStop(void* handle) {
  if (handle != nullptr) Profiler()->stopEvent(handle);
}

}  // namespace kairos::sim::nccl
