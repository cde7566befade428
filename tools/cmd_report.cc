// File: cmd_report.cc
// Layer: tools. `kairos report TRACE [TRACE...] -o report.html`: the self-contained HTML
// report (src/report, docs/REPORT.md) of one or more Kineto-format JSON traces, one per
// rank. Traces are read one after another with the streaming reader and kept as TraceData
// (about 40 bytes per event plus names) until the page is rendered.
// Threading: single-threaded CLI.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "config/env.h"
#include "output/json_reader.h"
#include "output/writer.h"
#include "report/report.h"
#include "subcommand.h"

namespace kairos::tools {
namespace {

constexpr char kUsage[] =
    "usage: kairos report [-o FILE] [--title TEXT] TRACE [TRACE...]\n"
    "\n"
    "Writes one self-contained HTML page (no network, no external files) with the verdict,\n"
    "findings, GPU utilisation over time, time and idle breakdowns, step times, top kernels\n"
    "and CPU ranges, host metrics and, for several traces (one per rank), a per-rank\n"
    "comparison. Traces: Kineto-format JSON (.json, .json.gz, .json.zst). See docs/REPORT.md.\n"
    "\n"
    "options:\n"
    "  -o, --out FILE   where to write the page (default: report.html)\n"
    "  --title TEXT     page title (default: kairos report)\n";

// "rank N" when the trace says which rank it is, else the file name.
std::string LabelFor(const TraceData& data, const std::string& path) {
  if (data.distributed.world_size > 1) return "rank " + std::to_string(data.distributed.rank);
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int ReportMain(int argc, char** argv) {
  std::string out_path = "report.html";
  ReportOptions options;
  options.analysis.peak_tflops = PeakTflopsFromEnv(DecodeProcessEnv(), "kairos report");
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if ((std::strcmp(argv[i], "-o") == 0 || std::strcmp(argv[i], "--out") == 0) && has_value) {
      out_path = argv[++i];
    } else if (std::strcmp(argv[i], "--title") == 0 && has_value) {
      options.title = argv[++i];
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "kairos report: unexpected argument '%s'\n%s", argv[i], kUsage);
      return 2;
    } else {
      paths.push_back(argv[i]);
    }
  }
  if (paths.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::vector<TraceData> datas;
  datas.reserve(paths.size());
  for (const std::string& p : paths) {
    absl::StatusOr<TraceData> data = ReadKinetoJsonTrace(p);
    if (!data.ok()) {
      std::fprintf(stderr, "kairos report: %s\n", std::string(data.status().message()).c_str());
      return 1;
    }
    datas.push_back(std::move(*data));
  }
  std::vector<ReportTrace> traces;
  for (size_t i = 0; i < datas.size(); ++i) traces.push_back({LabelFor(datas[i], paths[i]), &datas[i]});
  const absl::Status st = WriteTextFile(out_path, RenderHtmlReport(traces, options), "", "report");
  if (!st.ok()) {
    std::fprintf(stderr, "kairos report: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  std::printf("kairos report: wrote %s\n", out_path.c_str());
  return 0;
}

const Subcommand kReport("report", "write a self-contained HTML report of one or more traces", ReportMain);

}  // namespace
}  // namespace kairos::tools
