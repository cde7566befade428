// File: test/sim/src/device_model.h
// Layer: CUDA/CUPTI simulator, substitute libcudart.so.13: device specs and
//        the cost model for kernels and copies.
// Threading: specs are immutable after LoadDevices(); cost functions are pure.
//
// Devices come from KAIROS_SIM_DEVICES: a preset ("h100", "a100", "h100:2",
// "none") or a JSON array/object (inline or "@/path.json"). Kernel durations
// come from a grid/block model unless KAIROS_SIM_KERNEL_TIMES pins them by
// name ("substring=microseconds,..."), so tests can fix exact durations.
#ifndef KAIROS_TEST_SIM_SRC_DEVICE_MODEL_H_
#define KAIROS_TEST_SIM_SRC_DEVICE_MODEL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kairos::sim {

struct DeviceSpec {
  std::string name = "NVIDIA H100 80GB HBM3 (kairos-sim)";
  int sm_count = 132;
  uint64_t memory_bytes = 80ull << 30;
  int cc_major = 9;
  int cc_minor = 0;
  int clock_khz = 1980000;
  int memory_clock_khz = 2619000;
  int memory_bus_width = 5120;
  int pci_bus_id = 0x18;       // LoadDevices adds the ordinal
  int pci_device_id = 0x2330;  // GH100
  int l2_bytes = 50 << 20;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int shared_per_block = 48 << 10;
  int shared_per_sm = 228 << 10;
  int regs_per_sm = 65536;
  double hbm_gbps = 3350.0;       // device-to-device copies move 2x bytes
  double pcie_pinned_gbps = 50.0;
  double pcie_pageable_gbps = 12.0;
  double p2p_gbps = 150.0;
  double kernel_wave_us = 4.0;    // one full wave of 256-thread blocks
  double kernel_min_us = 2.5;
  double copy_latency_us = 1.5;
  double launch_latency_us = 4.0;  // host enqueue -> GPU start on an idle stream
};

// Parses KAIROS_SIM_DEVICES. On a malformed value logs one line and falls
// back to one default device.
std::vector<DeviceSpec> LoadDevices();

// Parses KAIROS_SIM_KERNEL_TIMES into (substring, ns) pairs.
std::vector<std::pair<std::string, uint64_t>> LoadKernelTimes();

struct LaunchShape {
  uint32_t grid[3];
  uint32_t block[3];
  size_t dynamic_shared;
};

// Simulated kernel duration in ns.
uint64_t KernelDurationNs(const DeviceSpec& dev, const LaunchShape& shape);

// Resident blocks per SM for `block_threads` threads and `dyn_smem` bytes of dynamic shared
// memory per block: limited by the SM's blocks, threads, registers (32 per thread, allocated
// per warp) and shared memory (1 KiB reserved per block, as on sm_80+). 0: does not fit.
// cudaOccupancyMaxActiveBlocksPerMultiprocessor and the PM-sampling occupancy both use it.
int ResidentBlocksPerSm(const DeviceSpec& dev, int block_threads, size_t dyn_smem);

enum class CopyPath { kHostToDevicePinned, kHostToDevicePageable, kDeviceToHostPinned,
                      kDeviceToHostPageable, kDeviceToDevice, kPeer, kHostToHost };
uint64_t CopyDurationNs(const DeviceSpec& dev, CopyPath path, uint64_t bytes);
uint64_t MemsetDurationNs(const DeviceSpec& dev, uint64_t bytes);

}  // namespace kairos::sim

#endif  // KAIROS_TEST_SIM_SRC_DEVICE_MODEL_H_
