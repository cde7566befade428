// File: occupancy_test.cc
// Layer: tests (output; the calculator lives in kairos_model). Occupancy limits computed by
// hand from the CUDA occupancy rules for an H100 (sm_90).
// Threading: single-threaded.
#include "model/occupancy.h"

#include <catch2/catch.hpp>

#include <climits>

#include "trace_fixture.h"

namespace kairos {
namespace {

TEST_CASE("Occupancy: warp-limited launch reaches 100%") {
  // 256 threads = 8 warps; 64 warps/SM -> 8 blocks; 32 regs -> 1024 regs/warp -> 64 warps.
  const OccupancyResult r = ComputeOccupancy(testing::H100(0), 256, 32, 0);
  REQUIRE(r.valid);
  CHECK(r.warps_per_block == 8);
  CHECK(r.max_warps_per_sm == 64);
  CHECK(r.block_limit_warps == 8);
  CHECK(r.block_limit_registers == 8);
  CHECK(r.block_limit_shared_mem == INT_MAX);
  CHECK(r.block_limit_blocks == 32);
  CHECK(r.active_blocks_per_sm == 8);
  CHECK(r.limiting == (kLimitWarps | kLimitRegisters));
  CHECK(r.theoretical == 1.0);
  CHECK(EstimatedAchievedOccupancyPercent(r, 100.0) == 100);
  CHECK(EstimatedAchievedOccupancyPercent(r, 2.0) == 25);  // grid too small to fill the SM
}

TEST_CASE("Occupancy: registers and shared memory limits") {
  // 255 regs -> 8160 -> rounded 8192 per warp -> 8 warps/SM -> 2 blocks of 4 warps.
  OccupancyResult r = ComputeOccupancy(testing::H100(0), 128, 255, 0);
  CHECK(r.block_limit_registers == 2);
  CHECK(r.active_blocks_per_sm == 2);
  CHECK(r.limiting == kLimitRegisters);
  CHECK(EstimatedAchievedOccupancyPercent(r, 10.0) == 12);  // 2*4/64 = 12.5%
  // 100000 B smem -> 100096 + 1024 reserved -> 233472 / 101120 = 2 blocks.
  r = ComputeOccupancy(testing::H100(0), 128, 32, 100000);
  CHECK(r.block_limit_shared_mem == 2);
  CHECK(r.limiting == kLimitSharedMem);
  // More than the opt-in maximum cannot launch at all.
  r = ComputeOccupancy(testing::H100(0), 128, 32, 232449);
  CHECK(r.active_blocks_per_sm == 0);
  CHECK(EstimatedAchievedOccupancyPercent(r, 5.0) == 0);
  // Too many registers per thread or threads per block: invalid launch, 0 blocks.
  CHECK(ComputeOccupancy(testing::H100(0), 128, 256, 0).active_blocks_per_sm == 0);
  CHECK(ComputeOccupancy(testing::H100(0), 2048, 16, 0).active_blocks_per_sm == 0);
}

TEST_CASE("Occupancy: block-count limit and unknown devices") {
  // 32 threads = 1 warp; warps allow 64 blocks, the hardware 32.
  const OccupancyResult r = ComputeOccupancy(testing::H100(0), 32, 16, 0);
  CHECK(r.active_blocks_per_sm == 32);
  CHECK(r.limiting == kLimitBlocks);
  CHECK(r.theoretical == 0.5);
  DeviceInfo unknown;
  CHECK_FALSE(ComputeOccupancy(unknown, 128, 32, 0).valid);
  CHECK(EstimatedAchievedOccupancyPercent(ComputeOccupancy(unknown, 128, 32, 0), 1.0) == 0);
  DeviceInfo no_max_blocks = testing::H100(0);
  no_max_blocks.max_blocks_per_multiprocessor = 0;
  no_max_blocks.compute_major = 8;
  no_max_blocks.compute_minor = 6;
  no_max_blocks.max_threads_per_multiprocessor = 1536;
  CHECK(ComputeOccupancy(no_max_blocks, 32, 16, 0).block_limit_blocks == 16);
}

}  // namespace
}  // namespace kairos
