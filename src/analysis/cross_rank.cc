// File: cross_rank.cc
// Layer: kairos_analysis. ExtractRankProfile and AnalyzeRanks (cross_rank.h); the metric
// definitions are in docs/SUMMARY.md, "Cross-rank analysis".
// Threading: pure functions.
#include "analysis/cross_rank.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "analysis/format.h"
#include "analysis/kernel_class.h"
#include "util/rank_name.h"

namespace kairos {
namespace {

constexpr std::string_view kStepPrefix = "ProfilerStep#";
constexpr size_t kCrossRankKernelRows = 10;  // the "kernels" table

// Sorts and merges overlapping intervals into a disjoint sorted list.
std::vector<RankInterval> Merge(std::vector<RankInterval> v) {
  std::sort(v.begin(), v.end(), [](const RankInterval& a, const RankInterval& b) {
    return a.start_ns < b.start_ns;
  });
  std::vector<RankInterval> out;
  for (const RankInterval& i : v) {
    if (i.end_ns <= i.start_ns) continue;
    if (!out.empty() && i.start_ns <= out.back().end_ns) {
      out.back().end_ns = std::max(out.back().end_ns, i.end_ns);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

// Intersection of two disjoint sorted lists.
std::vector<RankInterval> Intersect(const std::vector<RankInterval>& a,
                                    const std::vector<RankInterval>& b) {
  std::vector<RankInterval> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t s = std::max(a[i].start_ns, b[j].start_ns);
    const int64_t e = std::min(a[i].end_ns, b[j].end_ns);
    if (s < e) out.push_back({s, e});
    if (a[i].end_ns < b[j].end_ns) ++i; else ++j;
  }
  return out;
}

// Length of a disjoint sorted list inside [lo, hi).
int64_t Covered(const std::vector<RankInterval>& v, int64_t lo, int64_t hi) {
  auto it = std::lower_bound(v.begin(), v.end(), lo,
                             [](const RankInterval& x, int64_t t) { return x.end_ns <= t; });
  int64_t sum = 0;
  for (; it != v.end() && it->start_ns < hi; ++it) {
    sum += std::min(it->end_ns, hi) - std::max(it->start_ns, lo);
  }
  return sum;
}

int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];  // lower median: an exact recorded value
}

bool ParseStep(std::string_view name, int64_t* step) {
  if (name.substr(0, kStepPrefix.size()) != kStepPrefix) return false;
  std::string_view digits = name.substr(kStepPrefix.size());
  if (digits.empty()) return false;
  int64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *step = v;
  return true;
}

}  // namespace

RankProfile ExtractRankProfile(const TraceData& data, const std::string& source) {
  RankProfile p;
  p.source = source;
  p.host = data.host_name;
  // DistributedInfo defaults to rank 0 of 1: trust it only when the trace said something.
  if (!data.distributed.backend.empty() || data.distributed.world_size > 1) {
    p.rank = data.distributed.rank;
    p.world_size = data.distributed.world_size;
  } else {
    p.rank = RankFromFileName(source);
  }
  std::vector<RankInterval> compute, comm, other;
  std::unordered_map<uint32_t, size_t> by_correlation;  // collective correlation -> index
  for (size_t t = 0; t < data.tracks.size(); ++t) {
    const Track& track = data.tracks[t];
    for (const Event& e : data.events_by_track[t]) {
      if (e.kind == EventKind::kUserAnnotation && track.type == TrackType::kThread) {
        int64_t step = 0;
        if ((e.flags & kFlagUnfinished) == 0 && ParseStep(data.strings.Get(e.name), &step)) {
          p.steps.push_back({step, e.start_ns, e.end_ns});
        }
        continue;
      }
      if (track.type != TrackType::kGpuStream) continue;
      const RankInterval iv{e.start_ns, e.end_ns};
      if (e.kind == EventKind::kKernel) {
        const std::string_view name = data.strings.Get(e.name);
        if (IsCommunicationClass(ClassifyKernelName(name))) {
          comm.push_back(iv);
          RankCollective c;
          c.name = std::string(name);
          c.launch_ns = c.start_ns = e.start_ns;
          c.end_ns = e.end_ns;
          if (e.correlation != 0) by_correlation[e.correlation] = p.collectives.size();
          p.collectives.push_back(std::move(c));
        } else {
          compute.push_back(iv);
        }
      } else if (e.kind == EventKind::kMemcpy || e.kind == EventKind::kMemset) {
        other.push_back(iv);
      }
    }
  }
  // The launch call places a collective in the step that issued it: GPU work of step N
  // may run after the host has begun step N+1.
  if (!by_correlation.empty()) {
    for (size_t t = 0; t < data.tracks.size(); ++t) {
      for (const Event& e : data.events_by_track[t]) {
        if ((e.kind != EventKind::kRuntime && e.kind != EventKind::kDriver) || e.correlation == 0) continue;
        auto it = by_correlation.find(e.correlation);
        if (it != by_correlation.end()) p.collectives[it->second].launch_ns = e.start_ns;
      }
    }
  }
  std::sort(p.steps.begin(), p.steps.end(),
            [](const RankStep& a, const RankStep& b) { return a.start_ns < b.start_ns; });
  // One range per step number (a step marked on two threads counts once, the earlier one).
  {
    std::unordered_set<int64_t> seen;
    p.steps.erase(std::remove_if(p.steps.begin(), p.steps.end(),
                                 [&](const RankStep& s) { return !seen.insert(s.step).second; }),
                  p.steps.end());
  }
  std::stable_sort(p.collectives.begin(), p.collectives.end(),
                   [](const RankCollective& a, const RankCollective& b) { return a.start_ns < b.start_ns; });
  for (RankCollective& c : p.collectives) {
    auto it = std::upper_bound(p.steps.begin(), p.steps.end(), c.launch_ns,
                               [](int64_t t, const RankStep& s) { return t < s.start_ns; });
    if (it != p.steps.begin() && c.launch_ns < std::prev(it)->end_ns) c.step = std::prev(it)->step;
  }
  p.compute = Merge(std::move(compute));
  p.comm = Merge(std::move(comm));
  p.other = Merge(std::move(other));
  ExtractRankKernels(data, &p);
  return p;
}

namespace {

// One rank's analysis windows: its common steps, or its whole GPU span when the ranks share
// no step (step number -1).
std::vector<RankStep> Windows(const RankProfile& p, const std::set<int64_t>& common) {
  std::vector<RankStep> w;
  if (!common.empty()) {
    for (const RankStep& s : p.steps) {
      if (common.count(s.step) != 0) w.push_back(s);
    }
    return w;
  }
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const auto* v : {&p.compute, &p.comm, &p.other}) {
    if (v->empty()) continue;
    lo = std::min(lo, v->front().start_ns);
    hi = std::max(hi, v->back().end_ns);
  }
  if (lo < hi) w.push_back({-1, lo, hi});
  return w;
}

Finding MakeFinding(const char* id, std::string title, int64_t rank, const char* confidence,
                    int64_t time_ns, double share) {
  Finding f;
  f.id = id;
  f.title = std::move(title);
  f.device = rank;
  f.confidence = confidence;
  f.time_ns = time_ns;
  f.window_share = std::min(1.0, std::max(0.0, share));
  return f;
}

// Rank ids: the trace's own, else the file name's, else the input position; a duplicate
// (two files claiming one rank) falls back to the position so rows stay distinct.
std::vector<int64_t> AssignRankIds(const std::vector<RankProfile>& ranks,
                                   std::vector<std::string>* warnings) {
  std::vector<int64_t> ids(ranks.size());
  std::set<int64_t> seen;
  for (size_t i = 0; i < ranks.size(); ++i) {
    ids[i] = ranks[i].rank >= 0 && seen.count(ranks[i].rank) == 0 ? ranks[i].rank : -1;
    if (ids[i] >= 0) seen.insert(ids[i]);
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ids[i] >= 0) continue;
    int64_t r = static_cast<int64_t>(i);
    while (seen.count(r) != 0) ++r;
    ids[i] = r;
    seen.insert(r);
    warnings->push_back(ranks[i].source + ": no rank in the trace or file name; using rank " +
                        std::to_string(r));
  }
  return ids;
}

