// File: kairos_ops.cc
// Layer: bindings/c. C entry points for framework bridges (the torch bridge): operator
// ranges recorded as cpu_op events with their client metadata, and the per-trace
// "report input shapes" flag.
// Threading: kairos_op_push is the hot path (any thread; one relaxed load when idle). The
// shapes flag is written by the "framework" source on the controller thread and read with a
// plain load by bridges.
#include <atomic>
#include <memory>
#include <mutex>

#include "activity/cpu_recorder.h"
#include "kairos.h"
#include "session/profiler.h"
#include "trace_source.h"

namespace {

std::atomic<uint32_t> g_report_shapes{0};

// A source with no data of its own: it mirrors the session's PROFILE_REPORT_INPUT_SHAPES into
// g_report_shapes for the bridge. Registered by the first kairos_op_shapes_flag() call (the
// bridge's install), so a process without a framework bridge pays nothing.
class FrameworkOpsSource : public kairos::TraceSource {
 public:
  const char* name() const override { return "framework_ops"; }
  absl::Status StartWarmup(const kairos::Config& config) override {
    g_report_shapes.store(config.report_input_shapes ? 1 : 0, std::memory_order_relaxed);
    return absl::OkStatus();
  }
  void StartRecording(int64_t) override {}
  void StopRecording(int64_t) override {}
  void Collect(kairos::TraceData&) override {}
  void Reset() override { g_report_shapes.store(0, std::memory_order_relaxed); }
};

}  // namespace

extern "C" {

KAIROS_API void kairos_op_push(const char* name, const kairos_op_args* args) {
  if (__builtin_expect(kairos::internal::g_cpu_epoch.load(std::memory_order_relaxed) == 0, 1))
    return;
  kairos::internal::RangeArgs a;
  a.cpu_op = 1;
  if (args != nullptr) {
    a.sequence_nr = args->sequence_nr;
    a.fwd_thread_id = args->fwd_thread_id;
    a.record_function_id = args->record_function_id;
    a.input_dims = args->input_dims;
    a.input_types = args->input_types;
  }
  kairos::internal::PushRange(name, &a);
}

KAIROS_API const volatile uint32_t* kairos_op_shapes_flag(void) {
  static std::once_flag once;
  try {
    std::call_once(once, [] {
      kairos::Profiler::Get().RegisterTraceSource(std::make_unique<FrameworkOpsSource>());
    });
  } catch (...) {
  }
  static_assert(sizeof(g_report_shapes) == sizeof(uint32_t), "flag layout");
  return reinterpret_cast<const volatile uint32_t*>(&g_report_shapes);
}

KAIROS_API int64_t kairos_current_iteration(void) {
  return kairos::g_iteration.load(std::memory_order_relaxed);
}

}  // extern "C"
