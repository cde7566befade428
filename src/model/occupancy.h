// File: occupancy.h
// Layer: kairos_model. A small CUDA occupancy calculator (theoretical occupancy from the launch
// configuration and the device limits), used by the JSON writer's kernel args and by analysis.
// Threading: pure functions, thread-safe.
#ifndef KAIROS_SRC_OCCUPANCY_H_
#define KAIROS_SRC_OCCUPANCY_H_

#include <cstdint>

#include "model/trace_data.h"

namespace kairos {

enum OccupancyLimit : uint8_t {
  kLimitNone = 0,
  kLimitWarps = 1 << 0,
  kLimitRegisters = 1 << 1,
  kLimitSharedMem = 1 << 2,
  kLimitBlocks = 1 << 3,
};

struct OccupancyResult {
  bool valid = false;                 // false when the device limits are unknown
  int32_t active_blocks_per_sm = 0;   // resident blocks per SM the limits allow
  int32_t warps_per_block = 0;
  int32_t max_warps_per_sm = 0;
  int32_t block_limit_warps = 0;
  int32_t block_limit_registers = 0;  // INT32_MAX when registers do not limit
  int32_t block_limit_shared_mem = 0; // INT32_MAX when shared memory does not limit
  int32_t block_limit_blocks = 0;
  uint8_t limiting = kLimitNone;      // OccupancyLimit bits of the minimal limits
  // active_blocks_per_sm * warps_per_block / max_warps_per_sm, in [0, 1].
  double theoretical = 0.0;
};

// Theoretical occupancy of a launch with `threads_per_block` threads, `registers_per_thread`
// registers and `shared_mem_per_block` bytes (static + dynamic) on `device`. Uses the
// allocation granularities of compute capability 7.0 and later (registers per warp rounded
// to 256, shared memory to 128 B plus 1 KiB reserved per block).
OccupancyResult ComputeOccupancy(const DeviceInfo& device, uint32_t threads_per_block,
                                 uint32_t registers_per_thread, uint64_t shared_mem_per_block);

// Kineto's "est. achieved occupancy %": occupancy capped by the blocks the grid actually has
// per SM (a grid smaller than the GPU cannot fill it), as an integer percentage 0..100.
int32_t EstimatedAchievedOccupancyPercent(const OccupancyResult& occ, double blocks_per_sm);

}  // namespace kairos

#endif  // KAIROS_SRC_OCCUPANCY_H_
