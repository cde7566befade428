// File: collective.h
// Layer: kairos_model. What kairos knows about one NCCL collective or point-to-point call and
// the kernel it launched (TraceData::collectives), and how its fields are named in a trace:
// the "Collective name" / "dtype" spellings PyTorch's record_param_comms uses, which is what
// HTA's communication analysis reads (docs/OUTPUT.md, "Collective kernels").
// Threading: plain data and pure functions.
#ifndef KAIROS_SRC_COLLECTIVE_H_
#define KAIROS_SRC_COLLECTIVE_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace kairos {

// NCCL's operation, as its profiler plugin names it ("AllReduce", "Send", ...).
enum class CollectiveFunc : uint8_t {
  kUnknown = 0,
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kSend,
  kRecv,
};

// NCCL's data type, as its profiler plugin names it ("ncclFloat32", ...).
enum class CollectiveDtype : uint8_t {
  kUnknown = 0,
  kInt8,
  kUint8,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kFloat16,
  kFloat32,
  kFloat64,
  kBfloat16,
  kFloat8e4m3,
  kFloat8e5m2,
};

// One NCCL operation, keyed by the CUPTI correlation id of the launch that carried it. When one
// launch carried several operations (a group), `coalesced` counts them and the element counts
// are their sums.
struct CollectiveRecord {
  uint32_t correlation = 0;
  CollectiveFunc func = CollectiveFunc::kUnknown;
  CollectiveDtype dtype = CollectiveDtype::kUnknown;  // kUnknown also when a group mixed types
  uint16_t coalesced = 1;
  int32_t comm_rank = -1;   // this process's rank in the communicator
  int32_t comm_size = 0;    // the communicator's rank count ("Group size")
  int32_t root_or_peer = -1;
  uint64_t in_nelems = 0;   // elements this rank contributes ("In msg nelems")
  uint64_t out_nelems = 0;  // elements this rank receives ("Out msg nelems")
  uint64_t comm_hash = 0;   // NCCL's communicator id
  uint64_t seq = 0;         // NCCL's sequence number of the operation in its communicator
};

// Parses the profiler plugin's strings; kUnknown for anything else (never fails).
CollectiveFunc CollectiveFuncFromNccl(std::string_view func);
CollectiveDtype CollectiveDtypeFromNccl(std::string_view datatype);

// "allreduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "all_to_all", "send",
// "recv" (PyTorch's names); "coalesced" for several operations in one launch; "unknown".
const char* CollectiveTraceName(CollectiveFunc func, uint16_t coalesced);
// "Float", "Half", "BFloat16", ... (PyTorch's ScalarType names); "" when unknown.
const char* CollectiveDtypeTraceName(CollectiveDtype dtype);

// What one rank sends and receives for `count` as NCCL's API takes it (sendcount for
// AllGather, recvcount for ReduceScatter): PyTorch's in/out sizes.
void CollectiveNelems(CollectiveFunc func, uint64_t count, int32_t comm_size, uint64_t* in,
                      uint64_t* out);

// Back from a trace's "Collective name": kairos' names and PyTorch's variants
// ("_allgather_base", "allreduce_coalesced", ...); `coalesced` set for a group ("coalesced" or
// a "_coalesced" suffix). kUnknown for anything else.
CollectiveFunc CollectiveFuncFromTraceName(std::string_view name, bool* coalesced);
// Back from a trace's "dtype" (PyTorch's ScalarType names); kUnknown for anything else.
CollectiveDtype CollectiveDtypeFromTraceName(std::string_view name);
// Bytes of one element; 0 when unknown.
uint32_t CollectiveDtypeBytes(CollectiveDtype dtype);

// "[0, 1, ..., n-1]": the ranks of a communicator that spans the whole job.
std::string AllRanksJson(int32_t n);

}  // namespace kairos

#endif  // KAIROS_SRC_COLLECTIVE_H_
