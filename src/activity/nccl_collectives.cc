// File: nccl_collectives.cc
// Layer: kairos_activity. See nccl_collectives.h.
#include "activity/nccl_collectives.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>
#include <string_view>

#include "util/dcheck.h"

namespace kairos::internal {
namespace {

struct CommContext {
  int32_t rank;
  int32_t nranks;
  uint64_t hash;
  NcclTallies* tallies;  // the root's (never null)
};

// One thread's operations between their startEvent and the launch that takes them.
struct Pending {
  uint32_t count = 0;
  CollectiveRecord record;
  NcclTallies* tallies = nullptr;  // the started operations' root's, for the stop's count
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

kairos_nccl_result_t NcclPluginInit(NcclTallies* tallies, void** context, int* activation_mask,
                                    const char*, uint64_t comm_hash, int, int nranks, int rank) {
  KAIROS_DCHECK(tallies != nullptr, "the root's tallies come with every init");
  if (tallies == nullptr || context == nullptr || activation_mask == nullptr)
    return kKairosNcclInternalError;
  auto* c = new (std::nothrow) CommContext{rank, nranks, comm_hash, tallies};
  if (c == nullptr) return kKairosNcclInternalError;  // NCCL runs on without the plugin
  *context = c;
  // Only the host-side operation events: proxy and kernel-channel events come from NCCL's
  // progress threads at a rate kairos has no use for.
  *activation_mask = kKairosNcclProfileColl | kKairosNcclProfileP2p;
  tallies->communicators.fetch_add(1, std::memory_order_relaxed);
  if (nranks > 0 && rank >= 0 && rank < nranks) {
    const uint64_t mine = (static_cast<uint64_t>(nranks) << 32) | static_cast<uint32_t>(rank);
    uint64_t seen = tallies->largest.load(std::memory_order_relaxed);
    while ((seen >> 32) < static_cast<uint64_t>(nranks) &&
           !tallies->largest.compare_exchange_weak(seen, mine, std::memory_order_relaxed)) {
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
  comm.tallies->operations.fetch_add(1, std::memory_order_relaxed);
  t_pending.tallies = comm.tallies;
  // The handle names the thread's slot; the stop on this thread clears what no launch took.
  *handle = &t_pending;
  return kKairosNcclSuccess;
}

kairos_nccl_result_t NcclPluginStopEvent(void* handle) {
  // A stop from another thread (not how NCCL calls it) must not touch this thread's slot.
  if (handle == nullptr || handle != &t_pending) return kKairosNcclSuccess;
  Pending& p = t_pending;
  if (p.count > 0) {
    // A slot with operations was filled by a start, which names the tallies.
    KAIROS_DCHECK(p.tallies != nullptr, "a started operation names its root's tallies");
    if (p.tallies != nullptr)
      p.tallies->without_launch.fetch_add(p.count, std::memory_order_relaxed);
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

bool NcclLargestComm(const NcclTallies& tallies, int32_t* rank, int32_t* size) {
  const uint64_t v = tallies.largest.load(std::memory_order_relaxed);
  if (v == 0) return false;
  *size = static_cast<int32_t>(v >> 32);
  *rank = static_cast<int32_t>(v & 0xFFFFFFFFu);
  return true;
}

NcclPluginCounters NcclCounters(const NcclTallies& tallies) {
  NcclPluginCounters c;
  c.communicators = tallies.communicators.load(std::memory_order_relaxed);
  c.operations = tallies.operations.load(std::memory_order_relaxed);
  c.without_launch = tallies.without_launch.load(std::memory_order_relaxed);
  return c;
}

void NcclAfterForkChild() {
  t_pending.count = 0;  // the forking thread's operations belong to the parent's launch
  t_pending.tallies = nullptr;  // the parent's root's
}

}  // namespace kairos::internal
