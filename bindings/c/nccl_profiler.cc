// File: nccl_profiler.cc
// Layer: bindings/c (libkairos_core.so). NCCL's profiler plugin v4: libkairos.so (the shim)
// exports `ncclProfiler_v4`, so NCCL (2.26 and later) loads kairos as its profiler plugin when
// NCCL_PROFILER_PLUGIN names it, and forwards to these functions: NCCL then describes every
// collective and point-to-point operation to kairos, which writes them on the operation's
// kernel ("Collective name", "In msg nelems", ..., docs/OUTPUT.md). Under LD_PRELOAD the shim
// names itself there at load unless the user chose a plugin (shim.c, OfferNcclPlugin). The
// logic lives in src/activity/nccl_collectives.cc.
// Threading: NCCL calls these from its own threads; each is non-blocking and never throws
// into NCCL (Barrier below).
#include "kairos.h"
#include "model/nccl_profiler_abi.h"
#include "session/api.h"

namespace {

// The exception barrier of every entry point: NCCL gets `on_error` (success, as NCCL asks of
// plugins, except from init, whose failure disables the plugin) and never an exception.
template <typename F>
kairos_nccl_result_t Barrier(const char* where, kairos_nccl_result_t on_error, F&& f) noexcept {
  try {
    return f();
  } catch (...) {
    kairos::api::LogBarrierError(where, "exception");
    return on_error;
  }
}

kairos_nccl_result_t Init(void** context, int* activation_mask, const char* comm_name,
                          uint64_t comm_hash, int n_nodes, int nranks, int rank,
                          kairos_nccl_debug_logger_t) {
  return Barrier("ncclProfiler_v4.init", kKairosNcclInternalError, [&] {
    return kairos::api::NcclPluginInit(context, activation_mask, comm_name, comm_hash, n_nodes,
                                       nranks, rank);
  });
}

kairos_nccl_result_t StartEvent(void* context, void** handle, kairos_nccl_event_descr_v4_t* d) {
  if (handle != nullptr) *handle = nullptr;  // also what NCCL holds should the call throw
  return Barrier("ncclProfiler_v4.startEvent", kKairosNcclSuccess,
                 [&] { return kairos::api::NcclPluginStartEvent(context, handle, d); });
}

kairos_nccl_result_t StopEvent(void* handle) {
  return Barrier("ncclProfiler_v4.stopEvent", kKairosNcclSuccess,
                 [&] { return kairos::api::NcclPluginStopEvent(handle); });
}

// Only proxy events have states, and kairos does not ask for them.
kairos_nccl_result_t RecordEventState(void*, int, kairos_nccl_event_state_args_v4_t*) {
  return kKairosNcclSuccess;
}

kairos_nccl_result_t Finalize(void* context) {
  return Barrier("ncclProfiler_v4.finalize", kKairosNcclSuccess,
                 [&] { return kairos::api::NcclPluginFinalize(context); });
}

}  // namespace

// Handed to the shim through the core table (core_table.cc); the shim exports
// `ncclProfiler_v4` with trampolines into these (shim.c), so NCCL finds the plugin in the file
// it was told to load, libkairos.so, whether or not the core is loaded yet.
namespace kairos::bindings {
extern const kairos_nccl_profiler_v4_t kNcclPlugin;
const kairos_nccl_profiler_v4_t kNcclPlugin = {"kairos", Init, StartEvent, StopEvent,
                                               RecordEventState, Finalize};
}  // namespace kairos::bindings
