// File: test/sim/src/cuda_driver.cc
// Layer: CUDA/CUPTI simulator: the driver API (cu*) a program calls directly, as
//        Triton-style launchers do (load a module, look a function up, cuLaunchKernel).
// Threading: any thread; state in Rt() under its mutex, as for the runtime API.
//
// These functions live in the substitute libcudart.so.13 (they share its devices, contexts,
// allocations and streams) and are exported from there; the substitute libcuda.so.1 is an
// empty library that lists libcudart.so.13 as NEEDED, so a program linked with -lcuda, or
// one that dlopen()s libcuda.so.1 and dlsym()s cuLaunchKernel, resolves them. Each call
// opens an ApiScope in the DRIVER_API domain: CUPTI reports it as a driver call with its own
// correlation id, because the program made it. The runtime never calls these internally,
// so runtime calls produce runtime records only (as with real CUPTI).
// CUresult and cudaError_t agree for every code returned here (1, 3, 100, 101, 201, 400,
// 500, 801...); the simulator relies on that and casts.
// cupti.h (through cudart_state.h) brings cuda.h and the generated parameter structs
// (cuLaunchKernel_params) in the order they need.
#include <elf.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cudart_ops.h"
#include "cudart_state.h"
#include "sim_common.h"

using namespace kairos::sim;  // NOLINT: this file is the driver's C surface

