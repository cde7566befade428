// File: cmd_summarize.cc
// Layer: tools. `kairos summarize TRACE`: runs the in-process analysis (src/analysis) on an
// existing Kineto-format JSON trace (kairos' or PyTorch's; .json, .json.gz or .json.zst),
// read with the streaming reader (src/output/json_reader.h): the JSON text is never held
// in memory, only the rebuilt TraceData (about 40 bytes per event plus names).
// Threading: single-threaded CLI.
#include <cstdio>
#include <cstring>
#include <string>

#include "analysis/summary.h"
#include "output/json_reader.h"
#include "subcommand.h"

namespace kairos::tools {
namespace {

constexpr char kUsage[] =
    "usage: kairos summarize [--format text|json|markdown] [--out FILE] TRACE\n"
    "\n"
    "Analyses a Kineto-format JSON trace (.json, .json.gz, .json.zst) and prints the same\n"
    "summary kairos writes at the end of a session: per-GPU verdict, time and idle breakdowns,\n"
    "hotspots, step statistics and antipatterns (schema: docs/SUMMARY.md).\n"
    "\n"
    "options:\n"
    "  --format F   text (default), json, or markdown (for an issue or a pull request)\n"
    "  --json       same as --format json\n"
    "  --out FILE   also write the JSON summary to FILE\n";

int SummarizeMain(int argc, char** argv) {
  std::string format = "text";
  std::string out_path, trace_path;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      format = "json";
    } else if (std::strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
      format = argv[++i];
      if (format != "text" && format != "json" && format != "markdown") {
        std::fprintf(stderr, "kairos summarize: --format must be text, json or markdown, not '%s'\n",
                     format.c_str());
        return 2;
      }
    } else if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      out_path = argv[++i];
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (argv[i][0] == '-' || !trace_path.empty()) {
      std::fprintf(stderr, "kairos summarize: unexpected argument '%s'\n%s", argv[i], kUsage);
      return 2;
    } else {
      trace_path = argv[i];
    }
  }
  if (trace_path.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  absl::StatusOr<TraceData> data = ReadKinetoJsonTrace(trace_path);
  if (!data.ok()) {
    std::fprintf(stderr, "kairos summarize: %s\n", std::string(data.status().message()).c_str());
    return 1;
  }
  const Summary summary = Analyze(*data);
  const std::string json_text = SummaryToJson(summary);
  if (!out_path.empty()) {
    FILE* f = std::fopen(out_path.c_str(), "wb");
    if (f == nullptr || std::fwrite(json_text.data(), 1, json_text.size(), f) != json_text.size() ||
        std::fputc('\n', f) == EOF) {
      std::fprintf(stderr, "kairos summarize: cannot write %s\n", out_path.c_str());
      if (f != nullptr) std::fclose(f);
      return 1;
    }
    std::fclose(f);
  }
  if (format == "json") {
    std::fwrite(json_text.data(), 1, json_text.size(), stdout);
    std::fputc('\n', stdout);
  } else {
    const std::string text = format == "markdown" ? SummaryToMarkdown(summary) : SummaryToText(summary);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return 0;
}

const Subcommand kSummarize("summarize", "analyse a JSON trace: verdicts, breakdowns, antipatterns",
                            SummarizeMain);

}  // namespace
}  // namespace kairos::tools
