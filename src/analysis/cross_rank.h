// File: cross_rank.h
// Layer: kairos_analysis. Cross-rank analysis of a multi-rank (data-parallel) job: one
// trace per rank in, one CrossRankSummary out: per-rank step time, compute, communication
// (wait for other ranks separated from transfer) and idle per step, compute/communication
// overlap, the straggler rank and the time the job loses per step because of it, load
// imbalance, and the findings straggler_rank, rank_imbalance, exposed_communication.
// Memory: a caller reads one rank's TraceData, extracts its small RankProfile (steps, GPU
// intervals, one record per collective kernel) and drops the TraceData before reading the
// next rank, so an N-rank job never holds more than one trace plus N profiles.
// Threading: pure functions of their arguments.
#ifndef KAIROS_SRC_ANALYSIS_CROSS_RANK_H_
#define KAIROS_SRC_ANALYSIS_CROSS_RANK_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "analysis/summary.h"
#include "util/rank_name.h"
#include "model/trace_data.h"

namespace kairos {

struct RankInterval {
  int64_t start_ns = 0, end_ns = 0;
};

struct RankStep {
  int64_t step = 0;  // N of ProfilerStep#N
  int64_t start_ns = 0, end_ns = 0;
};

// One collective kernel (class nccl/communication) on one rank.
struct RankCollective {
  std::string name;       // kernel name; the k-th instance of a name in a step matches across ranks
  int64_t launch_ns = 0;  // start of its launch call (correlation), else the kernel start
  int64_t start_ns = 0, end_ns = 0;
  int64_t step = -1;      // ProfilerStep containing launch_ns; -1 = none
};

// One kernel name's time per step on one rank (cross_rank_kernels.cc).
struct RankKernel {
  std::string name;
  int64_t total_ns = 0;
  std::vector<std::pair<int64_t, int64_t>> steps;  // (step, time), by step
};

struct RankProfile {
  std::string source;  // file the profile came from
  int64_t rank = -1;   // distributedInfo rank, else ".rank<R>" in the file name, else -1
  int64_t world_size = 0;
  std::string host;
  std::vector<RankStep> steps;                 // complete steps, by start
  std::vector<RankInterval> compute, comm, other;  // GPU work, merged (disjoint, sorted)
  std::vector<RankCollective> collectives;     // by kernel start
  std::vector<RankKernel> kernels;             // the names with the most time, by time
};

// Kernels across ranks: one kernel name's time per common step on every rank.
struct KernelSpread {
  std::string name;
  int64_t min_ns = 0, median_ns = 0, max_ns = 0;  // over ranks, per step (median: lower)
  int64_t min_rank = 0, max_rank = 0;
  double spread = 0;  // (max - min) / median
};

// `source` names the file (for reports and the ".rank<R>" fallback).
RankProfile ExtractRankProfile(const TraceData& data, const std::string& source);

// Thresholds; docs/SUMMARY.md (cross-rank section) gives the reasoning.
struct CrossRankOptions {
  // straggler_rank: one rank arrives last at >= this share of the matched collectives ...
  double straggler_min_last_share = 0.5;
  // ... and the job loses >= this share of the median step time per step because of it.
  double straggler_min_step_share = 0.02;
  // rank_imbalance: (max - min) / mean compute per step across ranks.
  double imbalance_min_spread = 0.1;
  // exposed_communication: communication not overlapped by compute, per step, mean over
  // ranks, as a share of the median step time.
  double exposed_min_step_share = 0.1;
  size_t max_examples = 3;
};

struct RankRow {
  int64_t rank = 0;
  std::string source, host;
  uint64_t steps = 0;            // common steps found on this rank
  int64_t step_median_ns = 0;    // over the common steps
  // Per step (totals over the common steps / their count):
  int64_t compute_ns = 0;        // union of compute kernels
  int64_t comm_ns = 0;           // union of communication kernels
  int64_t comm_wait_ns = 0;      // matched collectives: duration - shortest on any rank
  int64_t comm_transfer_ns = 0;  // matched collectives: shortest duration on any rank
  int64_t exposed_comm_ns = 0;   // communication while no compute runs
  int64_t idle_ns = 0;           // no GPU work at all
  double overlap_pct = 0;        // share of communication time overlapped by compute
  uint64_t last_arrivals = 0;    // matched collectives this rank reached last
};

struct CrossRankSummary {
  uint64_t ranks = 0;
  uint64_t common_steps = 0;     // step numbers present on every rank
  int64_t first_step = -1, last_step = -1;
  int64_t step_median_ns = 0;    // median over ranks of their median step
  uint64_t matched_collectives = 0;  // instances found on every rank
  std::vector<RankRow> rows;     // by rank
  int64_t straggler_rank = -1;   // -1 = none named
  int64_t straggler_candidate = -1;  // rank last most often (even when not named)
  double straggler_last_share = 0;
  int64_t lost_ns_per_step = 0;  // time the job loses per step waiting for the candidate
  double compute_spread = 0;     // (max - min) / mean compute per step
  std::vector<Finding> findings; // device = rank for rank-specific ones; largest share first
  std::vector<KernelSpread> kernels;  // by max_ns; needs common steps and 2+ ranks
  std::vector<std::string> warnings;  // e.g. ranks missing, no common steps
};

// cross_rank_kernels.cc: the rank's kernels per step (after its steps are sorted), and their
// distribution over the ranks (`ids[i]` is ranks[i]'s rank id), the top_n by max_ns.
void ExtractRankKernels(const TraceData& data, RankProfile* profile);
std::vector<KernelSpread> KernelDistribution(const std::vector<RankProfile>& ranks,
                                             const std::vector<int64_t>& ids,
                                             const std::set<int64_t>& common, size_t top_n);

CrossRankSummary AnalyzeRanks(const std::vector<RankProfile>& ranks,
                              const CrossRankOptions& options = {});
// One line: the straggler and its cost, or that there is none.
std::string CrossRankVerdict(const CrossRankSummary& s);
std::string CrossRankToJson(const CrossRankSummary& s);
std::string CrossRankToText(const CrossRankSummary& s);
std::string CrossRankToMarkdown(const CrossRankSummary& s);

}  // namespace kairos

#endif  // KAIROS_SRC_ANALYSIS_CROSS_RANK_H_
