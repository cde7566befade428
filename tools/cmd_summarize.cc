// File: cmd_summarize.cc
// Layer: tools. `kairos summarize TRACE`: runs the in-process analysis (src/analysis) on an
// existing Kineto-format JSON trace (kairos' or PyTorch's; .json, .json.gz or .json.zst),
// read with the streaming reader (src/output/json_reader.h): the JSON text is never held
// in memory, only the rebuilt TraceData (about 40 bytes per event plus names).
// `kairos summarize TRACE TRACE... | DIR`: one trace per rank of a job; the cross-rank
// analysis (analysis/cross_rank.h). Ranks are read one at a time and reduced to a small
// profile, so memory is one trace plus a few bytes per GPU interval and collective.
// Threading: single-threaded CLI.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "analysis/cross_rank.h"
#include "analysis/summary.h"
#include "config/env.h"
#include "util/input_file.h"
#include "output/json_reader.h"
#include "output/proto/perfetto_reader.h"
#include "output/writer.h"
#include "subcommand.h"
#include "summary_row.h"

namespace kairos::tools {
namespace {

constexpr char kUsage[] =
    "usage: kairos summarize [--format text|json|markdown] [--out FILE] TRACE\n"
    "       kairos summarize [--format ...] [--out FILE] TRACE TRACE... | DIR\n"
    "       kairos summarize --format jsonl TRACE|DIR...\n"
    "\n"
    "Analyses a Kineto-format JSON trace (.json, .json.gz, .json.zst) and prints the same\n"
    "summary kairos writes at the end of a session: per-GPU verdict, time and idle breakdowns,\n"
    "hotspots, step statistics and antipatterns (schema: docs/SUMMARY.md).\n"
    "With several traces (one per rank; a directory means every trace in it), prints the\n"
    "cross-rank analysis instead: per-rank step, compute, communication wait and transfer,\n"
    "idle, overlap; the straggler rank and the time lost per step; load imbalance.\n"
    "Perfetto traces (.pftrace, .pftrace.zst) are read too.\n"
    "--format jsonl: one row per trace (every trace file of each DIR), for a warehouse\n"
    "(schema and a ClickHouse table: docs/SUMMARY.md); one trace in memory at a time.\n"
    "\n"
    "options:\n"
    "  --format F   text (default), json, markdown (for an issue or a pull request), or\n"
    "               jsonl (one row per trace)\n"
    "  --json       same as --format json\n"
    "  --out FILE   also write the JSON summary to FILE\n";

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsPerfettoName(const std::string& p) {
  return EndsWith(p, ".pftrace") || EndsWith(p, ".pftrace.zst") || EndsWith(p, ".perfetto-trace") ||
         EndsWith(p, ".perfetto-trace.zst");
}

// A trace file by name; summaries written next to traces (<trace>.summary.json) are not.
bool IsTraceName(const std::string& p) {
  if (EndsWith(p, ".summary.json")) return false;
  return EndsWith(p, ".json") || EndsWith(p, ".json.gz") || EndsWith(p, ".json.zst") || IsPerfettoName(p);
}

// A directory becomes its trace files, sorted by name; a file is itself.
bool ExpandInput(const std::string& in, std::vector<std::string>* out, bool ranks_only = true) {
  if (!IsDirectory(in)) {
    out->push_back(in);
    return true;
  }
  DIR* d = opendir(in.c_str());
  if (d == nullptr) {
    std::fprintf(stderr, "kairos summarize: cannot list %s: %s\n", in.c_str(), std::strerror(errno));
    return false;
  }
  std::vector<std::string> candidates, names;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name[0] != '.' && IsTraceName(name)) candidates.push_back(in + "/" + name);
  }
  closedir(d);
  std::sort(candidates.begin(), candidates.end());  // the skip lines below in a stable order
  for (const std::string& path : candidates) {
    // The readers' own open (input_file.h), so the scan applies their rule: a FIFO, device
    // or socket named like a trace is skipped with one line (reading it would block forever
    // or never end), a subdirectory silently; the regular files are summarised.
    struct stat st;
    absl::StatusOr<int> fd = OpenInputFile(path, &st);
    if (fd.ok()) {
      close(*fd);
    } else if (absl::IsFailedPrecondition(fd.status())) {
      if (!S_ISDIR(st.st_mode))
        std::fprintf(stderr, "kairos summarize: skipping %s\n", std::string(fd.status().message()).c_str());
      continue;
    }
    names.push_back(path);  // any other open error is the reader's to report
  }
  // Per-rank files carry their rank in the name (".rank<R>"): when some do, the others (a
  // merged trace, a single-process trace) are not ranks of the job.
  if (ranks_only &&
      std::any_of(names.begin(), names.end(), [](const std::string& n) { return RankFromFileName(n) >= 0; })) {
    names.erase(std::remove_if(names.begin(), names.end(),
                               [](const std::string& n) { return RankFromFileName(n) < 0; }),
                names.end());
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) {
    std::fprintf(stderr, "kairos summarize: no trace files in %s\n", in.c_str());
    return false;
  }
  out->insert(out->end(), names.begin(), names.end());
  return true;
}

