// File: phases_test.cc
// Layer: tests for kairos_analysis. Step phases (phases.cc) on a hand-built trace whose every
// number is in the comments: priority data loading > optimizer > backward > forward > other,
// the backward thread counted, phases summing to each step, GPU time by the launching range's
// phase; data_loader_bound with a slow loader and not with a fast one.
// Threading: single-threaded.
#include <catch2/catch.hpp>
#include <string>

#include "analysis/summary.h"
#include "analysis/trace_builder.h"

namespace kairos {
namespace {

using kairos::testing::TraceBuilder;
constexpr int64_t kUs = 1000;
const char* const kNext = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";

// Step 1 [0, 1000 us): loader [0, 300) with an op inside; forward aten::linear [300, 500)
// (its addmm launches a 50 us kernel); backward on the autograd thread [520, 700) (its mm
// launches an 80 us kernel); Optimizer.step [750, 900) with an op inside; other: 20+50+100.
// Step 2 [1000, 2000 us): loader for `load2_us`, the rest other.
TraceData PhaseTrace(int64_t load2_us) {
  TraceBuilder b(0, 2000 * kUs);
  b.HopperDevice(0);
  const uint32_t main = b.Thread(1), bwd = b.Thread(2), st = b.Stream(0, 7);
  b.Step(main, 1, 0, 1000 * kUs);
  b.Step(main, 2, 1000 * kUs, 2000 * kUs);
  auto op = [&](uint32_t th, const char* name, int64_t s, int64_t e, uint32_t ext) {
    b.Add(th, EventKind::kCpuOp, name, s * kUs, e * kUs).external_id = ext;
  };
  b.Range(main, kNext, 0, 300 * kUs);
  op(main, "aten::stack", 100, 200, 1);
  op(main, "aten::linear", 300, 500, 2);
  op(main, "aten::addmm", 310, 490, 3);
  b.Launch(main, 320 * kUs, 330 * kUs, 1);
  b.Kernel(st, "ampere_sgemm_64x64_nn", 400 * kUs, 450 * kUs, 1);
  b.data().events_by_track[st].back().external_id = 3;
  op(bwd, "autograd::engine::evaluate_function: AddmmBackward0", 520, 700, 4);
  op(bwd, "aten::mm", 530, 690, 5);
  b.Launch(bwd, 540 * kUs, 545 * kUs, 2);
  b.Kernel(st, "ampere_sgemm_64x64_tn", 600 * kUs, 680 * kUs, 2);
  b.data().events_by_track[st].back().external_id = 5;
  b.Range(main, "Optimizer.step#SGD.step", 750 * kUs, 900 * kUs);
  op(main, "aten::add_", 760, 800, 6);
  b.Range(main, kNext, 1000 * kUs, (1000 + load2_us) * kUs);
  return std::move(b.Done());
}

TEST_CASE("step phases: priority, backward thread, sums, GPU time by launching phase") {
  const Summary s = Analyze(PhaseTrace(900));
  const PhaseSummary& p = s.phases;
  REQUIRE(p.present);
  REQUIRE(p.steps.size() == 2);
  const StepPhases& a = p.steps[0];
  CHECK(a.step == 1);
  CHECK(a.duration_ns == 1000 * kUs);
  CHECK(a.host_ns[kPhaseDataLoading] == 300 * kUs);
  CHECK(a.host_ns[kPhaseForward] == 200 * kUs);
  CHECK(a.host_ns[kPhaseBackward] == 180 * kUs);
  CHECK(a.host_ns[kPhaseOptimizer] == 150 * kUs);
  CHECK(a.host_ns[kPhaseOther] == 170 * kUs);
  CHECK(a.gpu_ns[kPhaseForward] == 50 * kUs);
  CHECK(a.gpu_ns[kPhaseBackward] == 80 * kUs);
  CHECK(a.gpu_ns[kPhaseDataLoading] == 0);
  const StepPhases& b = p.steps[1];
  CHECK(b.host_ns[kPhaseDataLoading] == 900 * kUs);
  CHECK(b.host_ns[kPhaseOther] == 100 * kUs);
  CHECK(p.mean_host_ns[kPhaseDataLoading] == 600 * kUs);
  CHECK(p.mean_gpu_ns[kPhaseBackward] == 40 * kUs);
  const std::string json = SummaryToJson(s);
  CHECK(json.find("\"phases\":{\"mean_host_ns\":{\"data_loading\":600000,\"optimizer\":75000,"
                  "\"backward\":90000,\"forward\":100000,\"other\":135000}") != std::string::npos);
  // 1200 of 2000 us loading with the GPU idle under it.
  bool found = false;
  for (const Finding& f : s.findings) {
    if (f.id != "data_loader_bound") continue;
    found = true;
    CHECK(f.time_ns == 1200 * kUs);
    CHECK(f.evidence[0].first == "data_loading_share_of_step");
    CHECK(f.evidence[0].second == Approx(0.6));
    CHECK(f.recommendation.find("num_workers") != std::string::npos);
  }
  CHECK(found);
}

// Forward ranges crossing a step boundary and meeting end to start, nested ops, a backward
// range over forward, and range ids far apart (the sparse lookup of launching ranges).
// Step 1 [0, 1000 us): other [0, 100); forward A [100, 300) and B [300, 1200) minus backward
// [250, 400) on the autograd thread: forward 150 + 600, backward 150. Step 2 [1000, 2000):
// forward 200 (B's tail), optimizer [1200, 1500), loader on a worker thread [1500, 1600),
// other 400. GPU: 30 us launched from A (forward); 40 us from B, which starts under the
// backward range (backward), and 60 us from the backward range.
TEST_CASE("step phases: forward across steps, ties, nesting, sparse range ids") {
  TraceBuilder b(0, 2000 * kUs);
  b.HopperDevice(0);
  const uint32_t main = b.Thread(1), bwd = b.Thread(2), worker = b.Thread(3), st = b.Stream(0, 7);
  b.Step(main, 1, 0, 1000 * kUs);
  b.Step(main, 2, 1000 * kUs, 2000 * kUs);
  auto op = [&](uint32_t th, const char* name, int64_t s, int64_t e, uint32_t ext) {
    b.Add(th, EventKind::kCpuOp, name, s * kUs, e * kUs).external_id = ext;
  };
  auto kernel = [&](int64_t s, int64_t e, uint32_t ext) {
    b.Kernel(st, "ampere_sgemm_64x64_nn", s * kUs, e * kUs, ext);
    b.data().events_by_track[st].back().external_id = ext;
  };
  op(main, "aten::conv2d", 100, 300, 7);
  op(main, "aten::convolution", 150, 250, 8);  // nested: adds nothing
  op(main, "aten::linear", 300, 1200, 5000000);
  op(bwd, "autograd::engine::evaluate_function: MmBackward0", 250, 400, 9);
  b.Range(main, "Optimizer.step#Adam.step", 1200 * kUs, 1500 * kUs);
  b.Range(worker, kNext, 1500 * kUs, 1600 * kUs);
  kernel(200, 230, 7);
  kernel(500, 540, 5000000);
  kernel(600, 660, 9);
  const Summary s = Analyze(std::move(b.Done()));
  const PhaseSummary& p = s.phases;
  REQUIRE(p.present);
  REQUIRE(p.steps.size() == 2);
  const StepPhases& a = p.steps[0];
  CHECK(a.host_ns[kPhaseOther] == 100 * kUs);
  CHECK(a.host_ns[kPhaseForward] == 750 * kUs);
  CHECK(a.host_ns[kPhaseBackward] == 150 * kUs);
  CHECK(a.host_ns[kPhaseOptimizer] == 0);
  CHECK(a.host_ns[kPhaseDataLoading] == 0);
  CHECK(a.gpu_ns[kPhaseForward] == 30 * kUs);
  CHECK(a.gpu_ns[kPhaseBackward] == 100 * kUs);
  const StepPhases& c = p.steps[1];
  CHECK(c.host_ns[kPhaseForward] == 200 * kUs);
  CHECK(c.host_ns[kPhaseOptimizer] == 300 * kUs);
  CHECK(c.host_ns[kPhaseDataLoading] == 100 * kUs);
  CHECK(c.host_ns[kPhaseOther] == 400 * kUs);
  CHECK(c.host_ns[kPhaseBackward] == 0);
}

TEST_CASE("data_loader_bound: not with a fast loader; no phases without steps") {
  // 300 + 10 of 2000 us: 15.5% < 20%.
  const Summary s = Analyze(PhaseTrace(10));
  REQUIRE(s.phases.present);
  for (const Finding& f : s.findings) CHECK(f.id != "data_loader_bound");
  TraceBuilder b(0, 1000);
  b.Thread(1);
  const Summary none = Analyze(b.Done());
  CHECK_FALSE(none.phases.present);
  CHECK(SummaryToJson(none).find("\"phases\":null") != std::string::npos);
}

}  // namespace
}  // namespace kairos
