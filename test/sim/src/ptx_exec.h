// File: test/sim/src/ptx_exec.h
// Layer: CUDA/CUPTI simulator, kernel execution: runs a decoded PTX kernel for every
//        thread of a grid over host memory (the simulator's device memory is host memory).
// Threading: one call runs one launch on the calling thread; no shared state.
//
// Execution model: blocks run one after another; inside a block the threads run as SIMT
// groups (lanes at the same pc run each instruction together). A branch that splits a group
// makes two groups; the group with the lowest pc always runs next, and groups meeting at a pc
// merge, so the lanes of an if/else or a loop reconverge where nvcc's structured code joins.
// bar.sync parks a group until every live lane of the block has arrived. Warps are not
// modelled (warp-synchronous code without __syncwarp, shuffles and votes are unsupported).
// %clock/%clock64 advance kClockPerStep cycles per instruction the block executes, so a
// spin-wait on the clock ends after a few thousand steps; they are not timings.
#ifndef KAIROS_TEST_SIM_SRC_PTX_EXEC_H_
#define KAIROS_TEST_SIM_SRC_PTX_EXEC_H_

#include <cstdint>
#include <functional>
#include <string>

#include "ptx_program.h"

namespace kairos::sim::ptx {

constexpr uint64_t kClockPerStep = 1024;

// Global memory the kernel may touch: true when [addr, addr + n) lies in one valid range,
// which is returned in [*lo, *hi) so later accesses inside it need no lookup.
using GlobalResolver = std::function<bool(uint64_t addr, uint64_t n, uint64_t* lo, uint64_t* hi)>;

struct LaunchDims {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t dynamic_shared = 0;
};

struct ExecResult {
  bool completed = false;
  uint64_t thread_instructions = 0;  // instructions executed, summed over threads
  std::string problem;               // why it stopped early (empty when completed)
};

// `params` holds the kernel's parameter buffer laid out as kernel.param_offset says.
ExecResult Execute(const Kernel& kernel, const LaunchDims& dims, const uint8_t* params,
                   const GlobalResolver& global, uint64_t max_thread_instructions);

}  // namespace kairos::sim::ptx

#endif  // KAIROS_TEST_SIM_SRC_PTX_EXEC_H_
