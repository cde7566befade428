// File: cupti_cbids.h
// Layer: kairos_activity (CUDA builds only). Which runtime/driver callback ids kairos keeps,
// which start an ac2g flow, and how their names are displayed. One table used both to set
// CUPTI's per-cbid filters (so noisy calls never enter the buffers) and at conversion.
// Threading: pure functions.
#ifndef KAIROS_SRC_ACTIVITY_CUPTI_CBIDS_H_
#define KAIROS_SRC_ACTIVITY_CUPTI_CBIDS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kairos::internal {

// Runtime calls that are pure bookkeeping (device queries, error polling, event handles,
// the CUDA 13 <<<>>> call-configuration helpers, fat-binary registration). Dropped.
bool IsFilteredRuntimeCbid(uint32_t cbid);
std::vector<uint32_t> FilteredRuntimeCbids();

// Driver calls kairos keeps (launches and the VMM calls Kineto shows); every other driver
// call is dropped, as in Kineto's trace.
bool IsKeptDriverCbid(uint32_t cbid);

// Runtime/driver calls that start an ac2g flow when their correlation id has GPU work
// (trace-format-kineto-json.md §5, plus the CUDA 13 __cudaLaunchKernel ids 505/506 and the
// ptsz variants, which are launches too).
bool IsFlowStartRuntimeCbid(uint32_t cbid);
bool IsFlowStartDriverCbid(uint32_t cbid);

// Runtime/driver calls that launch one kernel (not graphs, copies or syncs): the call an NCCL
// operation's kernel is launched by (nccl_collectives.h).
bool IsKernelLaunchRuntimeCbid(uint32_t cbid);
bool IsKernelLaunchDriverCbid(uint32_t cbid);

// Display name of a CUPTI callback name: a "_vNNNN" suffix of 4+ digits is removed
// ("cudaLaunchKernel_v7000" -> "cudaLaunchKernel"; "cuMemcpyHtoD_v2" stays). The CUDA 13
// private launch entry "__cudaLaunchKernel[_ptsz]" (what <<<>>> calls) is shown as
// "cudaLaunchKernel[_ptsz]" so HTA and other consumers recognise it as a kernel launch; its
// cbid (505/506) is kept in the args.
std::string DisplayApiName(std::string_view cupti_name);

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CUPTI_CBIDS_H_