// Steps present on every rank (aligned by ProfilerStep number, not by time).
std::set<int64_t> CommonSteps(const std::vector<RankProfile>& ranks) {
  std::set<int64_t> common;
  for (const RankStep& st : ranks[0].steps) common.insert(st.step);
  for (size_t i = 1; i < ranks.size(); ++i) {
    std::set<int64_t> mine;
    for (const RankStep& st : ranks[i].steps) {
      if (common.count(st.step) != 0) mine.insert(st.step);
    }
    common.swap(mine);
  }
  return common;
}

// One rank's time split over its windows, per step.
void FillTimeSplit(const RankProfile& p, const std::set<int64_t>& common, int64_t nsteps,
                   RankRow* row) {
  const std::vector<RankStep> windows = Windows(p, common);
  row->steps = common.empty() ? 0 : windows.size();
  std::vector<int64_t> durations;
  std::vector<RankInterval> all = p.compute;
  all.insert(all.end(), p.comm.begin(), p.comm.end());
  all.insert(all.end(), p.other.begin(), p.other.end());
  all = Merge(std::move(all));
  const std::vector<RankInterval> overlap = Intersect(p.comm, p.compute);
  int64_t compute = 0, comm = 0, overlapped = 0, idle = 0;
  for (const RankStep& w : windows) {
    durations.push_back(w.end_ns - w.start_ns);
    compute += Covered(p.compute, w.start_ns, w.end_ns);
    comm += Covered(p.comm, w.start_ns, w.end_ns);
    overlapped += Covered(overlap, w.start_ns, w.end_ns);
    idle += (w.end_ns - w.start_ns) - Covered(all, w.start_ns, w.end_ns);
  }
  row->step_median_ns = Median(durations);
  row->compute_ns = compute / nsteps;
  row->comm_ns = comm / nsteps;
  row->exposed_comm_ns = (comm - overlapped) / nsteps;
  row->idle_ns = idle / nsteps;
  row->overlap_pct = Percent(overlapped, comm);
}

