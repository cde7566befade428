// File: kairos_ops.cc
// Layer: bindings/c. C entry points for framework bridges (the torch bridge): operator
// ranges recorded as cpu_op events with their client metadata, the per-trace
// PROFILE_REPORT_INPUT_SHAPES filter, and the iteration count.
// Threading: kairos_op_push is the hot path (any thread; one relaxed load when idle); the
// filter source runs on the controller thread like every TraceSource.
#include <memory>
#include <mutex>

#include "activity/cpu_recorder.h"
#include "kairos.h"
#include "session/profiler.h"
#include "trace_source.h"

namespace {

// A source with no data of its own, registered by kairos_op_attach() (so a process without a
// framework bridge pays nothing): it applies the session's PROFILE_REPORT_INPUT_SHAPES to
// the cpu_op rows the cpu source collected before it (sources collect in registration
// order). Deciding at collection rather than on the hot path is exact: an iteration window
// switches recording on at the step boundary, before the controller has seen its config.
class FrameworkOpsSource : public kairos::TraceSource {
 public:
  const char* name() const override { return "framework_ops"; }
  absl::Status StartWarmup(const kairos::Config& config) override {
    report_shapes_ = config.report_input_shapes;
    return absl::OkStatus();
  }
  void StartRecording(int64_t) override {}
  void StopRecording(int64_t) override {}
  void Collect(kairos::TraceData& data) override {
    if (report_shapes_) return;
    for (kairos::CpuArgs& a : data.cpu_args) {
      if (a.cpu_op) a.input_dims = a.input_types = 0;
    }
  }
  void Reset() override {}

 private:
  bool report_shapes_ = false;
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

KAIROS_API void kairos_op_attach(void) {
  static std::once_flag once;
  try {
    std::call_once(once, [] {
      kairos::Profiler::Get().RegisterTraceSource(std::make_unique<FrameworkOpsSource>());
    });
  } catch (...) {
  }
}

KAIROS_API int64_t kairos_current_iteration(void) {
  return kairos::g_iteration.load(std::memory_order_relaxed);
}

}  // extern "C"