#define KSIM_DRV extern "C" __attribute__((visibility("default")))
#define DRV_CBID(name) CUPTI_DRIVER_TRACE_CBID_##name
#define DRV_SCOPE(fn, params, symbol) \
  ApiScope api(DRV_CBID(fn), #fn, params, symbol, CUPTI_CB_DOMAIN_DRIVER_API)

namespace {

std::atomic<bool> g_initialized{false};

// A loaded module: the functions looked up in it (leaked with the module, as kernel
// records keep pointers to their names).
struct Module {
  const uint8_t* image;
  size_t size;  // 0 when the image format is not recognised (names then cannot be checked)
  std::map<std::string, std::unique_ptr<KernelInfo>> functions;
};
std::map<Module*, std::unique_ptr<Module>>& Modules() {
  static auto* m = new std::map<Module*, std::unique_ptr<Module>>();
  return *m;
}

// The context made current on this thread by cuCtxSetCurrent (nullptr: none set).
thread_local Context* t_current = nullptr;

CUresult R(cudaError_t e) { return static_cast<CUresult>(e); }

// The thread's current context: the one it set, else the primary context the runtime bound
// to it (the runtime makes the current device's primary context current). mu held.
Context* CurrentLocked() {
  if (t_current != nullptr) return t_current;
  int dev = CurrentDevice();
  Runtime& rt = Rt();
  if (dev < 0 || static_cast<size_t>(dev) >= rt.contexts.size()) return nullptr;
  return rt.contexts[dev].get();
}

// Size of a module image, so cuModuleGetFunction can check that the name is in it: an ELF
// cubin ends with its section headers; PTX is NUL-terminated text.
size_t ImageSize(const void* image) {
  const auto* b = static_cast<const uint8_t*>(image);
  if (std::memcmp(b, ELFMAG, SELFMAG) == 0 && b[EI_CLASS] == ELFCLASS64) {
    Elf64_Ehdr h;
    std::memcpy(&h, b, sizeof(h));
    return static_cast<size_t>(h.e_shoff) + static_cast<size_t>(h.e_shnum) * h.e_shentsize;
  }
  const char* text = static_cast<const char*>(image);
  if (std::strncmp(text, "//", 2) == 0 || std::strncmp(text, ".version", 8) == 0 ||
      std::strncmp(text, "\n", 1) == 0) {
    return std::strlen(text);
  }
  return 0;
}

CUresult CheckInit(const ApiScope& api) {
  if (api.blocked() != cudaSuccess) return R(api.blocked());
  return g_initialized.load() ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

// Runs `body` with the thread's current context's device as the runtime's current device,
// so the shared runtime bodies act on the right device.
template <typename F>
CUresult WithContext(ApiScope& api, F&& body) {
  if (CUresult r = CheckInit(api); r != CUDA_SUCCESS) return R(api.Finish(static_cast<cudaError_t>(r)));
  Context* ctx;
  {
    std::lock_guard<std::mutex> lock(Rt().mu);
    ctx = CurrentLocked();
  }
  if (ctx == nullptr) return R(api.Finish(static_cast<cudaError_t>(CUDA_ERROR_INVALID_CONTEXT)));
  CurrentDevice() = ctx->device;
  return R(body());
}

}  // namespace

KSIM_DRV CUresult cuInit(unsigned int flags) {
  DRV_SCOPE(cuInit, nullptr, nullptr);
  if (api.blocked() != cudaSuccess) return R(api.Finish(api.blocked()));
  if (flags != 0) return R(api.Finish(cudaErrorInvalidValue));
  if (Rt().devices.empty()) return R(api.Finish(static_cast<cudaError_t>(CUDA_ERROR_NO_DEVICE)));
  g_initialized.store(true);
  return R(api.Finish(cudaSuccess));
}

KSIM_DRV CUresult cuDriverGetVersion(int* version) {
  DRV_SCOPE(cuDriverGetVersion, nullptr, nullptr);
  if (version == nullptr) return R(api.Finish(cudaErrorInvalidValue));
  *version = CUDA_VERSION;
  return R(api.Finish(cudaSuccess));
}

KSIM_DRV CUresult cuDeviceGetCount(int* count) {
  DRV_SCOPE(cuDeviceGetCount, nullptr, nullptr);
  if (CUresult r = CheckInit(api); r != CUDA_SUCCESS) return R(api.Finish(static_cast<cudaError_t>(r)));
  if (count == nullptr) return R(api.Finish(cudaErrorInvalidValue));
  *count = static_cast<int>(Rt().devices.size());
  return R(api.Finish(cudaSuccess));
}

KSIM_DRV CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  DRV_SCOPE(cuDeviceGet, nullptr, nullptr);
  if (CUresult r = CheckInit(api); r != CUDA_SUCCESS) return R(api.Finish(static_cast<cudaError_t>(r)));
  if (device == nullptr) return R(api.Finish(cudaErrorInvalidValue));
  if (ordinal < 0 || static_cast<size_t>(ordinal) >= Rt().devices.size()) {
    return R(api.Finish(cudaErrorInvalidDevice));
  }
  *device = ordinal;
  return R(api.Finish(cudaSuccess));
}

KSIM_DRV CUresult cuDeviceGetName(char* name, int len, CUdevice device) {
  DRV_SCOPE(cuDeviceGetName, nullptr, nullptr);
  if (CUresult r = CheckInit(api); r != CUDA_SUCCESS) return R(api.Finish(static_cast<cudaError_t>(r)));
  if (name == nullptr || len <= 0) return R(api.Finish(cudaErrorInvalidValue));
  if (device < 0 || static_cast<size_t>(device) >= Rt().devices.size()) return R(api.Finish(cudaErrorInvalidDevice));
  std::snprintf(name, static_cast<size_t>(len), "%s", Rt().devices[device].name.c_str());
  return R(api.Finish(cudaSuccess));
}

KSIM_DRV CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attr, CUdevice device) {
  DRV_SCOPE(cuDeviceGetAttribute, nullptr, nullptr);
  if (CUresult r = CheckInit(api); r != CUDA_SUCCESS) return R(api.Finish(static_cast<cudaError_t>(r)));
  if (value == nullptr) return R(api.Finish(cudaErrorInvalidValue));
  if (device < 0 || static_cast<size_t>(device) >= Rt().devices.size()) return R(api.Finish(cudaErrorInvalidDevice));
  // CUdevice_attribute and cudaDeviceAttr share their numbering.
  return R(api.Finish(DeviceAttributeValue(Rt().devices[device], static_cast<int>(attr), value)));
}

