// File: collective_test.cc — NCCL operation names and sizes as written on collective kernels
// (src/model/collective.h), and TraceData's lookup by correlation id.
#include "model/collective.h"

#include <catch2/catch.hpp>

#include "model/trace_data.h"

namespace kairos {
namespace {

TEST_CASE("NCCL's profiler strings map to PyTorch's collective and dtype names") {
  struct Row {
    const char* nccl;
    const char* torch;
  };
  for (const Row& r : {Row{"AllReduce", "allreduce"}, Row{"Broadcast", "broadcast"},
                       Row{"Reduce", "reduce"}, Row{"AllGather", "all_gather"},
                       Row{"ReduceScatter", "reduce_scatter"}, Row{"AlltoAll", "all_to_all"},
                       Row{"Send", "send"}, Row{"Recv", "recv"}, Row{"SendRecv", "unknown"},
                       Row{"", "unknown"}}) {
    CHECK(std::string(CollectiveTraceName(CollectiveFuncFromNccl(r.nccl), 1)) == r.torch);
  }
  CHECK(std::string(CollectiveTraceName(CollectiveFunc::kAllReduce, 3)) == "coalesced");
  for (const Row& r : {Row{"ncclInt8", "Char"}, Row{"ncclUint8", "Byte"}, Row{"ncclInt32", "Int"},
                       Row{"ncclUint32", "UInt32"}, Row{"ncclInt64", "Long"},
                       Row{"ncclUint64", "UInt64"}, Row{"ncclFloat16", "Half"},
                       Row{"ncclFloat32", "Float"}, Row{"ncclFloat64", "Double"},
                       Row{"ncclBfloat16", "BFloat16"}, Row{"ncclFloat8e4m3", "Float8_e4m3fn"},
                       Row{"ncclFloat8e5m2", "Float8_e5m2"}, Row{"Unknown", ""},
                       Row{"float", ""}}) {
    CHECK(std::string(CollectiveDtypeTraceName(CollectiveDtypeFromNccl(r.nccl))) == r.torch);
  }
}

TEST_CASE("trace names map back, PyTorch's variants included") {
  bool coalesced = true;
  CHECK(CollectiveFuncFromTraceName("all_gather", &coalesced) == CollectiveFunc::kAllGather);
  CHECK_FALSE(coalesced);
  CHECK(CollectiveFuncFromTraceName("_reduce_scatter_base", &coalesced) == CollectiveFunc::kReduceScatter);
  CHECK(CollectiveFuncFromTraceName("allreduce_coalesced", &coalesced) == CollectiveFunc::kAllReduce);
  CHECK(coalesced);
  CHECK(CollectiveFuncFromTraceName("coalesced", &coalesced) == CollectiveFunc::kUnknown);
  CHECK(coalesced);
  CHECK(CollectiveFuncFromTraceName("barrier", &coalesced) == CollectiveFunc::kUnknown);
  CHECK_FALSE(coalesced);
  for (uint8_t d = 1; d <= static_cast<uint8_t>(CollectiveDtype::kFloat8e5m2); ++d) {
    const auto dtype = static_cast<CollectiveDtype>(d);
    CHECK(CollectiveDtypeFromTraceName(CollectiveDtypeTraceName(dtype)) == dtype);
  }
  CHECK(CollectiveDtypeFromTraceName("") == CollectiveDtype::kUnknown);
  CHECK(CollectiveDtypeBytes(CollectiveDtype::kBfloat16) == 2);
  CHECK(CollectiveDtypeBytes(CollectiveDtype::kFloat64) == 8);
  CHECK(CollectiveDtypeBytes(CollectiveDtype::kUnknown) == 0);
}

TEST_CASE("in/out element counts follow NCCL's count argument per operation") {
  uint64_t in = 0, out = 0;
  CollectiveNelems(CollectiveFunc::kAllReduce, 1000, 8, &in, &out);
  CHECK((in == 1000 && out == 1000));
  CollectiveNelems(CollectiveFunc::kAllGather, 1000, 8, &in, &out);  // sendcount
  CHECK((in == 1000 && out == 8000));
  CollectiveNelems(CollectiveFunc::kReduceScatter, 1000, 8, &in, &out);  // recvcount
  CHECK((in == 8000 && out == 1000));
  CollectiveNelems(CollectiveFunc::kBroadcast, 7, 8, &in, &out);
  CHECK((in == 7 && out == 7));
  CollectiveNelems(CollectiveFunc::kSend, 7, 2, &in, &out);
  CHECK((in == 7 && out == 0));
  CollectiveNelems(CollectiveFunc::kRecv, 7, 2, &in, &out);
  CHECK((in == 0 && out == 7));
  CollectiveNelems(CollectiveFunc::kAllGather, 5, 0, &in, &out);  // size unknown: as 1
  CHECK((in == 5 && out == 5));
}

TEST_CASE("the whole job's ranks as PyTorch writes them") {
  CHECK(AllRanksJson(1) == "[0]");
  CHECK(AllRanksJson(4) == "[0, 1, 2, 3]");
  CHECK(AllRanksJson(0) == "[]");
}

TEST_CASE("TraceData finds a launch's collective by correlation id") {
  TraceData d;
  for (uint32_t c : {3u, 9u, 40u}) {
    CollectiveRecord r;
    r.correlation = c;
    r.in_nelems = c * 10;
    d.collectives.push_back(r);
  }
  REQUIRE(d.FindCollective(9) != nullptr);
  CHECK(d.FindCollective(9)->in_nelems == 90);
  CHECK(d.FindCollective(40)->in_nelems == 400);
  CHECK(d.FindCollective(4) == nullptr);
  CHECK(d.FindCollective(41) == nullptr);
  CHECK(TraceData().FindCollective(3) == nullptr);
}

}  // namespace
}  // namespace kairos
