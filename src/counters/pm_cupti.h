// File: pm_cupti.h
// Layer: kairos_counters (CUDA builds only). The CUPTI implementation of PmPlatform /
// PmSampler over CUDA 13's PM sampling API (cupti_pmsampling.h) and the profiler host API
// (cupti_profiler_host.h) that builds the config image and evaluates metric values. libcupti
// is loaded with dlopen like src/activity/cupti_api.cc does (the copy the process already
// has first, so both talk to one CUPTI), and never unloaded.
// Threading: a sampler is driven by one thread at a time (PmSamplingSource's lock).
#ifndef KAIROS_SRC_COUNTERS_PM_CUPTI_H_
#define KAIROS_SRC_COUNTERS_PM_CUPTI_H_

#include <memory>
#include <string>

#include "counters/pm_backend.h"

namespace kairos::internal {

// The PM API of one root: libcupti's PM entry points (loaded on first use) and the mutex that
// serialises every PM call. The root owns one (session/root.h) and hands it to both PM users,
// the session's pm_sampling source and telemetry, so their calls never overlap; a fork()
// child's fresh root makes its own (the parent's, whose mutex a thread that does not exist
// in the child may hold, is abandoned with the parent's root, never locked again).
// `after_first_start` (may be nullptr) runs once, on the thread of the first sampler Start that
// succeeds, with the PM mutex held: libcupti and libnvperf_host are loaded and initialised by
// then, so an exit hook registered there runs before their static destructors (on an H100 a
// cuptiProfilerHostDeinitialize after those destructors double-freed: docs/REAL_GPU.md).
struct PmProcessApi;
std::shared_ptr<PmProcessApi> NewPmCuptiApi(void (*after_first_start)() = nullptr);

// Never nullptr: when libcupti cannot be loaded, Open() returns samplers whose Start says why.
// `api`: the PM API its calls go through (nullptr: one of this platform's own).
std::unique_ptr<PmPlatform> CreateCuptiPmPlatform(const std::string& cupti_library,
                                                  std::shared_ptr<PmProcessApi> api);

}  // namespace kairos::internal

#endif  // KAIROS_SRC_COUNTERS_PM_CUPTI_H_
