// File: kairos_c.cc
// Layer: bindings/c. The C ABI of libkairos.so: argument checks, the exception barrier,
// error codes and the thread-local last-error string, the LD_PRELOAD constructor, and
// forwarding to the session (src/session/profiler.h) and the CPU recorder hot path.
// Threading: every entry point is callable from any thread at any time (see kairos.h).
#include "kairos.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "activity/cpu_recorder.h"
#include "config/env.h"
#include "log.h"
#include "session/profiler.h"

namespace {

thread_local std::string t_last_error;
thread_local std::string t_flush_path;
// Range opened by kairos_optimizer_pre_step on this thread (0 = none).
thread_local uint32_t t_optimizer_range __attribute__((tls_model("initial-exec"))) = 0;

int32_t CodeOf(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kOk: return KAIROS_OK;
    case absl::StatusCode::kInvalidArgument: return KAIROS_ERR_INVALID_ARGUMENT;
    case absl::StatusCode::kFailedPrecondition: return KAIROS_ERR_FAILED_PRECONDITION;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded: return KAIROS_ERR_UNAVAILABLE;
    case absl::StatusCode::kResourceExhausted: return KAIROS_ERR_RESOURCE_EXHAUSTED;
    case absl::StatusCode::kNotFound: return KAIROS_ERR_NOT_FOUND;
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kAlreadyExists: return KAIROS_ERR_IO;
    default: return KAIROS_ERR_INTERNAL;
  }
}

int Report(const absl::Status& s) {
  if (s.ok()) return KAIROS_OK;
  t_last_error.assign(s.message().data(), s.message().size());
  return CodeOf(s);
}

int ReportInternal() {
  t_last_error = "internal error (exception caught at the kairos C ABI)";
  return KAIROS_ERR_INTERNAL;
}

// Exception barrier for entry points that return an int code.
template <typename F>
int Guarded(F&& f) {
  try {
    t_last_error.clear();
    return Report(f());
  } catch (...) {
    return ReportInternal();
  }
}

}  // namespace

extern "C" {

KAIROS_API int32_t kairos_version(void) { return KAIROS_VERSION_NUMBER; }

KAIROS_API const char* kairos_status_string(int32_t code) {
  switch (code) {
    case KAIROS_OK: return "ok";
    case KAIROS_ERR_INVALID_ARGUMENT: return "invalid argument";
    case KAIROS_ERR_FAILED_PRECONDITION: return "failed precondition";
    case KAIROS_ERR_UNAVAILABLE: return "unavailable";
    case KAIROS_ERR_RESOURCE_EXHAUSTED: return "resource exhausted";
    case KAIROS_ERR_IO: return "i/o error";
    case KAIROS_ERR_INTERNAL: return "internal error";
    case KAIROS_ERR_NOT_FOUND: return "not found";
    default: return "unknown error code";
  }
}

KAIROS_API const char* kairos_last_error(void) {
  try {
    return t_last_error.c_str();
  } catch (...) {
    return "";
  }
}

KAIROS_API int kairos_init(const char* config_text) {
  return Guarded([&] {
    kairos::Profiler& p = kairos::Profiler::Get();
    if (config_text == nullptr || config_text[0] == '\0') return absl::OkStatus();
    return p.Init(config_text);
  });
}

KAIROS_API void kairos_shutdown(void) {
  try {
    kairos::Profiler::Get().Shutdown();
  } catch (...) {
  }
}

// The hot path: no exception can arise (no allocation outside the cold paths, which are
// nothrow), so no try block keeps the fast path free of landing pads.
KAIROS_API void kairos_range_push(const char* name) { kairos::internal::PushRange(name); }
KAIROS_API void kairos_range_pop(void) { kairos::internal::PopRange(); }
KAIROS_API uint64_t kairos_range_start(const char* name) {
  return kairos::internal::StartRange(name);
}
KAIROS_API void kairos_range_end(uint64_t id) {
  if (id > 0xFFFFFFFFull) return;
  kairos::internal::EndRange(static_cast<uint32_t>(id));
}
KAIROS_API void kairos_mark(const char* name) { kairos::internal::Mark(name); }

KAIROS_API void kairos_optimizer_pre_step(void) {
  kairos::internal::PushRange("Optimizer.step");
  t_optimizer_range = kairos::internal::CurrentCpuRangeId();
}

KAIROS_API void kairos_optimizer_post_step(void) {
  if (t_optimizer_range != 0 && kairos::internal::CurrentCpuRangeId() == t_optimizer_range)
    kairos::internal::PopRange();
  t_optimizer_range = 0;
  kairos::StepHook();
}

KAIROS_API void kairos_step(void) { kairos::StepHook(); }

KAIROS_API int kairos_start(void) {
  return Guarded([] { return kairos::Profiler::Get().Start(); });
}

KAIROS_API int kairos_stop(void) {
  return Guarded([] { return kairos::Profiler::Get().Stop(); });
}

KAIROS_API const char* kairos_flush(void) {
  try {
    t_last_error.clear();
    absl::StatusOr<std::string> path = kairos::Profiler::Get().Flush();
    if (!path.ok()) {
      Report(path.status());
      return nullptr;
    }
    t_flush_path = *path;
    return t_flush_path.c_str();
  } catch (...) {
    ReportInternal();
    return nullptr;
  }
}

KAIROS_API int kairos_set_metadata(const char* key, const char* value) {
  return Guarded([&] {
    if (key == nullptr || key[0] == '\0')
      return absl::InvalidArgumentError("kairos_set_metadata: key must be a non-empty string");
    kairos::Profiler::Get().SetMetadata(key, value != nullptr ? value : "");
    return absl::OkStatus();
  });
}

KAIROS_API const volatile uint32_t* kairos_recording_flag(void) {
  // std::atomic<uint32_t> has the size and representation of uint32_t (static_assert below);
  // a plain volatile read of it is what Perfetto's C ABI offers its callers too.
  static_assert(sizeof(kairos::internal::g_cpu_epoch) == sizeof(uint32_t), "flag layout");
  return reinterpret_cast<const volatile uint32_t*>(&kairos::internal::g_cpu_epoch);
}

}  // extern "C"

namespace {
// LD_PRELOAD (and ordinary linking): initialise from the environment when the library is
// loaded. Cheap in a process that never profiles: it decodes the environment once and
// starts no thread unless a trace is configured. Under LD_PRELOAD, a window the
// environment opens at once (warm-up 0) is open before main() runs, so a short program is
// traced from its start. Only then: a library loaded by dlopen() (NVTX or CUDA injection,
// Python) runs this with the loader lock held, and the controller's warm-up (libcupti
// loading the driver) would wait for that lock; CUDA injection waits in InitializeInjection.
__attribute__((constructor)) void KairosLoadInit() {
  try {
    kairos::Profiler& p = kairos::Profiler::Get();
    if (kairos::Env().kairos_preloaded) p.WaitForStartupWindow();
  } catch (...) {
  }
}
}  // namespace
