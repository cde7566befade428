// File: antipatterns.h
// Layer: kairos_analysis (internal). Antipattern detectors, split by what they look at:
// GPU work shape (antipatterns_gpu.cc) and host/GPU interplay (antipatterns_host.cc).
// Every detector appends at most one Finding per device (or one global) with evidence, a
// few example events and a recommendation; thresholds come from AnalysisOptions.
// Threading: calling thread only.
#ifndef KAIROS_SRC_ANALYSIS_ANTIPATTERNS_H_
#define KAIROS_SRC_ANALYSIS_ANTIPATTERNS_H_

#include <algorithm>

#include "analysis/analysis_context.h"

namespace kairos::internal {

void DetectGpuAntipatterns(const AnalysisContext& ctx, Summary* summary);
void DetectHostAntipatterns(const AnalysisContext& ctx, Summary* summary);
// tensor_cores_idle (tensor_cores.cc). GemmPrecisionFromName: 1 plain fp32, 2 reduced
// precision / tensor cores, 0 unknown, from a GEMM-class kernel's name.
void TensorCoresIdle(const AnalysisContext& ctx, const DeviceWork& dw, Summary* summary);
int GemmPrecisionFromName(std::string_view name);

// Builds findings; keeps example lists bounded.
class FindingBuilder {
 public:
  FindingBuilder(const AnalysisContext& ctx, const char* id, const char* title, int64_t device)
      : ctx_(ctx) {
    f_.id = id;
    f_.title = title;
    f_.device = device;
  }
  FindingBuilder& Evidence(const char* key, double value) {
    f_.evidence.emplace_back(key, value);
    return *this;
  }
  void Example(const Event& e) {
    if (f_.examples.size() < ctx_.options->max_examples) f_.examples.push_back(MakeRef(ctx_, e));
  }
  bool wants_examples() const { return f_.examples.size() < ctx_.options->max_examples; }
  // The time the finding concerns and how sure the detector is (docs/SUMMARY.md).
  FindingBuilder& Impact(int64_t time_ns, const char* confidence) {
    f_.time_ns = time_ns;
    const int64_t w = ctx_.window_ns();
    f_.window_share = w > 0 ? std::min(1.0, static_cast<double>(time_ns) / static_cast<double>(w)) : 0.0;
    f_.confidence = confidence;
    return *this;
  }
  Finding Done(std::string recommendation) {
    f_.recommendation = std::move(recommendation);
    return std::move(f_);
  }

 private:
  const AnalysisContext& ctx_;
  Finding f_;
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ANALYSIS_ANTIPATTERNS_H_
