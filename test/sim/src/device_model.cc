// File: test/sim/src/device_model.cc
// Layer: CUDA/CUPTI simulator, substitute libcudart.so.13: device specs and
//        cost model.
// Threading: see device_model.h.
#include "device_model.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "sim_common.h"

namespace kairos::sim {
namespace {

DeviceSpec A100() {
  DeviceSpec d;
  d.name = "NVIDIA A100-SXM4-80GB (kairos-sim)";
  d.sm_count = 108;
  d.cc_major = 8;
  d.cc_minor = 0;
  d.clock_khz = 1410000;
  d.memory_clock_khz = 1593000;
  d.l2_bytes = 40 << 20;
  d.shared_per_sm = 164 << 10;
  d.hbm_gbps = 2039.0;
  d.pcie_pinned_gbps = 25.0;
  d.pcie_pageable_gbps = 8.0;
  d.p2p_gbps = 100.0;
  d.kernel_wave_us = 5.0;
  d.pci_device_id = 0x20b2;  // GA100
  return d;
}

bool Preset(const std::string& name, DeviceSpec* out) {
  if (name == "h100") {
    *out = DeviceSpec();
    return true;
  }
  if (name == "a100") {
    *out = A100();
    return true;
  }
  return false;
}

void Apply(const nlohmann::json& j, DeviceSpec* d) {
  if (j.contains("preset")) Preset(j["preset"].get<std::string>(), d);
  auto get = [&j](const char* key, auto* field) {
    if (j.contains(key)) *field = j[key].get<std::remove_pointer_t<decltype(field)>>();
  };
  get("name", &d->name);
  get("sm_count", &d->sm_count);
  if (j.contains("memory_gib")) d->memory_bytes = static_cast<uint64_t>(j["memory_gib"].get<double>() * (1ull << 30));
  get("cc_major", &d->cc_major);
  get("cc_minor", &d->cc_minor);
  get("clock_khz", &d->clock_khz);
  get("hbm_gbps", &d->hbm_gbps);
  get("pcie_pinned_gbps", &d->pcie_pinned_gbps);
  get("pcie_pageable_gbps", &d->pcie_pageable_gbps);
  get("p2p_gbps", &d->p2p_gbps);
  get("kernel_wave_us", &d->kernel_wave_us);
  get("kernel_min_us", &d->kernel_min_us);
  get("launch_latency_us", &d->launch_latency_us);
}

}  // namespace

static std::vector<DeviceSpec> LoadAllDevices() {
  std::string spec = EnvOr("KAIROS_SIM_DEVICES", "h100");
  if (spec == "none") return {};
  DeviceSpec preset;
  size_t colon = spec.find(':');
  std::string base = spec.substr(0, colon);
  if (Preset(base, &preset)) {
    int count = colon == std::string::npos ? 1 : std::max(0, std::atoi(spec.c_str() + colon + 1));
    std::vector<DeviceSpec> out(static_cast<size_t>(std::min(count, 16)), preset);
    for (size_t i = 0; i < out.size(); ++i) out[i].pci_bus_id += static_cast<int>(i);
    return out;
  }
  std::string text = spec;
  if (!spec.empty() && spec[0] == '@') {
    std::ifstream in(spec.substr(1));
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::vector<DeviceSpec> out;
  if (j.is_object()) j = nlohmann::json::array({j});
  if (j.is_array()) {
    for (const auto& item : j) {
      if (!item.is_object()) continue;
      DeviceSpec d;
      // Wrong value types make get<> throw; the simulator must not, so check.
      bool ok = true;
      for (auto it = item.begin(); it != item.end(); ++it) {
        bool is_str = it.key() == "name" || it.key() == "preset";
        if (is_str ? !it->is_string() : !it->is_number()) ok = false;
      }
      if (!ok) continue;
      Apply(item, &d);
      d.pci_bus_id += static_cast<int>(out.size());
      out.push_back(d);
    }
    return out;
  }
  std::fprintf(stderr, "[kairos-sim] KAIROS_SIM_DEVICES=%s is not a preset or JSON; using one h100\n",
               spec.c_str());
  return {DeviceSpec()};
}

// CUDA_VISIBLE_DEVICES as the driver reads it: a comma-separated list of ordinals of the
// machine's devices (KAIROS_SIM_DEVICES); the list ends at the first entry that is not a valid,
// unused ordinal. Several processes then each see "their" device as device 0 (multi-rank jobs).
std::vector<DeviceSpec> LoadDevices() {
  std::vector<DeviceSpec> all = LoadAllDevices();
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr) return all;
  std::vector<DeviceSpec> out;
  std::vector<bool> used(all.size(), false);
  const char* p = visible;
  while (*p != '\0') {
    char* end = nullptr;
    const long idx = std::strtol(p, &end, 10);
    if (end == p || idx < 0 || static_cast<size_t>(idx) >= all.size() || used[static_cast<size_t>(idx)]) break;
    used[static_cast<size_t>(idx)] = true;
    out.push_back(all[static_cast<size_t>(idx)]);
    p = end;
    while (*p == ' ') ++p;
    if (*p != ',') break;
    ++p;
  }
  return out;
}

std::vector<std::pair<std::string, uint64_t>> LoadKernelTimes() {
  std::vector<std::pair<std::string, uint64_t>> out;
  std::string spec = EnvOr("KAIROS_SIM_KERNEL_TIMES", "");
  size_t pos = 0;
  while (pos < spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    std::string item = spec.substr(pos, comma - pos);
    size_t eq = item.rfind('=');
    if (eq != std::string::npos && eq > 0) {
      double us = std::atof(item.c_str() + eq + 1);
      out.emplace_back(item.substr(0, eq), static_cast<uint64_t>(std::llround(us * 1000.0)));
    }
    pos = comma + 1;
  }
  return out;
}

int ResidentBlocksPerSm(const DeviceSpec& d, int block_threads, size_t dyn_smem) {
  if (block_threads <= 0 || block_threads > 1024) return 0;
  const int warps = (block_threads + 31) / 32;
  const int by_threads = d.max_threads_per_sm / (warps * 32);
  const int by_regs = d.regs_per_sm / (warps * 32 * 32);
  const int by_smem = dyn_smem == 0 ? d.max_blocks_per_sm
                                    : static_cast<int>(static_cast<size_t>(d.shared_per_sm) / (dyn_smem + 1024));
  return std::max(0, std::min({d.max_blocks_per_sm, by_threads, by_regs, by_smem}));
}

uint64_t KernelDurationNs(const DeviceSpec& dev, const LaunchShape& s) {
  // Waves of resident blocks: a block of T threads leaves room for
  // max_threads_per_sm / T blocks per SM (capped by max_blocks_per_sm). Each
  // wave costs kernel_wave_us scaled by how full a block is vs 256 threads, so
  // a grid smaller than one wave costs as much as a full wave (underused SMs).
  double blocks = static_cast<double>(s.grid[0]) * s.grid[1] * s.grid[2];
  double threads = static_cast<double>(s.block[0]) * s.block[1] * s.block[2];
  double per_sm = std::max(1.0, std::min<double>(dev.max_blocks_per_sm, std::floor(dev.max_threads_per_sm / threads)));
  double waves = std::ceil(blocks / (per_sm * dev.sm_count));
  double us = dev.kernel_min_us + waves * dev.kernel_wave_us * std::max(0.25, threads / 256.0);
  return static_cast<uint64_t>(us * 1000.0);
}

uint64_t CopyDurationNs(const DeviceSpec& dev, CopyPath path, uint64_t bytes) {
  double gbps = dev.pcie_pinned_gbps;
  double moved = static_cast<double>(bytes);
  switch (path) {
    case CopyPath::kHostToDevicePinned:
    case CopyPath::kDeviceToHostPinned: gbps = dev.pcie_pinned_gbps; break;
    case CopyPath::kHostToDevicePageable:
    case CopyPath::kDeviceToHostPageable: gbps = dev.pcie_pageable_gbps; break;
    case CopyPath::kDeviceToDevice: gbps = dev.hbm_gbps; moved *= 2; break;
    case CopyPath::kPeer: gbps = dev.p2p_gbps; break;
    case CopyPath::kHostToHost: gbps = 20.0; break;
  }
  // GB/s == bytes/ns.
  return static_cast<uint64_t>(dev.copy_latency_us * 1000.0 + moved / gbps);
}

uint64_t MemsetDurationNs(const DeviceSpec& dev, uint64_t bytes) {
  return static_cast<uint64_t>(dev.copy_latency_us * 1000.0 + static_cast<double>(bytes) / dev.hbm_gbps);
}

}  // namespace kairos::sim