KSIM_DRV CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  DRV_SCOPE(cuDeviceTotalMem_v2, nullptr, nullptr);
  if (CUresult r = CheckInit(api); r != CUDA_SUCCESS) return R(api.Finish(static_cast<cudaError_t>(r)));
  if (bytes == nullptr) return R(api.Finish(cudaErrorInvalidValue));
  if (device < 0 || static_cast<size_t>(device) >= Rt().devices.size()) return R(api.Finish(cudaErrorInvalidDevice));
  *bytes = Rt().devices[device].memory_bytes;
  return R(api.Finish(cudaSuccess));
}

KSIM_DRV CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice device) {
  DRV_SCOPE(cuDevicePrimaryCtxRetain, nullptr, nullptr);
  if (CUresult r = CheckInit(api); r != CUDA_SUCCESS) return R(api.Finish(static_cast<cudaError_t>(r)));
  if (ctx == nullptr) return R(api.Finish(cudaErrorInvalidValue));
  std::lock_guard<std::mutex> lock(Rt().mu);
  Context* c = Rt().ContextLocked(device);
  if (c == nullptr) return R(api.Finish(cudaErrorInvalidDevice));
  *ctx = reinterpret_cast<CUcontext>(c);
  return R(api.Finish(cudaSuccess));
}

KSIM_DRV CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  DRV_SCOPE(cuDevicePrimaryCtxRelease_v2, nullptr, nullptr);
  if (CUresult r = CheckInit(api); r != CUDA_SUCCESS) return R(api.Finish(static_cast<cudaError_t>(r)));
  if (device < 0 || static_cast<size_t>(device) >= Rt().devices.size()) return R(api.Finish(cudaErrorInvalidDevice));
  // Primary contexts stay alive in the simulator (no context destruction is modelled).
  return R(api.Finish(cudaSuccess));
}

// cuDevicePrimaryCtxGetState / cuCtxPushCurrent / cuCtxPopCurrent / cuMemGetInfo: what a
// tool needs to read a device's memory in use from its own thread without creating a context
// (kairos' memory baseline, docs/MEMORY.md).
namespace {
thread_local std::vector<Context*> t_ctx_stack;  // cuCtxPushCurrent's saved contexts
}  // namespace

void kairos::sim::MarkDriverInitialized() { g_initialized.store(true); }

KSIM_DRV CUresult cuDevicePrimaryCtxGetState(CUdevice device, unsigned int* flags, int* active) {
  DRV_SCOPE(cuDevicePrimaryCtxGetState, nullptr, nullptr);
  if (CUresult r = CheckInit(api); r != CUDA_SUCCESS) return R(api.Finish(static_cast<cudaError_t>(r)));
  if (flags == nullptr || active == nullptr) return R(api.Finish(cudaErrorInvalidValue));
  std::lock_guard<std::mutex> lock(Rt().mu);
  if (device < 0 || static_cast<size_t>(device) >= Rt().devices.size()) return R(api.Finish(cudaErrorInvalidDevice));
  *flags = 0;
  *active = static_cast<size_t>(device) < Rt().contexts.size() && Rt().contexts[device] != nullptr ? 1 : 0;
  return R(api.Finish(cudaSuccess));
}

KSIM_DRV CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  DRV_SCOPE(cuCtxPushCurrent_v2, nullptr, nullptr);
  if (CUresult r = CheckInit(api); r != CUDA_SUCCESS) return R(api.Finish(static_cast<cudaError_t>(r)));
  auto* c = reinterpret_cast<Context*>(ctx);
  if (c == nullptr || c->magic != kKSimContextMagic) {
    return R(api.Finish(static_cast<cudaError_t>(CUDA_ERROR_INVALID_CONTEXT)));
  }
  t_ctx_stack.push_back(t_current);
  t_current = c;
  return R(api.Finish(cudaSuccess));
}

KSIM_DRV CUresult cuCtxPopCurrent_v2(CUcontext* ctx) {
  DRV_SCOPE(cuCtxPopCurrent_v2, nullptr, nullptr);
  if (CUresult r = CheckInit(api); r != CUDA_SUCCESS) return R(api.Finish(static_cast<cudaError_t>(r)));
  if (t_current == nullptr) return R(api.Finish(static_cast<cudaError_t>(CUDA_ERROR_INVALID_CONTEXT)));
  if (ctx != nullptr) *ctx = reinterpret_cast<CUcontext>(t_current);
  t_current = t_ctx_stack.empty() ? nullptr : t_ctx_stack.back();
  if (!t_ctx_stack.empty()) t_ctx_stack.pop_back();
  return R(api.Finish(cudaSuccess));
}

