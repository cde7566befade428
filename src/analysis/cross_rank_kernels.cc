// File: cross_rank_kernels.cc
// Layer: kairos_analysis. Kernels across ranks (docs/SUMMARY.md, "Cross-rank analysis"):
// per kernel name, its time per step on each rank and the distribution of that over the
// ranks (min / median / max rank, spread), so one rank's slow kernel stands out (HTA's
// kernel-distribution view). Extraction keeps, per rank, the kernelsKeptPerRank names with
// the most time, each as (step, time) pairs: bounded whatever the trace's size.
// Threading: pure functions.
#include <algorithm>
#include <unordered_map>

#include "analysis/cross_rank.h"

namespace kairos {
namespace {
constexpr size_t kKernelsKeptPerRank = 64;
}  // namespace

void ExtractRankKernels(const TraceData& data, RankProfile* p) {
  // Time per (name, step) of the kernels that start inside a complete step (steps sorted).
  std::unordered_map<std::string_view, std::unordered_map<int64_t, int64_t>> per;
  for (size_t t = 0; t < data.tracks.size(); ++t) {
    if (data.tracks[t].type != TrackType::kGpuStream) continue;
    for (const Event& e : data.events_by_track[t]) {
      if (e.kind != EventKind::kKernel) continue;
      auto it = std::upper_bound(p->steps.begin(), p->steps.end(), e.start_ns,
                                 [](int64_t v, const RankStep& s) { return v < s.start_ns; });
      if (it == p->steps.begin() || e.start_ns >= std::prev(it)->end_ns) continue;
      per[data.strings.Get(e.name)][std::prev(it)->step] += e.end_ns - e.start_ns;
    }
  }
  for (auto& [name, steps] : per) {
    RankKernel k;
    k.name = std::string(name);
    for (const auto& [step, ns] : steps) {
      k.steps.push_back({step, ns});
      k.total_ns += ns;
    }
    std::sort(k.steps.begin(), k.steps.end());
    p->kernels.push_back(std::move(k));
  }
  std::sort(p->kernels.begin(), p->kernels.end(), [](const RankKernel& a, const RankKernel& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  if (p->kernels.size() > kKernelsKeptPerRank) p->kernels.resize(kKernelsKeptPerRank);
}

std::vector<KernelSpread> KernelDistribution(const std::vector<RankProfile>& ranks,
                                             const std::vector<int64_t>& ids,
                                             const std::set<int64_t>& common, size_t top_n) {
  std::vector<KernelSpread> out;
  if (ranks.size() < 2 || common.empty()) return out;
  std::unordered_map<std::string, size_t> index;
  std::vector<std::vector<int64_t>> per_rank;  // per name, per rank: time per common step
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (const RankKernel& k : ranks[r].kernels) {
      int64_t sum = 0;
      for (const auto& [step, ns] : k.steps)
        if (common.count(step) != 0) sum += ns;
      auto [it, fresh] = index.try_emplace(k.name, per_rank.size());
      if (fresh) per_rank.emplace_back(ranks.size(), 0);
      per_rank[it->second][r] = sum / static_cast<int64_t>(common.size());
    }
  }
  for (const auto& [name, i] : index) {
    const std::vector<int64_t>& v = per_rank[i];
    KernelSpread k;
    k.name = name;
    size_t lo = 0, hi = 0;
    for (size_t r = 1; r < v.size(); ++r) {
      if (v[r] < v[lo] || (v[r] == v[lo] && ids[r] < ids[lo])) lo = r;
      if (v[r] > v[hi] || (v[r] == v[hi] && ids[r] < ids[hi])) hi = r;
    }
    std::vector<int64_t> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    k.min_ns = v[lo];
    k.max_ns = v[hi];
    k.min_rank = ids[lo];
    k.max_rank = ids[hi];
    k.median_ns = sorted[(sorted.size() - 1) / 2];  // lower median: an actual rank's value
    k.spread = k.median_ns > 0
                   ? static_cast<double>(k.max_ns - k.min_ns) / static_cast<double>(k.median_ns)
                   : 0;
    out.push_back(std::move(k));
  }
  std::sort(out.begin(), out.end(), [](const KernelSpread& a, const KernelSpread& b) {
    return a.max_ns != b.max_ns ? a.max_ns > b.max_ns : a.name < b.name;
  });
  if (out.size() > top_n) out.resize(top_n);
  return out;
}

}  // namespace kairos
