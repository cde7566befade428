// File: cross_rank_format.cc
// Layer: kairos_analysis. CrossRankToJson / Text / Markdown (cross_rank.h); the JSON schema
// is in docs/SUMMARY.md, "Cross-rank analysis". Numbers are spelled like the single-trace
// summary's (integral values as integers, others with 6 significant digits).
// Threading: pure functions.
#include <cmath>
#include <cstdio>
#include <string>

#include "analysis/cross_rank.h"
#include "analysis/format.h"
#include "json/json_writer.h"

namespace kairos {
namespace {

void Num(JsonWriter& w, double v) {
  if (!std::isfinite(v)) {
    w.Null();
  } else if (v == std::floor(v) && std::fabs(v) < 9.0e15) {
    w.Int(static_cast<int64_t>(v));
  } else {
    char b[32];
    std::snprintf(b, sizeof b, "%.6g", v);
    w.RawValue(b);
  }
}

std::string Pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", v);
  return b;
}

}  // namespace

std::string CrossRankVerdict(const CrossRankSummary& s) {
  if (s.ranks < 2) return "Cross-rank analysis needs at least two rank traces";
  if (s.straggler_rank >= 0) {
    return "Rank " + std::to_string(s.straggler_rank) + " is the straggler: the job loses " +
           FormatDuration(s.lost_ns_per_step) + " per step (" +
           Pct(Percent(s.lost_ns_per_step, s.step_median_ns)) + " of the median step) waiting for it";
  }
  return "No straggler among " + std::to_string(s.ranks) + " ranks" +
         (s.findings.empty() ? "; no cross-rank finding" : "; " + std::to_string(s.findings.size()) +
                                                               " cross-rank finding(s)");
}

std::string CrossRankToJson(const CrossRankSummary& s) {
  JsonWriter w;
  w.BeginObject();
  w.Key("ranks").Uint(s.ranks);
  w.Key("verdict").String(CrossRankVerdict(s));
  w.Key("common_steps").Uint(s.common_steps);
  w.Key("first_step");
  if (s.common_steps > 0) w.Int(s.first_step); else w.Null();
  w.Key("last_step");
  if (s.common_steps > 0) w.Int(s.last_step); else w.Null();
  w.Key("median_step_ns").Int(s.step_median_ns);
  w.Key("matched_collectives").Uint(s.matched_collectives);
  w.Key("straggler_rank");
  if (s.straggler_rank >= 0) w.Int(s.straggler_rank); else w.Null();
  w.Key("straggler_candidate");
  if (s.straggler_candidate >= 0) w.Int(s.straggler_candidate); else w.Null();
  w.Key("last_arrival_share");
  Num(w, s.straggler_last_share);
  w.Key("lost_ns_per_step").Int(s.lost_ns_per_step);
  w.Key("compute_spread");
  Num(w, s.compute_spread);
  w.Key("per_rank").BeginArray();
  for (const RankRow& r : s.rows) {
    w.BeginObject();
    w.Key("rank").Int(r.rank).Key("source").String(r.source).Key("host").String(r.host);
    w.Key("steps").Uint(r.steps).Key("step_median_ns").Int(r.step_median_ns);
    w.Key("per_step_ns").BeginObject();
    w.Key("compute").Int(r.compute_ns).Key("communication").Int(r.comm_ns);
    w.Key("communication_wait").Int(r.comm_wait_ns).Key("communication_transfer").Int(r.comm_transfer_ns);
    w.Key("exposed_communication").Int(r.exposed_comm_ns).Key("idle").Int(r.idle_ns);
    w.EndObject();
    w.Key("overlap_pct");
    Num(w, r.overlap_pct);
    w.Key("last_arrivals").Uint(r.last_arrivals);
    w.EndObject();
  }
  w.EndArray();
  w.Key("findings").BeginArray();
  for (const Finding& f : s.findings) {
    w.BeginObject().Key("id").String(f.id).Key("title").String(f.title);
    w.Key("rank");
    if (f.device >= 0) w.Int(f.device); else w.Null();
    w.Key("confidence").String(f.confidence).Key("time_ns").Int(f.time_ns);
    w.Key("step_share");
    Num(w, f.window_share);
    w.Key("evidence").BeginObject();
    for (const auto& [k, v] : f.evidence) {
      w.Key(k);
      Num(w, v);
    }
    w.EndObject().Key("examples").BeginArray();
    for (const EventRef& r : f.examples) {
      w.BeginObject().Key("ts_ns").Int(r.ts_ns).Key("name").String(r.name).EndObject();
    }
    w.EndArray().Key("recommendation").String(f.recommendation).EndObject();
  }
  w.EndArray();
  w.Key("kernels").BeginArray();
  for (const KernelSpread& k : s.kernels) {
    w.BeginObject().Key("name").String(k.name).Key("min_ns").Int(k.min_ns).Key("median_ns").Int(k.median_ns);
    w.Key("max_ns").Int(k.max_ns).Key("min_rank").Int(k.min_rank).Key("max_rank").Int(k.max_rank);
    w.Key("spread");
    Num(w, k.spread);
    w.EndObject();
  }
  w.EndArray();
  w.Key("warnings").BeginArray();
  for (const std::string& m : s.warnings) w.String(m);
  w.EndArray();
  w.EndObject();
  return w.str();
}

