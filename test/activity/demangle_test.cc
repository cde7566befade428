// File: demangle_test.cc
// Layer: test (kairos_activity). Kernel-name demangling and its cache.
// Threading: single-threaded.
#include "activity/demangle.h"

#include <catch2/catch.hpp>

namespace kairos::internal {
namespace {

TEST_CASE("mangled kernel names are demangled", "[demangle]") {
  CHECK(Demangle("_Z6matmulPfS_S_i") == "matmul(float*, float*, float*, int)");
  CHECK(Demangle("_ZN5torch6kernelIfEEvPT_") == "void torch::kernel<float>(float*)");
  CHECK(Demangle("ncclKernel_AllReduce_RING_LL_Sum_float") ==
        "ncclKernel_AllReduce_RING_LL_Sum_float");
  CHECK(Demangle("f") == "f");
  CHECK(Demangle("_Zbogus") == "_Zbogus");
  CHECK(Demangle("") == "");
}

TEST_CASE("the cache demangles each name once and keeps views valid", "[demangle]") {
  DemangleCache cache;
  const std::string_view a = cache.Get("_Z6matmulPfS_S_i");
  for (int i = 0; i < 100; ++i) cache.Get("_Z1fi" + std::string(i, 'x'));  // force rehashes
  CHECK(a == "matmul(float*, float*, float*, int)");
  CHECK(cache.Get("_Z6matmulPfS_S_i").data() == a.data());
  CHECK(cache.size() == 101);
}

}  // namespace
}  // namespace kairos::internal
