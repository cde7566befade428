// File: cupti_api.h
// Layer: kairos_activity (CUDA builds only). The one door to CUPTI: a table of the CUPTI
// functions kairos calls, filled either by dlopen'ing libcupti (LoadCuptiApi) or by a test
// fake. Nothing else in kairos calls a cupti* symbol directly, so kairos never links
// against libcupti and a process without CUDA pays nothing.
// Threading: a loaded CuptiApi is immutable and may be used from any thread.
#ifndef KAIROS_SRC_ACTIVITY_CUPTI_API_H_
#define KAIROS_SRC_ACTIVITY_CUPTI_API_H_

#include <cupti.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kairos::internal {

// The CUPTI API versions whose record layouts kairos was compiled against (CUDA 13.0 GA and
// 13.0 Update 1 share Kernel10/Memcpy6/... layouts). Later versions (13.1+: Kernel11) change
// record strides, so they are refused rather than mis-parsed.
inline constexpr uint32_t kMinCuptiVersion = 130000;
inline constexpr uint32_t kMaxCuptiVersion = CUPTI_API_VERSION;

struct CuptiApi {
  std::string library_path;  // what was loaded ("" for fakes)
  uint32_t version = 0;      // cuptiGetVersion()

  // Required entry points.
  CUptiResult (*GetVersion)(uint32_t*) = nullptr;
  CUptiResult (*GetResultString)(CUptiResult, const char**) = nullptr;
  CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char**) = nullptr;
  CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                           CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*ActivityEnable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityDisable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityFlushAll)(uint32_t) = nullptr;
  CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t*) = nullptr;
  CUptiResult (*ActivityPushExternalCorrelationId)(CUpti_ExternalCorrelationKind,
                                                   uint64_t) = nullptr;
  CUptiResult (*ActivityPopExternalCorrelationId)(CUpti_ExternalCorrelationKind,
                                                  uint64_t*) = nullptr;
  CUptiResult (*Subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*) = nullptr;
  CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle) = nullptr;
  CUptiResult (*EnableDomain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain) = nullptr;

  // Optional entry points (nullptr when the library lacks them; callers check).
  CUptiResult (*Subscribe_v2)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*,
                              CUpti_SubscriberParams*) = nullptr;
  CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId, uint8_t) = nullptr;
  CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId, uint8_t) = nullptr;
  CUptiResult (*ActivityEnableLatencyTimestamps)(uint8_t) = nullptr;
  CUptiResult (*ActivityEnableCudaEventDeviceTimestamps)(uint8_t) = nullptr;
  CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc) = nullptr;
  CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType) = nullptr;
  CUptiResult (*GetTimestamp)(uint64_t*) = nullptr;
};

// Accepts exactly the versions whose layouts kairos knows; the error says which were found
// and which are supported.
absl::Status CheckCuptiVersion(uint32_t version);

// Loads libcupti: `explicit_path` if non-empty (KAIROS_CUPTI_LIBRARY), else the libcupti the
// process already has, else the sonames libcupti.so.13 and libcupti.so. Resolves every
// required symbol and checks the version. The library is never unloaded (CUPTI keeps
// threads and callbacks into it). Errors are one line, ready for the trace metadata.
absl::StatusOr<CuptiApi> LoadCuptiApi(std::string_view explicit_path);

// "CUPTI_ERROR_UNKNOWN (999)"; works with a fake that has no GetResultString.
std::string CuptiResultName(const CuptiApi& api, CUptiResult result);

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CUPTI_API_H_
