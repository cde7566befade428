// File: steps.cc
// Layer: kairos_analysis (internal). Step-time statistics over complete ProfilerStep#N
// ranges and the step-outlier rule: a step whose excess over the mean of the *other* steps
// is more than step_outlier_sigma of their standard deviation (leave-one-out, so one slow
// step cannot hide itself by inflating the deviation) and more than
// step_outlier_min_excess of the median (so perfectly regular steps with a near-zero
// deviation do not flag jitter).
// Threading: calling thread only.
#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/analysis_context.h"

namespace kairos::internal {

void ComputeSteps(const AnalysisContext& ctx, Summary* summary) {
  StepSummary& s = summary->steps;
  const size_t n = ctx.steps.size();
  s.count = n;
  if (n == 0) return;
  s.first_step_start_ns = ctx.steps.front().start_ns;
  if (ctx.options->keep_step_series) {
    summary->step_series.reserve(n);
    for (const Step& st : ctx.steps) summary->step_series.push_back({st.number, st.start_ns, st.end_ns - st.start_ns});
  }
  std::vector<int64_t> d;
  d.reserve(n);
  double sum = 0, sum_sq = 0;
  for (const Step& st : ctx.steps) {
    const int64_t v = st.end_ns - st.start_ns;
    d.push_back(v);
    sum += static_cast<double>(v);
    sum_sq += static_cast<double>(v) * static_cast<double>(v);
  }
  s.min_ns = *std::min_element(d.begin(), d.end());
  s.max_ns = *std::max_element(d.begin(), d.end());
  const double mean = sum / static_cast<double>(n);
  s.mean_ns = static_cast<int64_t>(std::llround(mean));
  s.stdev_ns = static_cast<int64_t>(
      std::llround(std::sqrt(std::max(0.0, sum_sq / static_cast<double>(n) - mean * mean))));
  std::vector<int64_t> sorted = d;
  s.median_ns = NearestRank(sorted, 0.5);
  if (n < ctx.options->step_outlier_min_steps) return;
  const double m = static_cast<double>(n - 1);
  for (size_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(d[i]);
    const double mean_o = (sum - v) / m;
    const double sd_o = std::sqrt(std::max(0.0, (sum_sq - v * v) / m - mean_o * mean_o));
    const double excess = v - mean_o;
    if (excess <= ctx.options->step_outlier_min_excess * static_cast<double>(s.median_ns)) continue;
    if (excess <= ctx.options->step_outlier_sigma * sd_o) continue;
    StepOutlier o;
    o.step = ctx.steps[i].number;
    o.start_ns = ctx.steps[i].start_ns;
    o.duration_ns = d[i];
    // With identical other steps the deviation is 0; report a finite, capped value.
    o.sigma = sd_o > 0 ? std::min(excess / sd_o, 1e6) : 1e6;
    s.outliers.push_back(o);
  }
}

}  // namespace kairos::internal
