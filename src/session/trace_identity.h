// File: trace_identity.h
// Layer: kairos_session. Who and when a trace is: process name, host name, distributed
// rank info and the Kineto base time rule.
// Threading: pure functions.
#ifndef KAIROS_SRC_SESSION_TRACE_IDENTITY_H_
#define KAIROS_SRC_SESSION_TRACE_IDENTITY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model/trace_data.h"

namespace kairos {
namespace internal {
struct NcclTallies;  // activity/nccl_collectives.h
}  // namespace internal

// Kineto's base period: a quarter of 365.2425 days.
inline constexpr int64_t kBaseTimePeriodNs = 7889238LL * 1000000000LL;

// Floors `unix_ns` to a multiple of kBaseTimePeriodNs.
int64_t FloorBaseTime(int64_t unix_ns);

// The base time of every trace a process writes is FloorBaseTime of the wall clock when its
// first trace closed; the session keeps it (SessionController::process_base_ns).

// The base for one trace: the process base, but never after `earliest_event_ns` (traces must
// not need negative timestamps). earliest_event_ns <= 0 means "no events".
int64_t TraceBaseTimeNs(int64_t process_base_ns, int64_t earliest_event_ns);

// Earliest event start (or counter sample) in `data`; 0 if there is none.
int64_t EarliestTimestampNs(const TraceData& data);

std::string ReadProcessName();  // /proc/self/comm without the newline; "" on error
std::string ReadHostName();     // gethostname(); "" on error

// Rank info from ProcessEnv() (decoded by src/config/env.h, the only reader of the
// environment), and the backend: "nccl" when a libnccl.so (or librccl.so) is mapped into the
// process, the way a job that reaches its collectives through NCCL shows itself without a
// framework telling us (PyTorch links NCCL statically; its bridge sets the backend itself).
// "" otherwise.
// `nccl`: the root's NCCL plugin tallies (nullptr: no communicator known).
DistributedInfo DistributedFromEnv(const internal::NcclTallies* nccl);
// The rule behind it: the launcher's variables where set (rank < 0 / world_size <= 0 / local
// rank < 0: unset); otherwise the largest NCCL communicator this process joined (comm_size 0:
// none), which in a data-parallel job spans the job; otherwise rank 0 of 1. A communicator
// also makes the backend "nccl".
DistributedInfo ResolveDistributed(int64_t env_rank, int64_t env_world_size, int64_t env_local_rank,
                                   int32_t comm_rank, int32_t comm_size, std::string backend);
// The backend rule above, for a list of loaded object names (tests).
std::string BackendFromLoadedObjects(const std::vector<std::string>& names);

}  // namespace kairos

#endif  // KAIROS_SRC_SESSION_TRACE_IDENTITY_H_
