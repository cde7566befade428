// File: test/sim/src/cupti_stubs.cc
// Layer: CUDA/CUPTI simulator, substitute libcupti.so.13: fallback exports.
// Threading: stateless.
//
// Every function the real libcupti.so.13 exports gets a weak definition here;
// the implemented ones (strong, in cupti_api.cc) replace them at link time.
// A client calling anything else gets CUPTI_ERROR_NOT_SUPPORTED (legacy
// event/metric calls: CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED, as CUDA 13
// returns) instead of a symbol lookup error. No CUPTI header is included:
// the stubs deliberately take no parameters (callers' arguments are ignored).
#include <cstdio>
#include <cstring>

#include "sim_common.h"

namespace {

int Unsupported(const char* name) {
  KSIM_DIAG("%s is not simulated; returning an error", name);
  if (std::strncmp(name, "InitializeInjection", 19) == 0) return 0;  // NVTX: "no tool"
  if (std::strncmp(name, "cuptiEvent", 10) == 0 || std::strncmp(name, "cuptiMetric", 11) == 0 ||
      std::strncmp(name, "cuptiDeviceGetEvent", 19) == 0 || std::strncmp(name, "cuptiDeviceEnumEvent", 20) == 0 ||
      std::strncmp(name, "cuptiDeviceGetNumEvent", 22) == 0 || std::strncmp(name, "cuptiDeviceGetNumMetrics", 24) == 0 ||
      std::strncmp(name, "cuptiDeviceEnumMetrics", 22) == 0 ||
      std::strncmp(name, "cuptiActivityConfigurePCSampling", 32) == 0) {
    return 38;  // CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED
  }
  return 27;  // CUPTI_ERROR_NOT_SUPPORTED
}

}  // namespace

#define KSIM_EXPORT_STUB(name) \
  extern "C" __attribute__((weak, visibility("default"))) int name() { return Unsupported(#name); }
#include "cupti_exports.inc"
