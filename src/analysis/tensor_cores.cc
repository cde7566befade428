// File: tensor_cores.cc
// Layer: kairos_analysis (internal). The tensor_cores_idle detector (docs/SUMMARY.md):
// matrix-multiply / convolution work that runs in plain fp32 on a GPU whose tensor cores
// would take it (TF32 from compute capability 8.0, fp16/bf16 from 7.0), or GEMM-class work
// while PM sampling shows the tensor pipes near idle. A kernel's precision comes from its
// name (cuBLAS/CUTLASS spell it: sgemm, f32f32 vs. h/bf16/tf32/tensorop/..., rules below);
// kernels that are already reduced-precision or tensor-core never count.
// Threading: calling thread only.
#include <string>
#include <vector>
#include <string_view>

#include "absl/strings/ascii.h"
#include "analysis/antipatterns.h"
#include "analysis/kernel_class.h"

namespace kairos::internal {
namespace {

bool ContainsAny(std::string_view s, std::initializer_list<std::string_view> words) {
  for (std::string_view w : words)
    if (s.find(w) != std::string_view::npos) return true;
  return false;
}

}  // namespace

// What a GEMM-class kernel's name says of its math: 1 = plain fp32 (CUDA cores), 2 = reduced
// precision or tensor cores, 0 = it does not say.
int GemmPrecisionFromName(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(std::string(name));
  if (ContainsAny(lower, {"tf32",   "bf16",  "f16",    "fp16", "half",     "hgemm", "h884", "h1688",
                          "h16816", "s1688", "s16816", "s884", "tensorop", "hmma",  "imma", "wgmma",
                          "_i8",    "i8i8",  "int8",   "e4m3", "e5m2",     "fp8"}))
    return 2;
  if (ContainsAny(lower, {"sgemm", "f32f32", "gemm_f32", "fp32"})) return 1;
  return 0;
}

void TensorCoresIdle(const AnalysisContext& ctx, const DeviceWork& dw, Summary* out) {
  const AnalysisOptions& o = *ctx.options;
  const DeviceInfo* dev = ctx.Device(dw.device);
  if (dev == nullptr || dev->compute_major < 7) return;  // no tensor cores (or unknown GPU)
  int64_t kernel_ns = 0, gemm_ns = 0, fp32_ns = 0, reduced_ns = 0;
  FindingBuilder b(ctx, "tensor_cores_idle", "Matrix math runs without tensor cores", dw.device);
  std::vector<int8_t> precision_by_name(ctx.data->strings.size(), -1);
  for (const GpuOp& op : dw.ops) {
    if (op.event->kind != EventKind::kKernel) continue;
    const int64_t d = ctx.End(op) - ctx.Start(op);
    kernel_ns += d;
    if (op.name_class != KernelClass::kGemmAttention) continue;
    gemm_ns += d;
    // Decided once per name: lower-casing and 26 searches per kernel were a third of the
    // whole analysis of a 200k-kernel window.
    const StringId name = op.event->name;
    int p;
    if (name < precision_by_name.size()) {
      if (precision_by_name[name] < 0)
        precision_by_name[name] = static_cast<int8_t>(GemmPrecisionFromName(ctx.Name(*op.event)));
      p = precision_by_name[name];
    } else {
      p = GemmPrecisionFromName(ctx.Name(*op.event));
    }
    if (p == 2) reduced_ns += d;
    if (p != 1) continue;
    fp32_ns += d;
    b.Example(*op.event);
  }
  if (kernel_ns <= 0 || gemm_ns <= 0) return;
  const double fp32_share = static_cast<double>(fp32_ns) / static_cast<double>(kernel_ns);
  // PM sampling: tensor pipes near idle while GEMM-class kernels that are not known to be
  // reduced precision take a large share.
  double tensor_pct = -1;
  for (const DeviceSummary& s : out->devices)
    if (s.device == dw.device) tensor_pct = s.measured_tensor_active_pct;
  const int64_t unknown_ns = gemm_ns - reduced_ns - fp32_ns;
  const bool by_name = fp32_share >= o.tensor_idle_min_share;
  const bool by_pm = tensor_pct >= 0 && tensor_pct < o.tensor_idle_max_active_pct &&
                     static_cast<double>(fp32_ns + unknown_ns) / static_cast<double>(kernel_ns) >=
                         o.tensor_idle_min_share;
  if (!by_name && !by_pm) return;
  b.Impact(by_name ? fp32_ns : fp32_ns + unknown_ns, by_name && by_pm ? "high" : "medium");
  b.Evidence("fp32_gemm_time_ns", static_cast<double>(fp32_ns))
      .Evidence("fp32_gemm_share_of_kernel_time", fp32_share)
      .Evidence("gemm_time_ns", static_cast<double>(gemm_ns))
      .Evidence("reduced_precision_gemm_time_ns", static_cast<double>(reduced_ns))
      .Evidence("compute_capability", dev->compute_major + dev->compute_minor / 10.0);
  if (tensor_pct >= 0) b.Evidence("measured_tensor_active_pct", tensor_pct);
  out->findings.push_back(b.Done(
      std::string(
          "Matrix multiplies and convolutions run in fp32 on CUDA cores while this GPU's tensor "
          "cores sit idle. Train in mixed precision (torch.autocast(\"cuda\", dtype=torch.bfloat16)"
          ", or float16 with a GradScaler)") +
      (dev->compute_major >= 8 ? ", or at least let fp32 matmuls use TF32 "
                                 "(torch.backends.cuda.matmul.allow_tf32 = True, "
                                 "torch.backends.cudnn.allow_tf32 = True, or "
                                 "torch.set_float32_matmul_precision(\"high\"))."
                               : "; this GPU has no TF32, so fp16 autocast is the way.")));
}

}  // namespace kairos::internal
