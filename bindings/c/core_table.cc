// File: core_table.cc
// Layer: bindings/c (libkairos_core.so). The core's one export, kairos_core_get(): the table
// the preload shim (libkairos.so, shim.c) calls through, filled with the C ABI's
// implementations (kairos_c.cc, kairos_ops.cc, the injection entry points, the NCCL plugin).
// The core has no constructor of its own: what libkairos.so's constructor did before the
// split is `on_load`, which the shim calls after dlopen() returned (bindings/c/core_abi.h).
// Threading: the table is constant-initialised (no static initialiser); see kairos.h.
#include "core_abi.h"
#include "session/api.h"

extern "C" {
// Defined in cuda_injection.cc (CUDA builds) and nvtx_injection.cc; exported by the shim.
#ifdef KAIROS_CORE_CUDA_INJECTION
int InitializeInjection(void);
#endif
int InitializeInjectionNvtx2(const void* (*get_export_table)(uint32_t));
}

namespace kairos::bindings {
extern const kairos_nccl_profiler_v4_t kNcclPlugin;  // nccl_profiler.cc
}

namespace {

// LD_PRELOAD (or a program linked with libkairos.so, or a dlopen that found the environment
// configuring kairos, or the first C ABI call): initialise from the environment. Under
// LD_PRELOAD a window the environment opens at once (warm-up 0) is open before main() runs,
// so a short program is traced from its start (api::OnLibraryLoad). Never runs under the
// dynamic loader's lock of the core's own dlopen (the shim calls it after dlopen returned),
// so the runner's warm-up may load libcupti while this thread waits for it.
void OnLoad() {
  try {
    kairos::api::OnLibraryLoad();
  } catch (...) {
    kairos::api::LogBarrierError("library load", "exception");
  }
}

const kairos_core_api kCoreApi = {
    KAIROS_CORE_ABI_VERSION,
    sizeof(kairos_core_api),
    OnLoad,
    kairos_last_error,
    kairos_init,
    kairos_init_values,
    kairos_shutdown,
    kairos_range_push,
    kairos_range_pop,
    kairos_range_start,
    kairos_range_end,
    kairos_mark,
    kairos_optimizer_pre_step,
    kairos_optimizer_post_step,
    kairos_step,
    kairos_start,
    kairos_stop,
    kairos_flush,
    kairos_set_metadata,
    kairos_recording_flag,
    kairos_op_push,
    kairos_op_push_flops,
    kairos_op_attach,
    kairos_current_iteration,
    kairos_py_attach,
    kairos_py_name,
    kairos_py_call,
    kairos_py_return,
#ifdef KAIROS_CORE_CUDA_INJECTION
    InitializeInjection,
#else
    nullptr,
#endif
    InitializeInjectionNvtx2,
    &kairos::bindings::kNcclPlugin,
    kairos_memory_event,
    kairos_op_push_inputs,
    kairos_py_call_line,
    kairos_py_line_source,
    kairos_op_enter,
    kairos_op_exit,
    kairos_op_enter_captured,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const kairos_core_api* kairos_core_get(void) {
  return &kCoreApi;
}
