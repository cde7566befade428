// File: breakdown_test.cc
// Layer: tests for kairos_analysis. Temporal and idle breakdowns, SM proxies and the
// verdict on a small trace whose every number was worked out by hand.
// Threading: single-threaded.
#include <catch2/catch.hpp>

#include "analysis/summary.h"
#include "analysis/trace_builder.h"

namespace kairos {
namespace {

using kairos::testing::TraceBuilder;

// Window [1000, 2000). Device 0 (10 SMs), streams 7 and 8.
//   gemm   [1100,1300) s7  corr 1, launch [1050,1060), 20 blocks
//   nccl   [1250,1400) s8  corr 2, launch [1200,1210),  5 blocks
//   memcpy [1500,1550) s7  corr 3, launch [1450,1530) (returns after the copy started)
//   memset [1700,1720) s7  corr 4, launch [1600,1610)
// Host: "forward" [1040,1300), "dataloader" [1380,1520).
// `stride` spaces the correlation ids (1, 1 + stride, ...): 1 gives CUPTI's dense ids, a
// large stride sparse ones (the launch table's two lookups).
TraceData HandTrace(TraceBuilder& b, uint32_t stride = 1) {
  auto corr = [stride](uint32_t k) { return 1 + (k - 1) * stride; };
  b.Device(0, /*num_sms=*/10);
  const uint32_t th = b.Thread();
  const uint32_t s7 = b.Stream(0, 7), s8 = b.Stream(0, 8);
  b.Range(th, "forward", 1040, 1300);
  b.Launch(th, 1050, 1060, corr(1));
  b.Launch(th, 1200, 1210, corr(2));
  b.Range(th, "dataloader", 1380, 1520);
  b.Launch(th, 1450, 1530, corr(3), "cudaMemcpyAsync");
  b.Launch(th, 1600, 1610, corr(4), "cudaMemsetAsync");
  b.Kernel(s7, "gemm", 1100, 1300, corr(1), /*grid=*/20);
  b.Kernel(s8, "ncclKernel_AllReduce_RING", 1250, 1400, corr(2), /*grid=*/5);
  b.Memcpy(s7, 1500, 1550, corr(3), 4096);
  b.Memset(s7, 1700, 1720, corr(4), 128);
  return std::move(b.Done());
}

TEST_CASE("Temporal breakdown matches the hand computation and sums to the window") {
  TraceBuilder b(1000, 2000);
  const TraceData data = HandTrace(b);
  const Summary s = Analyze(data);
  REQUIRE(s.devices.size() == 1);
  const DeviceSummary& d = s.devices[0];
  CHECK(d.window_ns == 1000);
  CHECK(d.busy_ns == 370);  // [1100,1400) + [1500,1550) + [1700,1720)
  CHECK(d.busy_fraction == Approx(0.37));
  CHECK(d.compute_ns == 200);
  CHECK(d.communication_ns == 100);  // 150 of nccl minus its 50 under gemm
  CHECK(d.memcpy_ns == 50);
  CHECK(d.memset_ns == 20);
  CHECK(d.idle_ns == 630);
  CHECK(d.compute_ns + d.communication_ns + d.memcpy_ns + d.memset_ns + d.idle_ns == d.window_ns);
  CHECK(d.kernel_count == 2);
  CHECK(d.memcpy_count == 1);
  CHECK(d.memset_count == 1);
}

TEST_CASE("Idle breakdown splits each gap at the end of the next op's launch call") {
  TraceBuilder b(1000, 2000);
  const uint32_t stride = GENERATE(1u, 1000000u);  // dense and sparse correlation ids
  const TraceData data = HandTrace(b, stride);
  const DeviceSummary d = Analyze(data).devices[0];
  // [1000,1100): launch ends 1060 -> 60 host, 40 kernel.  [1400,1500): launch ends 1530 ->
  // 100 host.  [1550,1700): ends 1610 -> 60 host, 90 kernel.  [1720,2000): trailing, 280 other.
  CHECK(d.idle_host_wait_ns == 220);
  CHECK(d.idle_kernel_wait_ns == 130);
  CHECK(d.idle_other_ns == 280);
  CHECK(d.idle_host_wait_ns + d.idle_kernel_wait_ns + d.idle_other_ns == d.idle_ns);
  // Self time during host waits: dataloader 100 ([1400,1500)), forward 20 ([1040,1060)).
  CHECK(d.host_wait_top_range == "dataloader");
  CHECK(d.verdict == "GPU 0 idle 63% of the window, mostly with no work queued (cause unknown)");
}

TEST_CASE("Host waits name the user's innermost Python frame; library frames count for it") {
  TraceBuilder b(1000, 2000);
  TraceData data = HandTrace(b);
  const uint32_t th = 0;  // HandTrace's thread
  auto frame = [&](const std::string& name, int64_t s, int64_t e, uint32_t id, uint32_t parent) {
    data.python_frames.push_back({id, parent, 0});
    Event ev{};
    ev.start_ns = s;
    ev.end_ns = e;
    ev.name = data.strings.Intern(name);
    ev.track = th;
    ev.detail = static_cast<uint32_t>(data.python_frames.size() - 1);
    ev.kind = EventKind::kPythonFunction;
    data.events_by_track[th].push_back(ev);
  };
  // Host waits: [1000,1060), [1400,1500), [1550,1610).
  frame("/job/train.py(1): <module>", 1000, 2000, 1, 0);                        // 220 - 160
  frame("/job/train.py(3): fwd", 1000, 1300, 2, 1);                             // 60
  frame("/job/train.py(7): load", 1380, 1520, 3, 1);                            // 100
  frame("/usr/lib/python3/dist-packages/torch/x.py(9): read", 1400, 1500, 4, 3);  // library
  data.SortTracks();
  const DeviceSummary d = Analyze(data).devices[0];
  CHECK(d.host_wait_top_range == "dataloader");
  CHECK(d.host_wait_top_python == "load (train.py:7)");
}

TEST_CASE("Host waits name the user's line: a library call's caller line, an op's own line") {
  TraceBuilder b(1000, 2000);
  TraceData data = HandTrace(b);
  const uint32_t th = 0;  // HandTrace's thread
  auto add = [&](EventKind kind, const std::string& name, int64_t s, int64_t e, uint32_t detail) {
    Event ev{};
    ev.start_ns = s;
    ev.end_ns = e;
    ev.name = data.strings.Intern(name);
    ev.track = th;
    ev.detail = detail;
    ev.kind = kind;
    data.events_by_track[th].push_back(ev);
  };
  auto frame = [&](const std::string& name, int64_t s, int64_t e, uint32_t id, uint32_t parent,
                   uint32_t caller_line) {
    data.python_frames.push_back({id, parent, 0, caller_line});
    add(EventKind::kPythonFunction, name, s, e, static_cast<uint32_t>(data.python_frames.size() - 1));
  };
  auto op = [&](const std::string& name, int64_t s, int64_t e, uint32_t py_line) {
    CpuArgs a{};
    a.cpu_op = 1;
    a.py_line = py_line;
    data.cpu_args.push_back(a);
    add(EventKind::kCpuOp, name, s, e, static_cast<uint32_t>(data.cpu_args.size() - 1));
  };
  // Host waits: [1000,1060), [1400,1500), [1550,1610).
  frame("/job/train.py(1): <module>", 1000, 2000, 1, 0, 0);
  frame("/job/train.py(5): step", 1000, 1700, 2, 1, 30);
  // Line 8 of step: a library call (60 of wait: [1000,1060)); line 9: an op called straight
  // from step (the op's line), 90 of wait ([1400,1450) + [1550,1590)) in two calls; line 10:
  // another op, 50 ([1450,1500)); step's own Python time 20 ([1590,1610)).
  frame("/usr/lib/python3/dist-packages/torch/nn/functional.py(1): linear", 1000, 1100, 3, 2, 8);
  op("aten::linear", 1010, 1090, 0);
  op("aten::mul", 1400, 1450, 9);
  op("aten::add", 1450, 1500, 10);
  op("aten::mul", 1550, 1590, 9);
  data.SortTracks();
  CHECK(Analyze(data).devices[0].host_wait_top_python == "train.py:9 in step");
  // Without lines the site is the frame (its first line), as before.
  for (PythonFrame& p : data.python_frames) p.caller_line = 0;
  for (CpuArgs& a : data.cpu_args) a.py_line = 0;
  CHECK(Analyze(data).devices[0].host_wait_top_python == "step (train.py:5)");
}

TEST_CASE("SM proxies are weighted by kernel time") {
  TraceBuilder b(1000, 2000);
  const TraceData data = HandTrace(b);
  const DeviceSummary d = Analyze(data).devices[0];
  // (20/10 * 200 + 5/10 * 150) / 350
  CHECK(d.blocks_per_sm == Approx(475.0 / 350.0));
  CHECK(d.est_occupancy_pct >= 0.0);
  CHECK(d.est_occupancy_pct <= 100.0);
}

TEST_CASE("Without launch links idle is 'other'; without device limits SM proxies are unknown") {
  TraceBuilder b(0, 100);
  const uint32_t s = b.Stream(1, 3);
  b.Kernel(s, "k", 10, 30, 0);
  b.Kernel(s, "k", 60, 70, 0);
  const Summary sum = Analyze(b.Done());
  REQUIRE(sum.devices.size() == 1);
  const DeviceSummary& d = sum.devices[0];
  CHECK(d.device == 1);
  CHECK(d.compute_ns == 30);
  CHECK(d.idle_ns == 70);
  CHECK(d.idle_other_ns == 70);
  CHECK(d.idle_host_wait_ns == 0);
  CHECK(d.blocks_per_sm == -1.0);
  CHECK(d.est_occupancy_pct == -1.0);
  CHECK(d.verdict == "GPU 1 idle 70% of the window, mostly with no work queued (cause unknown)");
}

TEST_CASE("Ops are clipped to the window; a busy device gets a busy verdict") {
  TraceBuilder b(100, 200);
  const uint32_t th = b.Thread();
  const uint32_t s = b.Stream(0, 7);
  b.Launch(th, 40, 45, 1);
  b.Launch(th, 120, 125, 2);
  b.Kernel(s, "k", 50, 150, 1);          // 50 inside
  b.Kernel(s, "nccl:all_reduce", 160, 260, 2);  // 40 inside
  b.Kernel(s, "late", 300, 400, 0);      // outside
  const Summary sum = Analyze(b.Done());
  const DeviceSummary d = sum.devices[0];
  CHECK(d.compute_ns == 50);
  CHECK(d.communication_ns == 40);
  CHECK(d.idle_ns == 10);
  CHECK(d.idle_kernel_wait_ns == 10);  // launch of corr 2 returned at 125, before the gap
  CHECK(d.kernel_count == 2);
  CHECK(d.verdict == "GPU 0 busy 90% of the window: compute 50%, communication 40%, memory copies and sets 0%");
  // 10% idle is not under-fed enough for a finding, but too much to call the trace well tuned.
  CHECK(sum.verdict ==
        "No finding above 2% of the window, but GPU 0 is idle 10% of it (host wait 0%, kernel wait 10%, other 0%)");
}

TEST_CASE("A device with no work in the window gets one shared line, not a row") {
  TraceBuilder b(0, 1000);
  b.Device(3);
  const Summary s = Analyze(b.Done());
  CHECK(s.devices.empty());
  CHECK(s.idle_devices == std::vector<uint32_t>{3});
  CHECK(s.verdicts == std::vector<std::string>{"GPU 3: no GPU work in the window"});
  CHECK(s.verdict == "No GPU work in the window");
  CHECK(s.findings.empty());
}

TEST_CASE("The Python flame graph merges call paths over threads and calls, clipped to the window") {
  TraceBuilder b(1000, 2000);
  const uint32_t t1 = b.Thread(1);
  const uint32_t t2 = b.Thread(2);
  TraceData& data = b.data();
  uint32_t next_id = 1;
  auto frame = [&](uint32_t th, const std::string& name, int64_t s, int64_t e) {
    data.python_frames.push_back({next_id++, 0, 0});
    Event ev{};
    ev.start_ns = s;
    ev.end_ns = e;
    ev.name = data.strings.Intern(name);
    ev.track = th;
    ev.detail = static_cast<uint32_t>(data.python_frames.size() - 1);
    ev.kind = EventKind::kPythonFunction;
    data.events_by_track[th].push_back(ev);
  };
  const std::string main = "/job/train.py(1): <module>", step = "/job/train.py(5): step";
  const std::string fwd = "/job/model.py(9): forward";
  const std::string lib = "/usr/lib/python3/dist-packages/torch/nn/modules/module.py(1): _call_impl";
  // Thread 1: <module> [900,1900) (clipped to [1000,1900): 900) calls step twice.
  frame(t1, main, 900, 1900);
  frame(t1, step, 1000, 1300);  // 300
  frame(t1, lib, 1000, 1200);   // 200, under step
  frame(t1, fwd, 1050, 1150);   // 100, under step > _call_impl
  frame(t1, step, 1400, 1500);  // 100: step now 400 over 2 calls
  frame(t1, fwd, 1600, 1610);   // 10: forward straight under <module>, another path
  // Thread 2: step at top level, same name as thread 1's, a different path.
  frame(t2, step, 1500, 2100);  // clipped: 500
  frame(t2, fwd, 1990, 2050);   // clipped: 10
  AnalysisOptions o;
  o.python_flame_nodes = 100;
  o.python_flame_min_share = 0;
  const Summary s = Analyze(b.Done(), o);
  struct Row {
    std::string name;
    int32_t parent;
    uint32_t depth;
    int64_t total;
    uint64_t calls;
    bool user;
  };
  std::vector<Row> got;
  for (const PythonFlameNode& n : s.python_flame)
    got.push_back({n.name, n.parent, n.depth, n.total_ns, n.calls, n.user});
  // Depth-first, children largest first: root = <module> 900 + thread 2's step 500.
  const std::vector<Row> want = {
      {"", -1, 0, 1400, 0, false},
      {main, 0, 1, 900, 1, true},
      {step, 1, 2, 400, 2, true},
      {lib, 2, 3, 200, 1, false},
      {fwd, 3, 4, 100, 1, true},
      {fwd, 1, 2, 10, 1, true},
      {step, 0, 1, 500, 1, true},
      {fwd, 6, 2, 10, 1, true},
  };
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO(i);
    CHECK(got[i].name == want[i].name);
    CHECK(got[i].parent == want[i].parent);
    CHECK(got[i].depth == want[i].depth);
    CHECK(got[i].total == want[i].total);
    CHECK(got[i].calls == want[i].calls);
    CHECK(got[i].user == want[i].user);
  }
  CHECK(s.python_flame[2].label == "step (train.py:5)");
  CHECK(s.python_flame_cut == 0);

