// File: nvtx_injection.h
// Layer: kairos_activity. kairos as an NVTX tool: NvtxAttach fills the function slots of one
// NVTX instance (one per shared object that uses NVTX) with handlers that record through the
// same per-thread path as kairos ranges (cpu_recorder.h), and NvtxAddStats reports NVTX
// loss counters in each trace. bindings/c/nvtx_injection.cc exports InitializeInjectionNvtx2.
// Threading: NvtxAttach may run concurrently from several NVTX instances; it only writes
// slots of the instance that called it. Handlers run on application threads: when nothing
// records, a push/pop pair costs the disabled check plus a thread-local depth update.
#ifndef KAIROS_SRC_ACTIVITY_NVTX_INJECTION_H_
#define KAIROS_SRC_ACTIVITY_NVTX_INJECTION_H_

#include <cstdint>

#include "activity/nvtx_abi.h"
#include "model/trace_data.h"

namespace kairos::internal {

// Installs the kairos handlers into the NVTX instance that exposes `get_export_table`.
// Returns 1 on success, 0 (NVTX then unloads the tool for that instance) if the instance
// offers no callback table. Idempotent: process-global state is created once.
int NvtxAttach(nvtx::GetExportTableFn get_export_table);

// Adds the nvtx_* counters to `data.stats`: pops without a push since the previous trace
// (counted only while recording), init calls, domains created / filtered / overflowed,
// strings and thread names dropped. Installed by NvtxAttach as the cpu source's collect
// hook, so it runs in every session once NVTX attached kairos. Session thread only.
void NvtxAddStats(TraceData& data);

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_NVTX_INJECTION_H_
