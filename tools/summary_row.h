// File: summary_row.h
// Layer: tools (`kairos summarize --format jsonl`). One flat JSON row per trace for a
// warehouse (ClickHouse, DuckDB, BigQuery): identity (trace, job, rank, host, pid), window,
// verdict, GPU busy, SM efficiency, steps, the top finding and its share. The schema is
// versioned (`schema_version`) and documented in docs/SUMMARY.md ("Rows for a warehouse"),
// with a ClickHouse table and a DuckDB query; fields are added only with a new version.
// Threading: stateless.
#ifndef KAIROS_TOOLS_SUMMARY_ROW_H_
#define KAIROS_TOOLS_SUMMARY_ROW_H_

#include <string>

#include "analysis/summary.h"
#include "model/trace_data.h"

namespace kairos::tools {

inline constexpr int kSummaryRowSchemaVersion = 1;

// The row (no trailing newline). `path` is the trace file as given on the command line.
std::string SummaryRow(const std::string& path, const TraceData& data, const Summary& summary);

}  // namespace kairos::tools

#endif  // KAIROS_TOOLS_SUMMARY_ROW_H_
