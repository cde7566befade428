// File: cross_rank_test.cc
// Layer: tests for src/analysis/cross_rank.*. Multi-rank fixtures (multirank_fixture.h) go
// through the JSON reader, ExtractRankProfile and AnalyzeRanks; the expected numbers follow
// from the fixture's job model on paper.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "analysis/cross_rank.h"
#include "analysis/multirank_fixture.h"
#include "output/json_reader.h"
#include "report/report.h"

namespace kairos {
namespace {

using testing::JobSpec;

std::vector<RankProfile> Profiles(const JobSpec& j) {
  std::vector<RankProfile> out;
  for (int r = 0; r < j.world; ++r) {
    absl::StatusOr<TraceData> data = ReadKinetoJsonTraceText(testing::RankTraceJson(j, r));
    REQUIRE(data.ok());
    out.push_back(ExtractRankProfile(*data, "job.rank" + std::to_string(r) + ".json"));
  }
  return out;
}

const Finding* Find(const CrossRankSummary& s, const std::string& id) {
  for (const Finding& f : s.findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

double Evidence(const Finding& f, const std::string& key) {
  for (const auto& [k, v] : f.evidence) {
    if (k == key) return v;
  }
  FAIL("no evidence key " << key);
  return 0;
}

JobSpec Straggler() {
  JobSpec j;
  j.straggler = 2;
  j.straggler_delay_us = 1000;
  return j;
}

TEST_CASE("profile: rank, steps and collectives come from the trace", "[cross_rank]") {
  const std::vector<RankProfile> p = Profiles(Straggler());
  REQUIRE(p.size() == 4);
  CHECK(p[3].rank == 3);
  CHECK(p[3].world_size == 4);
  CHECK(p[3].host == "node0");
  REQUIRE(p[3].steps.size() == 10);
  CHECK(p[3].steps[0].step == 5);
  CHECK(p[3].steps[9].step == 14);
  CHECK(p[3].steps[0].end_ns - p[3].steps[0].start_ns == 3810000);
  REQUIRE(p[3].collectives.size() == 10);
  CHECK(p[3].collectives[0].name == "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  CHECK(p[3].collectives[0].step == 5);
  CHECK(p[3].collectives[0].end_ns - p[3].collectives[0].start_ns == 1500000);
  // The launch call, 5 us before the kernel, places the collective in its step.
  CHECK(p[3].collectives[0].start_ns - p[3].collectives[0].launch_ns == 5000);
  CHECK(p[2].collectives[0].end_ns - p[2].collectives[0].start_ns == 500000);
  CHECK(p[3].compute.size() == 10);
  CHECK(p[3].comm.size() == 10);
}

TEST_CASE("straggler: named, with exact loss, wait and transfer", "[cross_rank]") {
  const CrossRankSummary s = AnalyzeRanks(Profiles(Straggler()));
  CHECK(s.ranks == 4);
  CHECK(s.common_steps == 10);
  CHECK(s.first_step == 5);
  CHECK(s.last_step == 14);
  CHECK(s.matched_collectives == 10);
  CHECK(s.step_median_ns == 3810000);
  CHECK(s.straggler_rank == 2);
  CHECK(s.straggler_last_share == 1.0);
  CHECK(s.lost_ns_per_step == 1000000);
  REQUIRE(s.rows.size() == 4);
  for (const RankRow& r : s.rows) {
    INFO("rank " << r.rank);
    CHECK(r.steps == 10);
    CHECK(r.step_median_ns == 3810000);
    CHECK(r.compute_ns == 2000000);
    CHECK(r.comm_transfer_ns == 500000);
    CHECK(r.overlap_pct == 0.0);
    if (r.rank == 2) {
      CHECK(r.comm_ns == 500000);
      CHECK(r.comm_wait_ns == 0);
      CHECK(r.exposed_comm_ns == 500000);
      CHECK(r.idle_ns == 1310000);
      CHECK(r.last_arrivals == 10);
    } else {
      CHECK(r.comm_ns == 1500000);
      CHECK(r.comm_wait_ns == 1000000);
      CHECK(r.exposed_comm_ns == 1500000);
      CHECK(r.idle_ns == 310000);
      CHECK(r.last_arrivals == 0);
    }
  }
  const Finding* f = Find(s, "straggler_rank");
  REQUIRE(f != nullptr);
  CHECK(f->device == 2);
  CHECK(f->confidence == "high");
  CHECK(f->time_ns == 10000000);
  CHECK(f->window_share == Approx(1000.0 / 3810.0).epsilon(1e-9));
  CHECK(Evidence(*f, "lost_ns_per_step") == 1000000);
  CHECK(Evidence(*f, "others_comm_wait_ns_per_step") == 1000000);
  CHECK(Evidence(*f, "straggler_comm_wait_ns_per_step") == 0);
  CHECK(f->examples.size() == 3);
  CHECK(Find(s, "rank_imbalance") == nullptr);
  // Exposed: mean over ranks of (1500*3 + 500) / 4 us; most of it is waiting.
  const Finding* e = Find(s, "exposed_communication");
  REQUIRE(e != nullptr);
  CHECK(Evidence(*e, "exposed_ns_per_step") == 1250000);
  CHECK(Evidence(*e, "comm_wait_ns_per_step") == 750000);
  CHECK(Evidence(*e, "comm_transfer_ns_per_step") == 500000);
  CHECK(e->recommendation.find("waiting for another rank") != std::string::npos);
  CHECK(CrossRankVerdict(s).find("Rank 2 is the straggler") == 0);
}

TEST_CASE("straggler: loss within 10% of the injected delay under jitter", "[cross_rank]") {
  for (int straggler : {0, 3}) {
    for (uint32_t seed : {1u, 7u, 42u}) {
      JobSpec j;
      j.world = 4;
      j.steps = 20;
      j.jitter_us = 50;
      j.seed = seed;
      j.straggler = straggler;
      j.straggler_delay_us = 2000;
      const CrossRankSummary s = AnalyzeRanks(Profiles(j));
      INFO("straggler " << straggler << " seed " << seed << " lost " << s.lost_ns_per_step);
      CHECK(s.straggler_rank == straggler);
      CHECK(std::fabs(double(s.lost_ns_per_step) - 2000000.0) <= 200000.0);
    }
  }
}

TEST_CASE("clean run: no straggler named", "[cross_rank]") {
  for (uint32_t seed : {1u, 7u, 42u}) {
    JobSpec j;
    j.steps = 20;
    j.jitter_us = 50;
    j.seed = seed;
    const CrossRankSummary s = AnalyzeRanks(Profiles(j));
    INFO("seed " << seed);
    CHECK(s.straggler_rank == -1);
    CHECK(Find(s, "straggler_rank") == nullptr);
    CHECK(Find(s, "rank_imbalance") == nullptr);
    CHECK(s.lost_ns_per_step < 50000);  // jitter-sized, far below 2% of a 3.8 ms step
    CHECK(CrossRankVerdict(s).find("No straggler among 4 ranks") == 0);
  }
}

TEST_CASE("imbalance: extra compute on one rank", "[cross_rank]") {
  JobSpec j;
  j.heavy_rank = 1;
  j.extra_compute_us = 600;
  const CrossRankSummary s = AnalyzeRanks(Profiles(j));
  // The heavy rank also reaches the all-reduce last: it is the straggler, by 600 us.
  CHECK(s.straggler_rank == 1);
  CHECK(s.lost_ns_per_step == 600000);
  const Finding* f = Find(s, "rank_imbalance");
  REQUIRE(f != nullptr);
  CHECK(f->device == -1);
  CHECK(f->confidence == "high");
  CHECK(Evidence(*f, "max_rank") == 1);
  CHECK(Evidence(*f, "max_compute_ns_per_step") == 2600000);
  CHECK(Evidence(*f, "min_compute_ns_per_step") == 2000000);
  CHECK(Evidence(*f, "spread") == Approx(600.0 / 2150.0).epsilon(1e-9));
  CHECK(f->time_ns == 6000000);
  // Kernels across ranks: the GEMM is 2 ms per step on ranks 0, 2, 3 and 2.6 ms on rank 1.
  const KernelSpread* gemm = nullptr;
  for (const KernelSpread& k : s.kernels)
    if (k.name == "sm80_xmma_gemm_f16f16_f32_tn_n") gemm = &k;
  REQUIRE(gemm != nullptr);
  CHECK(gemm->min_ns == 2000000);
  CHECK(gemm->median_ns == 2000000);
  CHECK(gemm->max_ns == 2600000);
  CHECK(gemm->min_rank == 0);
  CHECK(gemm->max_rank == 1);
  CHECK(gemm->spread == Approx(0.3));
  CHECK(s.kernels.front().name == gemm->name);  // the largest max first
  CHECK(CrossRankToJson(s).find("\"kernels\":[{\"name\":\"sm80_xmma_gemm_f16f16_f32_tn_n\",\"min_ns\":2000000,"
                                "\"median_ns\":2000000,\"max_ns\":2600000,\"min_rank\":0,\"max_rank\":1,"
                                "\"spread\":0.3}") != std::string::npos);
  CHECK(CrossRankToText(s).find("Kernels across ranks (time per step):") != std::string::npos);
}

TEST_CASE("overlap: a collective under compute is not exposed", "[cross_rank]") {
  JobSpec j;
  j.overlap_us = 400;
  const CrossRankSummary s = AnalyzeRanks(Profiles(j));
  CHECK(s.matched_collectives == 20);
  CHECK(s.straggler_rank == -1);
  for (const RankRow& r : s.rows) {
    INFO("rank " << r.rank);
    CHECK(r.comm_ns == 900000);           // 400 all-gather + 500 all-reduce
    CHECK(r.exposed_comm_ns == 500000);
    CHECK(r.comm_transfer_ns == 900000);  // equal durations everywhere: all transfer
    CHECK(r.comm_wait_ns == 0);
    CHECK(r.overlap_pct == Approx(100.0 * 400 / 900).epsilon(1e-9));
  }
  const Finding* e = Find(s, "exposed_communication");
  REQUIRE(e != nullptr);  // 500 of a 2810 us step
  CHECK(Evidence(*e, "wait_share") == 0);
  CHECK(e->recommendation.find("Overlap communication") == 0);
}

TEST_CASE("rank ids: file-name fallback and no common steps", "[cross_rank]") {
  CHECK(RankFromFileName("/x/run.rank3.json") == 3);
  CHECK(RankFromFileName("trace_rank-12.json.zst") == 12);
  CHECK(RankFromFileName("/rank9/cranky3.json") == -1);
  CHECK(RankFromFileName("rank.json") == -1);
  JobSpec a;
  a.world = 2;
  JobSpec b = a;
  b.first_step = 100;  // rank 1 traced other iterations
  std::vector<RankProfile> p;
  p.push_back(ExtractRankProfile(*ReadKinetoJsonTraceText(testing::RankTraceJson(a, 0)), "a.json"));
  p.push_back(ExtractRankProfile(*ReadKinetoJsonTraceText(testing::RankTraceJson(b, 1)), "b.json"));
  const CrossRankSummary s = AnalyzeRanks(p);
  CHECK(s.common_steps == 0);
  REQUIRE(!s.warnings.empty());
  CHECK(s.warnings.back().find("no ProfilerStep#N") == 0);
  CHECK(s.matched_collectives == 10);  // matched by order over the whole trace
  CHECK(s.rows[0].rank == 0);
  CHECK(s.rows[1].rank == 1);
}

TEST_CASE("json output: schema keys and exact values", "[cross_rank]") {
  const std::string json = CrossRankToJson(AnalyzeRanks(Profiles(Straggler())));
  CHECK(json.find("\"straggler_rank\":2") != std::string::npos);
  CHECK(json.find("\"lost_ns_per_step\":1000000") != std::string::npos);
  CHECK(json.find("\"per_step_ns\":{\"compute\":2000000,\"communication\":1500000,"
                  "\"communication_wait\":1000000,\"communication_transfer\":500000,"
                  "\"exposed_communication\":1500000,\"idle\":310000}") != std::string::npos);
  CHECK(json.find("\"id\":\"straggler_rank\",\"title\"") != std::string::npos);
  absl::StatusOr<TraceData> parsed = ReadKinetoJsonTraceText("{\"x\":" + json + ",\"traceEvents\":[]}");
  CHECK(parsed.ok());  // well-formed JSON
  const std::string text = CrossRankToText(AnalyzeRanks(Profiles(Straggler())));
  CHECK(text.find("Rank 2 is the straggler: the job loses 1.00 ms per step") != std::string::npos);
  const std::string md = CrossRankToMarkdown(AnalyzeRanks(Profiles(Straggler())));
  CHECK(md.find("| 2 | 3.81 ms | 2.00 ms | 500.0 us |") != std::string::npos);
}

TEST_CASE("html report: cross-rank section for several ranks", "[cross_rank]") {
  const JobSpec j = Straggler();
  std::vector<TraceData> data;
  for (int r = 0; r < j.world; ++r) data.push_back(*ReadKinetoJsonTraceText(testing::RankTraceJson(j, r)));
  std::vector<ReportTrace> traces;
  for (int r = 0; r < j.world; ++r) traces.push_back({"rank " + std::to_string(r), &data[r]});
  const std::string html = RenderHtmlReport(traces);
  CHECK(html.find("<h2>Cross-rank analysis</h2><p><b>Rank 2 is the straggler: the job loses 1.00 ms per step") !=
        std::string::npos);
  CHECK(html.find("<tr><td>2</td><td class=\"n\">3.81 ms</td><td class=\"n\">2.00 ms</td>") != std::string::npos);
  const std::string one = RenderHtmlReport({traces[0]});
  CHECK(one.find("Cross-rank analysis") == std::string::npos);
}

}  // namespace
}  // namespace kairos
