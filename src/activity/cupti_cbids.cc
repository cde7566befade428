// File: cupti_cbids.cc
// Layer: kairos_activity (CUDA builds only). Callback-id tables; see cupti_cbids.h.
// Threading: pure functions.
#include "activity/cupti_cbids.h"

#include <cupti.h>

namespace kairos::internal {
namespace {

constexpr uint32_t kFilteredRuntime[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventCreateWithFlags_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020,
    CUPTI_RUNTIME_TRACE_CBID___cudaRegisterFatBinary_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaRegisterFatBinaryEnd_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaUnregisterFatBinary_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaRegisterVar_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaRegisterHostVar_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaRegisterFunction_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaRegisterManagedVar_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaInitModule_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaPushCallConfiguration_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaPopCallConfiguration_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaGetKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaRegisterUnifiedTable_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaGetProcAddress_v13000,
};

// Driver records only come from driver calls the program makes itself (CUPTI does not report
// the driver calls the runtime makes on the program's behalf), e.g. Triton's launcher. Kept:
// launches, the copies, memsets and synchronizations such a program issues (they own their
// GPU records' correlation ids), and the VMM calls.
constexpr uint32_t kKeptDriver[] = {
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemCreate,
    CUPTI_DRIVER_TRACE_CBID_cuMemRelease,
    CUPTI_DRIVER_TRACE_CBID_cuMemMap,
    CUPTI_DRIVER_TRACE_CBID_cuMemUnmap,
    CUPTI_DRIVER_TRACE_CBID_cuMemExportToShareableHandle,
    CUPTI_DRIVER_TRACE_CBID_cuMemImportFromShareableHandle,
};

}  // namespace

namespace {
// Bitmaps over cbids: the conversion worker checks every API record. Built by the compiler
// (constexpr), so they are read-only data, not state built on first use.
struct CbidSet {
  template <size_t N>
  constexpr explicit CbidSet(const uint32_t (&table)[N]) {
    for (uint32_t c : table) bits[c / 64] |= uint64_t{1} << (c % 64);
  }
  constexpr bool Has(uint32_t c) const { return c < 1024 && (bits[c / 64] >> (c % 64) & 1) != 0; }
  uint64_t bits[16] = {};
};
constexpr CbidSet kFilteredRuntimeSet(kFilteredRuntime);
constexpr CbidSet kKeptDriverSet(kKeptDriver);
// A cbid past the bitmap would be silently "not in the set": fail the build instead.
template <size_t N>
constexpr bool AllBelow1024(const uint32_t (&table)[N]) {
  for (uint32_t c : table) {
    if (c >= 1024) return false;
  }
  return true;
}
static_assert(AllBelow1024(kFilteredRuntime) && AllBelow1024(kKeptDriver),
              "CbidSet holds cbids below 1024");
}  // namespace

bool IsFilteredRuntimeCbid(uint32_t cbid) { return kFilteredRuntimeSet.Has(cbid); }

std::vector<uint32_t> FilteredRuntimeCbids() {
  return std::vector<uint32_t>(std::begin(kFilteredRuntime), std::end(kFilteredRuntime));
}

bool IsKeptDriverCbid(uint32_t cbid) { return kKeptDriverSet.Has(cbid); }

bool IsKernelLaunchRuntimeCbid(uint32_t cbid) {
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
      return true;
    default:
      return false;
  }
}

bool IsKernelLaunchDriverCbid(uint32_t cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      return true;
    default:
      return false;
  }
}

bool IsFlowStartRuntimeCbid(uint32_t cbid) {
  if (IsKernelLaunchRuntimeCbid(cbid)) return true;
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernelMultiDevice_v9000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000:
      return true;
    default:
      // cudaMemcpy_v3020 (31) .. cudaMemset2DAsync_v3020 (52), as in Kineto, plus the
      // per-thread-default-stream copies/sets (215..236).
      return (cbid >= CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020 &&
              cbid <= CUPTI_RUNTIME_TRACE_CBID_cudaMemset2DAsync_v3020) ||
             (cbid >= CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000 &&
              cbid <= CUPTI_RUNTIME_TRACE_CBID_cudaMemset2DAsync_ptsz_v7000);
  }
}

bool IsFlowStartDriverCbid(uint32_t cbid) {
  // Every kept driver call that puts work on (or waits for) a stream, as for the runtime.
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemCreate:
    case CUPTI_DRIVER_TRACE_CBID_cuMemRelease:
    case CUPTI_DRIVER_TRACE_CBID_cuMemMap:
    case CUPTI_DRIVER_TRACE_CBID_cuMemUnmap:
    case CUPTI_DRIVER_TRACE_CBID_cuMemExportToShareableHandle:
    case CUPTI_DRIVER_TRACE_CBID_cuMemImportFromShareableHandle:
      return false;
    default:
      return IsKeptDriverCbid(cbid);
  }
}

std::string DisplayApiName(std::string_view name) {
  // Strip "_v" followed by 4 or more digits at the end.
  const size_t pos = name.rfind("_v");
  if (pos != std::string_view::npos && name.size() - pos - 2 >= 4) {
    bool digits = true;
    for (size_t i = pos + 2; i < name.size(); ++i) {
      if (name[i] < '0' || name[i] > '9') digits = false;
    }
    if (digits) name = name.substr(0, pos);
  }
  if (name.substr(0, 14) == "__cudaLaunchKe") name.remove_prefix(2);
  return std::string(name);
}

}  // namespace kairos::internal
