// File: report.h
// Layer: kairos_report (depends on kairos_model and kairos_analysis). The self-contained HTML
// report of one or more traces (one per rank): verdict and findings, GPU utilisation over
// time, time and idle breakdowns, step times, top kernels and CPU ranges, host metrics and,
// for several traces, a per-rank comparison. One file with inline CSS, inline SVG and one
// tiny inline script; no network access. Layout and sections: docs/REPORT.md.
// Threading: pure functions of their arguments (no file I/O).
#ifndef KAIROS_SRC_REPORT_REPORT_H_
#define KAIROS_SRC_REPORT_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "analysis/summary.h"
#include "model/trace_data.h"

namespace kairos {

struct ReportOptions {
  std::string title = "kairos report";
  size_t timeline_bins = 500;       // points per utilisation chart
  size_t max_series_points = 2000;  // points per step or host-metric line
  size_t histogram_bins = 30;
  size_t max_device_charts = 16;    // utilisation charts over all ranks; the rest are listed
  AnalysisOptions analysis;         // timeline_bins and keep_step_series are set by the report
};

struct ReportTrace {
  std::string label;        // e.g. "rank 0" or the file name
  const TraceData* data = nullptr;
  // Optional: the summary of `data` already analysed with ReportAnalysisOptions(options), so
  // a caller that also needs the summary (the session writes both) analyses once.
  const Summary* summary = nullptr;
};

// The analysis options the page needs (timeline bins, step series) on top of options.analysis.
// The summary JSON/text of such an analysis is the same as of a default one: the extra series
// are only read by the report.
AnalysisOptions ReportAnalysisOptions(const ReportOptions& options = {});

// Analyses every trace that has no summary yet and renders the page.
std::string RenderHtmlReport(const std::vector<ReportTrace>& traces, const ReportOptions& options = {});

// The page is written by the caller through the output layer's hardened sink
// (WriteTextFile in output/writer.h), like every file kairos writes.

}  // namespace kairos

#endif  // KAIROS_SRC_REPORT_REPORT_H_