// Free and total of the current context's device: total is the device model's memory
// (device_model.h, 80 GiB unless a device file says otherwise), free is total less what the
// process's allocations hold (pinned host memory excluded), as cudaMemGetInfo reports it.
KSIM_DRV CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
  DRV_SCOPE(cuMemGetInfo_v2, nullptr, nullptr);
  if (CUresult r = CheckInit(api); r != CUDA_SUCCESS) return R(api.Finish(static_cast<cudaError_t>(r)));
  std::lock_guard<std::mutex> lock(Rt().mu);
  Context* c = t_current;
  if (c == nullptr) return R(api.Finish(static_cast<cudaError_t>(CUDA_ERROR_INVALID_CONTEXT)));
  if (free_bytes != nullptr) *free_bytes = c->spec.memory_bytes - c->used_bytes;
  if (total != nullptr) *total = c->spec.memory_bytes;
  return R(api.Finish(cudaSuccess));
}

KSIM_DRV CUresult cuCtxSetCurrent(CUcontext ctx) {
  DRV_SCOPE(cuCtxSetCurrent, nullptr, nullptr);
  if (CUresult r = CheckInit(api); r != CUDA_SUCCESS) return R(api.Finish(static_cast<cudaError_t>(r)));
  auto* c = reinterpret_cast<Context*>(ctx);
  if (c != nullptr && c->magic != kKSimContextMagic) {
    return R(api.Finish(static_cast<cudaError_t>(CUDA_ERROR_INVALID_CONTEXT)));
  }
  t_current = c;
  if (c != nullptr) CurrentDevice() = c->device;
  return R(api.Finish(cudaSuccess));
}

KSIM_DRV CUresult cuCtxGetCurrent(CUcontext* ctx) {
  DRV_SCOPE(cuCtxGetCurrent, nullptr, nullptr);
  if (CUresult r = CheckInit(api); r != CUDA_SUCCESS) return R(api.Finish(static_cast<cudaError_t>(r)));
  if (ctx == nullptr) return R(api.Finish(cudaErrorInvalidValue));
  std::lock_guard<std::mutex> lock(Rt().mu);
  *ctx = reinterpret_cast<CUcontext>(CurrentLocked());
  return R(api.Finish(cudaSuccess));
}

KSIM_DRV CUresult cuCtxGetDevice(CUdevice* device) {
  DRV_SCOPE(cuCtxGetDevice, nullptr, nullptr);
  if (device == nullptr) return R(api.Finish(cudaErrorInvalidValue));
  return WithContext(api, [&] {
    *device = CurrentDevice();
    return api.Finish(cudaSuccess);
  });
}

KSIM_DRV CUresult cuCtxSynchronize(void) {
  DRV_SCOPE(cuCtxSynchronize, nullptr, nullptr);
  return WithContext(api, [&] { return DeviceSyncCommon(api); });
}

KSIM_DRV CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  DRV_SCOPE(cuModuleLoadData, nullptr, nullptr);
  if (module == nullptr || image == nullptr) return R(api.Finish(cudaErrorInvalidValue));
  return WithContext(api, [&] {
    auto m = std::make_unique<Module>();
    m->image = static_cast<const uint8_t*>(image);
    m->size = ImageSize(image);
    Module* raw = m.get();
    std::lock_guard<std::mutex> lock(Rt().mu);
    Modules()[raw] = std::move(m);
    *module = reinterpret_cast<CUmodule>(raw);
    return api.Finish(cudaSuccess);
  });
}

