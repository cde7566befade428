// File: test/sim/src/ptx_launch.cc
// Layer: CUDA/CUPTI simulator, kernel execution: registry of fat binaries, kernels and
//        __device__ variables; decodes a kernel on its first launch and runs it.
// Threading: one mutex guards the registry; launches arrive with Rt().mu held.
#include "ptx_launch.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "ptx_exec.h"
#include "ptx_fast.h"
#include "ptx_fatbin.h"
#include "ptx_parse.h"
#include "sim_common.h"

namespace kairos::sim {
namespace {

struct Variable {
  uint64_t address;
  uint64_t size;
};

struct FatBin {
  const void* wrapper = nullptr;
  bool extracted = false;
  std::vector<PtxText> ptx;
  std::map<std::string, Variable> vars;  // by device name
};

struct KernelState {
  bool decoded = false;
  bool runnable = false;
  ptx::Kernel kernel;
  ptx::FastKernel fast;  // decoded from `kernel` once it parsed
  std::set<std::string> warned;  // reasons already reported for this kernel
};

struct Registry {
  std::mutex mu;
  std::map<const void*, std::unique_ptr<FatBin>> fatbins;  // by handle
  std::map<const void*, const void*> handle_of;            // host stub -> handle
  std::map<const void*, std::unique_ptr<KernelState>> kernels;
  // Every registered variable's range, for the address check.
  std::map<uint64_t, uint64_t> var_ranges;  // start -> end
};

Registry& Reg() {
  static auto* r = new Registry();  // leaked: used from static destructors' launches too
  return *r;
}

bool Enabled() {
  static const bool on = EnvInt("KAIROS_SIM_EXEC_KERNELS", 0) != 0;
  return on;
}

// The decoded fast path unless KAIROS_SIM_EXEC_ENGINE=reference asks for the reference
// interpreter (same results, several times slower; ptx_fast.h).
bool UseReference() {
  static const bool ref = [] {
    const char* v = std::getenv("KAIROS_SIM_EXEC_ENGINE");
    return v != nullptr && std::strcmp(v, "reference") == 0;
  }();
  return ref;
}

uint64_t MaxInstructions() {
  static const uint64_t cap = [] {
    long long v = EnvInt("KAIROS_SIM_EXEC_MAX_INSTRUCTIONS", 1000000000LL);
    return v > 0 ? static_cast<uint64_t>(v) : 1000000000ull;
  }();
  return cap;
}

void Warn(KernelState& ks, const std::string& kernel, const std::string& why) {
  if (!ks.warned.insert(why).second) return;
  std::fprintf(stderr, "[kairos-sim] kernel %s: %s\n", kernel.c_str(), why.c_str());
}

// Decodes the kernel from the PTX of its fat binary (registry mu held).
void Decode(Registry& r, const KernelInfo* k, KernelState& ks) {
  ks.decoded = true;
  auto h = r.handle_of.find(k->host_fun);
  if (h == r.handle_of.end()) {
    Warn(ks, k->name, "not executed: no fat binary registered for it");
    return;
  }
  FatBin& fb = *r.fatbins[h->second];
  if (!fb.extracted) {
    fb.extracted = true;
    std::vector<std::string> problems;
    fb.ptx = ExtractPtx(fb.wrapper, &problems);
    for (const auto& p : problems) std::fprintf(stderr, "[kairos-sim] %s\n", p.c_str());
  }
  ptx::GlobalLookup globals = [&fb](const std::string& name, uint64_t* addr) {
    auto it = fb.vars.find(name);
    if (it == fb.vars.end()) return false;
    *addr = it->second.address;
    return true;
  };
  // The lowest architecture's PTX first: it uses the fewest newer instructions.
  for (const PtxText& t : fb.ptx) {
    std::string why;
    ptx::ParseResult res = ptx::ParseKernel(t.text, k->name, globals, &ks.kernel, &why);
    if (res == ptx::ParseResult::kOk) {
      ks.runnable = true;
      ks.fast = ptx::CompileFast(ks.kernel);
      return;
    }
    if (res == ptx::ParseResult::kUnsupported) {
      Warn(ks, k->name, "not executed: unsupported " + why);
      return;
    }
  }
  Warn(ks, k->name,
       "not executed: its fat binary has no PTX for it (compile with PTX, e.g. -gencode arch=compute_75,code=compute_75)");
}

}  // namespace

void PtxNoteFatBinary(const void* handle, const void* wrapper) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  auto fb = std::make_unique<FatBin>();
  fb->wrapper = wrapper;
  r.fatbins[handle] = std::move(fb);
}

