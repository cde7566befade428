// File: report_test.cc
// Layer: tests for kairos_report. The page's structure and bounds without a browser: every
// section present, escaping of hostile names (HTML and the embedded JSON), UTF-8 repair,
// charts pre-aggregated to a bounded number of points, the per-rank table for several
// traces, and the helpers' exact outputs. The browser test (report_browser_test.sh) renders
// the page for real.
// Threading: single-threaded.
#include <string>

#include <catch2/catch.hpp>

#include "model/memory_totals.h"
#include "report/html.h"
#include "output/output_options.h"
#include "report/report.h"
#include "report/sample_trace.h"
#include "analysis/trace_builder.h"

namespace kairos {
namespace {

size_t Count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + needle.size())) ++n;
  return n;
}

TEST_CASE("Escape: entities, control characters, invalid UTF-8 replaced") {
  CHECK(report::Escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
  CHECK(report::Escape("x\x01y") == "x y");
  CHECK(report::Escape("caf\xC3\xA9") == "caf\xC3\xA9");
  CHECK(report::Escape("bad\xC3(") == "bad\xEF\xBF\xBD(");
  CHECK(report::Escape("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  CHECK(report::EscapeShort("abcdef", 3) == "abc...");
  CHECK(report::EscapeShort("\xC3\xA9\xC3\xA9", 3) == "\xC3\xA9...");  // never cuts inside a character
}

TEST_CASE("FormatAxis picks readable units") {
  CHECK(report::FormatAxis(12.5, "ms") == "12.5 ms");
  CHECK(report::FormatAxis(2500, "ms") == "2.50 s");
  CHECK(report::FormatAxis(0.25, "ms") == "250 us");
  CHECK(report::FormatAxis(45, "%") == "45%");
  CHECK(report::FormatAxis(3.2e10, "bytes") == "32 GB");
  CHECK(report::FormatAxis(12345, "") == "12.3k");
}

TEST_CASE("Downsample keeps min and max per bucket and every marked point") {
  std::vector<report::Point> pts;
  for (int i = 0; i < 10000; ++i) pts.push_back({static_cast<double>(i), static_cast<double>(i % 10), false, {}});
  pts[5003].y = 99;
  pts[7777].mark = true;
  const auto out = report::Downsample(pts, 200);
  CHECK(out.size() <= 201);
  CHECK(out.size() >= 150);
  bool spike = false, mark = false;
  for (const auto& p : out) {
    spike |= p.y == 99;
    mark |= p.mark && p.x == 7777;
  }
  CHECK(spike);
  CHECK(mark);
  CHECK(report::Downsample(pts, 20000).size() == 10000);
}

TEST_CASE("One trace: every section, the verdict and findings, bounded charts") {
  const TraceData data = testing::SampleTrainingTrace(0, 1);
  ReportOptions o;
  o.timeline_bins = 300;
  const std::string html = RenderHtmlReport({{"train", &data}}, o);
  for (const char* id : {"verdict", "findings", "utilisation", "breakdown", "steps", "kernels", "cpu-ranges",
                         "host", "ranks"}) {
    INFO(id);
    CHECK(Count(html, std::string("<section id=\"") + id + "\">") == 1);
  }
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("data-kairos-report','ok'") != std::string::npos);
  // Self-contained: no external resource of any kind.
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("href=") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(html.find("url(") == std::string::npos);
  // Rank 0 is starved by its data loader in the first steps; GPUs 1-7 are one line.
  CHECK(html.find("GPU idle while waiting for the host") != std::string::npos);
  CHECK(html.find("GPUs 1-7: no GPU work in the window") != std::string::npos);
  CHECK(Count(html, "<svg class=\"chart\"") == 1 + 2 + 2);  // utilisation, steps + histogram, CPU + memory
  // 300 bins: each of the 3 layers is a closed path of 4 points per bin.
  const size_t path = html.find("<path d=\"M");
  REQUIRE(path != std::string::npos);
  const std::string d = html.substr(path, html.find('"', path + 9) - path);
  CHECK(Count(d, "L") == 4 * 300);
  CHECK(html.find("ProfilerStep#41: ") != std::string::npos);  // the outlier is marked
  CHECK(html.find("class=\"mark\"") != std::string::npos);
  CHECK(html.find("<span class=\"tag\">gemm_attention</span>sm90_xmma_gemm") != std::string::npos);
  CHECK(html.find("DataLoader.__next__") != std::string::npos);
  CHECK(html.find("One trace. Pass one trace per rank") != std::string::npos);
  CHECK(html.find("id=\"kairos-summary-0\">{\"schema_version\":2") != std::string::npos);
  // Step phases: the mean bar and one bar per step (the sample loads data in every step).
  CHECK(Count(html, "<h3>Where each step went (host)</h3>") == 1);
  CHECK(html.find("title=\"data_loading ") != std::string::npos);
  CHECK(Count(html, "<p class=\"note\">ProfilerStep#") > 10);
}

constexpr int64_t kPhaseUs = 1000, kPhaseMs = 1000000;

TEST_CASE("Step phases: no bars for steps with nothing to split them by") {
  // Marked steps whose time is in ranges of the job's own names (a C loop): every instant
  // would be `other`, so the block is left out rather than drawn as one grey bar per step.
  testing::TraceBuilder b(0, 10 * kPhaseMs);
  const uint32_t th = b.Thread();
  for (int i = 0; i < 10; ++i) {
    b.Step(th, i, i * kPhaseMs, (i + 1) * kPhaseMs);
    b.Range(th, "forward", i * kPhaseMs, i * kPhaseMs + 600 * kPhaseUs);
  }
  const TraceData& data = b.Done();
  const std::string html = RenderHtmlReport({{"c", &data}});
  CHECK(html.find("<section id=\"steps\">") != std::string::npos);
  CHECK(html.find("Where each step went") == std::string::npos);
  // One op-named range in the steps and the block is back.
  b.Range(th, "Optimizer.step#SGD.step", 700 * kPhaseUs, 800 * kPhaseUs);
  const TraceData& with = b.Done();
  CHECK(Count(RenderHtmlReport({{"c", &with}}), "<h3>Where each step went (host)</h3>") == 1);
}

TEST_CASE("Memory: a chart of the device's counter tracks and the not-freed sites") {
  TraceData data = testing::SampleTrainingTrace(0, 1);
  CHECK(RenderHtmlReport({{"train", &data}}).find("<section id=\"memory\">") == std::string::npos);
  uint32_t th = 0;
  while (data.tracks[th].type != TrackType::kThread) ++th;
  const int64_t t0 = data.window_start_ns;
  int64_t total = int64_t{1} << 30;
  for (int i = 0; i < 6; ++i) {
    MemoryDetail m{};
    m.addr = 0x1000 + static_cast<uint64_t>(i);
    m.bytes = 4096;
    total += m.bytes;
    m.total_allocated = m.total_reserved = total;
    m.device_type = 1;
    m.memory_kind = 3;  // CUPTI's device memory (a record without a kind is an allocator's)
    m.stream = 0xFFFFFFFFu;
    m.py_line = 42;  // allocated from line 42 of the user's frame below (Python stacks)
    Event e{};
    e.kind = EventKind::kInstant;
    e.aux = kAuxMemory;
    e.start_ns = e.end_ns = t0 + 1000 * (i + 1);
    e.name = data.strings.Intern("[memory]");
    e.track = th;
    e.detail = static_cast<uint32_t>(data.memory.size());
    data.memory.push_back(m);
    data.events_by_track[th].push_back(e);
  }
  data.python_frames.push_back({1, 0, 0, 0});
  Event frame{};
  frame.kind = EventKind::kPythonFunction;
  frame.start_ns = t0;
  frame.end_ns = t0 + 10000;
  frame.name = data.strings.Intern("/job/train.py(40): step");
  frame.track = th;
  frame.detail = 0;
  data.events_by_track[th].push_back(frame);
  data.SortTracks();
  AddMemoryCounters(data);
  const std::string html = RenderHtmlReport({{"train", &data}});
  CHECK(html.find(" (Python: train.py:42 in step); 6 allocations") != std::string::npos);
  CHECK(html.find(" at train.py:42 in step</td><td class=\"n\">6</td>") != std::string::npos);
  CHECK(Count(html, "<section id=\"memory\">") == 1);
  CHECK(html.find("GPU 0 memory over time") != std::string::npos);
  CHECK(html.find("6 allocations (24 KiB) not freed in the window") != std::string::npos);
  CHECK(html.find("<tr><th>Not freed, by site</th>") != std::string::npos);
}

TEST_CASE("Python functions: a section only for a trace with Python frames, names escaped") {
  TraceData data = testing::SampleTrainingTrace(0, 1);
  CHECK(RenderHtmlReport({{"train", &data}}, {}).find("<section id=\"python\">") == std::string::npos);
  uint32_t thread = 0;
  while (data.tracks[thread].type != TrackType::kThread) ++thread;
  auto frame = [&](const std::string& name, int64_t s, int64_t e, uint32_t id, uint32_t parent) {
    data.python_frames.push_back({id, parent, 0});
    Event ev{};
    ev.start_ns = s;
    ev.end_ns = e;
    ev.name = data.strings.Intern(name);
    ev.track = thread;
    ev.detail = static_cast<uint32_t>(data.python_frames.size() - 1);
    ev.kind = EventKind::kPythonFunction;
    data.events_by_track[thread].push_back(ev);
  };
  const int64_t t0 = data.window_start_ns;
  frame("/job/train.py(1): <module>", t0, t0 + 2000000, 1, 0);
  frame("/job/train.py(9): <b>step</b>", t0 + 100000, t0 + 1100000, 2, 1);
  data.SortTracks();
  const std::string html = RenderHtmlReport({{"train", &data}}, {});
  CHECK(Count(html, "<section id=\"python\">") == 1);
  CHECK(html.find("/job/train.py(9): &lt;b&gt;step&lt;/b&gt;</td><td class=\"n\">1.00 ms</td>") !=
        std::string::npos);
  CHECK(html.find("<b>step</b>") == std::string::npos);
  // The flame graph: the root, <module> across it, step half as wide one row down.
  CHECK(Count(html, "<div class=\"fl") == 4);  // the graph (class "flame") and three boxes
  CHECK(html.find("<div class=\"fl root\" style=\"left:0.000%;width:100.000%;top:0px\" "
                  "title=\"all Python threads\n2.00 ms (100.000%)\">all Python threads</div>") !=
        std::string::npos);
  CHECK(html.find("<div class=\"fl user\" style=\"left:0.000%;width:100.000%;top:18px\" "
                  "title=\"/job/train.py(1): &lt;module&gt;\n2.00 ms (100.000%), 1 call\">"
                  "&lt;module&gt; (train.py:1)</div>") != std::string::npos);
  CHECK(html.find("<div class=\"fl user\" style=\"left:0.000%;width:50.000%;top:36px\" "
                  "title=\"/job/train.py(9): &lt;b&gt;step&lt;/b&gt;\n1.00 ms (50.000%), 1 call\">"
                  "&lt;b&gt;step&lt;/b&gt; (train.py:9)</div>") != std::string::npos);
  CHECK(html.find("<div class=\"flame\" style=\"height:54px\">") != std::string::npos);
}

TEST_CASE("Hostile names cannot break the page or the embedded JSON") {
  testing::TraceBuilder b(0, 10000000);
  b.Device(0);
  const uint32_t s = b.Stream(0, 7);
  b.Kernel(s, "</script><script>alert(1)</script>\xFF", 0, 5000000, 0);
  const TraceData& data = b.Done();
  const std::string html = RenderHtmlReport({{"<rank>", &data}});
  CHECK(html.find("alert(1)</script>") == std::string::npos);
  CHECK(html.find("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;\xEF\xBF\xBD") != std::string::npos);
  CHECK(html.find("\\u003c/script>\\u003cscript>alert(1)\\u003c/script>\xEF\xBF\xBD\"") != std::string::npos);
  CHECK(Count(html, "<script") == 2);  // the JSON copy and the marker script only
  CHECK(html.find("&lt;rank&gt;") != std::string::npos);
}

TEST_CASE("A foreign trace's megabyte names keep the page a few hundred KB") {
  // 12 kernels named by 1 MiB each: the embedded summary carried them whole (a 13.7 MB page).
  testing::TraceBuilder b(0, 10000000);
  b.Device(0);
  const uint32_t s = b.Stream(0, 7);
  for (int i = 0; i < 12; ++i)
    b.Kernel(s, "k" + std::to_string(i) + "_" + std::string(1 << 20, 'x'), i * 500000,
             i * 500000 + 200000, 0);
  const TraceData& data = b.Done();
  const std::string html = RenderHtmlReport({{"foreign", &data}});
  CHECK(html.size() < 400 * 1024);
  CHECK(html.find(std::string(2001, 'x')) == std::string::npos);
  CHECK(html.find("k3_" + std::string(1997, 'x') + "...\"") != std::string::npos);
}

TEST_CASE("Several traces: per-rank table, one utilisation chart per rank, labelled lines") {
  const TraceData r0 = testing::SampleTrainingTrace(0), r1 = testing::SampleTrainingTrace(1);
  const std::string html = RenderHtmlReport({{"rank 0", &r0}, {"rank 1", &r1}});
  CHECK(html.find("<th>trace</th>") != std::string::npos);
  CHECK(html.find("<tr><td>rank 0</td>") != std::string::npos);
  CHECK(html.find("<tr><td>rank 1</td>") != std::string::npos);
  CHECK(html.find("rank 1, GPU 1 (bins of") != std::string::npos);
  CHECK(html.find("rank 1: GPUs 0,2-7: no GPU work in the window.") != std::string::npos);
  // kernels, memcpys, CPU ranges, host, step phases per step: one per rank
  CHECK(Count(html, "<details") == 3 * 2 + 2 + 2);
  CHECK(html.find("id=\"kairos-summary-1\"") != std::string::npos);
  CHECK(Count(html, "<h3>Kernels across ranks</h3>") == 1);
}

// The compute line under the verdict (docs/FLOPS.md): MFU and TFLOP/s when the trace has
// FLOPs; none without.
TEST_CASE("Compute line: MFU and TFLOP/s at the top when known") {
  testing::TraceBuilder b(0, 1000000);
  DeviceInfo& dev = b.HopperDevice(0);
  dev.name = "NVIDIA H100 80GB HBM3";
  const uint32_t th = b.Thread(), st = b.Stream(0, 7);
  TraceData& d = b.data();
  CpuArgs a{};
  a.cpu_op = 1;
  a.sequence_nr = -1;
  a.flops = 989400000;  // 1 us at the bf16 peak, in a 4 us kernel: MFU 0.1% of the 1 ms window
  a.input_types = d.strings.Intern("[\"c10::BFloat16\"]");
  d.cpu_args.push_back(a);
  b.Add(th, EventKind::kCpuOp, "aten::mm", 1000, 2000, 0, 0).external_id = 11;
  b.Launch(th, 1200, 1300, 1);
  b.Kernel(st, "sm90_xmma_gemm_bf16bf16", 10000, 14000, 1);
  d.events_by_track[st].back().external_id = 11;
  const TraceData& data = b.Done();
  const std::string html = RenderHtmlReport({{"mm", &data}}, {});
  CHECK(html.find("<p class=\"compute\"><b>Compute:</b> MFU 0.1%, 247 TFLOP/s in the operators' "
                  "kernels, 0.989 TFLOP/s over the window (989400000 FLOPs in 1 operators)</p>") !=
        std::string::npos);
  const TraceData plain = testing::SampleTrainingTrace(0, 1);
  CHECK(RenderHtmlReport({{"train", &plain}}, {}).find("class=\"compute\"") == std::string::npos);
}

TEST_CASE("ReportPathFor") {
  CHECK(ReportPathFor("/tmp/run.json") == "/tmp/run.report.html");
  CHECK(ReportPathFor("/tmp/run.json.zst") == "/tmp/run.report.html");
  CHECK(ReportPathFor("trace") == "trace.report.html");
}

}  // namespace
}  // namespace kairos
