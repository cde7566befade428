// File: occupancy.cc
// Layer: kairos_model. CUDA occupancy calculator; see occupancy.h.
// Threading: pure functions, thread-safe.
#include "model/occupancy.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace kairos {
namespace {

constexpr uint32_t kRegisterAllocUnit = 256;  // registers, per warp (sm_70+)
constexpr uint64_t kSharedMemAllocUnit = 128;  // bytes (sm_70+)
constexpr uint64_t kReservedSharedMemPerBlock = 1024;  // bytes the runtime reserves (sm_80+)
constexpr uint32_t kMaxRegistersPerThread = 255;

uint64_t RoundUp(uint64_t v, uint64_t unit) { return (v + unit - 1) / unit * unit; }

// Resident-block limit when DeviceInfo lacks it (cudaDevAttrMaxBlocksPerMultiprocessor).
int32_t DefaultMaxBlocksPerSm(int32_t major, int32_t minor) {
  if (major == 8 && minor == 6) return 16;
  if (major == 8 && minor == 9) return 24;
  if (major == 7 && minor == 5) return 16;
  return 32;
}

}  // namespace

OccupancyResult ComputeOccupancy(const DeviceInfo& device, uint32_t threads_per_block,
                                 uint32_t registers_per_thread, uint64_t shared_mem_per_block) {
  OccupancyResult r;
  const int32_t warp_size = device.warp_size > 0 ? device.warp_size : 32;
  if (device.max_threads_per_multiprocessor <= 0 || threads_per_block == 0) return r;
  r.valid = true;
  r.warps_per_block =
      static_cast<int32_t>((threads_per_block + static_cast<uint32_t>(warp_size) - 1) / warp_size);
  r.max_warps_per_sm = device.max_threads_per_multiprocessor / warp_size;
  r.block_limit_warps = r.max_warps_per_sm / r.warps_per_block;
  if (device.max_threads_per_block > 0 &&
      threads_per_block > static_cast<uint32_t>(device.max_threads_per_block)) {
    r.block_limit_warps = 0;  // the launch is invalid on this device
  }
  r.block_limit_blocks = device.max_blocks_per_multiprocessor > 0
                             ? device.max_blocks_per_multiprocessor
                             : DefaultMaxBlocksPerSm(device.compute_major, device.compute_minor);

  r.block_limit_registers = INT32_MAX;
  if (registers_per_thread > kMaxRegistersPerThread) {
    r.block_limit_registers = 0;
  } else if (registers_per_thread > 0 && device.regs_per_multiprocessor > 0) {
    const uint64_t regs_per_warp =
        RoundUp(static_cast<uint64_t>(registers_per_thread) * warp_size, kRegisterAllocUnit);
    const uint64_t warps_by_regs = device.regs_per_multiprocessor / regs_per_warp;
    r.block_limit_registers = static_cast<int32_t>(warps_by_regs / r.warps_per_block);
  }

  r.block_limit_shared_mem = INT32_MAX;
  const uint64_t smem_max_per_block = device.shared_mem_per_block_optin > 0
                                          ? device.shared_mem_per_block_optin
                                          : device.shared_mem_per_block;
  if (shared_mem_per_block > 0 && smem_max_per_block > 0 &&
      shared_mem_per_block > smem_max_per_block) {
    r.block_limit_shared_mem = 0;
  } else if (shared_mem_per_block > 0 && device.shared_mem_per_multiprocessor > 0) {
    const uint64_t per_block =
        RoundUp(shared_mem_per_block, kSharedMemAllocUnit) + kReservedSharedMemPerBlock;
    r.block_limit_shared_mem =
        static_cast<int32_t>(std::min<uint64_t>(device.shared_mem_per_multiprocessor / per_block,
                                                INT32_MAX));
  }

  r.active_blocks_per_sm = std::min({r.block_limit_warps, r.block_limit_registers,
                                     r.block_limit_shared_mem, r.block_limit_blocks});
  if (r.block_limit_warps == r.active_blocks_per_sm) r.limiting |= kLimitWarps;
  if (r.block_limit_registers == r.active_blocks_per_sm) r.limiting |= kLimitRegisters;
  if (r.block_limit_shared_mem == r.active_blocks_per_sm) r.limiting |= kLimitSharedMem;
  if (r.block_limit_blocks == r.active_blocks_per_sm) r.limiting |= kLimitBlocks;
  r.theoretical = r.max_warps_per_sm > 0
                      ? std::min(1.0, static_cast<double>(r.active_blocks_per_sm) *
                                          r.warps_per_block / r.max_warps_per_sm)
                      : 0.0;
  return r;
}

int32_t EstimatedAchievedOccupancyPercent(const OccupancyResult& occ, double blocks_per_sm) {
  if (!occ.valid || occ.max_warps_per_sm <= 0 || !(blocks_per_sm >= 0.0)) return 0;
  const double blocks = std::min(blocks_per_sm, static_cast<double>(occ.active_blocks_per_sm));
  const double pct = blocks * occ.warps_per_block / occ.max_warps_per_sm * 100.0;
  // Truncate like Kineto, with a little slack so 99.99999 from float noise reads as 100.
  return static_cast<int32_t>(std::clamp(std::floor(pct + 1e-6), 0.0, 100.0));
}

}  // namespace kairos
