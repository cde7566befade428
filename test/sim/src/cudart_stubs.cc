// File: test/sim/src/cudart_stubs.cc
// Layer: CUDA/CUPTI simulator, substitute libcudart.so.13: fallback exports.
// Threading: stateless.
//
// Every function the real libcudart.so.13 exports gets a weak definition here;
// the simulated ones (strong, cudart_*.cc) replace them at link time. A
// program calling anything else gets cudaErrorNotSupported (801) instead of a
// symbol lookup error. No CUDA header is included: the stubs deliberately
// take no parameters (callers' arguments are ignored).
#include <cstdio>

#include "sim_common.h"

namespace {

int Unsupported(const char* name) {
  KSIM_DIAG("%s is not simulated; returning cudaErrorNotSupported", name);
  return 801;  // cudaErrorNotSupported
}

}  // namespace

#define KSIM_EXPORT_STUB(name) \
  extern "C" __attribute__((weak, visibility("default"))) int name() { return Unsupported(#name); }
#include "cudart_exports.inc"
