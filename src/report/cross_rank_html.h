// File: cross_rank_html.h
// Layer: kairos_report. The report's cross-rank section (several traces, one per rank): the
// cross-rank analysis (analysis/cross_rank.h) as a verdict, a per-rank table and findings.
// Threading: pure function.
#ifndef KAIROS_SRC_REPORT_CROSS_RANK_HTML_H_
#define KAIROS_SRC_REPORT_CROSS_RANK_HTML_H_

#include <string>
#include <utility>
#include <vector>

#include "model/trace_data.h"

namespace kairos {

// `traces`: (label, trace) per rank. Empty for fewer than two traces.
std::string CrossRankHtmlSection(const std::vector<std::pair<std::string, const TraceData*>>& traces);

}  // namespace kairos

#endif  // KAIROS_SRC_REPORT_CROSS_RANK_HTML_H_
