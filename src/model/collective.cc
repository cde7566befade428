// File: collective.cc
// Layer: kairos_model. See collective.h.
#include "model/collective.h"

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

CollectiveFunc CollectiveFuncFromTraceName(std::string_view name, bool* coalesced) {
  *coalesced = false;
  if (name == "coalesced") {
    *coalesced = true;
    return CollectiveFunc::kUnknown;
  }
  constexpr std::string_view kSuffix = "_coalesced";
  if (name.size() > kSuffix.size() && name.substr(name.size() - kSuffix.size()) == kSuffix) {
    *coalesced = true;
    name.remove_suffix(kSuffix.size());
  }
  struct Name {
    std::string_view trace;
    CollectiveFunc func;
  };
  static constexpr Name kNames[] = {
      {"allreduce", CollectiveFunc::kAllReduce},         {"all_reduce", CollectiveFunc::kAllReduce},
      {"broadcast", CollectiveFunc::kBroadcast},         {"_broadcast_oop", CollectiveFunc::kBroadcast},
      {"reduce", CollectiveFunc::kReduce},               {"_reduce_oop", CollectiveFunc::kReduce},
      {"all_gather", CollectiveFunc::kAllGather},        {"allgather", CollectiveFunc::kAllGather},
      {"_allgather_base", CollectiveFunc::kAllGather},   {"all_gather_into_tensor", CollectiveFunc::kAllGather},
      {"reduce_scatter", CollectiveFunc::kReduceScatter},
      {"_reduce_scatter_base", CollectiveFunc::kReduceScatter},
      {"reduce_scatter_tensor", CollectiveFunc::kReduceScatter},
      {"all_to_all", CollectiveFunc::kAllToAll},         {"alltoall", CollectiveFunc::kAllToAll},
      {"alltoall_base", CollectiveFunc::kAllToAll},      {"send", CollectiveFunc::kSend},
      {"recv", CollectiveFunc::kRecv},
  };
  for (const Name& n : kNames) {
    if (n.trace == name) return n.func;
  }
  return CollectiveFunc::kUnknown;
}

CollectiveDtype CollectiveDtypeFromTraceName(std::string_view name) {
  for (uint8_t d = 1; d <= static_cast<uint8_t>(CollectiveDtype::kFloat8e5m2); ++d) {
    if (name == CollectiveDtypeTraceName(static_cast<CollectiveDtype>(d))) {
      return static_cast<CollectiveDtype>(d);
    }
  }
  return CollectiveDtype::kUnknown;
}

uint32_t CollectiveDtypeBytes(CollectiveDtype dtype) {
  switch (dtype) {
    case CollectiveDtype::kInt8:
    case CollectiveDtype::kUint8:
    case CollectiveDtype::kFloat8e4m3:
    case CollectiveDtype::kFloat8e5m2: return 1;
    case CollectiveDtype::kFloat16:
    case CollectiveDtype::kBfloat16: return 2;
    case CollectiveDtype::kInt32:
    case CollectiveDtype::kUint32:
    case CollectiveDtype::kFloat32: return 4;
    case CollectiveDtype::kInt64:
    case CollectiveDtype::kUint64:
    case CollectiveDtype::kFloat64: return 8;
    case CollectiveDtype::kUnknown: break;
  }
  return 0;
}

std::string AllRanksJson(int32_t n) {
  std::string s = "[";
  for (int32_t i = 0; i < n; ++i) absl::StrAppend(&s, i == 0 ? "" : ", ", i);
  s += "]";
  return s;
}

}  // namespace kairos
