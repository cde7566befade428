// File: python_flame_html.cc — see python_flame_html.h.
// Layer: kairos_report.
#include "report/python_flame_html.h"

#include <algorithm>
#include <cstdio>

#include "analysis/format.h"
#include "report/html.h"

namespace kairos::report {
namespace {

std::string Pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f%%", v);
  return b;
}

}  // namespace

void PythonFlameHtml(const std::vector<PythonFlameNode>& nodes, uint64_t cut, std::string* out) {
  if (nodes.empty() || nodes[0].total_ns <= 0) return;
  const double root = static_cast<double>(nodes[0].total_ns);
  // Each node starts where its previous sibling ended (children follow their parent in the
  // depth-first order, largest first).
  std::vector<double> left(nodes.size(), 0.0), cursor(nodes.size(), 0.0);
  uint32_t max_depth = 0;
  for (size_t i = 1; i < nodes.size(); ++i) {
    const size_t p = static_cast<size_t>(nodes[i].parent);
    if (nodes[i].parent < 0 || p >= i) continue;  // malformed: not depth-first
    left[i] = left[p] + cursor[p];
    cursor[p] += 100.0 * static_cast<double>(nodes[i].total_ns) / root;
    max_depth = std::max(max_depth, nodes[i].depth);
  }
  *out += "<h3>Python flame graph</h3><p class=\"note\">Every Python call path of the window, "
          "merged over threads and calls: callers above, callees below, each box as wide as its "
          "share of all Python time (" + Escape(FormatDuration(nodes[0].total_ns)) +
          "). Blue: your code; grey: libraries. Hover for the time and calls.";
  if (cut > 0) *out += " " + std::to_string(cut) + " frames past the node cap are in their callers' boxes.";
  *out += "</p><div class=\"flame\" style=\"height:" +
          std::to_string((max_depth + 1) * static_cast<uint32_t>(kFlameRowPx)) + "px\">";
  for (size_t i = 0; i < nodes.size(); ++i) {
    const PythonFlameNode& n = nodes[i];
    if (i > 0 && (n.parent < 0 || static_cast<size_t>(n.parent) >= i)) continue;
    const double width = 100.0 * static_cast<double>(n.total_ns) / root;
    const std::string name = i == 0 ? std::string("all Python threads") : n.label;
    std::string tip = (i == 0 ? name : n.name) + "\n" + FormatDuration(n.total_ns) + " (" + Pct(width) + ")";
    if (i > 0) tip += ", " + std::to_string(n.calls) + (n.calls == 1 ? " call" : " calls");
    *out += "<div class=\"fl" + std::string(i == 0 ? " root" : n.user ? " user" : "") +
            "\" style=\"left:" + Pct(left[i]) + ";width:" + Pct(width) +
            ";top:" + std::to_string(n.depth * static_cast<uint32_t>(kFlameRowPx)) + "px\" title=\"" +
            EscapeShort(tip, 2000) + "\">" + EscapeShort(name, 200) + "</div>";
  }
  *out += "</div>";
}

}  // namespace kairos::report
