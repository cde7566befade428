// File: antipatterns_test.cc
// Layer: tests for kairos_analysis. One constructed workload per antipattern, each firing
// exactly its detector with hand-computed evidence, and a clean, well-fed workload that
// fires none.
// Threading: single-threaded.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "analysis/summary.h"
#include "analysis/findings_util.h"
#include "analysis/trace_builder.h"

namespace kairos {
namespace {

using kairos::testing::Ev;
using kairos::testing::Get;
using kairos::testing::Ids;
using kairos::testing::kMs;
using kairos::testing::kUs;
using kairos::testing::TraceBuilder;

// Back-to-back 500 us kernels over [0, n * 500 us) on one stream: a GPU that is always fed.
// Named as a user's own kernel: a library GEMM ("gemm", "cutlass", ...) is exempt from the
// shape detectors by its class (kernel_class.h).
void BusyKernels(TraceBuilder& b, uint32_t stream, int n, uint32_t grid = 1024,
                 uint32_t block = 256, uint32_t regs = 32) {
  for (int i = 0; i < n; ++i) {
    b.Kernel(stream, "fused_op", i * 500 * kUs, (i + 1) * 500 * kUs, 0, grid, block, regs);
  }
}

TEST_CASE("A clean, well-fed workload fires no detector") {
  TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t s = b.Stream(0, 7);
  uint32_t corr = 1;
  for (int step = 0; step < 10; ++step) {
    const int64_t t0 = step * kMs;
    b.Step(th, step, t0, t0 + kMs);
    b.Launch(th, t0, t0 + 3 * kUs, corr, "cudaMemcpyAsync");
    b.Memcpy(s, t0 + 5 * kUs, t0 + 45 * kUs, corr++, 1 << 20);  // 1 MiB pinned batch
    for (int k = 0; k < 9; ++k) {
      b.Launch(th, t0 + (5 + 5 * k) * kUs, t0 + (8 + 5 * k) * kUs, corr);
      b.Kernel(s, "gemm", t0 + (50 + 100 * k) * kUs, t0 + (150 + 100 * k) * kUs, corr++);
    }
  }
  const Summary sum = Analyze(b.Done());
  CHECK(sum.findings.empty());
  CHECK(sum.devices[0].busy_ns == 9400 * kUs);
  CHECK(sum.steps.outliers.empty());
  CHECK(sum.devices[0].verdict ==
        "GPU 0 busy 94% of the window: compute 90%, communication 0%, memory copies and sets 4%");
  CHECK(sum.verdict ==
        "Well tuned: no finding above 2% of the window; GPU busy 94% of the window, communication 0% on "
        "top of compute");
}

TEST_CASE("launch_bound: 200 kernels of 2 us each") {
  TraceBuilder b(0, 520 * kUs);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t s = b.Stream(0, 7);
  for (int i = 0; i < 200; ++i) {
    b.Launch(th, i * kUs, i * kUs + 500, i + 1);
    b.Kernel(s, "tiny_add", kUs + i * 2500, kUs + i * 2500 + 2 * kUs, i + 1);
  }
  const Summary sum = Analyze(b.Done());
  CHECK(Ids(sum) == std::set<std::string>{"launch_bound"});
  const Finding& f = Get(sum, "launch_bound");
  CHECK(f.device == 0);
  CHECK(Ev(f, "gpu_ops") == 200);
  CHECK(Ev(f, "small_ops") == 200);
  CHECK(Ev(f, "small_fraction") == 1.0);
  CHECK(Ev(f, "small_ops_time_ns") == 400 * kUs);
  CHECK(Ev(f, "small_op_median_ns") == 2 * kUs);
  CHECK(Ev(f, "threshold_ns") == 10 * kUs);
  REQUIRE(f.examples.size() == 3);
  CHECK(f.examples[0].id == 1);
  CHECK(f.examples[1].id == 2);
  CHECK(f.examples[1].ts_ns == 3500);
  CHECK(f.examples[2].name == "tiny_add");
}

TEST_CASE("small_copies: 60 pinned 4 KiB copies between long kernels") {
  TraceBuilder b(0, 9 * kMs);
  b.Device(0);
  const uint32_t s = b.Stream(0, 7);
  for (int i = 0; i < 60; ++i) {
    const int64_t t = i * 150 * kUs;
    b.Memcpy(s, t, t + 20 * kUs, 1000 + i, 4096);
    b.Kernel(s, "gemm", t + 20 * kUs, t + 150 * kUs, 2000 + i);
  }
  const Summary sum = Analyze(b.Done());
  CHECK(Ids(sum) == std::set<std::string>{"small_copies"});
  const Finding& f = Get(sum, "small_copies");
  CHECK(Ev(f, "small_copies") == 60);
  CHECK(Ev(f, "htod") == 60);
  CHECK(Ev(f, "dtoh") == 0);
  CHECK(Ev(f, "bytes") == 60 * 4096);
  CHECK(Ev(f, "time_ns") == 1200 * kUs);
  CHECK(Ev(f, "threshold_bytes") == 65536);
  REQUIRE(f.examples.size() == 3);
  CHECK(f.examples[0].id == 1000);
  CHECK(f.examples[2].ts_ns == 300 * kUs);
}

TEST_CASE("pageable_copies: 12 copies from pageable memory") {
  TraceBuilder b(0, 6 * kMs);
  b.Device(0);
  const uint32_t s = b.Stream(0, 7);
  for (int i = 0; i < 12; ++i) {
    const int64_t t = i * 500 * kUs;
    b.Memcpy(s, t, t + 100 * kUs, 10 + i, 1 << 20, /*copy_kind=*/1, /*src_kind=*/1);
    b.Kernel(s, "gemm", t + 100 * kUs, t + 500 * kUs, 100 + i);
  }
  const Summary sum = Analyze(b.Done());
  CHECK(Ids(sum) == std::set<std::string>{"pageable_copies"});
  const Finding& f = Get(sum, "pageable_copies");
  CHECK(Ev(f, "pageable_copies") == 12);
  CHECK(Ev(f, "bytes") == 12.0 * (1 << 20));
  CHECK(Ev(f, "time_ns") == 1200 * kUs);
  CHECK(Ev(f, "window_fraction") == Approx(0.2));
  CHECK(f.examples[0].id == 10);
}

// Each 1 ms step: the host loads data for 800 us, then launches one 190 us kernel.
TraceBuilder DataLoaderBound(double iowait_pct) {
  TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t s = b.Stream(0, 7);
  for (int i = 0; i < 10; ++i) {
    const int64_t t0 = i * kMs;
    b.Step(th, i, t0, t0 + kMs);
    b.Range(th, "dataloader", t0, t0 + 800 * kUs);
    b.Launch(th, t0 + 800 * kUs, t0 + 805 * kUs, i + 1);
    b.Kernel(s, "forward", t0 + 810 * kUs, t0 + kMs, i + 1);
    b.Counter("cpu.util", t0 + 400 * kUs, 90.0);
    b.Counter("cpu.iowait", t0 + 400 * kUs, iowait_pct);
    b.Counter("cpu.util", t0 + 900 * kUs, 10.0);
    b.Counter("cpu.iowait", t0 + 900 * kUs, 0.0);
  }
  return b;
}

TEST_CASE("gpu_idle_host_bound: data loading starves the GPU") {
  TraceBuilder b = DataLoaderBound(2.0);
  const Summary sum = Analyze(b.Done());
  CHECK(Ids(sum) == std::set<std::string>{"gpu_idle_host_bound"});
  const Finding& f = Get(sum, "gpu_idle_host_bound");
  CHECK(Ev(f, "idle_ns") == 8100 * kUs);
  CHECK(Ev(f, "idle_fraction") == Approx(0.81));
  CHECK(Ev(f, "host_wait_ns") == 8050 * kUs);
  CHECK(Ev(f, "host_wait_share_of_idle") == Approx(8050.0 / 8100.0));
  CHECK(Ev(f, "host_wait_intervals") == 10);
  CHECK(Ev(f, "host_cpu_util_pct_during_waits") == Approx(90.0));
  CHECK(Ev(f, "host_iowait_pct_during_waits") == Approx(2.0));
  REQUIRE(f.examples.size() == 3);
  CHECK(f.examples[0].id == 1);
  CHECK(f.examples[0].name == "forward");
  CHECK(f.recommendation.find("more DataLoader workers") != std::string::npos);
  CHECK(f.recommendation.find("\"dataloader\"") != std::string::npos);
  CHECK(sum.devices[0].verdict == "GPU 0 idle 81% of the window, mostly waiting for the host in \"dataloader\"");
  CHECK(sum.host.present);
  CHECK(sum.host.cpu_util_mean_pct == Approx(50.0));
}

TEST_CASE("gpu_idle_host_bound: high iowait points at storage") {
  TraceBuilder b = DataLoaderBound(40.0);
  const Summary sum = Analyze(b.Done());
  const Finding& f = Get(sum, "gpu_idle_host_bound");
  CHECK(Ev(f, "host_iowait_pct_during_waits") == Approx(40.0));
  CHECK(f.recommendation.find("waits on storage (iowait 40%)") != std::string::npos);
}

// The examples are the longest waits; equal waits come in time order (the detector picks them
// with a partial sort whose tie rule must give what a stable sort of every wait gives).
TEST_CASE("gpu_idle_host_bound: examples are the longest waits, ties in time order") {
  TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t s = b.Stream(0, 7);
  // Steps 6 and 3 (ids 7 and 4) wait 900 us, step 8 (id 9) 850 us, every other step 800 us.
  const int64_t load_us[10] = {800, 800, 800, 900, 800, 800, 900, 800, 850, 800};
  for (int i = 0; i < 10; ++i) {
    const int64_t t0 = i * kMs;
    const int64_t l = load_us[i] * kUs;
    b.Step(th, i, t0, t0 + kMs);
    b.Range(th, "dataloader", t0, t0 + l);
    b.Launch(th, t0 + l, t0 + l + 5 * kUs, i + 1);
    b.Kernel(s, "forward", t0 + l + 10 * kUs, t0 + kMs, i + 1);
  }
  const Summary sum = Analyze(b.Done());
  const Finding& f = Get(sum, "gpu_idle_host_bound");
  REQUIRE(f.examples.size() == 3);
  CHECK(f.examples[0].id == 4);  // the first of the two 900 us waits
  CHECK(f.examples[1].id == 7);
  CHECK(f.examples[2].id == 9);  // 850 us: before the earlier 800 us waits
  // With one example fewer of the long ones, the earliest of the seven equal waits follows.
  AnalysisOptions o;
  o.max_examples = 4;
  const Summary four = Analyze(b.Done(), o);
  const Finding& g = Get(four, "gpu_idle_host_bound");
  REQUIRE(g.examples.size() == 4);
  CHECK(g.examples[3].id == 1);
}

TEST_CASE("gpu_idle_host_bound: one long wait before the first launch is set-up, not a pattern") {
  TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t s = b.Stream(0, 7);
  b.Range(th, "cuda init", 0, 8 * kMs);
  b.Launch(th, 8 * kMs, 8 * kMs + 5 * kUs, 1);
  b.Kernel(s, "forward", 8 * kMs + 10 * kUs, 10 * kMs, 1);
  const Summary sum = Analyze(b.Done());
  CHECK(sum.devices[0].idle_host_wait_ns == 8 * kMs + 5 * kUs);  // 80% idle, all host wait
  CHECK(sum.findings.empty());
}

TEST_CASE("excessive_sync: two 50 us device syncs per step") {
  TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t s = b.Stream(0, 7);
  BusyKernels(b, s, 20);
  for (int i = 0; i < 10; ++i) {
    b.Step(th, i, i * kMs, (i + 1) * kMs);
    b.Sync(th, i * kMs + 100 * kUs, i * kMs + 150 * kUs);
    b.Sync(th, i * kMs + 600 * kUs, i * kMs + 650 * kUs);
  }
  const Summary sum = Analyze(b.Done());
  CHECK(Ids(sum) == std::set<std::string>{"excessive_sync"});
  const Finding& f = Get(sum, "excessive_sync");
  CHECK(f.device == -1);
  CHECK(Ev(f, "syncs") == 20);
  CHECK(Ev(f, "sync_time_ns") == 1000 * kUs);
  CHECK(Ev(f, "window_fraction") == Approx(0.1));
  CHECK(Ev(f, "syncs_per_step") == 2);
  CHECK(f.examples[1].ts_ns == 600 * kUs);
}

// A python_function event with its PythonFrame row (as the collector writes them).
void PyFrame(TraceBuilder& b, uint32_t thread, const std::string& name, int64_t s, int64_t e,
             uint32_t id, uint32_t parent) {
  b.data().python_frames.push_back({id, parent, 0});
  b.Add(thread, EventKind::kPythonFunction, name, s, e, 0,
        static_cast<uint32_t>(b.data().python_frames.size() - 1));
}

// A cpu_op with its "Python line" (the torch bridge under the kairos tracer).
void PyOp(TraceBuilder& b, uint32_t thread, const std::string& name, int64_t s, int64_t e,
          uint32_t py_line) {
  CpuArgs a{};
  a.cpu_op = 1;
  a.sequence_nr = -1;
  a.py_line = py_line;
  b.data().cpu_args.push_back(a);
  b.Add(thread, EventKind::kCpuOp, name, s, e, 0, static_cast<uint32_t>(b.data().cpu_args.size() - 1));
}

TEST_CASE("excessive_sync names the user's line: a library frame's caller line, else the op's") {
  TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread();
  BusyKernels(b, b.Stream(0, 7), 20);
  uint32_t id = 1;
  for (int i = 0; i < 10; ++i) {
    const int64_t t0 = i * kMs;
    b.Step(th, i, t0, t0 + kMs);
    const uint32_t step = id++;
    PyFrame(b, th, "/job/train.py(40): step", t0, t0 + kMs, step, 0);
    // Line 42: loss.item() through torch's Python (a library frame called from line 42),
    // three syncs of 50 us a step, each under aten::item inside that frame.
    for (int64_t at : {100 * kUs, 300 * kUs, 500 * kUs}) {
      PyFrame(b, th, "/usr/lib/python3/dist-packages/torch/_tensor.py(900): item", t0 + at,
              t0 + at + 50 * kUs, id++, step);
      b.data().python_frames.back().caller_line = 42;
      PyOp(b, th, "aten::item", t0 + at, t0 + at + 50 * kUs, 0);
      PyOp(b, th, "aten::_local_scalar_dense", t0 + at + kUs, t0 + at + 49 * kUs, 0);
      b.Sync(th, t0 + at + 2 * kUs, t0 + at + 48 * kUs);
    }
    // Line 45: a C method called straight from step (no frame of its own): the op's line.
    PyOp(b, th, "aten::to", t0 + 700 * kUs, t0 + 750 * kUs, 45);
    PyOp(b, th, "aten::_to_copy", t0 + 701 * kUs, t0 + 749 * kUs, 45);
    b.Sync(th, t0 + 702 * kUs, t0 + 748 * kUs);
  }
  const Summary sum = Analyze(b.Done());
  const Finding& f = Get(sum, "excessive_sync");
  CHECK(Ev(f, "syncs") == 40);
  CHECK(Ev(f, "top_python_frame_sync_ns") == 30 * 46 * kUs);
  CHECK(f.recommendation.find(" Most of the sync time (75%) is in Python train.py:42 in step (aten::item).") !=
        std::string::npos);

  // Without the library frame's caller line and the ops' lines (a trace from elsewhere): the
  // function's first line, as before.
  for (PythonFrame& p : b.data().python_frames) p.caller_line = 0;
  for (CpuArgs& a : b.data().cpu_args) a.py_line = 0;
  const Summary plain = Analyze(b.Done());
  const Finding& g = Get(plain, "excessive_sync");
  CHECK(Ev(g, "top_python_frame_sync_ns") == 40 * 46 * kUs);
  CHECK(g.recommendation.find(" is in Python step (train.py:40) (aten::item).") != std::string::npos);
}

TEST_CASE("excessive_sync names the user's Python frame; the summary lists Python functions") {
  TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t s = b.Stream(0, 7);
  BusyKernels(b, s, 20);
  uint32_t id = 1;
  PyFrame(b, th, "/job/train.py(1): <module>", 0, 10 * kMs, id++, 0);
  for (int i = 0; i < 10; ++i) {
    b.Step(th, i, i * kMs, (i + 1) * kMs);
    const uint32_t step = id++;
    PyFrame(b, th, "/job/train.py(20): step", i * kMs, (i + 1) * kMs, step, 1);
    for (int64_t at : {100 * kUs, 600 * kUs}) {
      // loss.item() in step: torch's frame (a library's) around the sync.
      PyFrame(b, th, "/usr/lib/python3/dist-packages/torch/_tensor.py(900): item",
              i * kMs + at, i * kMs + at + 50 * kUs, id++, step);
      b.Sync(th, i * kMs + at, i * kMs + at + 50 * kUs);
    }
  }
  const Summary sum = Analyze(b.Done());
  const Finding& f = Get(sum, "excessive_sync");
  CHECK(Ev(f, "syncs") == 20);
  CHECK(Ev(f, "top_python_frame_sync_ns") == 1000 * kUs);
  CHECK(f.recommendation.find(" Most of the sync time (100%) is in Python step (train.py:20).") !=
        std::string::npos);
  // <module> and step both 10 ms: the tie goes to the name; item 20 x 50 us.
  REQUIRE(sum.top_python_functions.size() == 3);
  const PythonFunctionStat& m = sum.top_python_functions[0];
  CHECK(m.name == "/job/train.py(1): <module>");
  CHECK((m.calls == 1 && m.total_ns == 10 * kMs && m.self_ns == 0));
  const PythonFunctionStat& st = sum.top_python_functions[1];
  CHECK(st.name == "/job/train.py(20): step");
  CHECK((st.calls == 10 && st.total_ns == 10 * kMs && st.self_ns == 9 * kMs));
  const PythonFunctionStat& it = sum.top_python_functions[2];
  CHECK((it.calls == 20 && it.total_ns == 1000 * kUs && it.self_ns == 1000 * kUs));
  const std::string text = SummaryToText(sum);
  CHECK(text.find("Top Python functions") != std::string::npos);
  CHECK(SummaryToJson(sum).find(
            "{\"name\":\"/job/train.py(20): step\",\"calls\":10,\"total_ns\":10000000,"
            "\"self_ns\":9000000,\"gpu_ns\":0}") != std::string::npos);
}

TEST_CASE("Python functions: a recursive function's time counts once; no stacks, no table") {
  TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t s = b.Stream(0, 7);
  PyFrame(b, th, "/job/r.py(3): rec", 0, 8 * kMs, 1, 0);
  PyFrame(b, th, "/job/r.py(3): rec", 1 * kMs, 7 * kMs, 2, 1);
  PyFrame(b, th, "/job/r.py(9): leaf", 2 * kMs, 3 * kMs, 3, 2);
  // GPU time under the frames: a kernel launched in leaf (500 us), one launched in the outer
  // rec only (200 us), one launched outside every frame (not counted).
  b.Launch(th, 2100 * kUs, 2110 * kUs, 1);
  b.Kernel(s, "k1", 4 * kMs, 4500 * kUs, 1);
  b.Launch(th, 500 * kUs, 510 * kUs, 2);
  b.Kernel(s, "k2", 5 * kMs, 5200 * kUs, 2);
  b.Launch(th, 9 * kMs, 9010 * kUs, 3);
  b.Kernel(s, "k3", 9100 * kUs, 9200 * kUs, 3);
  const Summary sum = Analyze(b.Done());
  REQUIRE(sum.top_python_functions.size() == 2);
  CHECK(sum.top_python_functions[0].name == "/job/r.py(3): rec");
  CHECK(sum.top_python_functions[0].calls == 2);
  CHECK(sum.top_python_functions[0].total_ns == 8 * kMs);
  CHECK(sum.top_python_functions[0].self_ns == 7 * kMs);
  CHECK(sum.top_python_functions[1].total_ns == 1 * kMs);
  CHECK(sum.top_python_functions[0].gpu_ns == 700 * kUs);  // both kernels, once despite recursion
  CHECK(sum.top_python_functions[1].gpu_ns == 500 * kUs);

  TraceBuilder plain(0, 10 * kMs);
  plain.Range(plain.Thread(), "x", 0, kMs);
  const Summary none = Analyze(plain.Done());
  CHECK(none.top_python_functions.empty());
  CHECK(SummaryToJson(none).find("python_functions") == std::string::npos);
}

TEST_CASE("excessive_sync ignores GPU-side Stream Wait Event records") {
  TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t s = b.Stream(0, 7);
  BusyKernels(b, s, 20);
  for (int i = 0; i < 10; ++i) {
    b.Step(th, i, i * kMs, (i + 1) * kMs);
    // 40 waits covering 20% of the window: they would fire the detector if they counted.
    b.StreamWaitEvent(s, i * kMs + 100 * kUs, i * kMs + 150 * kUs);
    b.StreamWaitEvent(s, i * kMs + 200 * kUs, i * kMs + 250 * kUs);
    b.StreamWaitEvent(s, i * kMs + 300 * kUs, i * kMs + 350 * kUs);
    b.StreamWaitEvent(s, i * kMs + 400 * kUs, i * kMs + 450 * kUs);
  }
  const Summary sum = Analyze(b.Done());
  CHECK(Ids(sum).count("excessive_sync") == 0);
}

TEST_CASE("insufficient_concurrency: 16-block grids on a 108-SM GPU") {
  TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  BusyKernels(b, b.Stream(0, 7), 20, /*grid=*/16);
  const Summary sum = Analyze(b.Done());
  CHECK(Ids(sum) == std::set<std::string>{"insufficient_concurrency"});
  const Finding& f = Get(sum, "insufficient_concurrency");
  CHECK(Ev(f, "kernels") == 20);
  CHECK(Ev(f, "time_ns") == 10 * kMs);
  CHECK(Ev(f, "kernel_time_fraction") == 1.0);
  CHECK(Ev(f, "sm_count") == 108);
  CHECK(Ev(f, "median_blocks") == 16);
  CHECK(sum.devices[0].blocks_per_sm == Approx(16.0 / 108.0));
}

TEST_CASE("low_occupancy: 255 registers per thread in 64-thread blocks") {
  TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  // 2 warps per block, 8192 registers per warp -> 4 blocks = 8 of 64 warps = 12.5%.
  BusyKernels(b, b.Stream(0, 7), 20, /*grid=*/1024, /*block=*/64, /*regs=*/255);
  const Summary sum = Analyze(b.Done());
  CHECK(Ids(sum) == std::set<std::string>{"low_occupancy"});
  const Finding& f = Get(sum, "low_occupancy");
  CHECK(Ev(f, "kernels") == 20);
  CHECK(Ev(f, "kernel_time_fraction") == 1.0);
  CHECK(Ev(f, "median_theoretical_occupancy_pct") == 13);
  CHECK(Ev(f, "limited_by_registers") == 20);
  CHECK(Ev(f, "limited_by_shared_memory") == 0);
  CHECK(f.recommendation.find("registers per thread") != std::string::npos);
  CHECK(sum.devices[0].est_occupancy_pct == Approx(12.0).margin(0.51));
}

TEST_CASE("per_step_copy_back: a 4-byte loss copied back every step") {
  TraceBuilder b(0, 5 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t s = b.Stream(0, 7);
  for (int i = 0; i < 5; ++i) {
    const int64_t t0 = i * kMs;
    b.Step(th, i, t0, t0 + kMs);
    b.Kernel(s, "gemm", t0, t0 + 950 * kUs, 0);
    b.Launch(th, t0 + 900 * kUs, t0 + 902 * kUs, 500 + i, "cudaMemcpyAsync");
    b.Memcpy(s, t0 + 950 * kUs, t0 + 955 * kUs, 500 + i, 4, /*copy_kind=*/2, 3, 2);
    b.Kernel(s, "gemm", t0 + 955 * kUs, t0 + kMs, 0);
  }
  const Summary sum = Analyze(b.Done());
  CHECK(Ids(sum) == std::set<std::string>{"per_step_copy_back"});
  const Finding& f = Get(sum, "per_step_copy_back");
  CHECK(Ev(f, "steps") == 5);
  CHECK(Ev(f, "steps_with_copy_back") == 5);
  CHECK(Ev(f, "copies") == 5);
  CHECK(Ev(f, "bytes") == 20);
  CHECK(f.examples[0].id == 500);
  CHECK(f.examples[0].name == "Memcpy DtoH (Device -> Pinned)");
}

TEST_CASE("per_step_copy_back names the user's line of the read-back (an op's Python line)") {
  TraceBuilder b(0, 5 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t s = b.Stream(0, 7);
  for (int i = 0; i < 5; ++i) {
    const int64_t t0 = i * kMs;
    b.Step(th, i, t0, t0 + kMs);
    PyFrame(b, th, "/job/train.py(40): step", t0, t0 + kMs, static_cast<uint32_t>(i + 1), 0);
    b.Kernel(s, "gemm", t0, t0 + 950 * kUs, 0);
    PyOp(b, th, "aten::item", t0 + 899 * kUs, t0 + 956 * kUs, 47);  // loss.item() at line 47
    b.Launch(th, t0 + 900 * kUs, t0 + 902 * kUs, 500 + i, "cudaMemcpyAsync");
    b.Memcpy(s, t0 + 950 * kUs, t0 + 955 * kUs, 500 + i, 4, /*copy_kind=*/2, 3, 2);
    b.Kernel(s, "gemm", t0 + 955 * kUs, t0 + kMs, 0);
  }
  const Summary sum = Analyze(b.Done());
  const Finding& f = Get(sum, "per_step_copy_back");
  CHECK(Ev(f, "copies") == 5);
  CHECK(Ev(f, "top_python_frame_blocked_ns") == 5 * 55 * kUs);  // launch to the copy's end
  CHECK(f.recommendation.find(" Most of the blocked time (100%) is in Python train.py:47 in step (aten::item).") !=
        std::string::npos);
}

TEST_CASE("long_initialization: the first step starts 50 ms into the window") {
  TraceBuilder b(0, 100 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t s = b.Stream(0, 7);
  for (int i = 0; i < 10; ++i) {
    const int64_t t0 = 50 * kMs + i * 5 * kMs;
    b.Step(th, i, t0, t0 + 5 * kMs);
    b.Kernel(s, "gemm", t0, t0 + 5 * kMs, 0);
  }
  const Summary sum = Analyze(b.Done());
  CHECK(Ids(sum) == std::set<std::string>{"long_initialization"});
  const Finding& f = Get(sum, "long_initialization");
  CHECK(Ev(f, "init_ns") == 50 * kMs);
  CHECK(Ev(f, "median_step_ns") == 5 * kMs);
  CHECK(Ev(f, "init_to_step_ratio") == 10);
}

TEST_CASE("long_initialization names the user's line that took most of the set-up") {
  TraceBuilder b(0, 100 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t s = b.Stream(0, 7);
  PyFrame(b, th, "/job/train.py(1): <module>", 0, 100 * kMs, 1, 0);
  // Set-up: line 5 builds the model through torch (a library frame, 10 ms), line 8 loads data
  // straight through an op (35 ms), then the loop.
  PyFrame(b, th, "/usr/lib/python3/dist-packages/torch/nn/modules/module.py(900): to", kMs, 11 * kMs, 2, 1);
  b.data().python_frames.back().caller_line = 5;
  PyOp(b, th, "aten::load", 12 * kMs, 47 * kMs, 8);
  for (int i = 0; i < 10; ++i) {
    const int64_t t0 = 50 * kMs + i * 5 * kMs;
    b.Step(th, i, t0, t0 + 5 * kMs);
    b.Kernel(s, "gemm", t0, t0 + 5 * kMs, 0);
  }
  const Summary sum = Analyze(b.Done());
  const Finding& f = Get(sum, "long_initialization");
  CHECK(f.recommendation.find(" Most of the set-up time is in Python train.py:8 in <module>.") != std::string::npos);
}

TEST_CASE("Thresholds are configurable") {
  TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  BusyKernels(b, b.Stream(0, 7), 20, /*grid=*/16);
  AnalysisOptions o;
  o.kernel_min_count = 21;
  CHECK(Analyze(b.Done(), o).findings.empty());
}

}  // namespace
}  // namespace kairos
