// File: cupti_api.cc
// Layer: kairos_activity (CUDA builds only). dlopen/dlsym of libcupti into CuptiApi.
// Threading: LoadCuptiApi is called from the session's controller thread; it only reads
// the dynamic loader's state.
#include "activity/cupti_api.h"

#include <dlfcn.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace kairos::internal {
namespace {

template <typename Fn>
bool Resolve(void* handle, const char* symbol, Fn* out) {
  void* p = dlsym(handle, symbol);
  *out = reinterpret_cast<Fn>(p);
  return p != nullptr;
}

std::string DlError() {
  const char* e = dlerror();
  return e != nullptr ? std::string(e) : std::string("unknown dlopen error");
}

}  // namespace

absl::Status CheckCuptiVersion(uint32_t version) {
  if (version >= kMinCuptiVersion && version <= kMaxCuptiVersion) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "CUPTI API version ", version, " has record layouts kairos does not know (supported: ",
      kMinCuptiVersion, "..", kMaxCuptiVersion, "); GPU activity disabled"));
}

absl::StatusOr<CuptiApi> LoadCuptiApi(std::string_view explicit_path) {
  void* handle = nullptr;
  std::string path;
  if (!explicit_path.empty()) {
    path = std::string(explicit_path);
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("cannot load CUPTI library '", path, "': ", DlError()));
    }
  } else {
    // Prefer the copy the application already loaded so both talk to one CUPTI instance.
    for (const char* name : {"libcupti.so.13", "libcupti.so"}) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
      if (handle != nullptr) {
        path = name;
        break;
      }
    }
    if (handle == nullptr) {
      std::string last_error;
      for (const char* name : {"libcupti.so.13", "libcupti.so"}) {
        handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (handle != nullptr) {
          path = name;
          break;
        }
        last_error = DlError();
      }
      if (handle == nullptr) {
        return absl::NotFoundError(
            absl::StrCat("no CUPTI library found (libcupti.so.13): ", last_error));
      }
    }
  }

  CuptiApi api;
  api.library_path = path;
  std::string missing;
  auto req = [&](const char* symbol, auto* fn) {
    if (!Resolve(handle, symbol, fn)) absl::StrAppend(&missing, missing.empty() ? "" : ", ", symbol);
  };
  req("cuptiGetVersion", &api.GetVersion);
  req("cuptiGetResultString", &api.GetResultString);
  req("cuptiGetCallbackName", &api.GetCallbackName);
  req("cuptiActivityRegisterCallbacks", &api.ActivityRegisterCallbacks);
  req("cuptiActivityEnable", &api.ActivityEnable);
  req("cuptiActivityDisable", &api.ActivityDisable);
  req("cuptiActivityFlushAll", &api.ActivityFlushAll);
  req("cuptiActivityGetNumDroppedRecords", &api.ActivityGetNumDroppedRecords);
  req("cuptiActivityPushExternalCorrelationId", &api.ActivityPushExternalCorrelationId);
  req("cuptiActivityPopExternalCorrelationId", &api.ActivityPopExternalCorrelationId);
  req("cuptiSubscribe", &api.Subscribe);
  req("cuptiUnsubscribe", &api.Unsubscribe);
  req("cuptiEnableDomain", &api.EnableDomain);
  if (!missing.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("CUPTI library '", path, "' lacks required symbols: ", missing));
  }
  Resolve(handle, "cuptiSubscribe_v2", &api.Subscribe_v2);
  Resolve(handle, "cuptiActivityEnableRuntimeApi", &api.ActivityEnableRuntimeApi);
  Resolve(handle, "cuptiActivityEnableDriverApi", &api.ActivityEnableDriverApi);
  Resolve(handle, "cuptiActivityEnableLatencyTimestamps", &api.ActivityEnableLatencyTimestamps);
  Resolve(handle, "cuptiActivityEnableCudaEventDeviceTimestamps",
          &api.ActivityEnableCudaEventDeviceTimestamps);
  Resolve(handle, "cuptiActivityRegisterTimestampCallback",
          &api.ActivityRegisterTimestampCallback);
  Resolve(handle, "cuptiSetThreadIdType", &api.SetThreadIdType);
  Resolve(handle, "cuptiGetTimestamp", &api.GetTimestamp);

  uint32_t version = 0;
  const CUptiResult r = api.GetVersion(&version);
  if (r != CUPTI_SUCCESS) {
    return absl::UnavailableError(
        absl::StrCat("cuptiGetVersion failed: ", CuptiResultName(api, r)));
  }
  api.version = version;
  if (absl::Status s = CheckCuptiVersion(version); !s.ok()) return s;
  return api;
}

std::string CuptiResultName(const CuptiApi& api, CUptiResult result) {
  const char* str = nullptr;
  if (api.GetResultString == nullptr || api.GetResultString(result, &str) != CUPTI_SUCCESS ||
      str == nullptr) {
    str = "CUPTI_ERROR";
  }
  return absl::StrCat(str, " (", static_cast<int>(result), ")");
}

}  // namespace kairos::internal
