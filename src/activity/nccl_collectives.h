// File: nccl_collectives.h
// Layer: kairos_activity. kairos as NCCL's profiler plugin (v4, nccl_profiler_abi.h): NCCL
// describes each collective and point-to-point operation to the plugin on the thread that
// enqueues it, between startEvent and stopEvent ("enqueued"), and that thread launches the
// operation's kernel in between. So the operations a thread started are held in a
// thread-local slot and taken by the next kernel launch's API-enter callback on that thread
// (NcclLaunchCapture, cupti_nccl_capture.h), which knows the launch's correlation id; a stop with nothing taken drops
// them (counted). The plugin's init also tells which communicators this process belongs to:
// the largest one stands in for the job when no RANK/WORLD_SIZE variables are set.
// The slot is filled whether a window records or not (a few stores per operation, a window's
// start can fall between an operation's start and its launch); only a window's launch
// callbacks take from it, and each stop empties it, so nothing accumulates.
// Threading: the plugin entry points run on NCCL's threads, any number at once; each touches
// only its thread's slot and atomics. The counters from any thread.
#ifndef KAIROS_SRC_ACTIVITY_NCCL_COLLECTIVES_H_
#define KAIROS_SRC_ACTIVITY_NCCL_COLLECTIVES_H_

#include <atomic>
#include <cstdint>

#include "model/collective.h"
#include "model/nccl_profiler_abi.h"

namespace kairos::internal {

// The plugin's tallies: one object per process root (Root::nccl), not a global. The plugin
// reaches it through the context of each communicator NcclPluginInit was given it for, and a
// stop that drops operations no launch took reaches it through the thread's slot. A fork()
// child's fresh root starts from zero: a child is not in its parent's communicators.
struct NcclTallies {
  std::atomic<uint64_t> communicators{0};
  std::atomic<uint64_t> operations{0};
  std::atomic<uint64_t> without_launch{0};
  // The largest communicator: size in the high half, rank in the low half, so one atomic
  // compare-and-swap keeps the pair consistent.
  std::atomic<uint64_t> largest{0};
};

// The plugin's entry points (bindings/c exports them as `ncclProfiler_v4`). Never fail,
// never block, never allocate after init. `tallies` (not null) must outlive the
// communicator (a root's: never destroyed).
kairos_nccl_result_t NcclPluginInit(NcclTallies* tallies, void** context, int* activation_mask,
                                    const char* comm_name, uint64_t comm_hash, int n_nodes,
                                    int nranks, int rank);
kairos_nccl_result_t NcclPluginStartEvent(void* context, void** handle,
                                          const kairos_nccl_event_descr_v4_t* descr);
kairos_nccl_result_t NcclPluginStopEvent(void* handle);
kairos_nccl_result_t NcclPluginFinalize(void* context);

// Moves the operations this thread started and has not stopped into `out` (correlation left
// 0 for the caller); false when there are none.
bool TakePendingCollective(CollectiveRecord* out);

// The largest communicator this process joined (rank in it, its size); false before any.
bool NcclLargestComm(const NcclTallies& tallies, int32_t* rank, int32_t* size);

struct NcclPluginCounters {
  uint64_t communicators = 0;     // init calls
  uint64_t operations = 0;        // Coll/P2p startEvent calls
  uint64_t without_launch = 0;    // operations stopped before any launch took them
};
NcclPluginCounters NcclCounters(const NcclTallies& tallies);

// Child side of fork() (the root's hook): the forking thread's pending operations are dropped
// (the tallies are the parent's root's; the child's fresh root has its own).
void NcclAfterForkChild();

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_NCCL_COLLECTIVES_H_