KSIM_DRV CUresult cuModuleUnload(CUmodule module) {
  DRV_SCOPE(cuModuleUnload, nullptr, nullptr);
  if (CUresult r = CheckInit(api); r != CUDA_SUCCESS) return R(api.Finish(static_cast<cudaError_t>(r)));
  std::lock_guard<std::mutex> lock(Rt().mu);
  auto it = Modules().find(reinterpret_cast<Module*>(module));
  if (it == Modules().end()) return R(api.Finish(cudaErrorInvalidResourceHandle));
  // Kernel records already written keep pointing at the function names: keep the module's
  // functions alive (leaked) and forget only the handle.
  it->second.release();
  Modules().erase(it);
  return R(api.Finish(cudaSuccess));
}

KSIM_DRV CUresult cuModuleGetFunction(CUfunction* fn, CUmodule module, const char* name) {
  DRV_SCOPE(cuModuleGetFunction, nullptr, nullptr);
  if (CUresult r = CheckInit(api); r != CUDA_SUCCESS) return R(api.Finish(static_cast<cudaError_t>(r)));
  if (fn == nullptr || name == nullptr) return R(api.Finish(cudaErrorInvalidValue));
  std::lock_guard<std::mutex> lock(Rt().mu);
  auto it = Modules().find(reinterpret_cast<Module*>(module));
  if (it == Modules().end()) return R(api.Finish(cudaErrorInvalidResourceHandle));
  Module* m = it->second.get();
  if (m->size != 0 && memmem(m->image, m->size, name, std::strlen(name)) == nullptr) {
    return R(api.Finish(static_cast<cudaError_t>(CUDA_ERROR_NOT_FOUND)));
  }
  auto& slot = m->functions[name];
  if (slot == nullptr) {
    slot = std::make_unique<KernelInfo>();
    slot->name = name;
    slot->host_fun = nullptr;
  }
  *fn = reinterpret_cast<CUfunction>(slot.get());
  return R(api.Finish(cudaSuccess));
}

KSIM_DRV CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                 unsigned int by, unsigned int bz, unsigned int shared, CUstream stream,
                                 void** params, void** extra) {
  cuLaunchKernel_params p{f, gx, gy, gz, bx, by, bz, shared, stream, params, extra};
  const KernelInfo* k = nullptr;
  {
    std::lock_guard<std::mutex> lock(Rt().mu);
    for (const auto& [handle, m] : Modules()) {
      for (const auto& [name, info] : m->functions) {
        if (reinterpret_cast<CUfunction>(info.get()) == f) k = info.get();
      }
    }
  }
  DRV_SCOPE(cuLaunchKernel, &p, k != nullptr ? k->name.c_str() : nullptr);
  if (k == nullptr) {
    if (CUresult r = CheckInit(api); r != CUDA_SUCCESS) return R(api.Finish(static_cast<cudaError_t>(r)));
    return R(api.Finish(cudaErrorInvalidResourceHandle));
  }
  return WithContext(api, [&] {
    cudaError_t err = LaunchCommon(api, k, dim3(gx, gy, gz), dim3(bx, by, bz), shared, stream);
    // The driver reports a bad configuration as CUDA_ERROR_INVALID_VALUE.
    return err == cudaErrorInvalidConfiguration ? cudaErrorInvalidValue : err;
  });
}

KSIM_DRV CUresult cuMemAlloc_v2(CUdeviceptr* ptr, size_t bytes) {
  DRV_SCOPE(cuMemAlloc_v2, nullptr, nullptr);
  if (ptr == nullptr) return R(api.Finish(cudaErrorInvalidValue));
  return WithContext(api, [&] {
    void* p = nullptr;
    if (bytes == 0) return api.Finish(cudaErrorInvalidValue);
    cudaError_t err = AllocCommon(api, &p, bytes, MemKind::kDevice);
    *ptr = reinterpret_cast<CUdeviceptr>(p);
    return err;
  });
}

KSIM_DRV CUresult cuMemFree_v2(CUdeviceptr ptr) {
  DRV_SCOPE(cuMemFree_v2, nullptr, nullptr);
  return WithContext(api, [&] { return FreeCommon(api, reinterpret_cast<void*>(ptr), false); });
}

