// File: summary_output_test.cc
// Layer: tests for kairos_analysis. SummaryToJson parsed back with a real JSON parser,
// SummaryToText's headline, EmitSummary (the summary file is the output layer's).
// Threading: single-threaded.
#include <cstdio>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "analysis/emit_summary.h"
#include "analysis/summary.h"
#include "analysis/trace_builder.h"

namespace kairos {
namespace {

using kairos::testing::TraceBuilder;
constexpr int64_t kUs = 1000, kMs = 1000000;

TraceData Starved() {
  TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t s = b.Stream(0, 7);
  for (int i = 0; i < 10; ++i) {
    const int64_t t0 = i * kMs;
    b.Step(th, i, t0, t0 + kMs);
    b.Range(th, "load \"batch\"\n", t0, t0 + 800 * kUs);
    b.Launch(th, t0 + 800 * kUs, t0 + 805 * kUs, i + 1);
    b.Kernel(s, "forward", t0 + 810 * kUs, t0 + kMs, i + 1);
  }
  return std::move(b.Done());
}

TEST_CASE("SummaryToJson is valid JSON carrying every section") {
  const TraceData data = Starved();
  const Summary s = Analyze(data);
  const std::string text = SummaryToJson(s);
  const auto j = nlohmann::json::parse(text);
  CHECK(j["schema_version"] == 2);
  CHECK(j["window"]["duration_ns"] == 10 * kMs);
  CHECK(j["event_count"] == 40);  // 4 per step
  REQUIRE(j["devices"].size() == 1);
  const auto& d = j["devices"][0];
  CHECK(d["device"] == 0);
  CHECK(d["temporal_breakdown_ns"]["compute"] == 1900 * kUs);
  CHECK(d["temporal_breakdown_ns"]["idle"] == 8100 * kUs);
  CHECK(d["idle_breakdown_ns"]["host_wait"] == 8050 * kUs);
  CHECK(d["idle_breakdown_ns"]["kernel_wait"] == 50 * kUs);
  CHECK(d["busy_fraction"].get<double>() == Approx(0.19));
  CHECK(d["host_wait_top_range"] == "load \"batch\"\n");  // escaped and restored
  CHECK(d["est_occupancy_pct"] == 100);
  CHECK(d["verdict"] == j["verdicts"][0]);
  CHECK(j["verdicts"].size() == 1);
  CHECK(j["idle_devices"].empty());
  CHECK(j["verdict"].get<std::string>().rfind("1 finding; the largest: GPU idle while waiting for the host (GPU 0, ", 0) == 0);
  CHECK(d["kernel_class_ns"]["other"] == 1900 * kUs);
  CHECK(d["kernel_class_ns"]["communication"] == 0);
  CHECK(d["kernel_class_ns"].size() == 7);
  CHECK(j["hotspots"]["kernels"][0]["name"] == "forward");
  CHECK(j["hotspots"]["kernels"][0]["count"] == 10);
  CHECK(j["hotspots"]["kernels"][0]["median_ns"] == 190 * kUs);
  CHECK(j["hotspots"]["memcpys"].empty());
  CHECK(j["steps"]["count"] == 10);
  CHECK(j["steps"]["outliers"].empty());
  CHECK(j["host"].is_null());
  REQUIRE(j["findings"].size() == 1);
  const auto& f = j["findings"][0];
  CHECK(f["id"] == "gpu_idle_host_bound");
  CHECK(f["device"] == 0);
  CHECK(f["confidence"] == "high");
  CHECK(f["time_ns"] == 8050 * kUs);
  CHECK(f["window_share"].get<double>() == Approx(0.805));
  CHECK(f["evidence"]["host_wait_intervals"] == 10);
  CHECK(f["evidence"]["idle_fraction"].get<double>() == Approx(0.81));
  CHECK(f["examples"][0]["id"] == 1);
  CHECK(f["examples"][0]["ts_ns"] == 810 * kUs);
  CHECK(!f["recommendation"].get<std::string>().empty());
  CHECK(SummaryToJson(Analyze(data)) == text);  // deterministic
}

TEST_CASE("SummaryToText opens with the verdicts and lists findings") {
  const std::string text = SummaryToText(Analyze(Starved()));
  CHECK(text.rfind("=== kairos summary: window 10.00 ms, 40 events ===\n"
                   "1 finding; the largest: GPU idle while waiting for the host (GPU 0, ",
                   0) == 0);
  CHECK(text.find("high confidence)\n"
                  "  GPU 0 idle 81% of the window, mostly waiting for the host in \"load \"batch\"\n\"\n") !=
        std::string::npos);
  CHECK(text.find("* [gpu_idle_host_bound] GPU 0: GPU idle while waiting for the host\n"
                  "    concerns 8.05 ms (80.5% of the window), confidence high\n") != std::string::npos);
  CHECK(text.find("  kernel time by class: other 1.90 ms\n") != std::string::npos);
  CHECK(text.find("Steps: 10, mean 1.00 ms") != std::string::npos);
  // Its steps hold no PyTorch range to split them by: said once, not as four zero phases.
  CHECK(text.find("  step phases: not split (no time in PyTorch's DataLoader, Optimizer.step, "
                  "autograd or operator ranges)\n") != std::string::npos);
  CHECK(text.find("mean step phases") == std::string::npos);
}

TEST_CASE("SummaryToText: the mean step phases when a step holds a recognised range") {
  TraceBuilder b(0, 10 * kMs);
  const uint32_t th = b.Thread();
  for (int i = 0; i < 10; ++i) {
    const int64_t t0 = i * kMs;
    b.Step(th, i, t0, t0 + kMs);
    b.Range(th, "Optimizer.step#SGD.step", t0 + 900 * kUs, t0 + kMs);
  }
  const std::string text = SummaryToText(Analyze(b.Done()));
  CHECK(text.find("  mean step phases: data_loading 0 ns, optimizer 100.0 us, backward 0 ns, "
                  "forward 0 ns, other 900.0 us\n") != std::string::npos);
  CHECK(text.find("not split") == std::string::npos);
}

TEST_CASE("SummaryToMarkdown: verdict, GPU table, findings, hotspot tables with safe names") {
  TraceBuilder b(0, 10 * kMs);
  b.Device(0);
  b.Device(1);
  const uint32_t s7 = b.Stream(0, 7);
  for (int i = 0; i < 20; ++i) b.Kernel(s7, "a|b`c", i * 500 * kUs, (i + 1) * 500 * kUs, 0, 16);
  const std::string md = SummaryToMarkdown(Analyze(b.Done()));
  CHECK(md.rfind("## kairos summary\n\n**1 finding; the largest: Kernels with too few blocks for the device "
                 "(GPU 0, 100% of the window, high confidence)**\n", 0) == 0);
  CHECK(md.find("- GPU 1: no GPU work in the window\n") != std::string::npos);
  CHECK(md.find("| 0 | 100.0% | 100.0% | 0.0% | 0.0% | 0.0% | 0.0% | 0.0% | 0.0% | 20 |\n") != std::string::npos);
  CHECK(md.find("#### Kernels with too few blocks for the device (GPU 0)\n\n`insufficient_concurrency` · "
                "concerns 10.00 ms (100.0% of the window) · confidence high\n") != std::string::npos);
  CHECK(md.find("| 10.00 ms | 20 | 500.0 us | 500.0 us | 500.0 us | `a\\|b'c` |\n") != std::string::npos);
}

TEST_CASE("Empty trace gives an empty but valid summary") {
  TraceData empty;
  const auto j = nlohmann::json::parse(SummaryToJson(Analyze(empty)));
  CHECK(j["devices"].empty());
  CHECK(j["findings"].empty());
  CHECK(j["window"]["duration_ns"] == 0);
}

TEST_CASE("EmitSummary returns the JSON and prints the text; it writes no file") {
  const TraceData data = Starved();
  FILE* text = std::tmpfile();
  REQUIRE(text != nullptr);
  EmitOptions o;
  o.print_text = true;
  o.text_out = text;
  const std::string json = EmitSummary(data, o);
  CHECK(json == SummaryToJson(Analyze(data)));
  CHECK(std::ftell(text) == static_cast<long>(SummaryToText(Analyze(data)).size()));
  std::fclose(text);
}

}  // namespace
}  // namespace kairos