void PtxNoteFunction(const void* handle, const void* host_fun) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  r.handle_of[host_fun] = handle;
}

void PtxNoteVariable(const void* handle, const char* device_name, const void* host_var, size_t size) {
  if (device_name == nullptr || host_var == nullptr) return;
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.fatbins.find(handle);
  if (it == r.fatbins.end()) return;
  const auto addr = reinterpret_cast<uint64_t>(host_var);
  it->second->vars[device_name] = Variable{addr, size};
  r.var_ranges[addr] = addr + size;
}

void RunKernelBody(Runtime& rt, const KernelInfo* k, const LaunchShape& shape, void** args) {
  if (!Enabled() || k == nullptr || args == nullptr) return;
  Registry& r = Reg();
  std::unique_lock<std::mutex> lock(r.mu);
  auto& slot = r.kernels[k->host_fun];
  if (!slot) slot = std::make_unique<KernelState>();
  KernelState& ks = *slot;
  if (!ks.decoded) Decode(r, k, ks);
  if (!ks.runnable) return;
  const ptx::Kernel& kernel = ks.kernel;
  // The parameter buffer, laid out as the PTX declares it.
  std::vector<uint8_t> params(kernel.param_bytes + 8, 0);
  for (size_t i = 0; i < kernel.param_offset.size(); ++i) {
    if (args[i] == nullptr) {
      Warn(ks, k->name, "not executed: a null argument pointer");
      return;
    }
    std::memcpy(params.data() + kernel.param_offset[i], args[i], kernel.param_size[i]);
  }
  ptx::LaunchDims dims;
  for (int i = 0; i < 3; ++i) {
    dims.grid[i] = shape.grid[i];
    dims.block[i] = shape.block[i];
  }
  dims.dynamic_shared = static_cast<uint32_t>(shape.dynamic_shared);
  // Global memory is every live allocation (device, pinned, managed, registered host memory)
  // and every registered __device__ variable; pageable host memory is not.
  const std::map<uint64_t, uint64_t>& vars = r.var_ranges;
  ptx::GlobalResolver global = [&rt, &vars](uint64_t a, uint64_t n, uint64_t* lo, uint64_t* hi) {
    uintptr_t base = 0;
    const Alloc* al = rt.FindLocked(reinterpret_cast<const void*>(a), n, &base);
    if (al != nullptr) {
      *lo = base;
      *hi = base + al->size;
      return true;
    }
    auto it = vars.upper_bound(a);
    if (it == vars.begin()) return false;
    --it;
    if (a < it->first || a + n > it->second) return false;
    *lo = it->first;
    *hi = it->second;
    return true;
  };
  ptx::ExecResult res = UseReference() ? ptx::Execute(kernel, dims, params.data(), global, MaxInstructions())
                                       : ptx::ExecuteFast(ks.fast, dims, params.data(), global, MaxInstructions());
  if (!res.completed) {
    Warn(ks, k->name, "stopped: " + res.problem + " (results are partial)");
    return;
  }
  KSIM_DIAG("executed %s: %llu thread-instructions", k->name.c_str(),
            static_cast<unsigned long long>(res.thread_instructions));
}

}  // namespace kairos::sim
