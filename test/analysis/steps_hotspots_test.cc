// File: steps_hotspots_test.cc
// Layer: tests for kairos_analysis. Step statistics and the step-outlier rule; hotspot
// tables with nearest-rank statistics.
// Threading: single-threaded.
#include <catch2/catch.hpp>

#include "analysis/summary.h"
#include "analysis/trace_builder.h"

namespace kairos {
namespace {

using kairos::testing::TraceBuilder;

TEST_CASE("Step statistics and a flagged outlier") {
  TraceBuilder b(0, 2000);
  const uint32_t th = b.Thread();
  int64_t t = 0;
  for (int i = 0; i < 10; ++i) {
    const int64_t d = i == 7 ? 300 : 100;
    b.Step(th, 40 + i, t, t + d);
    t += d;
  }
  b.Add(th, EventKind::kUserAnnotation, "ProfilerStep#50", t, 2000).flags = kFlagUnfinished;
  const Summary s = Analyze(b.Done());
  CHECK(s.steps.count == 10);  // the unfinished step is left out
  CHECK(s.steps.mean_ns == 120);
  CHECK(s.steps.median_ns == 100);
  CHECK(s.steps.stdev_ns == 60);
  CHECK(s.steps.min_ns == 100);
  CHECK(s.steps.max_ns == 300);
  REQUIRE(s.steps.outliers.size() == 1);
  CHECK(s.steps.outliers[0].step == 47);
  CHECK(s.steps.outliers[0].start_ns == 700);
  CHECK(s.steps.outliers[0].duration_ns == 300);
}

TEST_CASE("Ordinary jitter and a too-short series flag no outliers") {
  TraceBuilder b(0, 1000);
  const uint32_t th = b.Thread();
  const int64_t d[] = {100, 101, 99, 100, 102, 98};
  int64_t t = 0;
  for (int i = 0; i < 6; ++i) {
    b.Step(th, i, t, t + d[i]);
    t += d[i];
  }
  CHECK(Analyze(b.Done()).steps.outliers.empty());

  TraceBuilder few(0, 1000);
  const uint32_t th2 = few.Thread();
  for (int i = 0; i < 4; ++i) few.Step(th2, i, i * 100, i * 100 + (i == 3 ? 90 : 10));
  const Summary s = Analyze(few.Done());
  CHECK(s.steps.count == 4);
  CHECK(s.steps.outliers.empty());  // fewer than step_outlier_min_steps
}

TEST_CASE("Hotspots rank by total time with nearest-rank median and p95") {
  TraceBuilder b(0, 10000);
  const uint32_t th = b.Thread();
  const uint32_t s = b.Stream(0, 7);
  const int64_t da[] = {10, 20, 30, 40, 100};
  int64_t t = 0;
  for (int64_t d : da) {
    b.Kernel(s, "a", t, t + d, 0);
    t += 200;
  }
  b.Kernel(s, "b", t, t + 500, 0);
  b.Memcpy(s, 5000, 5300, 0, 1 << 20);
  b.Range(th, "outer", 0, 1000);
  b.Range(th, "inner", 100, 200);
  b.Step(th, 1, 0, 5000);
  const Summary sum = Analyze(b.Done());
  REQUIRE(sum.top_kernels.size() == 2);
  CHECK(sum.top_kernels[0].name == "b");
  const DurationStats& a = sum.top_kernels[1].stats;
  CHECK(sum.top_kernels[1].name == "a");
  CHECK(a.count == 5);
  CHECK(a.total_ns == 200);
  CHECK(a.mean_ns == 40);
  CHECK(a.median_ns == 30);
  CHECK(a.p95_ns == 100);
  CHECK(a.max_ns == 100);
  REQUIRE(sum.top_memcpys.size() == 1);
  CHECK(sum.top_memcpys[0].stats.total_ns == 300);
  REQUIRE(sum.top_cpu_ranges.size() == 2);  // ProfilerStep is not a hotspot
  CHECK(sum.top_cpu_ranges[0].name == "outer");
  CHECK(sum.top_cpu_ranges[1].name == "inner");

  AnalysisOptions o;
  o.top_n = 1;
  CHECK(Analyze(b.data(), o).top_kernels.size() == 1);
}

}  // namespace
}  // namespace kairos
