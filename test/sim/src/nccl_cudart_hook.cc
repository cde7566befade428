// File: test/sim/src/nccl_cudart_hook.cc
// Layer: CUDA/CUPTI simulator, substitute libcudart.so.13: the two-step collective kernel
//        placement the substitute libnccl.so.2 uses (see nccl_hook.h).
// Threading: any thread; takes the runtime mutex briefly, never while a rank waits for others.
#include <cupti.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "cudart_state.h"
#include "nccl_hook.h"
#include "sim_common.h"

using namespace kairos::sim;  // NOLINT: simulator entry points

namespace {

// NCCL kernels are not registered by a fat binary; intern one KernelInfo per name (leaked: kernel
// records point at the name). Called with rt.mu held.
const KernelInfo* InternKernelLocked(const char* name) {
  static auto* by_name = new std::map<std::string, std::unique_ptr<KernelInfo>>();
  auto& slot = (*by_name)[name];
  if (slot == nullptr) {
    slot = std::make_unique<KernelInfo>();
    slot->name = name;
    slot->host_fun = nullptr;
  }
  return slot.get();
}

LaunchShape CollectiveShape(uint32_t channels) {
  // Real NCCL launches one block per channel with up to 640 threads; 512 keeps the shape legal
  // on every preset.
  LaunchShape s{};
  s.grid[0] = std::max<uint32_t>(channels, 1);
  s.grid[1] = s.grid[2] = 1;
  s.block[0] = 512;
  s.block[1] = s.block[2] = 1;
  return s;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) cudaError_t KSimNcclKernelBegin(
    int device, cudaStream_t stream, const char* kernel_name, uint32_t channels, KSimNcclKernel* out) {
  // Real NCCL (2.19+) launches its kernels with the driver's cuLaunchKernelEx.
  ApiScope api(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "cuLaunchKernelEx", nullptr, kernel_name,
               CUPTI_CB_DOMAIN_DRIVER_API);
  if (api.blocked() != cudaSuccess) return api.Finish(api.blocked());
  Runtime& rt = Rt();
  std::unique_lock<std::mutex> lock(rt.mu);
  Stream* s = rt.StreamLocked(stream, device);
  if (s == nullptr) return api.Finish(rt.devices.empty() ? cudaErrorNoDevice : cudaErrorInvalidResourceHandle);
  if (s->capture != nullptr) return api.Finish(cudaErrorStreamCaptureUnsupported);
  out->context = s->ctx;
  out->stream = s;
  out->kernel = InternKernelLocked(kernel_name);
  out->queued = MonoNowNs();
  out->grid = channels;
  uint64_t end = 0;
  // Zero duration for now: the stream's tail stays at the start until End knows the real end.
  rt.ScheduleLocked(s, 0, &out->start, &end);
  out->correlation = api.correlation();
  out->record_kind = KernelRecordKindNow();
  lock.unlock();
  return api.Finish(cudaSuccess);
}

extern "C" __attribute__((visibility("default"))) void KSimNcclKernelEnd(const KSimNcclKernel* k,
                                                                       uint64_t end_ns) {
  Runtime& rt = Rt();
  auto* s = static_cast<Stream*>(k->stream);
  auto* ctx = static_cast<Context*>(k->context);
  const uint64_t end = std::max(end_ns, k->start);
  std::lock_guard<std::mutex> lock(rt.mu);
  s->tail = std::max(s->tail, end);
  EmitKernel(ctx, s, static_cast<const KernelInfo*>(k->kernel), CollectiveShape(k->grid), k->queued, k->start,
             end, k->correlation, 0, 0, k->record_kind);
}
