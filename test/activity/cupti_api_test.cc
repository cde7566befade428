// File: cupti_api_test.cc
// Layer: test (kairos_activity). Loading CUPTI and the version gate, against the real
// libcupti.so.13 of the toolkit (this machine has no NVIDIA driver).
// Threading: single-threaded.
#include "activity/cupti_api.h"

#include <catch2/catch.hpp>

namespace kairos::internal {
namespace {

TEST_CASE("only the CUDA 13.0 record layouts are accepted", "[cupti_api]") {
  CHECK(CheckCuptiVersion(130000).ok());
  CHECK(CheckCuptiVersion(130001).ok());
  const absl::Status old = CheckCuptiVersion(28);
  CHECK(old.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(old.message() ==
        "CUPTI API version 28 has record layouts kairos does not know (supported: "
        "130000..130001); GPU activity disabled");
  CHECK_FALSE(CheckCuptiVersion(130100).ok());
}

TEST_CASE("a missing library is a clear error", "[cupti_api]") {
  absl::StatusOr<CuptiApi> api = LoadCuptiApi("/nonexistent/libcupti.so.13");
  REQUIRE_FALSE(api.ok());
  CHECK(api.status().code() == absl::StatusCode::kNotFound);
  CHECK(std::string(api.status().message())
            .rfind("cannot load CUPTI library '/nonexistent/libcupti.so.13': ", 0) == 0);
}

TEST_CASE("the toolkit's libcupti loads and reports 130001", "[cupti_api]") {
  absl::StatusOr<CuptiApi> api = LoadCuptiApi(KAIROS_REAL_CUPTI);
  REQUIRE(api.ok());
  CHECK(api->version == 130001);
  CHECK(api->library_path == KAIROS_REAL_CUPTI);
  CHECK(api->Subscribe_v2 != nullptr);
  CHECK(api->ActivityEnableRuntimeApi != nullptr);
  CHECK(api->ActivityEnableDriverApi != nullptr);
  CHECK(api->ActivityRegisterTimestampCallback != nullptr);
  CHECK(api->SetThreadIdType != nullptr);
  CHECK(CuptiResultName(*api, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) ==
        "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39)");
  const char* name = nullptr;
  REQUIRE(api->GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, 211, &name) == CUPTI_SUCCESS);
  CHECK(std::string(name) == "cudaLaunchKernel_v7000");
  // No driver on this machine: enabling activity fails with CUPTI_ERROR_UNKNOWN.
  CHECK(api->ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_ERROR_UNKNOWN);
}

}  // namespace
}  // namespace kairos::internal