  // The node cap keeps the largest paths (every kept node's caller kept); the share floor
  // drops small ones; without the option there is no tree at all.
  o.python_flame_nodes = 4;
  const Summary capped = Analyze(b.Done(), o);
  REQUIRE(capped.python_flame.size() == 4);
  CHECK(capped.python_flame[1].total_ns == 900);
  CHECK(capped.python_flame[2].total_ns == 400);
  CHECK(capped.python_flame[3].total_ns == 500);
  CHECK(capped.python_flame[3].parent == 0);
  o.python_flame_nodes = 100;
  o.python_flame_min_share = 0.05;  // 70 ns: the two 10 ns forward paths go
  CHECK(Analyze(b.Done(), o).python_flame.size() == 6);
  CHECK(Analyze(b.Done()).python_flame.empty());
}

// The build cap (50,000 call paths, python_flame.cc's kMaxBuildNodes, the root included):
// frames whose path would be a new node past it are counted in python_flame_cut, and so are
// their callees; their time is in no node, so the root's total is the built paths' only.
TEST_CASE("The Python flame graph's build cap counts every frame past 50,000 call paths") {
  TraceBuilder b(0, 1000000);
  const uint32_t t = b.Thread(1);
  TraceData& data = b.data();
  auto frame = [&](const std::string& name, int64_t s, int64_t e) {
    data.python_frames.push_back({static_cast<uint32_t>(data.python_frames.size() + 1), 0, 0});
    Event ev{};
    ev.start_ns = s;
    ev.end_ns = e;
    ev.name = data.strings.Intern(name);
    ev.track = t;
    ev.detail = static_cast<uint32_t>(data.python_frames.size() - 1);
    ev.kind = EventKind::kPythonFunction;
    data.events_by_track[t].push_back(ev);
  };
  // 50,010 distinct top-level functions of 10 ns each: nodes 1..49,999 are built, the last 11
  // are cut; a callee of a cut frame (even one whose name was built elsewhere) is cut too,
  // and a repeat call of a built path is not.
  constexpr int kFrames = 50010;
  for (int i = 0; i < kFrames; ++i) frame("/job/gen.py(" + std::to_string(i + 1) + "): f", i * 10, i * 10 + 10);
  frame("/job/gen.py(50010): f", 600000, 600020);  // cut path: 20 ns, uncounted
  frame("/job/gen.py(1): f", 600002, 600010);      // its callee: cut too
  frame("/job/gen.py(1): f", 700000, 700030);      // a built path again: counted
  AnalysisOptions o;
  o.python_flame_nodes = 3;
  o.python_flame_min_share = 0;
  const Summary s = Analyze(b.Done(), o);
  CHECK(s.python_flame_cut == 13);
  REQUIRE(s.python_flame.size() == 3);
  // The root: 49,999 built frames of 10 ns, plus the repeat call's 30 ns.
  CHECK(s.python_flame[0].total_ns == 49999 * 10 + 30);
  CHECK(s.python_flame[1].name == "/job/gen.py(1): f");
  CHECK(s.python_flame[1].total_ns == 40);
  CHECK(s.python_flame[1].calls == 2);
  CHECK(s.python_flame[2].total_ns == 10);
}

}  // namespace
}  // namespace kairos
