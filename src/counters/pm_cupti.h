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

// Never nullptr: when libcupti cannot be loaded, Open() returns samplers whose Start says why.
std::unique_ptr<PmPlatform> CreateCuptiPmPlatform(const std::string& cupti_library);

// Child side of fork() (the root's hook): the PM API and its mutex, which a thread of the
// parent may have held, are replaced by fresh ones.
void PmCuptiAfterForkChild();

}  // namespace kairos::internal

#endif  // KAIROS_SRC_COUNTERS_PM_CUPTI_H_
