// File: test/sim/src/sim_counters.cc — see sim_counters.h.
// Occupancy: resident blocks per SM by the device model's ResidentBlocksPerSm (blocks,
// threads, shared memory with its per-block reserve, registers at the 32 per thread the sim
// reports for every kernel).
#include "sim_counters.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "cudart_state.h"

namespace kairos::sim {

namespace {

// Tensor-core kernels by their library names (cuBLAS/CUTLASS: hmma, xmma, tensorop,
// wgmma); the sim runs no code, so the name is all it has.
bool LooksTensor(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* s : {"hmma", "xmma", "wgmma", "tensorop", "s16816", "tensor"})
    if (n.find(s) != std::string::npos) return true;
  return false;
}

}  // namespace

void PmNoteKernel(const Context* ctx, const KernelInfo* k, const LaunchShape& shape, uint64_t start,
                  uint64_t end) {
  if (end <= start) return;
  const DeviceSpec& d = ctx->spec;
  const uint64_t blocks = uint64_t{shape.grid[0]} * shape.grid[1] * shape.grid[2];
  const uint64_t threads = uint64_t{shape.block[0]} * shape.block[1] * shape.block[2];
  if (blocks == 0 || threads == 0 || d.sm_count <= 0) return;
  const uint64_t warps_per_block = (threads + 31) / 32;
  const uint64_t max_warps = std::max(1, d.max_threads_per_sm / 32);
  // The occupancy API's rule (device_model.h), so a client's cudaOccupancy* prediction and
  // the measured value agree for a full wave.
  const int fit = ResidentBlocksPerSm(d, static_cast<int>(std::min<uint64_t>(threads, 1024)), shape.dynamic_shared);
  const uint64_t per_sm = static_cast<uint64_t>(std::max(1, fit));
  const uint64_t sms = std::min<uint64_t>(blocks, static_cast<uint64_t>(d.sm_count));
  const uint64_t resident = std::min<uint64_t>(per_sm, (blocks + sms - 1) / sms);
  KSimPmActivity a{};
  a.device = ctx->device;
  a.start_mono_ns = start;
  a.end_mono_ns = end;
  a.sm_active = static_cast<double>(sms) / d.sm_count;
  a.warps_active = std::min(1.0, static_cast<double>(resident * warps_per_block) / max_warps);
  a.tensor_active = k != nullptr && LooksTensor(k->name) ? 0.5 * a.sm_active : 0.0;
  a.dram = 0.0;  // the sim models no kernel memory traffic
  KSimPmNote(&a);
}

void PmNoteCopy(const Context* ctx, uint64_t bytes, bool touches_dram_twice, uint64_t start, uint64_t end) {
  if (end <= start || ctx == nullptr) return;
  const double seconds = static_cast<double>(end - start) * 1e-9;
  const double moved = static_cast<double>(bytes) * (touches_dram_twice ? 2.0 : 1.0);
  KSimPmActivity a{};
  a.device = ctx->device;
  a.start_mono_ns = start;
  a.end_mono_ns = end;
  a.dram = std::min(1.0, moved / (seconds * ctx->spec.hbm_gbps * 1e9));
  KSimPmNote(&a);
}

}  // namespace kairos::sim
