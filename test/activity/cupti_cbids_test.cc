// File: cupti_cbids_test.cc
// Layer: test (kairos_activity). Callback-id tables and display names.
// Threading: single-threaded.
#include "activity/cupti_cbids.h"

#include <cupti.h>

#include <catch2/catch.hpp>

namespace kairos::internal {
namespace {

TEST_CASE("versioned suffixes of 4+ digits are stripped", "[cupti_cbids]") {
  CHECK(DisplayApiName("cudaLaunchKernel_v7000") == "cudaLaunchKernel");
  CHECK(DisplayApiName("cudaMemcpyAsync_v3020") == "cudaMemcpyAsync");
  CHECK(DisplayApiName("cudaGraphLaunch_v10000") == "cudaGraphLaunch");
  CHECK(DisplayApiName("cuMemcpyHtoD_v2") == "cuMemcpyHtoD_v2");
  CHECK(DisplayApiName("cuLaunchKernel") == "cuLaunchKernel");
  CHECK(DisplayApiName("cudaFoo_v12a4") == "cudaFoo_v12a4");
  CHECK(DisplayApiName("__cudaLaunchKernel_v13000") == "cudaLaunchKernel");
  CHECK(DisplayApiName("__cudaLaunchKernel_ptsz_v13000") == "cudaLaunchKernel_ptsz");
  CHECK(DisplayApiName("__cudaRegisterFunction_v13000") == "__cudaRegisterFunction");
}

TEST_CASE("flow starts are launches, copies, sets and synchronizations", "[cupti_cbids]") {
  for (uint32_t cbid : {211u, 214u, 505u, 506u, 269u, 430u, 311u, 131u, 165u, 147u, 31u, 41u,
                        52u, 225u}) {
    INFO(cbid);
    CHECK(IsFlowStartRuntimeCbid(cbid));
  }
  for (uint32_t cbid : {20u, 22u, 10u, 17u, 30u, 53u, 502u, 504u}) {
    INFO(cbid);
    CHECK_FALSE(IsFlowStartRuntimeCbid(cbid));
  }
  CHECK(IsFlowStartDriverCbid(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  CHECK(IsFlowStartDriverCbid(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx));
  CHECK_FALSE(IsFlowStartDriverCbid(CUPTI_DRIVER_TRACE_CBID_cuMemCreate));
  // A program's own driver copies and syncs start flows like their runtime counterparts.
  CHECK(IsFlowStartDriverCbid(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2));
  CHECK(IsFlowStartDriverCbid(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize));
  CHECK_FALSE(IsFlowStartDriverCbid(CUPTI_DRIVER_TRACE_CBID_cuModuleGetFunction));
}

TEST_CASE("filter lists", "[cupti_cbids]") {
  CHECK(IsFilteredRuntimeCbid(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
  CHECK(IsFilteredRuntimeCbid(CUPTI_RUNTIME_TRACE_CBID___cudaPopCallConfiguration_v13000));
  CHECK_FALSE(IsFilteredRuntimeCbid(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000));
  CHECK_FALSE(IsFilteredRuntimeCbid(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  CHECK(FilteredRuntimeCbids().size() == 20);
  CHECK(IsKeptDriverCbid(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  CHECK(IsKeptDriverCbid(CUPTI_DRIVER_TRACE_CBID_cuMemMap));
  CHECK(IsKeptDriverCbid(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2));
  CHECK_FALSE(IsKeptDriverCbid(CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData));
  CHECK_FALSE(IsKeptDriverCbid(CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent));
  CHECK_FALSE(IsKeptDriverCbid(CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute));
}

}  // namespace
}  // namespace kairos::internal
