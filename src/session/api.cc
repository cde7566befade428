// File: api.cc — see api.h.
// Layer: kairos_session. Threading: see api.h.
#include "session/api.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>

#include "activity/nccl_collectives.h"
#include "activity/nvtx_injection.h"
#include "activity/nvtx_registry.h"
#include "util/clock.h"
#include "config/config.h"
#include "config/env.h"
#include "util/log.h"
#include "session/root.h"
#include "model/trace_data.h"
#include "model/trace_source.h"

namespace kairos::api {
namespace {

#ifdef KAIROS_TEST_SEAMS
// Only in the barrier test's own build of this file (test/capi/CMakeLists.txt): the library
// carries no test hook and checks nothing extra on its entry points.
std::atomic<bool> g_throw_next{false};
#endif

SessionController& Session() {
#ifdef KAIROS_TEST_SEAMS
  if (g_throw_next.load(std::memory_order_relaxed) && g_throw_next.exchange(false))
    throw std::runtime_error("exception forced by ThrowOnNextCallForTest");
#endif
  return GetRoot().session;
}

}  // namespace

#ifdef KAIROS_TEST_SEAMS
void ThrowOnNextCallForTest() { g_throw_next.store(true); }
#endif

void LogBarrierError(const char* where, const char* what) noexcept {
  // One limit for every entry point, in the logger's site table: it must work when the root
  // cannot be created (an exception from GetRoot itself).
  constexpr uint64_t kSite = internal::LogSiteKey(__FILE__, __LINE__);
  uint64_t suppressed = 0;
  if (internal::AdmitOncePerInterval(kSite, MonotonicNowNs(), 1000000000, &suppressed)) {
    KAIROS_LOG_ERROR("internal error in %s: %s (caught at the C ABI; %llu similar suppressed)",
                     where, what, static_cast<unsigned long long>(suppressed));
  }
}

void EnsureRoot() { (void)Session(); }
absl::Status Init(std::string_view config_text) {
  SessionController& p = Session();
  if (config_text.empty()) return absl::OkStatus();
  return p.Init(config_text);
}
absl::Status InitValues(std::string_view config_text,
                        const std::vector<std::pair<std::string_view, std::string_view>>& values) {
  SessionController& p = Session();
  if (config_text.empty() && values.empty()) return absl::OkStatus();
  std::vector<ConfigValue> data;
  data.reserve(values.size());
  for (const auto& [key, value] : values) data.push_back(ConfigValue{key, value});
  return p.Init(config_text, data);
}
void Shutdown() { Session().Shutdown(); }
absl::Status Start() { return Session().Start(); }
absl::Status Stop() { return Session().Stop(); }
absl::StatusOr<std::string> Flush() { return Session().Flush(); }
absl::Status SetMetadata(std::string key, std::string value) {
  SessionController& p = Session();
  if (key.empty())
    return absl::InvalidArgumentError("kairos_set_metadata: key must be a non-empty string");
  return p.SetMetadata(std::move(key), std::move(value));
}

void OnLibraryLoad() {
  const EnvSettings& env = ProcessEnv();  // read before, and without, creating the root
  // Loaded by NCCL through a NCCL_PROFILER_PLUGIN inherited from a preloaded ancestor, in a
  // process the job started without LD_PRELOAD: no session from the environment (no trace,
  // no daemon registration, no telemetry). Explicit calls of a program that links kairos
  // still work.
  if (env.nccl_plugin_inherited) {
    KAIROS_LOG_VERBOSE("loaded through an inherited NCCL_PROFILER_PLUGIN without LD_PRELOAD: "
                       "inert");
    return;
  }
  SessionController& p = Session();  // also applies KAIROS_LOG_LEVEL
  // The preload shim named itself NCCL's profiler plugin before the core read the environment
  // (bindings/c/shim.c, OfferNcclPlugin): say so at the verbose level, as before the split.
  if (env.nccl_plugin_owner_pid == static_cast<int64_t>(getpid()) &&
      !env.nccl_profiler_plugin.empty()) {
    KAIROS_LOG_VERBOSE("NCCL_PROFILER_PLUGIN=%s (kairos describes NCCL collectives)",
                       env.nccl_profiler_plugin.c_str());
  }
  // Only under LD_PRELOAD: a library loaded by dlopen() (NVTX or CUDA injection, Python)
  // runs its constructor with the loader lock held, and the runner's warm-up (libcupti
  // loading the driver) would wait for that lock; CUDA injection waits in OnCudaInjection.
  if (env.kairos_preloaded) p.WaitForStartupWindow();
}

kairos_nccl_result_t NcclPluginInit(void** context, int* activation_mask, const char* comm_name,
                                    uint64_t comm_hash, int n_nodes, int nranks, int rank) {
  if (ProcessEnv().nccl_plugin_inherited) {
    // See OnLibraryLoad: NCCL gets a plugin that asks for no event.
    if (context != nullptr) *context = nullptr;
    if (activation_mask != nullptr) *activation_mask = 0;
    return kKairosNcclSuccess;
  }
  const kairos_nccl_result_t r = internal::NcclPluginInit(
      &GetRoot().nccl, context, activation_mask, comm_name, comm_hash, n_nodes, nranks, rank);
  if (r == kKairosNcclSuccess) {
    KAIROS_LOG_VERBOSE("NCCL profiler plugin: communicator rank %d of %d", rank, nranks);
  }
  return r;
}
kairos_nccl_result_t NcclPluginStartEvent(void* context, void** handle,
                                          const kairos_nccl_event_descr_v4_t* descr) {
  return internal::NcclPluginStartEvent(context, handle, descr);
}
kairos_nccl_result_t NcclPluginStopEvent(void* handle) { return internal::NcclPluginStopEvent(handle); }
kairos_nccl_result_t NcclPluginFinalize(void* context) { return internal::NcclPluginFinalize(context); }

void OnCudaInjection() { Session().WaitForStartupWindow(); }

int AttachNvtx(const void* (*get_export_table)(uint32_t)) {
  std::call_once(GetRoot().nvtx_filter_set, [] {
    const Config config = Session().base_config();
    // Applied when a domain is created: a filtered domain then costs nothing per call.
    internal::NvtxSetDomainFilter(config.nvtx_domains_include, config.nvtx_domains_exclude);
  });
  const int attached = internal::NvtxAttach(get_export_table);
  // A window the environment opens at start-up is open before the first NVTX call (the one
  // that loaded kairos) goes on to the handlers, so the program's first ranges are recorded.
  // Bounded wait (WaitForStartupWindow); it returns at once on every later call.
  if (attached != 0) Session().WaitForStartupWindow();
  return attached;
}

void Step() { StepHook(); }

int64_t CurrentIteration() { return g_steps.iteration.load(std::memory_order_relaxed); }

namespace {
// A source with no data of its own, registered by AttachFrameworkOps (so a process without a
// framework bridge pays nothing): it applies the session's PROFILE_REPORT_INPUT_SHAPES and
// PROFILE_WITH_FLOPS to the cpu_op rows the cpu source collected before it (sources collect
// in registration order).
// Deciding at collection rather than on the hot path is exact: an iteration window switches
// recording on at the step boundary, before the runner has seen its config.
class FrameworkOpsSource : public TraceSource {
 public:
  const char* name() const override { return "framework_ops"; }
  absl::Status StartWarmup(const Config& config) override {
    report_shapes_ = config.report_input_shapes;
    with_flops_ = config.with_flops;
    return absl::OkStatus();
  }
  void StartRecording(int64_t) override {}
  void StopRecording(int64_t) override {}
  void Collect(TraceData& data) override {
    if (report_shapes_ && with_flops_) return;
    for (CpuArgs& a : data.cpu_args) {
      if (!a.cpu_op) continue;
      if (!report_shapes_) a.input_dims = a.input_types = 0;
      if (!with_flops_) a.flops = -1;
    }
  }
  void Reset() override {}

