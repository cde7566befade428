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


// An NCCL kernel's operation as the plugin records it.
CollectiveRecord Coll(uint32_t correlation, CollectiveFunc f, CollectiveDtype t, uint64_t in, uint64_t out,
                      int32_t group) {
  CollectiveRecord c;
  c.correlation = correlation;
  c.func = f;
  c.dtype = t;
  c.in_nelems = in;
  c.out_nelems = out;
  c.comm_size = group;
  return c;
}

TEST_CASE("NCCL collectives: calls, bytes, kernel time and nccl-tests' bus bandwidth") {
  TraceBuilder b(0, 100000);
  const uint32_t s0 = b.Stream(0, 7), s1 = b.Stream(1, 7);
  // GPU 0: three all-reduces of 1 MiB floats in a group of 4 (2, 4 and 6 us), one all-gather
  // of 1024 bf16 per rank (8 us), one all-reduce of an unknown type; GPU 1: one all-reduce.
  b.Kernel(s0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1000, 3000, 11, 32, 512);
  b.Kernel(s0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 5000, 9000, 12, 32, 512);
  b.Kernel(s0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 10000, 16000, 13, 32, 512);
  b.Kernel(s0, "ncclDevKernel_AllGather_RING_LL", 20000, 28000, 14, 32, 512);
  b.Kernel(s0, "ncclDevKernel_AllReduce_Sum_u8_RING_LL", 30000, 31000, 15, 32, 512);
  b.Kernel(s0, "gemm", 40000, 50000, 16);
  b.Kernel(s1, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1000, 3000, 21, 32, 512);
  TraceData& d = b.data();
  d.collectives = {Coll(11, CollectiveFunc::kAllReduce, CollectiveDtype::kFloat32, 262144, 262144, 4),
                   Coll(12, CollectiveFunc::kAllReduce, CollectiveDtype::kFloat32, 262144, 262144, 4),
                   Coll(13, CollectiveFunc::kAllReduce, CollectiveDtype::kFloat32, 262144, 262144, 4),
                   Coll(14, CollectiveFunc::kAllGather, CollectiveDtype::kBfloat16, 1024, 4096, 4),
                   Coll(15, CollectiveFunc::kAllReduce, CollectiveDtype::kUnknown, 100, 100, 4),
                   Coll(21, CollectiveFunc::kAllReduce, CollectiveDtype::kFloat32, 262144, 262144, 4)};
  const Summary sum = Analyze(b.Done());
  REQUIRE(sum.collectives.size() == 4);
  const CollectiveSummary& ar = sum.collectives[0];  // GPU 0, most time first
  CHECK(ar.device == 0);
  CHECK(ar.name == "allreduce");
  CHECK(ar.dtype == "Float");
  CHECK(ar.group_size == 4);
  CHECK(ar.calls == 3);
  CHECK(ar.bytes == 3u * 1048576);
  CHECK(ar.median_bytes == 1048576);
  CHECK(ar.time_ns == 12000);
  CHECK(ar.algbw_gbps == Approx(3.0 * 1048576 / 12000));
  CHECK(ar.busbw_gbps == Approx(3.0 * 1048576 / 12000 * 1.5));  // 2(n-1)/n
  CHECK(ar.best_busbw_gbps == Approx(1048576.0 / 2000 * 1.5));   // the 2 us call
  const CollectiveSummary& ag = sum.collectives[1];
  CHECK(ag.name == "all_gather");
  CHECK(ag.dtype == "BFloat16");
  CHECK(ag.bytes == 8192);  // the gathered buffer: 4096 x 2 B
  CHECK(ag.time_ns == 8000);
  CHECK(ag.busbw_gbps == Approx(8192.0 / 8000 * 0.75));  // (n-1)/n
  const CollectiveSummary& unknown = sum.collectives[2];
  CHECK(unknown.dtype == "");
  CHECK(unknown.calls == 1);
  CHECK(unknown.bytes == 0);
  CHECK(unknown.algbw_gbps == -1.0);
  CHECK(unknown.busbw_gbps == -1.0);
  CHECK(unknown.best_busbw_gbps == -1.0);
  CHECK(sum.collectives[3].device == 1);
  CHECK(sum.collectives[3].calls == 1);
  const std::string json = SummaryToJson(sum);
  CHECK(json.find(R"("collectives":[{"device":0,"name":"allreduce","dtype":"Float","group_size":4,"calls":3,"bytes":3145728,"median_bytes":1048576,"time_ns":12000,)") != std::string::npos);
  CHECK(json.find(R"("busbw_gbps":null)") != std::string::npos);
  const std::string text = SummaryToText(sum);
  CHECK(text.find("  GPU 0 allreduce Float ") != std::string::npos);
  CHECK(text.find("1 MiB per call") != std::string::npos);
  // No collectives: no section.
  TraceBuilder plain(0, 1000);
  plain.Kernel(plain.Stream(0, 7), "gemm", 0, 100, 1);
  const Summary none = Analyze(plain.Done());
  CHECK(none.collectives.empty());
  CHECK(SummaryToText(none).find("NCCL collectives") == std::string::npos);
}

}  // namespace
}  // namespace kairos
