// File: api.h
// Layer: kairos_session. The core's public entry points, the only header the bindings
// (bindings/c, and through them every language) include: control calls that forward to the
// process root's session, and the recording hot path as inline forwards to the CPU recorder
// (so a range still costs one relaxed load when nothing records).
// Errors: control calls return absl::Status; none throws on its own, but the bindings keep
// an exception barrier around them anyway (an allocation can fail anywhere).
// Threading: every function may be called from any thread at any time, before the root
// exists (it is created on first use), after Shutdown, and in a forked child.
#ifndef KAIROS_SRC_SESSION_API_H_
#define KAIROS_SRC_SESSION_API_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "activity/cpu_recorder.h"
#include "activity/op_scope.h"
#include "model/nccl_profiler_abi.h"

namespace kairos::api {

// ---- Control (cold; each may block up to the bound documented in bindings/c/kairos.h) ----
// Creates the process root (from the environment) if it does not exist yet.
void EnsureRoot();
absl::Status Init(std::string_view config_text);
// kairos_init_values: the text, then each (key, value) pair taken as data, not as text.
absl::Status InitValues(std::string_view config_text,
                        const std::vector<std::pair<std::string_view, std::string_view>>& values);
void Shutdown();
absl::Status Start();
absl::Status Stop();
absl::StatusOr<std::string> Flush();
absl::Status SetMetadata(std::string key, std::string value);
// Library load (the shim calls it once it has loaded the core; bindings/c/core_abi.h):
// creates the root; when kairos was preloaded and the environment opens a window at once,
// waits (bounded) until it is open.
void OnLibraryLoad();
// CUDA injection: creates the root and waits (bounded) for a startup window.
void OnCudaInjection();
// NVTX injection: applies the base config's domain filter once, then attaches kairos'
// handlers. Returns 1 when attached, 0 when not.
int AttachNvtx(const void* (*get_export_table)(uint32_t));
// NCCL profiler plugin v4 (bindings/c/nccl_profiler.cc exports the table as
// `ncclProfiler_v4`; src/activity/nccl_collectives.h says what kairos keeps). Never block.
kairos_nccl_result_t NcclPluginInit(void** context, int* activation_mask, const char* comm_name,
                                    uint64_t comm_hash, int n_nodes, int nranks, int rank);
kairos_nccl_result_t NcclPluginStartEvent(void* context, void** handle,
                                          const kairos_nccl_event_descr_v4_t* descr);
kairos_nccl_result_t NcclPluginStopEvent(void* handle);
kairos_nccl_result_t NcclPluginFinalize(void* context);

// ---- Hot path ----
inline void RangePush(const char* name) { internal::PushRange(name); }
inline void RangePop() { internal::PopRange(); }
inline uint32_t RangeStart(const char* name) { return internal::StartRange(name); }
inline void RangeEnd(uint32_t id) { internal::EndRange(id); }
inline void Mark(const char* name) { internal::Mark(name); }
inline uint32_t CurrentRangeId() { return internal::CurrentCpuRangeId(); }
// A framework operator's range args (kairos_op_push*): a cpu_op with PyTorch's metadata.
inline internal::RangeArgs OpArgs(int64_t sequence_nr, uint64_t fwd_thread_id,
                                  uint64_t record_function_id, int64_t flops) {
  internal::RangeArgs a;
  a.cpu_op = 1;
  a.sequence_nr = sequence_nr;
  a.fwd_thread_id = fwd_thread_id;
  a.record_function_id = record_function_id;
  a.flops = flops;
  a.py_line = internal::PythonLineNow();  // the Python line that led to the op (stacks on)
  return a;
}
// A framework operator (kairos_op_push): a cpu_op range with PyTorch's metadata; closed by
// RangePop. One relaxed load while nothing records.
inline void OpPush(const char* name, int64_t sequence_nr, uint64_t fwd_thread_id,
                   uint64_t record_function_id, const char* input_dims,
                   const char* input_types, int64_t flops = -1) {
  if (__builtin_expect(!internal::CpuRecording(), 1)) return;
  internal::RangeArgs a = OpArgs(sequence_nr, fwd_thread_id, record_function_id, flops);
  a.input_dims = input_dims;
  a.input_types = input_types;
  internal::PushRange(name, &a);
}
// OpPush with the inputs as raw sizes (kairos_op_push_inputs): the collector formats "Input
// Dims" / "Input type" from them; `inputs` nullptr = none.
inline void OpPushInputs(const char* name, int64_t sequence_nr, uint64_t fwd_thread_id,
                         uint64_t record_function_id, int64_t flops,
                         const internal::OpInputs* inputs) {
  if (__builtin_expect(!internal::CpuRecording(), 1)) return;
  internal::RangeArgs a = OpArgs(sequence_nr, fwd_thread_id, record_function_id, flops);
  a.inputs = inputs;
  internal::PushRange(name, &a);
}
// A framework operator scope (kairos_op_enter / kairos_op_exit: activity/op_scope.h): `m`
// nullptr = a plain range (a framework's user scope). EnterOp returns 1 on the thread's first
// scope of the session.
inline int OpEnter(const char* name, const internal::OpMeta* m, const internal::PackedInputs* in,
                   uint64_t thread_key) {
  return internal::EnterOp(name, m, in, thread_key);
}
// The same for an op whose inputs `c` writes in place (kairos_op_enter_captured).
inline int OpEnterCaptured(const char* name, const internal::OpMeta& m,
                           const internal::OpCapture& c, uint64_t thread_key) {
  return internal::EnterOpCaptured(name, m, c, thread_key);
}
inline void OpExit(uint64_t thread_key) { internal::ExitOp(thread_key); }
// ---- Python stacks (kairos_py_*, the Python package's tracer; docs/PYTHON_STACKS.md) ----
inline void PyCall(uint32_t name, uint32_t caller_line = 0) { internal::PyCall(name, caller_line); }
inline void SetPyLineSource(internal::PythonLineFn fn) { internal::SetPythonLineSource(fn); }
inline void PyReturn() { internal::PyReturn(); }
// A framework allocator's event (kairos_memory_event); hot path, never throws.
inline void MemoryEvent(uint64_t addr, int64_t bytes, int64_t total_allocated, int64_t total_reserved,
                        int32_t device_type, int32_t device_id) {
  internal::RecordMemory(addr, bytes, total_allocated, total_reserved, device_type, device_id);
}
inline uint32_t PyName(std::string_view name) { return internal::InternPythonName(name); }
// Window observer flags (kairos.h KAIROS_PY_*).
inline constexpr uint32_t kPyStacks = 1, kPyModules = 2;
// The Python tracer attaches (kairos_py_attach): `observer(flags, ctx)` is called on the
// session's runner thread when a window whose config sets PROFILE_WITH_STACK or
// PROFILE_WITH_MODULES begins its warm-up (flags != 0), and with 0 once it stops recording or
// is cancelled. Once per root; later calls return false and change nothing.
bool AttachPythonTracer(void (*observer)(uint32_t flags, void* ctx), void* ctx);

// A framework bridge is attached (kairos_op_attach; once per process, later calls do
// nothing): from now on traces apply PROFILE_REPORT_INPUT_SHAPES to cpu_op shapes.
void AttachFrameworkOps();
// One iteration boundary (kairos_step).
void Step();
// Iterations so far (kairos_current_iteration).
int64_t CurrentIteration();
// The recording flag: non-zero while a window records; valid for the life of the process.
const volatile uint32_t* RecordingFlag();

// ---- Errors ----
// An exception caught at the C ABI in `where`: one error line, at most one per second (with
// the number suppressed since the last). Never throws.
void LogBarrierError(const char* where, const char* what) noexcept;

#ifdef KAIROS_TEST_SEAMS
// ---- Test hook (only in a build of api.cc with KAIROS_TEST_SEAMS: capi_barrier_test) ----
// The next control call throws std::runtime_error (tests of the C ABI's exception barrier).
void ThrowOnNextCallForTest();
#endif

}  // namespace kairos::api

#endif  // KAIROS_SRC_SESSION_API_H_