std::string CrossRankToText(const CrossRankSummary& s) {
  std::string out = "kairos cross-rank summary: " + std::to_string(s.ranks) + " ranks\n";
  out += CrossRankVerdict(s) + "\n";
  if (s.common_steps > 0) {
    out += "Steps " + std::to_string(s.first_step) + "-" + std::to_string(s.last_step) + " (" +
           std::to_string(s.common_steps) + " on every rank), median step " +
           FormatDuration(s.step_median_ns) + "; " + std::to_string(s.matched_collectives) +
           " collectives matched across ranks\n";
  }
  char line[512];
  std::snprintf(line, sizeof line, "\n%5s %10s %10s %10s %10s %10s %10s %10s %8s %6s\n", "rank", "step",
                "compute", "comm", "wait", "transfer", "exposed", "idle", "overlap", "last");
  out += line;
  for (const RankRow& r : s.rows) {
    std::snprintf(line, sizeof line, "%5lld %10s %10s %10s %10s %10s %10s %10s %8s %6llu\n",
                  static_cast<long long>(r.rank), FormatDuration(r.step_median_ns).c_str(),
                  FormatDuration(r.compute_ns).c_str(), FormatDuration(r.comm_ns).c_str(),
                  FormatDuration(r.comm_wait_ns).c_str(), FormatDuration(r.comm_transfer_ns).c_str(),
                  FormatDuration(r.exposed_comm_ns).c_str(), FormatDuration(r.idle_ns).c_str(),
                  Pct(r.overlap_pct).c_str(), static_cast<unsigned long long>(r.last_arrivals));
    out += line;
  }
  out += "(per step; wait = time in collectives waiting for other ranks, transfer = the shortest\n"
         " instance of each collective on any rank; last = collectives this rank reached last)\n";
  if (!s.kernels.empty()) {
    out += "\nKernels across ranks (time per step):\n";
    std::snprintf(line, sizeof line, "%10s %10s %10s %9s %9s %7s  %s\n", "min", "median", "max",
                  "min rank", "max rank", "spread", "kernel");
    out += line;
    for (const KernelSpread& k : s.kernels) {
      const std::string name = k.name.size() > 70 ? k.name.substr(0, 67) + "..." : k.name;
      std::snprintf(line, sizeof line, "%10s %10s %10s %9lld %9lld %7s  %s\n",
                    FormatDuration(k.min_ns).c_str(), FormatDuration(k.median_ns).c_str(),
                    FormatDuration(k.max_ns).c_str(), static_cast<long long>(k.min_rank),
                    static_cast<long long>(k.max_rank), Pct(100.0 * k.spread).c_str(), name.c_str());
      out += line;
    }
  }
  out += "\nCross-rank findings: " + std::to_string(s.findings.size()) + "\n";
  for (const Finding& f : s.findings) {
    out += "* [" + f.id + "] " + f.title + "\n";
    out += "    concerns " + FormatDuration(f.time_ns) + " (" + Pct(100.0 * f.window_share) +
           " of a step), confidence " + f.confidence + "\n";
    std::string ev;
    for (const auto& [k, v] : f.evidence) ev += (ev.empty() ? "" : ", ") + k + "=" + FormatNumber(v);
    out += "    evidence: " + ev + "\n";
    for (const EventRef& r : f.examples) out += "    e.g. at " + std::to_string(r.ts_ns) + " ns: " + r.name + "\n";
    out += "    advice: " + f.recommendation + "\n";
  }
  for (const std::string& m : s.warnings) out += "warning: " + m + "\n";
  return out;
}

std::string CrossRankToMarkdown(const CrossRankSummary& s) {
  std::string out = "## kairos cross-rank summary (" + std::to_string(s.ranks) + " ranks)\n\n**" +
                    CrossRankVerdict(s) + "**\n\n";
  if (s.common_steps > 0) {
    out += "Steps " + std::to_string(s.first_step) + "-" + std::to_string(s.last_step) +
           ", median step " + FormatDuration(s.step_median_ns) + ", " +
           std::to_string(s.matched_collectives) + " collectives matched.\n\n";
  }
  out += "| rank | step | compute | communication | wait | transfer | exposed | idle | overlap | last arrivals |\n"
         "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const RankRow& r : s.rows) {
    out += "| " + std::to_string(r.rank) + " | " + FormatDuration(r.step_median_ns) + " | " +
           FormatDuration(r.compute_ns) + " | " + FormatDuration(r.comm_ns) + " | " +
           FormatDuration(r.comm_wait_ns) + " | " + FormatDuration(r.comm_transfer_ns) + " | " +
           FormatDuration(r.exposed_comm_ns) + " | " + FormatDuration(r.idle_ns) + " | " +
           Pct(r.overlap_pct) + " | " + std::to_string(r.last_arrivals) + " |\n";
  }
  if (!s.kernels.empty()) {
    out += "\n| kernel | min | median | max | min rank | max rank | spread |\n|---|---:|---:|---:|---:|---:|---:|\n";
    for (const KernelSpread& k : s.kernels) {
      out += "| `" + k.name + "` | " + FormatDuration(k.min_ns) + " | " + FormatDuration(k.median_ns) +
             " | " + FormatDuration(k.max_ns) + " | " + std::to_string(k.min_rank) + " | " +
             std::to_string(k.max_rank) + " | " + Pct(100.0 * k.spread) + " |\n";
    }
  }
  out += "\nTimes are per step.\n\n### Cross-rank findings (" + std::to_string(s.findings.size()) + ")\n\n";
  for (const Finding& f : s.findings) {
    out += "- **" + f.title + "** (`" + f.id + "`, " + f.confidence + " confidence, " +
           Pct(100.0 * f.window_share) + " of a step)\n  - evidence:";
    for (const auto& [k, v] : f.evidence) out += " " + k + "=" + FormatNumber(v);
    out += "\n  - advice: " + f.recommendation + "\n";
  }
  for (const std::string& m : s.warnings) out += "\n> warning: " + m + "\n";
  return out;
}

}  // namespace kairos
