// File: python_flame_html.h
// Layer: kairos_report. The report's Python flame graph: the call tree the analysis merged over
// threads and calls (Summary::python_flame) as an icicle of plain positioned boxes (no script,
// no SVG), callers above callees, each box as wide as its share of all Python time.
// Threading: pure function.
#ifndef KAIROS_SRC_REPORT_PYTHON_FLAME_HTML_H_
#define KAIROS_SRC_REPORT_PYTHON_FLAME_HTML_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/summary.h"

namespace kairos::report {

// Row height of the graph in CSS pixels (the report's CSS sizes .fl boxes to match).
inline constexpr int kFlameRowPx = 18;
// Appends the graph of `nodes` (depth-first, as ComputePythonFlame orders them) to `out`;
// nothing when there are no nodes. `cut` frames fell under the analysis' node cap.
void PythonFlameHtml(const std::vector<PythonFlameNode>& nodes, uint64_t cut, std::string* out);

}  // namespace kairos::report

#endif  // KAIROS_SRC_REPORT_PYTHON_FLAME_HTML_H_
