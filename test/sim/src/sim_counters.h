// File: test/sim/src/sim_counters.h
// Layer: CUDA/CUPTI simulator: what the PM-sampling counters are derived from.
// Threading: thread-safe.
//
// libcudart.so.13 reports each kernel, copy and memset it schedules (CLOCK_MONOTONIC ns,
// possibly in the future) as one activity interval with the fractions of the device it
// occupies; libcupti.so.13 (cupti_pmsampling.cc) keeps a bounded history per device and
// turns it into PM samples. See docs/SIMULATOR.md "PM sampling".
#ifndef KAIROS_TEST_SIM_SRC_SIM_COUNTERS_H_
#define KAIROS_TEST_SIM_SRC_SIM_COUNTERS_H_

#include <cstdint>

#include "sim_private.h"

struct KSimPmActivity {
  int device;
  uint64_t start_mono_ns;
  uint64_t end_mono_ns;
  double sm_active;      // fraction of SMs with at least one resident block
  double warps_active;   // resident warps / max warps, averaged over the active SMs
  double tensor_active;  // fraction of elapsed cycles the tensor pipe is busy
  double dram;           // fraction of peak DRAM bandwidth
};

// Implemented in libcupti (cupti_pmsampling.cc); a no-op unless PM sampling is enabled.
KSIM_API void KSimPmNote(const KSimPmActivity* activity);

namespace kairos::sim {
struct Context;
struct LaunchShape;
struct KernelInfo;
// cudart side (sim_counters.cc): derive the fractions from the device model and report.
void PmNoteKernel(const Context* ctx, const KernelInfo* k, const LaunchShape& shape, uint64_t start,
                  uint64_t end);
void PmNoteCopy(const Context* ctx, uint64_t bytes, bool touches_dram_twice, uint64_t start, uint64_t end);
}  // namespace kairos::sim

#endif  // KAIROS_TEST_SIM_SRC_SIM_COUNTERS_H_
