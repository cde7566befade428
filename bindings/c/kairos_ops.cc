// File: kairos_ops.cc
// Layer: bindings/c. C entry points for framework bridges (the torch bridge): operator
// ranges recorded as cpu_op events with their client metadata, the per-trace
// PROFILE_REPORT_INPUT_SHAPES filter, and the iteration count. All of it forwards to
// session/api.h, behind the same exception barrier as every other C entry point.
// Threading: kairos_op_push is the hot path (any thread; one relaxed load when idle).
#include "kairos.h"
#include "session/api.h"

extern "C" {

KAIROS_API void kairos_op_push(const char* name, const kairos_op_args* args) {
  try {
    if (args == nullptr) {
      kairos::api::OpPush(name, -1, 0, 0, nullptr, nullptr);
    } else {
      kairos::api::OpPush(name, args->sequence_nr, args->fwd_thread_id, args->record_function_id,
                          args->input_dims, args->input_types);
    }
  } catch (...) {
    kairos::api::LogBarrierError("kairos_op_push", "exception");
  }
}

KAIROS_API void kairos_op_push_flops(const char* name, const kairos_op_args* args,
                                     int64_t flops) {
  try {
    if (args == nullptr) {
      kairos::api::OpPush(name, -1, 0, 0, nullptr, nullptr, flops);
    } else {
      kairos::api::OpPush(name, args->sequence_nr, args->fwd_thread_id, args->record_function_id,
                          args->input_dims, args->input_types, flops);
    }
  } catch (...) {
    kairos::api::LogBarrierError("kairos_op_push_flops", "exception");
  }
}

KAIROS_API void kairos_op_push_inputs(const char* name, const kairos_op_args* args,
                                      int64_t flops, const kairos_op_inputs* inputs) {
  try {
    kairos::internal::OpInputs in;
    if (inputs != nullptr) {
      in.count = inputs->count;
      in.ranks = inputs->ranks;
      in.sizes = inputs->sizes;
      in.types = inputs->types;
    }
    const kairos::internal::OpInputs* raw = inputs != nullptr ? &in : nullptr;
    if (args == nullptr) {
      kairos::api::OpPushInputs(name, -1, 0, 0, flops, raw);
    } else {
      kairos::api::OpPushInputs(name, args->sequence_nr, args->fwd_thread_id,
                                args->record_function_id, flops, raw);
    }
  } catch (...) {
    kairos::api::LogBarrierError("kairos_op_push_inputs", "exception");
  }
}

static_assert(KAIROS_OP_MAX_INPUT_WORDS == kairos::internal::kMaxOpInputWords, "kairos.h bound");

namespace {
// An operator's client metadata as kairos_op_enter and kairos_op_enter_captured take it.
kairos::internal::OpMeta OpMetaOf(const kairos_op_args& a, int64_t flops) {
  kairos::internal::OpMeta m;
  m.sequence_nr = a.sequence_nr;
  m.fwd_thread_id = a.fwd_thread_id;
  m.record_function_id = a.record_function_id;
  m.flops = flops;
  return m;
}
}  // namespace

KAIROS_API int kairos_op_enter(const char* name, const kairos_op_args* args, int64_t flops,
                               const uint64_t* input_words, uint32_t n_input_words,
                               uint64_t thread_key) {
  try {
    if (args == nullptr) return kairos::api::OpEnter(name, nullptr, nullptr, thread_key);
    const kairos::internal::OpMeta m = OpMetaOf(*args, flops);
    if (input_words == nullptr) return kairos::api::OpEnter(name, &m, nullptr, thread_key);
    const kairos::internal::PackedInputs in{input_words, n_input_words};
    return kairos::api::OpEnter(name, &m, &in, thread_key);
  } catch (...) {
    kairos::api::LogBarrierError("kairos_op_enter", "exception");
    return 0;
  }
}

KAIROS_API int kairos_op_enter_captured(const char* name, const kairos_op_args* args,
                                        int64_t flops, kairos_op_capture_fn capture, void* ctx,
                                        uint64_t thread_key) {
  try {
    if (args == nullptr || capture == nullptr)
      return kairos_op_enter(name, args, flops, nullptr, 0, thread_key);
    return kairos::api::OpEnterCaptured(name, OpMetaOf(*args, flops),
                                        kairos::internal::OpCapture{capture, ctx}, thread_key);
  } catch (...) {
    kairos::api::LogBarrierError("kairos_op_enter_captured", "exception");
    return 0;
  }
}

// Hot path: an inline forward that cannot throw (no allocation, no name lookup).
KAIROS_API void kairos_op_exit(uint64_t thread_key) { kairos::api::OpExit(thread_key); }

KAIROS_API void kairos_op_attach(void) {
  try {
    kairos::api::AttachFrameworkOps();
  } catch (...) {
    kairos::api::LogBarrierError("kairos_op_attach", "exception");
  }
}

KAIROS_API int64_t kairos_current_iteration(void) { return kairos::api::CurrentIteration(); }

KAIROS_API int kairos_py_attach(kairos_py_observer observer, void* ctx) {
  try {
    return kairos::api::AttachPythonTracer(observer, ctx) ? 1 : 0;
  } catch (...) {
    kairos::api::LogBarrierError("kairos_py_attach", "exception");
    return 0;
  }
}

KAIROS_API uint32_t kairos_py_name(const char* name, size_t len) {
  if (name == nullptr) return 0;
  return kairos::api::PyName(std::string_view(name, len));  // never throws
}

// Hot path: inline forwards that cannot throw (no allocation; a full ring counts a drop).
KAIROS_API void kairos_py_call(uint32_t name) { kairos::api::PyCall(name); }
KAIROS_API void kairos_py_return(void) { kairos::api::PyReturn(); }
KAIROS_API void kairos_py_call_line(uint32_t name, uint32_t caller_line) {
  kairos::api::PyCall(name, caller_line);
}
KAIROS_API void kairos_py_line_source(kairos_py_line_fn fn) { kairos::api::SetPyLineSource(fn); }
KAIROS_API void kairos_memory_event(const void* addr, int64_t bytes, int64_t total_allocated,
                                    int64_t total_reserved, int32_t device_type,
                                    int32_t device_id) {
  kairos::api::MemoryEvent(reinterpret_cast<uintptr_t>(addr), bytes, total_allocated,
                           total_reserved, device_type, device_id);
}

}  // extern "C"