// The collective where one rank arrived last, and what the job lost to it.
struct LastArrival {
  int64_t lost, ts;
  std::string name;
  size_t rank;
};

// What matching the collective instances across ranks gives, per rank (input order).
struct CollectiveMatch {
  std::vector<int64_t> wait, transfer, lost_by;
  std::vector<LastArrival> examples;
  std::set<int64_t> matched_steps;
};

// Collective instances: the k-th kernel of one name launched in step N is the same
// collective on every rank (each rank issues its collectives in the same order).
CollectiveMatch MatchCollectives(const std::vector<RankProfile>& ranks,
                                 const std::set<int64_t>& common, CrossRankSummary* s) {
  const size_t n = ranks.size();
  using Key = std::tuple<int64_t, std::string, int64_t>;
  std::map<Key, std::vector<const RankCollective*>> instances;
  for (size_t i = 0; i < n; ++i) {
    std::map<std::pair<int64_t, std::string>, int64_t> next_k;
    for (const RankCollective& c : ranks[i].collectives) {
      const int64_t step = common.empty() ? -1 : c.step;
      if (!common.empty() && common.count(step) == 0) continue;
      const int64_t k = next_k[{step, c.name}]++;
      std::vector<const RankCollective*>& v = instances[Key{step, c.name, k}];
      if (v.empty()) v.assign(n, nullptr);
      v[i] = &c;
    }
  }
  CollectiveMatch m;
  m.wait.assign(n, 0);
  m.transfer.assign(n, 0);
  m.lost_by.assign(n, 0);
  for (const auto& [key, v] : instances) {
    if (std::any_of(v.begin(), v.end(), [](const RankCollective* c) { return c == nullptr; })) continue;
    ++s->matched_collectives;
    m.matched_steps.insert(std::get<0>(key));
    // The rank that enqueues last waits least: its kernel is the shortest, and that
    // shortest duration is the pure transfer every rank paid.
    size_t last = 0;
    int64_t shortest = INT64_MAX, second = INT64_MAX;
    for (size_t i = 0; i < n; ++i) {
      const int64_t d = v[i]->end_ns - v[i]->start_ns;
      if (d < shortest) {
        second = shortest;
        shortest = d;
        last = i;
      } else if (d < second) {
        second = d;
      }
    }
    for (size_t i = 0; i < n; ++i) {
      m.wait[i] += (v[i]->end_ns - v[i]->start_ns) - shortest;
      m.transfer[i] += shortest;
    }
    // Without the last rank, the collective would have started when the second-last rank
    // arrived: the gap between them is what the job lost to it. A tie names no one.
    if (n >= 2 && second > shortest) {
      ++s->rows[last].last_arrivals;
      m.lost_by[last] += second - shortest;
      m.examples.push_back({second - shortest, v[last]->start_ns, std::get<1>(key), last});
    }
  }
  return m;
}

