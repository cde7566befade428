// File: hotspots.cc
// Layer: kairos_analysis (internal). Top kernels, memcpys and CPU ranges by total time, with
// count, mean, nearest-rank median and p95.
// Threading: calling thread only.
#include <algorithm>

#include "analysis/analysis_context.h"

namespace kairos::internal {
namespace {

using Durations = absl::flat_hash_map<StringId, std::vector<int64_t>>;

// Per table, a count per name; runs of one name (a kernel launched in a loop) skip the hash
// probe. A map keyed by the table, probed per event, was half of this pass.
struct NameCounts {
  absl::flat_hash_map<StringId, size_t> by_name;
  StringId last = 0;
  size_t pending = 0;  // occurrences of `last` not yet added to by_name
  void Add(StringId name) {
    if (pending != 0 && name == last) {
      ++pending;
      return;
    }
    if (pending != 0) by_name[last] += pending;
    last = name;
    pending = 1;
  }
  void Flush() {
    if (pending != 0) by_name[last] += pending;
    pending = 0;
  }
};

// The top rows of one table: ranked by total first, order statistics for the shown rows only.
void TopRows(const AnalysisContext& ctx, Durations& by_name, std::vector<Hotspot>* out) {
  const TraceData& data = *ctx.data;
  std::vector<std::pair<int64_t, StringId>> totals;
  totals.reserve(by_name.size());
  for (auto& [name, d] : by_name) {
    int64_t t = 0;
    for (int64_t v : d) t += v;
    totals.emplace_back(t, name);
  }
  auto order = [&](const std::pair<int64_t, StringId>& a, const std::pair<int64_t, StringId>& b) {
    if (a.first != b.first) return a.first > b.first;
    return data.strings.Get(a.second) < data.strings.Get(b.second);
  };
  const size_t n = std::min(ctx.options->top_n, totals.size());
  std::partial_sort(totals.begin(), totals.begin() + n, totals.end(), order);
  for (size_t i = 0; i < n; ++i) {
    Hotspot h;
    h.name = std::string(data.strings.Get(totals[i].second));
    h.stats = StatsOf(by_name[totals[i].second]);
    out->push_back(std::move(h));
  }
}

}  // namespace

void ComputeHotspots(const AnalysisContext& ctx, Summary* summary) {
  Durations kernels, memcpys, cpu;
  const TraceData& data = *ctx.data;
  // Visits every duration with its table: run twice, to count each name's durations and
  // reserve them, then to store them. Grown by doubling instead, the largest vectors held an
  // old and a new array at once at the analysis' peak (one duration per GPU op and CPU range).
  auto visit = [&](auto&& add) {
    for (const DeviceWork& dw : ctx.devices) {
      for (const GpuOp& op : dw.ops) {
        const int64_t ns = ctx.End(op) - ctx.Start(op);
        if (op.event->kind == EventKind::kKernel) add(kernels, op.event->name, ns);
        else if (op.event->kind == EventKind::kMemcpy) add(memcpys, op.event->name, ns);
      }
    }
    for (size_t t = 0; t < data.tracks.size() && t < data.events_by_track.size(); ++t) {
      if (data.tracks[t].type != TrackType::kThread) continue;
      for (const Event& e : data.events_by_track[t]) {
        if (!IsCpuRange(e.kind)) continue;
        if (ctx.IsStepName(e.name)) continue;  // steps have their own section
        const int64_t s = std::max(e.start_ns, ctx.window_start_ns);
        const int64_t en = std::min(e.end_ns, ctx.window_end_ns);
        if (en >= s) add(cpu, e.name, en - s);
      }
    }
  };
  NameCounts k_counts, m_counts, c_counts;
  auto counts_of = [&](const Durations& table) -> NameCounts& {
    return &table == &kernels ? k_counts : &table == &memcpys ? m_counts : c_counts;
  };
  visit([&](Durations& table, StringId name, int64_t) { counts_of(table).Add(name); });
  for (Durations* table : {&kernels, &memcpys, &cpu}) {
    NameCounts& c = counts_of(*table);
    c.Flush();
    for (const auto& [name, n] : c.by_name) (*table)[name].reserve(n);
    c.by_name = {};
  }
  // The same runs skip the probe when storing.
  struct Last {
    StringId name = 0;
    std::vector<int64_t>* v = nullptr;
  } k_last, m_last, c_last;
  visit([&](Durations& table, StringId name, int64_t d) {
    Last& l = &table == &kernels ? k_last : &table == &memcpys ? m_last : c_last;
    if (l.v == nullptr || l.name != name) {
      l.v = &table[name];  // reserved above: no insert, so the pointer stays valid
      l.name = name;
    }
    l.v->push_back(d);
  });
  TopRows(ctx, kernels, &summary->top_kernels);
  TopRows(ctx, memcpys, &summary->top_memcpys);
  TopRows(ctx, cpu, &summary->top_cpu_ranges);
}

}  // namespace kairos::internal