KSIM_DRV CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
  DRV_SCOPE(cuMemcpyHtoD_v2, nullptr, nullptr);
  return WithContext(api, [&] {
    return CopyApi(api, reinterpret_cast<void*>(dst), src, n, cudaMemcpyHostToDevice, nullptr, false);
  });
}

KSIM_DRV CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
  DRV_SCOPE(cuMemcpyDtoH_v2, nullptr, nullptr);
  return WithContext(api, [&] {
    return CopyApi(api, dst, reinterpret_cast<const void*>(src), n, cudaMemcpyDeviceToHost, nullptr, false);
  });
}

KSIM_DRV CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  DRV_SCOPE(cuMemcpyDtoD_v2, nullptr, nullptr);
  return WithContext(api, [&] {
    return CopyApi(api, reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n,
                   cudaMemcpyDeviceToDevice, nullptr, false);
  });
}

KSIM_DRV CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, CUstream stream) {
  DRV_SCOPE(cuMemcpyHtoDAsync_v2, nullptr, nullptr);
  return WithContext(api, [&] {
    return CopyApi(api, reinterpret_cast<void*>(dst), src, n, cudaMemcpyHostToDevice, stream, true);
  });
}

KSIM_DRV CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, CUstream stream) {
  DRV_SCOPE(cuMemcpyDtoHAsync_v2, nullptr, nullptr);
  return WithContext(api, [&] {
    return CopyApi(api, dst, reinterpret_cast<const void*>(src), n, cudaMemcpyDeviceToHost, stream, true);
  });
}

KSIM_DRV CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t n) {
  DRV_SCOPE(cuMemsetD8_v2, nullptr, nullptr);
  return WithContext(api, [&] { return MemsetApi(api, reinterpret_cast<void*>(dst), value, n, nullptr, false); });
}

KSIM_DRV CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
  DRV_SCOPE(cuStreamCreate, nullptr, nullptr);
  if (stream == nullptr) return R(api.Finish(cudaErrorInvalidValue));
  return WithContext(api, [&] {
    return CreateStreamCommon(api, reinterpret_cast<cudaStream_t*>(stream),
                              (flags & CU_STREAM_NON_BLOCKING) != 0 ? cudaStreamNonBlocking : cudaStreamDefault, 0);
  });
}

KSIM_DRV CUresult cuStreamDestroy_v2(CUstream stream) {
  DRV_SCOPE(cuStreamDestroy_v2, nullptr, nullptr);
  return WithContext(api, [&] { return DestroyStreamCommon(api, stream); });
}

KSIM_DRV CUresult cuStreamSynchronize(CUstream stream) {
  DRV_SCOPE(cuStreamSynchronize, nullptr, nullptr);
  return WithContext(api, [&] { return StreamSyncCommon(api, stream); });
}

KSIM_DRV CUresult cuGetErrorName(CUresult error, const char** str) {
  if (str == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (error) {
    case CUDA_SUCCESS: *str = "CUDA_SUCCESS"; break;
    case CUDA_ERROR_INVALID_VALUE: *str = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *str = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case CUDA_ERROR_NOT_INITIALIZED: *str = "CUDA_ERROR_NOT_INITIALIZED"; break;
    case CUDA_ERROR_NO_DEVICE: *str = "CUDA_ERROR_NO_DEVICE"; break;
    case CUDA_ERROR_INVALID_DEVICE: *str = "CUDA_ERROR_INVALID_DEVICE"; break;
    case CUDA_ERROR_INVALID_CONTEXT: *str = "CUDA_ERROR_INVALID_CONTEXT"; break;
    case CUDA_ERROR_INVALID_HANDLE: *str = "CUDA_ERROR_INVALID_HANDLE"; break;
    case CUDA_ERROR_NOT_FOUND: *str = "CUDA_ERROR_NOT_FOUND"; break;
    case CUDA_ERROR_NOT_SUPPORTED: *str = "CUDA_ERROR_NOT_SUPPORTED"; break;
    default: *str = "CUDA_ERROR_UNKNOWN"; return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

KSIM_DRV CUresult cuGetErrorString(CUresult error, const char** str) { return cuGetErrorName(error, str); }
