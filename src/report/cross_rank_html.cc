// File: cross_rank_html.cc
// Layer: kairos_report. CrossRankHtmlSection (cross_rank_html.h). Every name and message goes
// through Escape; numbers are the text summary's spellings (FormatDuration).
// Threading: pure function.
#include "report/cross_rank_html.h"

#include <cstdio>

#include "analysis/cross_rank.h"
#include "analysis/format.h"
#include "report/html.h"

namespace kairos {

using report::Escape;

std::string CrossRankHtmlSection(const std::vector<std::pair<std::string, const TraceData*>>& traces) {
  if (traces.size() < 2) return "";
  std::vector<RankProfile> profiles;
  for (const auto& [label, data] : traces) profiles.push_back(ExtractRankProfile(*data, label));
  const CrossRankSummary s = AnalyzeRanks(profiles);
  std::string out = "<section id=\"cross-rank\"><h2>Cross-rank analysis</h2><p><b>" +
                    Escape(CrossRankVerdict(s)) + "</b></p>";
  out += "<table><tr><th>rank</th><th class=\"n\">median step</th><th class=\"n\">compute</th><th "
         "class=\"n\">communication</th><th class=\"n\">wait</th><th class=\"n\">transfer</th><th "
         "class=\"n\">exposed</th><th class=\"n\">idle</th><th class=\"n\">overlap</th><th "
         "class=\"n\">last arrivals</th></tr>";
  auto cell = [](const std::string& v) { return "<td class=\"n\">" + Escape(v) + "</td>"; };
  for (const RankRow& r : s.rows) {
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f%%", r.overlap_pct);
    out += "<tr><td>" + std::to_string(r.rank) + "</td>" + cell(FormatDuration(r.step_median_ns)) +
           cell(FormatDuration(r.compute_ns)) + cell(FormatDuration(r.comm_ns)) +
           cell(FormatDuration(r.comm_wait_ns)) + cell(FormatDuration(r.comm_transfer_ns)) +
           cell(FormatDuration(r.exposed_comm_ns)) + cell(FormatDuration(r.idle_ns)) + cell(pct) +
           cell(std::to_string(r.last_arrivals)) + "</tr>";
  }
  out += "</table><p class=\"note\">Per step, over the " + std::to_string(s.common_steps) +
         " steps every rank recorded. Wait: time inside collectives waiting for other ranks; transfer: "
         "the shortest instance of each collective on any rank. Definitions: docs/SUMMARY.md.</p>";
  if (!s.findings.empty()) {
    out += "<ul>";
    for (const Finding& f : s.findings) {
      out += "<li><b>" + Escape(f.title) + "</b> (" + Escape(f.id) + ", " + Escape(f.confidence) +
             " confidence). " + Escape(f.recommendation) + "</li>";
    }
    out += "</ul>";
  }
  if (!s.kernels.empty()) {  // kernels across ranks (docs/SUMMARY.md)
    out += "<h3>Kernels across ranks</h3><table><tr><th>kernel</th><th class=\"n\">min</th><th "
           "class=\"n\">median</th><th class=\"n\">max</th><th class=\"n\">min rank</th><th "
           "class=\"n\">max rank</th><th class=\"n\">spread</th></tr>";
    for (const KernelSpread& k : s.kernels) {
      char spread[32];
      std::snprintf(spread, sizeof spread, "%.1f%%", 100.0 * k.spread);
      out += "<tr><td class=\"name\">" + report::EscapeShort(k.name, 140) + "</td>" +
             cell(FormatDuration(k.min_ns)) + cell(FormatDuration(k.median_ns)) +
             cell(FormatDuration(k.max_ns)) + cell(std::to_string(k.min_rank)) +
             cell(std::to_string(k.max_rank)) + cell(spread) + "</tr>";
    }
    out += "</table><p class=\"note\">Each kernel's time per step on each rank, over the ranks: a "
           "slow rank's slow kernel is its max rank with a large spread.</p>";
  }
  for (const std::string& w : s.warnings) out += "<p class=\"note\">" + Escape(w) + "</p>";
  return out + "</section>";
}

}  // namespace kairos
