// File: nccl_collectives.cc
// Layer: kairos_activity. See nccl_collectives.h.
#include "activity/nccl_collectives.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>
#include <string_view>

namespace kairos::internal {
namespace {

// NCCL calls the plugin through a C table with no kairos object to carry (its context is per
// communicator), so the plugin's tallies are one process-wide object; the after-fork hook
// zeroes it (NcclAfterForkChild): a child is not in its parent's communicators.
struct NcclTallies {
  std::atomic<uint64_t> communicators{0};
  std::atomic<uint64_t> operations{0};
  std::atomic<uint64_t> without_launch{0};
  // The largest communicator: size in the high half, rank in the low half, so one atomic
  // compare-and-swap keeps the pair consistent.
  std::atomic<uint64_t> largest{0};
};
NcclTallies g_nccl;

struct CommContext {
  int32_t rank;
  int32_t nranks;
  uint64_t hash;
};

// One thread's operations between their startEvent and the launch that takes them.
struct Pending {
  uint32_t count = 0;
  CollectiveRecord record;
};
thread_local Pending t_pending;

std::string_view View(const char* s) { return s != nullptr ? std::string_view(s) : std::string_view(); }

void Accumulate(const CommContext& comm, CollectiveFunc func, CollectiveDtype dtype, uint64_t count,
                int root_or_peer, uint64_t seq) {
  uint64_t in = 0, out = 0;
  CollectiveNelems(func, count, comm.nranks, &in, &out);
  Pending& p = t_pending;
  if (p.count == 0) {
    CollectiveRecord& r = p.record;
    r = CollectiveRecord{};
    r.func = func;
    r.dtype = dtype;
    r.comm_rank = comm.rank;
    r.comm_size = comm.nranks;
    r.root_or_peer = root_or_peer;
    r.in_nelems = in;
    r.out_nelems = out;
    r.comm_hash = comm.hash;
    r.seq = seq;
    p.count = 1;
    return;
  }
  // A group: one launch carries them all. Sums of what this rank sends and receives; the
  // type only when every operation shares it.
  CollectiveRecord& r = p.record;
  if (r.coalesced < UINT16_MAX) ++r.coalesced;
  if (r.dtype != dtype) r.dtype = CollectiveDtype::kUnknown;
  if (r.comm_hash != comm.hash) r.comm_size = std::max(r.comm_size, comm.nranks);
  r.in_nelems += in;
  r.out_nelems += out;
  ++p.count;
}

}  // namespace

kairos_nccl_result_t NcclPluginInit(void** context, int* activation_mask, const char*,
                                    uint64_t comm_hash, int, int nranks, int rank) {
  if (context == nullptr || activation_mask == nullptr) return kKairosNcclInternalError;
  auto* c = new (std::nothrow) CommContext{rank, nranks, comm_hash};
  if (c == nullptr) return kKairosNcclInternalError;  // NCCL runs on without the plugin
  *context = c;
  // Only the host-side operation events: proxy and kernel-channel events come from NCCL's
  // progress threads at a rate kairos has no use for.
  *activation_mask = kKairosNcclProfileColl | kKairosNcclProfileP2p;
  g_nccl.communicators.fetch_add(1, std::memory_order_relaxed);
  if (nranks > 0 && rank >= 0 && rank < nranks) {
    const uint64_t mine = (static_cast<uint64_t>(nranks) << 32) | static_cast<uint32_t>(rank);
    uint64_t seen = g_nccl.largest.load(std::memory_order_relaxed);
    while ((seen >> 32) < static_cast<uint64_t>(nranks) &&
           !g_nccl.largest.compare_exchange_weak(seen, mine, std::memory_order_relaxed)) {
    }
  }
  return kKairosNcclSuccess;
}

kairos_nccl_result_t NcclPluginStartEvent(void* context, void** handle,
                                          const kairos_nccl_event_descr_v4_t* d) {
  if (handle == nullptr) return kKairosNcclSuccess;
  *handle = nullptr;  // NCCL skips stopEvent for a null handle
  if (context == nullptr || d == nullptr) return kKairosNcclSuccess;
  const auto& comm = *static_cast<const CommContext*>(context);
  if (d->type == kKairosNcclProfileColl) {
    Accumulate(comm, CollectiveFuncFromNccl(View(d->coll.func)),
               CollectiveDtypeFromNccl(View(d->coll.datatype)), d->coll.count, d->coll.root,
               d->coll.seqNumber);
  } else if (d->type == kKairosNcclProfileP2p) {
    Accumulate(comm, CollectiveFuncFromNccl(View(d->p2p.func)),
               CollectiveDtypeFromNccl(View(d->p2p.datatype)), d->p2p.count, d->p2p.peer, 0);
  } else {
    return kKairosNcclSuccess;
  }
  g_nccl.operations.fetch_add(1, std::memory_order_relaxed);
  // The handle names the thread's slot; the stop on this thread clears what no launch took.
  *handle = &t_pending;
  return kKairosNcclSuccess;
}

kairos_nccl_result_t NcclPluginStopEvent(void* handle) {
  // A stop from another thread (not how NCCL calls it) must not touch this thread's slot.
  if (handle == nullptr || handle != &t_pending) return kKairosNcclSuccess;
  Pending& p = t_pending;
  if (p.count > 0) {
    g_nccl.without_launch.fetch_add(p.count, std::memory_order_relaxed);
    p.count = 0;
  }
  return kKairosNcclSuccess;
}

kairos_nccl_result_t NcclPluginFinalize(void* context) {
  delete static_cast<CommContext*>(context);
  return kKairosNcclSuccess;
}

bool TakePendingCollective(CollectiveRecord* out) {
  Pending& p = t_pending;
  if (p.count == 0) return false;
  *out = p.record;
  p.count = 0;
  return true;
}

bool NcclLargestComm(int32_t* rank, int32_t* size) {
  const uint64_t v = g_nccl.largest.load(std::memory_order_relaxed);
  if (v == 0) return false;
  *size = static_cast<int32_t>(v >> 32);
  *rank = static_cast<int32_t>(v & 0xFFFFFFFFu);
  return true;
}

NcclPluginCounters NcclCounters() {
  NcclPluginCounters c;
  c.communicators = g_nccl.communicators.load(std::memory_order_relaxed);
  c.operations = g_nccl.operations.load(std::memory_order_relaxed);
  c.without_launch = g_nccl.without_launch.load(std::memory_order_relaxed);
  return c;
}

void NcclAfterForkChild() {
  g_nccl.communicators.store(0, std::memory_order_relaxed);
  g_nccl.operations.store(0, std::memory_order_relaxed);
  g_nccl.without_launch.store(0, std::memory_order_relaxed);
  g_nccl.largest.store(0, std::memory_order_relaxed);
  t_pending.count = 0;  // the forking thread's operations belong to the parent's launch
}

}  // namespace kairos::internal
