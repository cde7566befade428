// File: kairos_c.cc
// Layer: bindings/c (libkairos_core.so; libkairos.so, the shim, forwards here through
// core_table.cc). The C ABI's implementation: argument checks, the exception barrier,
// error codes and the thread-local last-error string. Every call
// forwards to the core's public entry points (src/session/api.h) and nothing else.
// Threading: every entry point is callable from any thread at any time (see kairos.h).
//
// Exception barrier: no exception crosses the C ABI. Each entry point catches everything;
// a caught exception becomes KAIROS_ERR_INTERNAL (or the function's neutral result) and one
// rate-limited error line. The try blocks cost nothing on the non-throwing path (table-based
// unwinding), so the hot path keeps them too.
#include "kairos.h"

#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "session/api.h"

namespace {

// The C ABI's per-thread state, in one object: the strings it returns are per thread by
// contract (kairos.h: kairos_last_error, kairos_flush's path), valid until the thread's next
// call; and the range kairos_optimizer_pre_step opened on this thread, which its
// post_step closes.
struct CallerThread {
  std::string last_error;
  std::string flush_path;
  uint32_t optimizer_range = 0;  // 0 = none
};
thread_local CallerThread t_caller;

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
  t_caller.last_error.assign(s.message().data(), s.message().size());
  return CodeOf(s);
}

// Called from a catch block only. Never throws: every step is nothrow or guarded.
int ReportInternal(const char* where) noexcept {
  const char* what = "unknown exception";
  try {
    throw;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  kairos::api::LogBarrierError(where, what);  // rate-limited, one line
  try {
    t_caller.last_error = "internal error in ";
    t_caller.last_error += where;
    t_caller.last_error += ": ";
    t_caller.last_error += what;
  } catch (...) {
  }
  return KAIROS_ERR_INTERNAL;
}

// Exception barrier for entry points that return an int code.
template <typename F>
int Guarded(const char* where, F&& f) noexcept {
  try {
    t_caller.last_error.clear();
    return Report(f());
  } catch (...) {
    return ReportInternal(where);
  }
}

// Exception barrier for entry points without a result.
template <typename F>
void GuardedVoid(const char* where, F&& f) noexcept {
  try {
    f();
  } catch (...) {
    ReportInternal(where);
  }
}

}  // namespace

extern "C" {

// kairos_version and kairos_status_string are the shim's own (bindings/c/shim.c): they need
// no core.

KAIROS_API const char* kairos_last_error(void) {
  try {
    return t_caller.last_error.c_str();
  } catch (...) {
    return "";
  }
}

KAIROS_API int kairos_init(const char* config_text) {
  return Guarded("kairos_init", [&] {
    return kairos::api::Init(config_text == nullptr ? std::string_view() : config_text);
  });
}

KAIROS_API int kairos_init_values(const char* config_text, const char* const* keys,
                                  const char* const* values, size_t count) {
  return Guarded("kairos_init_values", [&]() -> absl::Status {
    if (count > 0 && (keys == nullptr || values == nullptr))
      return absl::InvalidArgumentError("kairos_init_values: keys and values must not be NULL");
    if (count > 64)
      return absl::InvalidArgumentError("kairos_init_values: at most 64 values");
    std::vector<std::pair<std::string_view, std::string_view>> pairs;
    for (size_t i = 0; i < count; ++i) {
      if (keys[i] == nullptr || values[i] == nullptr)
        return absl::InvalidArgumentError("kairos_init_values: a key or value is NULL");
      pairs.emplace_back(keys[i], values[i]);
    }
    return kairos::api::InitValues(config_text == nullptr ? std::string_view() : config_text,
                                   pairs);
  });
}

KAIROS_API void kairos_shutdown(void) {
  GuardedVoid("kairos_shutdown", [] { kairos::api::Shutdown(); });
}

KAIROS_API void kairos_range_push(const char* name) {
  GuardedVoid("kairos_range_push", [&] { kairos::api::RangePush(name); });
}
KAIROS_API void kairos_range_pop(void) {
  GuardedVoid("kairos_range_pop", [] { kairos::api::RangePop(); });
}
KAIROS_API uint64_t kairos_range_start(const char* name) {
  uint64_t id = 0;
  GuardedVoid("kairos_range_start", [&] { id = kairos::api::RangeStart(name); });
  return id;
}
KAIROS_API void kairos_range_end(uint64_t id) {
  if (id > 0xFFFFFFFFull) return;
  GuardedVoid("kairos_range_end", [&] { kairos::api::RangeEnd(static_cast<uint32_t>(id)); });
}
KAIROS_API void kairos_mark(const char* name) {
  GuardedVoid("kairos_mark", [&] { kairos::api::Mark(name); });
}

KAIROS_API void kairos_optimizer_pre_step(void) {
  GuardedVoid("kairos_optimizer_pre_step", [] {
    kairos::api::RangePush("Optimizer.step");
    t_caller.optimizer_range = kairos::api::CurrentRangeId();
  });
}

KAIROS_API void kairos_optimizer_post_step(void) {
  GuardedVoid("kairos_optimizer_post_step", [] {
    if (t_caller.optimizer_range != 0 && kairos::api::CurrentRangeId() == t_caller.optimizer_range)
      kairos::api::RangePop();
    t_caller.optimizer_range = 0;
    kairos::api::Step();
  });
}

KAIROS_API void kairos_step(void) {
  GuardedVoid("kairos_step", [] { kairos::api::Step(); });
}

KAIROS_API int kairos_start(void) {
  return Guarded("kairos_start", [] { return kairos::api::Start(); });
}

KAIROS_API int kairos_stop(void) {
  return Guarded("kairos_stop", [] { return kairos::api::Stop(); });
}

KAIROS_API const char* kairos_flush(void) {
  const char* result = nullptr;
  const int code = Guarded("kairos_flush", [&] {
    absl::StatusOr<std::string> path = kairos::api::Flush();
    if (!path.ok()) return path.status();
    t_caller.flush_path = *std::move(path);
    result = t_caller.flush_path.c_str();
    return absl::OkStatus();
  });
  return code == KAIROS_OK ? result : nullptr;
}

KAIROS_API int kairos_set_metadata(const char* key, const char* value) {
  return Guarded("kairos_set_metadata", [&] {
    if (key == nullptr)
      return absl::InvalidArgumentError("kairos_set_metadata: key must be a non-empty string");
    return kairos::api::SetMetadata(key, value != nullptr ? value : "");
  });
}

KAIROS_API const volatile uint32_t* kairos_recording_flag(void) {
  return kairos::api::RecordingFlag();  // no allocation, cannot throw
}

}  // extern "C"
