// File: kernel_class.cc — see kernel_class.h. The name rules are case-insensitive substring
// tests, checked in class order; the first class with a match wins.
#include "analysis/kernel_class.h"

#include <string>

namespace kairos {
namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool ContainsAny(std::string_view lower, std::initializer_list<std::string_view> needles) {
  for (std::string_view n : needles) {
    if (lower.find(n) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

const char* KernelClassId(KernelClass c) {
  switch (c) {
    case KernelClass::kNccl: return "nccl";
    case KernelClass::kCommunication: return "communication";
    case KernelClass::kGemmAttention: return "gemm_attention";
    case KernelClass::kPersistent: return "persistent";
    case KernelClass::kElementwise: return "elementwise_reduction";
    case KernelClass::kMemory: return "memory";
    case KernelClass::kOther: return "other";
  }
  return "other";
}

KernelClass ClassifyKernelName(std::string_view name) {
  // HTA's communication rule (trace-consumers.md), case-sensitive as HTA applies it.
  if (StartsWith(name, "nccl") || StartsWith(name, "hccl") ||
      name.find("ncclKernel") != std::string_view::npos ||
      name.find("ncclDevKernel") != std::string_view::npos) {
    return KernelClass::kNccl;
  }
  std::string lower(name);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  // Communication written outside NCCL: DeepEP / pplx expert-parallel dispatch, combine and
  // notify kernels, NVSHMEM device code, one-shot/two-shot custom all-reduce (vLLM, SGLang,
  // TensorRT-LLM, torch symmetric memory), NVLink multimem collectives.
  if (ContainsAny(lower, {"deep_ep", "internode", "intranode", "nvshmem", "pplx", "alltoall",
                          "all_to_all", "a2a", "allreduce", "all_reduce", "allgather",
                          "all_gather", "reducescatter", "reduce_scatter", "cross_device_reduce",
                          "multimem", "lamport", "notify_dispatch", "notify_combine",
                          "ep_dispatch", "ep_combine"})) {
    return KernelClass::kCommunication;
  }
  // Tensor-core GEMM and attention, written by libraries that choose their own tiling and
  // grid: CUTLASS/CuTe (device_kernel, sm90/sm100 collectives), cuBLAS/cuBLASLt (xmma, hmma,
  // nvjet on Hopper), DeepGEMM, Marlin/Machete, FlashAttention/FlashInfer, cuDNN SDPA,
  // memory-efficient attention (fmha), Triton matmuls and Inductor templates.
  if (ContainsAny(lower, {"gemm", "gemv", "cutlass", "cute::", "cublas", "nvjet", "xmma", "hmma",
                          "imma", "wgmma", "matmul", "triton_tem_", "marlin", "machete", "flash",
                          "fmha", "sdpa", "attention", "attn"})) {
    return KernelClass::kGemmAttention;
  }
  if (ContainsAny(lower, {"persistent"})) return KernelClass::kPersistent;
  // Before elementwise: a fill is written as an elementwise functor (FillFunctor).
  if (ContainsAny(lower, {"memcpy", "memset", "copy", "fill"})) return KernelClass::kMemory;
  if (ContainsAny(lower, {"elementwise", "pointwise", "reduce", "reduction", "softmax", "norm",
                          "triton_poi_", "triton_red_", "triton_per_", "multi_tensor", "gelu",
                          "silu", "relu", "dropout"})) {
    return KernelClass::kElementwise;
  }
  return KernelClass::kOther;
}

KernelClass RefineKernelClass(KernelClass by_name, uint64_t blocks, int32_t sm_count) {
  if (by_name != KernelClass::kElementwise && by_name != KernelClass::kMemory &&
      by_name != KernelClass::kOther) {
    return by_name;
  }
  if (blocks == 0 || sm_count <= 0) return by_name;
  const auto sms = static_cast<uint64_t>(sm_count);
  // A grid of 1-4 waves exactly: the kernel sized it from the SM count and loops over work.
  // (Called per kernel by two passes: one division instead of a loop of four products.)
  if (blocks <= 4 * sms && blocks % sms == 0) return KernelClass::kPersistent;
  // Clustered persistent kernels launch the largest multiple of the cluster size (2, 4, 8)
  // that fits: sms less sms % c, when that is not sms itself.
  const auto clustered = [&](uint64_t rest) { return rest != 0 && blocks == sms - rest; };
  if (clustered(sms & 1) || clustered(sms & 3) || clustered(sms & 7)) return KernelClass::kPersistent;
  return by_name;
}

}  // namespace kairos