// straggler_rank: one rank arrives last at most collectives and costs the job a share of
// each step.
void AddStragglerFinding(const CollectiveMatch& m, int64_t comm_steps, const CrossRankOptions& o,
                         CrossRankSummary* s) {
  const size_t n = s->rows.size();
  if (n < 2 || s->matched_collectives == 0) return;
  size_t cand = 0;
  for (size_t i = 1; i < n; ++i) {
    if (s->rows[i].last_arrivals > s->rows[cand].last_arrivals) cand = i;
  }
  s->straggler_candidate = s->rows[cand].rank;
  s->straggler_last_share = static_cast<double>(s->rows[cand].last_arrivals) / s->matched_collectives;
  s->lost_ns_per_step = m.lost_by[cand] / comm_steps;
  const double step_share = s->step_median_ns > 0 ? double(s->lost_ns_per_step) / s->step_median_ns : 0;
  if (s->straggler_last_share < o.straggler_min_last_share || step_share < o.straggler_min_step_share) {
    return;
  }
  s->straggler_rank = s->straggler_candidate;
  int64_t others_wait = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i != cand) others_wait += s->rows[i].comm_wait_ns;
  }
  others_wait /= static_cast<int64_t>(n - 1);
  Finding f = MakeFinding(
      "straggler_rank",
      "Rank " + std::to_string(s->straggler_rank) + " is a straggler: the other ranks wait " +
          FormatDuration(s->lost_ns_per_step) + " per step for it in their collectives",
      s->straggler_rank, s->straggler_last_share >= 0.8 ? "high" : "medium", m.lost_by[cand], step_share);
  f.evidence = {{"last_arrival_share", s->straggler_last_share},
                {"matched_collectives", double(s->matched_collectives)},
                {"lost_ns_per_step", double(s->lost_ns_per_step)},
                {"median_step_ns", double(s->step_median_ns)},
                {"straggler_comm_wait_ns_per_step", double(s->rows[cand].comm_wait_ns)},
                {"others_comm_wait_ns_per_step", double(others_wait)},
                {"straggler_compute_ns_per_step", double(s->rows[cand].compute_ns)}};
  std::vector<LastArrival> mine;
  for (const LastArrival& e : m.examples) {
    if (e.rank == cand) mine.push_back(e);
  }
  std::stable_sort(mine.begin(), mine.end(),
                   [](const LastArrival& a, const LastArrival& b) { return a.lost > b.lost; });
  for (size_t k = 0; k < mine.size() && k < o.max_examples; ++k) f.examples.push_back({0, mine[k].ts, mine[k].name});
  f.recommendation =
      "Every collective waits for the slowest rank, so the whole job runs at its pace. Compare rank " +
      std::to_string(s->straggler_rank) +
      "'s step with the others' (its own summary: host-bound gaps, data loading, a slower or "
      "throttled GPU, other processes on its host) and balance its work; if it is always the "
      "same host, check that machine.";
  s->findings.push_back(std::move(f));
}

// rank_imbalance: compute per step spread across ranks.
void AddImbalanceFinding(int64_t nsteps, const CrossRankOptions& o, CrossRankSummary* s) {
  const size_t n = s->rows.size();
  if (n < 2) return;
  size_t lo = 0, hi = 0;
  int64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    total += s->rows[i].compute_ns;
    if (s->rows[i].compute_ns < s->rows[lo].compute_ns) lo = i;
    if (s->rows[i].compute_ns > s->rows[hi].compute_ns) hi = i;
  }
  const double mean = double(total) / n;
  const int64_t diff = s->rows[hi].compute_ns - s->rows[lo].compute_ns;
  s->compute_spread = mean > 0 ? diff / mean : 0;
  const double step_share = s->step_median_ns > 0 ? double(diff) / s->step_median_ns : 0;
  if (s->compute_spread < o.imbalance_min_spread || step_share < o.straggler_min_step_share) return;
  Finding f = MakeFinding(
      "rank_imbalance",
      "Load imbalance: rank " + std::to_string(s->rows[hi].rank) + " computes " +
          FormatDuration(diff) + " per step more than rank " + std::to_string(s->rows[lo].rank),
      -1, s->rows[hi].rank == s->straggler_rank ? "high" : "medium", diff * nsteps, step_share);
  f.evidence = {{"max_rank", double(s->rows[hi].rank)},
                {"max_compute_ns_per_step", double(s->rows[hi].compute_ns)},
                {"min_rank", double(s->rows[lo].rank)},
                {"min_compute_ns_per_step", double(s->rows[lo].compute_ns)},
                {"mean_compute_ns_per_step", mean},
                {"spread", s->compute_spread}};
  f.recommendation =
      "Ranks with less GPU work per step wait for the busiest one at the next collective. "
      "Give every rank the same work: equal batch and sequence lengths (pack or bucket "
      "variable-length samples), an even split of layers or experts, no rank-0-only work "
      "(logging, evaluation, checkpointing) inside the step.";
  s->findings.push_back(std::move(f));
}

