// File: bench_headline.h
// Layer: bench. The one machine-readable line every benchmark prints per headline figure, next
// to (never instead of) its human output, so that bench_all (run_all.cmake) can collect them
// into one table and tools/bench_check.py can compare them with bench/baseline.tsv (issue 29
// item 6; docs/PERFORMANCE.md "Headline table, baseline and regression check"):
//
//   KAIROS_HEADLINE <benchmark> <metric> <value> <lower|higher> <target|-> <unit>
//
// Six space-separated fields after the tag, none containing a space: <better> says which way is
// an improvement (and how <target> is met: value <= target for lower, >= for higher); "-" is a
// figure without a numeric target. A headline is the ratio against the baseline the benchmark
// measures in the same run wherever it has one (ratios survive a loaded machine, absolute times
// do not); an absolute figure only where the summary table's target is stated in absolute units
// or there is nothing in the run to divide by.
// Threading: call from the benchmark's main thread, like its other printf output.
#ifndef KAIROS_BENCH_BENCH_HEADLINE_H_
#define KAIROS_BENCH_BENCH_HEADLINE_H_

#include <cmath>
#include <cstdio>
#include <limits>

namespace kairos::bench {

enum class Better { kLower, kHigher };

inline constexpr double kNoTarget = std::numeric_limits<double>::quiet_NaN();

// %.6g: enough digits that a deterministic figure (bytes per event, a fault count) prints the
// same in every run, so the baseline's spread for it is exactly 0.
inline void Headline(const char* benchmark, const char* metric, double value, Better better,
                     const char* unit, double target = kNoTarget) {
  char target_text[32] = "-";
  if (!std::isnan(target)) std::snprintf(target_text, sizeof target_text, "%.6g", target);
  std::printf("KAIROS_HEADLINE %s %s %.6g %s %s %s\n", benchmark, metric, value,
              better == Better::kLower ? "lower" : "higher", target_text, unit);
}

}  // namespace kairos::bench

#endif  // KAIROS_BENCH_BENCH_HEADLINE_H_