// Only what the analysis reads (trace_data.h, TraceReadOptions): side-table rows once per
// distinct launch configuration instead of once per launch.
absl::StatusOr<TraceData> ReadAnyTrace(const std::string& path) {
  TraceReadOptions options;
  options.for_analysis = true;
  return IsPerfettoName(path) ? ReadPerfettoTrace(path, options) : ReadKinetoJsonTrace(path, options);
}

// --out: the summary JSON through the output layer's hardened sink (atomic, no symlink
// followed, no device or FIFO replaced), like every other file kairos writes.
bool WriteOut(const std::string& out_path, const std::string& json_text) {
  if (out_path.empty()) return true;
  const absl::Status st = WriteSummaryFile(out_path, json_text);
  if (st.ok()) return true;
  std::fprintf(stderr, "kairos summarize: cannot write %s: %s\n", out_path.c_str(),
               std::string(st.message()).c_str());
  return false;
}

// Several traces: read one rank at a time, keep its profile, drop its TraceData.
int CrossRankMain(const std::vector<std::string>& traces, const std::string& format,
                  const std::string& out_path) {
  std::vector<RankProfile> profiles;
  profiles.reserve(traces.size());
  for (const std::string& path : traces) {
    absl::StatusOr<TraceData> data = ReadAnyTrace(path);
    if (!data.ok()) {
      std::fprintf(stderr, "kairos summarize: %s\n", std::string(data.status().message()).c_str());
      return 1;
    }
    profiles.push_back(ExtractRankProfile(*data, path));
  }
  const CrossRankSummary summary = AnalyzeRanks(profiles);
  const std::string json_text = CrossRankToJson(summary);
  if (!WriteOut(out_path, json_text)) return 1;
  const std::string text = format == "json"       ? json_text + "\n"
                           : format == "markdown" ? CrossRankToMarkdown(summary)
                                                  : CrossRankToText(summary);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

// --format jsonl: every trace of every input, one row each, in order; one trace in memory
// at a time (the row is written and flushed before the next is read). A trace that cannot be
// read is reported on stderr and skipped; the exit status is then 1.
int JsonlMain(const std::vector<std::string>& inputs) {
  int status = 0;
  for (const std::string& in : inputs) {
    std::vector<std::string> traces;
    if (!ExpandInput(in, &traces, /*ranks_only=*/false)) {
      status = 1;
      continue;
    }
    for (const std::string& path : traces) {
      absl::StatusOr<TraceData> data = ReadAnyTrace(path);
      if (!data.ok()) {
        std::fprintf(stderr, "kairos summarize: %s\n", std::string(data.status().message()).c_str());
        status = 1;
        continue;
      }
      const std::string row = SummaryRow(path, *data, Analyze(*data)) + "\n";
      std::fwrite(row.data(), 1, row.size(), stdout);
      std::fflush(stdout);
    }
  }
  return status;
}

int SummarizeMain(int argc, char** argv) {
  std::string format = "text";
  std::string out_path;
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      format = "json";
    } else if (std::strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
      format = argv[++i];
      if (format != "text" && format != "json" && format != "markdown" && format != "jsonl") {
        std::fprintf(stderr, "kairos summarize: --format must be text, json, markdown or jsonl, not '%s'\n",
                     format.c_str());
        return 2;
      }
    } else if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      out_path = argv[++i];
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "kairos summarize: unexpected argument '%s'\n%s", argv[i], kUsage);
      return 2;
    } else {
      inputs.push_back(argv[i]);
    }
  }
  if (inputs.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (format == "jsonl") {
    if (!out_path.empty()) {
      std::fprintf(stderr, "kairos summarize: --out does not apply to --format jsonl\n");
      return 2;
    }
    return JsonlMain(inputs);
  }
  std::vector<std::string> traces;
  for (const std::string& in : inputs) {
    if (!ExpandInput(in, &traces)) return 1;
  }
  if (traces.size() != 1) return CrossRankMain(traces, format, out_path);
  const std::string& trace_path = traces[0];
  absl::StatusOr<TraceData> data = ReadAnyTrace(trace_path);
  if (!data.ok()) {
    std::fprintf(stderr, "kairos summarize: %s\n", std::string(data.status().message()).c_str());
    return 1;
  }
  AnalysisOptions options;
  options.peak_tflops = PeakTflopsFromEnv(DecodeProcessEnv(), "kairos summarize");
  const Summary summary = Analyze(*data, options);
  const std::string json_text = SummaryToJson(summary);
  if (!WriteOut(out_path, json_text)) return 1;
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
