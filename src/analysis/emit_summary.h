// File: emit_summary.h
// Layer: kairos_analysis. The one call a session makes at its end: analyse the finished
// TraceData, optionally print the text report, and return the summary JSON. The analysis
// writes no files: the caller attaches the JSON to TraceData::metadata_json["kairos_summary"]
// and hands it to the output layer (OutputOptions::summary_json), which writes
// <trace>.summary.json through its atomic file sink only once the trace itself is written.
// Threading: runs on the session thread (kairos-session), before the trace is written (the
// summary's JSON goes into the trace's metadata).
#ifndef KAIROS_SRC_ANALYSIS_EMIT_SUMMARY_H_
#define KAIROS_SRC_ANALYSIS_EMIT_SUMMARY_H_

#include <cstdio>
#include <string>

#include "analysis/summary.h"

namespace kairos {

// Config::summary maps to: kFile -> {}, kStdout -> {print_text = true}, kOff -> do not call
// EmitSummary.
struct EmitOptions {
  bool print_text = false;
  FILE* text_out = stdout;  // where print_text goes
  AnalysisOptions analysis;
};

// Analyses `data`, prints SummaryToText when asked, and returns SummaryToJson.
std::string EmitSummary(const TraceData& data, const EmitOptions& options);
// The same for a summary the caller already has (options.analysis is not used).
std::string EmitSummary(const Summary& summary, const EmitOptions& options);

}  // namespace kairos

#endif  // KAIROS_SRC_ANALYSIS_EMIT_SUMMARY_H_
