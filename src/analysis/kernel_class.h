// File: kernel_class.h
// Layer: kairos_analysis. What kind of kernel a record is, from its name and launch shape
// (rules and reasons in docs/SUMMARY.md, "Kernel classes"). The class decides whether a
// kernel counts as communication and whether the occupancy and concurrency detectors may
// judge it: a kernel that uses one CTA per SM or a fixed SM budget by design is not a
// defect when it has few blocks or low theoretical occupancy.
// Threading: pure functions.
#ifndef KAIROS_SRC_ANALYSIS_KERNEL_CLASS_H_
#define KAIROS_SRC_ANALYSIS_KERNEL_CLASS_H_

#include <cstdint>
#include <string_view>

namespace kairos {

enum class KernelClass : uint8_t {
  kNccl = 0,          // NCCL/HCCL collectives
  kCommunication,     // other communication: all-to-all / EP dispatch-combine, NVSHMEM, custom all-reduce
  kGemmAttention,     // tensor-core GEMM / attention: CUTLASS, cuBLAS(Lt), FlashAttention, Triton matmuls
  kPersistent,        // grid sized by the SM count (or named persistent)
  kElementwise,       // elementwise and reduction kernels
  kMemory,            // copy / fill / memset-like kernels
  kOther,
};
inline constexpr int kNumKernelClasses = 7;

// Stable lower-case ids used in JSON, text and the report: "nccl", "communication",
// "gemm_attention", "persistent", "elementwise_reduction", "memory", "other".
const char* KernelClassId(KernelClass c);

// The class a name alone implies (kPersistent only for names that say so; kOther when
// nothing matches).
KernelClass ClassifyKernelName(std::string_view name);

// The final class: the name class, refined by the launch shape. `blocks` is the grid size
// (0 = unknown), `sm_count` the device's SMs (0 = unknown). A kGemmAttention or
// communication name keeps its class; any other name becomes kPersistent when its grid is
// 1-4 times the SM count (or the SM count rounded down to a cluster multiple of 2, 4 or 8).
KernelClass RefineKernelClass(KernelClass by_name, uint64_t blocks, int32_t sm_count);

inline bool IsCommunicationClass(KernelClass c) {
  return c == KernelClass::kNccl || c == KernelClass::kCommunication;
}
// Whether few blocks or low theoretical occupancy is a defect worth reporting for the class.
inline bool ShapeFindingsApply(KernelClass c) {
  return c == KernelClass::kElementwise || c == KernelClass::kMemory || c == KernelClass::kOther;
}

}  // namespace kairos

#endif  // KAIROS_SRC_ANALYSIS_KERNEL_CLASS_H_