// exposed_communication: communication with no compute under it, mean over ranks.
void AddExposedCommFinding(int64_t nsteps, const CrossRankOptions& o, CrossRankSummary* s) {
  const size_t n = s->rows.size();
  int64_t exposed = 0, wait_sum = 0, transfer_sum = 0;
  double overlap = 0;
  for (const RankRow& r : s->rows) {
    exposed += r.exposed_comm_ns;
    wait_sum += r.comm_wait_ns;
    transfer_sum += r.comm_transfer_ns;
    overlap += r.overlap_pct;
  }
  exposed /= static_cast<int64_t>(n);
  wait_sum /= static_cast<int64_t>(n);
  transfer_sum /= static_cast<int64_t>(n);
  overlap /= n;
  const double step_share = s->step_median_ns > 0 ? double(exposed) / s->step_median_ns : 0;
  if (step_share < o.exposed_min_step_share) return;
  const double wait_share = wait_sum + transfer_sum > 0 ? double(wait_sum) / (wait_sum + transfer_sum) : 0;
  Finding f = MakeFinding("exposed_communication",
                          "Exposed communication: " + FormatDuration(exposed) +
                              " per step of collectives run with no compute to hide them",
                          -1, "high", exposed * nsteps, step_share);
  f.evidence = {{"exposed_ns_per_step", double(exposed)},
                {"median_step_ns", double(s->step_median_ns)},
                {"overlap_pct", overlap},
                {"comm_wait_ns_per_step", double(wait_sum)},
                {"comm_transfer_ns_per_step", double(transfer_sum)},
                {"wait_share", wait_share}};
  f.recommendation =
      wait_share >= 0.5
          ? "Most of the collective time is waiting for another rank, not moving data: fix the "
            "slowest rank (straggler_rank, rank_imbalance) before tuning communication."
          : "Overlap communication with compute: let DDP/FSDP issue gradient all-reduces during "
            "the backward pass (bucket sizes, no find_unused_parameters), prefetch FSDP "
            "all-gathers, and avoid synchronising the stream right after a collective.";
  s->findings.push_back(std::move(f));
}

}  // namespace

CrossRankSummary AnalyzeRanks(const std::vector<RankProfile>& ranks, const CrossRankOptions& o) {
  CrossRankSummary s;
  s.ranks = ranks.size();
  if (ranks.empty()) return s;
  const std::vector<int64_t> ids = AssignRankIds(ranks, &s.warnings);
  const int64_t world = ranks[0].world_size;
  if (world > 0 && static_cast<int64_t>(ranks.size()) < world) {
    s.warnings.push_back("world_size is " + std::to_string(world) + " but " +
                         std::to_string(ranks.size()) + " rank traces were given");
  }
  const std::set<int64_t> common = CommonSteps(ranks);
  if (common.empty()) {
    s.warnings.push_back("no ProfilerStep#N is present on every rank; each rank's whole GPU span is one window");
  } else {
    s.first_step = *common.begin();
    s.last_step = *common.rbegin();
  }
  s.common_steps = common.size();
  const int64_t nsteps = std::max<int64_t>(1, static_cast<int64_t>(common.size()));

  const size_t n = ranks.size();
  s.rows.resize(n);
  std::vector<int64_t> step_medians;
  for (size_t i = 0; i < n; ++i) {
    RankRow& row = s.rows[i];
    row.rank = ids[i];
    row.source = ranks[i].source;
    row.host = ranks[i].host;
    FillTimeSplit(ranks[i], common, nsteps, &row);
    step_medians.push_back(row.step_median_ns);
  }
  s.step_median_ns = Median(step_medians);

  const CollectiveMatch m = MatchCollectives(ranks, common, &s);
  // Waits and losses are known only for the steps whose collectives were found on every rank
  // (a rank's window can miss the collective of an edge step): per step means per such step.
  const int64_t comm_steps =
      common.empty() ? nsteps : std::max<int64_t>(1, static_cast<int64_t>(m.matched_steps.size()));
  for (size_t i = 0; i < n; ++i) {
    s.rows[i].comm_wait_ns = m.wait[i] / comm_steps;
    s.rows[i].comm_transfer_ns = m.transfer[i] / comm_steps;
  }
  AddStragglerFinding(m, comm_steps, o, &s);
  AddImbalanceFinding(nsteps, o, &s);
  AddExposedCommFinding(nsteps, o, &s);
  std::stable_sort(s.findings.begin(), s.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.window_share > b.window_share; });
  // Rows by rank.
  std::sort(s.rows.begin(), s.rows.end(), [](const RankRow& a, const RankRow& b) { return a.rank < b.rank; });
  s.kernels = KernelDistribution(ranks, ids, common, kCrossRankKernelRows);
  return s;
}

}  // namespace kairos
