// File: test/sim/src/ptx_fast.h
// Layer: CUDA/CUPTI simulator, kernel execution: the decoded fast path. A kernel is decoded
//        once into one handler per instruction, each specialised for its operation, type and
//        operand kinds, and run with the reference interpreter's SIMT model (ptx_exec.h).
// Threading: a FastKernel is immutable once built; one ExecuteFast call runs one launch on
//        the calling thread.
//
// Contract: for any kernel and launch, ExecuteFast gives the same memory contents, the same
// ExecResult (completed, thread_instructions, problem text) and the same %clock values as
// ptx::Execute: the same scheduler, the same per-lane semantics (ptx_semantics.h), lanes in
// the same order. What differs is invisible to a kernel: contiguous lane ranges run as plain
// loops; a global load or store checks the last resolved allocation inline; lanes that load
// the address the previous lane loaded reuse its value; and an instruction whose inputs are
// uniform across its group (per-group hints, ptx_fast.cc) runs on one lane and is copied.
// test/sim/tests/samples/ptx_diff_test.cc runs both on the same kernels and compares bytes.
#ifndef KAIROS_TEST_SIM_SRC_PTX_FAST_H_
#define KAIROS_TEST_SIM_SRC_PTX_FAST_H_

#include <vector>

#include "ptx_exec.h"
#include "ptx_program.h"

namespace kairos::sim::ptx {

class FastBlock;
using FastHandler = bool (*)(FastBlock&, const Inst&);

struct FastKernel {
  const Kernel* kernel = nullptr;     // must outlive this
  std::vector<FastHandler> handler;   // one per kernel->code entry; null for bra/ret/bar
  // Per instruction: what it writes in a lane depends only on its operands' values (and on
  // memory at the one address they give), never on which lane runs it, and it has no other
  // effect; so when all its inputs are uniform across a group, one lane computes for all.
  std::vector<uint8_t> lane_pure;
};

// Decodes `kernel` (kept by pointer).
FastKernel CompileFast(const Kernel& kernel);

ExecResult ExecuteFast(const FastKernel& fk, const LaunchDims& dims, const uint8_t* params,
                       const GlobalResolver& global, uint64_t max_thread_instructions);

}  // namespace kairos::sim::ptx

#endif  // KAIROS_TEST_SIM_SRC_PTX_FAST_H_
