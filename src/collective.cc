// File: collective.cc
// Layer: kairos_base. See collective.h.
#include "collective.h"

#include "absl/strings/str_cat.h"

namespace kairos {

CollectiveFunc CollectiveFuncFromNccl(std::string_view f) {
  if (f == "AllReduce") return CollectiveFunc::kAllReduce;
  if (f == "Broadcast") return CollectiveFunc::kBroadcast;
  if (f == "Reduce") return CollectiveFunc::kReduce;
  if (f == "AllGather") return CollectiveFunc::kAllGather;
  if (f == "ReduceScatter") return CollectiveFunc::kReduceScatter;
  if (f == "AlltoAll" || f == "AllToAll") return CollectiveFunc::kAllToAll;
  if (f == "Send") return CollectiveFunc::kSend;
  if (f == "Recv") return CollectiveFunc::kRecv;
  return CollectiveFunc::kUnknown;
}

CollectiveDtype CollectiveDtypeFromNccl(std::string_view t) {
  struct Name {
    std::string_view nccl;
    CollectiveDtype dtype;
  };
  static constexpr Name kNames[] = {
      {"ncclInt8", CollectiveDtype::kInt8},         {"ncclUint8", CollectiveDtype::kUint8},
      {"ncclInt32", CollectiveDtype::kInt32},       {"ncclUint32", CollectiveDtype::kUint32},
      {"ncclInt64", CollectiveDtype::kInt64},       {"ncclUint64", CollectiveDtype::kUint64},
      {"ncclFloat16", CollectiveDtype::kFloat16},   {"ncclFloat32", CollectiveDtype::kFloat32},
      {"ncclFloat64", CollectiveDtype::kFloat64},   {"ncclBfloat16", CollectiveDtype::kBfloat16},
      {"ncclFloat8e4m3", CollectiveDtype::kFloat8e4m3},
      {"ncclFloat8e5m2", CollectiveDtype::kFloat8e5m2},
  };
  for (const Name& n : kNames) {
    if (n.nccl == t) return n.dtype;
  }
  return CollectiveDtype::kUnknown;
}

const char* CollectiveTraceName(CollectiveFunc func, uint16_t coalesced) {
  if (coalesced > 1) return "coalesced";
  switch (func) {
    case CollectiveFunc::kAllReduce: return "allreduce";
    case CollectiveFunc::kBroadcast: return "broadcast";
    case CollectiveFunc::kReduce: return "reduce";
    case CollectiveFunc::kAllGather: return "all_gather";
    case CollectiveFunc::kReduceScatter: return "reduce_scatter";
    case CollectiveFunc::kAllToAll: return "all_to_all";
    case CollectiveFunc::kSend: return "send";
    case CollectiveFunc::kRecv: return "recv";
    case CollectiveFunc::kUnknown: break;
  }
  return "unknown";
}

const char* CollectiveDtypeTraceName(CollectiveDtype dtype) {
  switch (dtype) {
    case CollectiveDtype::kInt8: return "Char";
    case CollectiveDtype::kUint8: return "Byte";
    case CollectiveDtype::kInt32: return "Int";
    case CollectiveDtype::kUint32: return "UInt32";
    case CollectiveDtype::kInt64: return "Long";
    case CollectiveDtype::kUint64: return "UInt64";
    case CollectiveDtype::kFloat16: return "Half";
    case CollectiveDtype::kFloat32: return "Float";
    case CollectiveDtype::kFloat64: return "Double";
    case CollectiveDtype::kBfloat16: return "BFloat16";
    case CollectiveDtype::kFloat8e4m3: return "Float8_e4m3fn";
    case CollectiveDtype::kFloat8e5m2: return "Float8_e5m2";
    case CollectiveDtype::kUnknown: break;
  }
  return "";
}

void CollectiveNelems(CollectiveFunc func, uint64_t count, int32_t comm_size, uint64_t* in,
                      uint64_t* out) {
  const uint64_t n = comm_size > 0 ? static_cast<uint64_t>(comm_size) : 1;
  *in = *out = count;
  if (func == CollectiveFunc::kAllGather) *out = count * n;
  if (func == CollectiveFunc::kReduceScatter) *in = count * n;
  if (func == CollectiveFunc::kSend) *out = 0;
  if (func == CollectiveFunc::kRecv) *in = 0;
}

std::string AllRanksJson(int32_t n) {
  std::string s = "[";
  for (int32_t i = 0; i < n; ++i) absl::StrAppend(&s, i == 0 ? "" : ", ", i);
  s += "]";
  return s;
}

}  // namespace kairos
