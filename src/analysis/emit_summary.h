// File: emit_summary.h
// Layer: kairos_analysis. The one call a session makes at its end: analyse the finished
// TraceData, write <trace>.summary.json next to the trace and optionally print the text
// report. The caller attaches *json_out to TraceData::metadata_json["kairos_summary"]
// before writing the trace, so the summary travels inside it too.
// Threading: runs on the session's flush thread; blocks on file I/O.
#ifndef KAIROS_SRC_ANALYSIS_EMIT_SUMMARY_H_
#define KAIROS_SRC_ANALYSIS_EMIT_SUMMARY_H_

#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "analysis/summary.h"

namespace kairos {

// Config::summary maps to: kFile -> {write_file = true}, kStdout -> {write_file = true,
// print_text = true}, kOff -> do not call EmitSummary.
struct EmitOptions {
  bool write_file = true;
  bool print_text = false;
  FILE* text_out = stdout;  // where print_text goes
  AnalysisOptions analysis;
};

// "run.json" -> "run.summary.json", "run.pftrace.zst" -> "run.summary.json"; other names get
// ".summary.json" appended.
std::string SummaryPathFor(const std::string& trace_path);

// Analyses `data` and sets *json_out (never null) to SummaryToJson. Writes the JSON to
// SummaryPathFor(trace_path) via a temporary file and rename (skipped when trace_path is
// empty). Errors: the file could not be written (the JSON is still returned).
absl::Status EmitSummary(const TraceData& data, const std::string& trace_path,
                         const EmitOptions& options, std::string* json_out);

}  // namespace kairos

#endif  // KAIROS_SRC_ANALYSIS_EMIT_SUMMARY_H_