 private:
  bool report_shapes_ = false;
  bool with_flops_ = false;  // PROFILE_WITH_FLOPS: keep the bridge's "flops" args
};
// Registered by AttachPythonTracer: tells the tracer (through its observer) when a window
// with Python stacks warms up and when it stops, so the interpreter's profiling hook is
// installed only around such windows. Calls come on the runner thread, outside the session
// mutex; the observer only signals (the tracer installs the hook on a Python thread).
class PythonStacksSource : public TraceSource {
 public:
  PythonStacksSource(void (*observer)(uint32_t, void*), void* ctx)
      : observer_(observer), ctx_(ctx) {}
  const char* name() const override { return "python_stacks"; }
  absl::Status StartWarmup(const Config& config) override {
    flags_ = (config.with_stack ? kPyStacks : 0) | (config.with_modules ? kPyModules : 0);
    if (flags_ != 0) observer_(flags_, ctx_);
    return absl::OkStatus();
  }
  void StartRecording(int64_t) override {}
  void StopRecording(int64_t) override { Off(); }
  void Collect(TraceData&) override {}
  void Reset() override { Off(); }

 private:
  void Off() {
    if (flags_ != 0) observer_(0, ctx_);
    flags_ = 0;
  }
  void (*observer_)(uint32_t, void*);
  void* ctx_;
  uint32_t flags_ = 0;  // runner thread only
};
}  // namespace

bool AttachPythonTracer(void (*observer)(uint32_t, void*), void* ctx) {
  if (observer == nullptr) return false;
  Root& root = GetRoot();
  void (*expected)(uint32_t, void*) = nullptr;
  if (!root.python_observer.compare_exchange_strong(expected, observer, std::memory_order_acq_rel))
    return false;
  root.python_observer_ctx.store(ctx, std::memory_order_release);
  root.session.RegisterJoiningTraceSource(std::make_unique<PythonStacksSource>(observer, ctx));
  return true;
}

void AttachFrameworkOps() {
  Root& root = GetRoot();
  if (root.framework_ops_attached.exchange(true, std::memory_order_acq_rel)) return;
  root.session.RegisterTraceSource(std::make_unique<FrameworkOpsSource>());
}

const volatile uint32_t* RecordingFlag() { return internal::RecordingFlagWord(); }

}  // namespace kairos::api
