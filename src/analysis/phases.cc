// File: phases.cc
// Layer: kairos_analysis (internal). Where each step went (docs/SUMMARY.md, "Step phases"):
// every instant of a ProfilerStep#N goes to one phase, by priority data loading (PyTorch's
// DataLoader `__next__` ranges, any thread) > optimizer (`Optimizer.step#` ranges) >
// backward (autograd engine ranges, any thread: the backward thread's included) > forward
// (operators on the step's own thread) > other host work; the phases therefore sum to the
// step exactly. GPU kernel time goes to the phase its launching CPU range started in. The
// data_loader_bound detector reads the result.
// Threading: calling thread only.
#include <algorithm>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "analysis/antipatterns.h"

namespace kairos::internal {
namespace {

constexpr std::string_view kDataLoaderMark = "DataLoader";
constexpr std::string_view kNextMark = "__next__";
constexpr std::string_view kOptimizerPrefix = "Optimizer.step#";
constexpr std::string_view kBackwardPrefix = "autograd::engine::evaluate_function:";

// The phase a CPU range marks (kPhaseOther: none). Forward needs the thread: decided by the
// caller.
int PhaseOfName(std::string_view name) {
  if (name.find(kDataLoaderMark) != std::string_view::npos &&
      name.find(kNextMark) != std::string_view::npos)
    return kPhaseDataLoading;
  if (name.substr(0, kOptimizerPrefix.size()) == kOptimizerPrefix) return kPhaseOptimizer;
  if (name.substr(0, kBackwardPrefix.size()) == kBackwardPrefix) return kPhaseBackward;
  return kPhaseOther;
}

struct Edge {
  int64_t t;
  int phase;
  int delta;  // +1 open, -1 close
};

struct Segment {
  int64_t start, end;
  int phase;
};

// CPU range start by external id, the first range seen with an id winning. Range ids are
// handed out by one counter, so they are usually dense: a flat array then (a hash map of
// millions of ranges was a third of the phase pass), else a sorted array.
class RangeStarts {
 public:
  explicit RangeStarts(std::vector<std::pair<uint32_t, int64_t>> starts) {
    if (starts.empty()) return;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (const auto& [id, t] : starts) {
      lo = std::min(lo, id);
      hi = std::max(hi, id);
    }
    if (uint64_t{hi} - lo < 2 * uint64_t{starts.size()} + 1024) {
      base_ = lo;
      dense_.assign(size_t{hi} - lo + 1, kNone);
      for (const auto& [id, t] : starts) {
        int64_t& slot = dense_[id - lo];
        if (slot == kNone) slot = t;
      }
      return;
    }
    std::stable_sort(starts.begin(), starts.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    starts.erase(std::unique(starts.begin(), starts.end(),
                             [](const auto& a, const auto& b) { return a.first == b.first; }),
                 starts.end());
    sorted_ = std::move(starts);
  }
  bool Find(uint32_t id, int64_t* t) const {
    if (!dense_.empty()) {
      if (id < base_ || id - base_ >= dense_.size() || dense_[id - base_] == kNone) return false;
      *t = dense_[id - base_];
      return true;
    }
    auto it = std::lower_bound(sorted_.begin(), sorted_.end(), id,
                               [](const auto& a, uint32_t v) { return a.first < v; });
    if (it == sorted_.end() || it->first != id) return false;
    *t = it->second;
    return true;
  }

 private:
  static constexpr int64_t kNone = INT64_MIN;
  uint32_t base_ = 0;
  std::vector<int64_t> dense_;
  std::vector<std::pair<uint32_t, int64_t>> sorted_;
};

// One step's host time by phase: its edges and its forward intervals (forward[fw_begin,
// fw_end), already in time order) swept together; the step's phase segments are appended to
// `segments` for the GPU attribution.
StepPhases SweepStep(const Step& st, std::vector<Edge>& ev, const std::vector<Interval>& forward,
                     size_t fw_begin, size_t fw_end, std::vector<Segment>* segments) {
  std::sort(ev.begin(), ev.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
  StepPhases row;
  row.step = st.number;
  row.duration_ns = st.end_ns - st.start_ns;
  int open[kNumPhases] = {};
  // Bit k set while open[k] > 0 (k != kPhaseOther): the phase now is its lowest set bit, since
  // phases are numbered by priority (a loop over the counts at every edge was a tenth of this
  // pass).
  static_assert(kPhaseOther == kNumPhases - 1, "other is the lowest priority");
  unsigned live = 0;
  auto add = [&](int phase, int delta) {
    open[phase] += delta;
    if (open[phase] > 0) {
      live |= 1u << phase;
    } else {
      live &= ~(1u << phase);
    }
  };
  // Every edge and forward bound closes at most one segment.
  segments->reserve(segments->size() + ev.size() + 2 * (fw_end - fw_begin) + 1);
  int64_t prev = st.start_ns;
  auto close_segment = [&](int64_t until) {
    if (until <= prev) return;
    const int p = live != 0 ? __builtin_ctz(live) : kPhaseOther;
    row.host_ns[p] += until - prev;
    if (!segments->empty() && segments->back().phase == p &&
        segments->back().end == prev) {
      segments->back().end = until;
    } else {
      segments->push_back({prev, until, p});
    }
    prev = until;
  };
  // Edges at one instant may be taken in any order: the first closes the segment up to
  // it, the rest close nothing (zero length), and the open counts after them are the same.
  size_t f = fw_begin;
  const size_t f_end = fw_end;
  bool f_open = false;  // inside forward[f] (its start taken, its end not yet)
  size_t o = 0;
  while (o < ev.size() || f < f_end) {
    const int64_t ft = f < f_end ? (f_open ? forward[f].end_ns : forward[f].start_ns) : INT64_MAX;
    if (o < ev.size() && ev[o].t <= ft) {
      close_segment(ev[o].t);
      add(ev[o].phase, ev[o].delta);
      ++o;
    } else {
      close_segment(ft);
      add(kPhaseForward, f_open ? -1 : +1);
      if (f_open) ++f;
      f_open = !f_open;
    }
  }
  close_segment(st.end_ns);
  std::vector<Edge>().swap(ev);
  return row;
}

// GPU time: each kernel to the phase its launching range started in.
void AttributeGpuTime(const AnalysisContext& ctx, const RangeStarts& range_start,
                      const std::vector<std::vector<Segment>>& segments, PhaseSummary* out) {
  for (const DeviceWork& dw : ctx.devices) {
    for (const GpuOp& g : dw.ops) {
      if (g.event->kind != EventKind::kKernel || g.event->external_id == 0) continue;
      int64_t t;
      if (!range_start.Find(g.event->external_id, &t)) continue;
      auto step = std::upper_bound(ctx.steps.begin(), ctx.steps.end(), t,
                                   [](int64_t v, const Step& s) { return v < s.start_ns; });
      if (step == ctx.steps.begin()) continue;
      const size_t si = static_cast<size_t>(step - ctx.steps.begin()) - 1;
      if (t >= ctx.steps[si].end_ns) continue;
      for (const Segment& sg : segments[si]) {
        if (t >= sg.start && t < sg.end) {
          out->steps[si].gpu_ns[sg.phase] += ctx.End(g) - ctx.Start(g);
          break;
        }
      }
    }
  }
}

// The track each step is on (its ProfilerStep#N range; UINT32_MAX when none), and each CPU
// range's start by its external id (kernels name their launching range).
std::vector<uint32_t> StepTracks(const AnalysisContext& ctx,
                                 std::vector<std::pair<uint32_t, int64_t>>* starts) {
  const TraceData& data = *ctx.data;
  absl::flat_hash_map<int64_t, uint32_t> step_track;
  for (uint32_t t = 0; t < data.events_by_track.size(); ++t) {
    for (const Event& e : data.events_by_track[t]) {
      if (!IsCpuRange(e.kind)) continue;
      if (e.external_id != 0) starts->emplace_back(e.external_id, e.start_ns);
      int64_t n = 0;
      if (e.kind == EventKind::kUserAnnotation && ctx.IsStepName(e.name) &&
          ParseStepName(ctx.Name(e), &n))
        step_track.emplace(n, t);
    }
  }
  std::vector<uint32_t> own_track(ctx.steps.size(), UINT32_MAX);
  for (size_t si = 0; si < ctx.steps.size(); ++si) {
    auto it = step_track.find(ctx.steps[si].number);
    if (it != step_track.end()) own_track[si] = it->second;
  }
  return own_track;
}

}  // namespace

void ComputePhases(const AnalysisContext& ctx, Summary* summary) {
  if (ctx.steps.empty()) return;
  const TraceData& data = *ctx.data;
  std::vector<std::pair<uint32_t, int64_t>> starts;  // (external id, start), first seen first
  const std::vector<uint32_t> own_track = StepTracks(ctx, &starts);
  const RangeStarts range_start(std::move(starts));
  PhaseSummary& out = summary->phases;
  // One pass over the CPU ranges: each phase range adds its edges to the steps it overlaps
  // (steps are sorted and disjoint: a binary search finds the first). Forward takes only the
  // outermost operators of a track (events come enclosing-first), so nesting adds no edges.
  // Forward ranges, nearly all of them, are kept as intervals in one array instead: a step's
  // come from its own track only, in time order and disjoint, so they are one contiguous run
  // already sorted (fw_begin/fw_end), and the sweep merges them with the few other edges
  // (sorting two edges per operator was most of this pass).
  std::vector<std::vector<Edge>> edges(ctx.steps.size());
  std::vector<Interval> forward;
  std::vector<size_t> fw_begin(ctx.steps.size(), 0), fw_end(ctx.steps.size(), 0);
  // A name's phase, decided once per name (the string searches cost more than the rest of
  // the pass when done per range).
  std::vector<int8_t> name_phase(data.strings.size(), -1);
  for (uint32_t t = 0; t < data.events_by_track.size(); ++t) {
    int64_t forward_end = INT64_MIN;
    for (const Event& e : data.events_by_track[t]) {
      if (!IsCpuRange(e.kind) || e.end_ns <= e.start_ns) continue;
      int p;
      if (e.name < name_phase.size()) {
        if (name_phase[e.name] < 0) name_phase[e.name] = static_cast<int8_t>(PhaseOfName(ctx.Name(e)));
        p = name_phase[e.name];
      } else {
        p = PhaseOfName(ctx.Name(e));
      }
      if (p == kPhaseOther) {
        if (e.kind != EventKind::kCpuOp || e.start_ns < forward_end) continue;
        p = kPhaseForward;
        forward_end = e.end_ns;
      }
      auto first = std::upper_bound(ctx.steps.begin(), ctx.steps.end(), e.start_ns,
                                    [](int64_t v, const Step& s) { return v < s.start_ns; });
      if (first != ctx.steps.begin() && (first - 1)->end_ns > e.start_ns) --first;
      for (auto st = first; st != ctx.steps.end() && st->start_ns < e.end_ns; ++st) {
        const size_t si = static_cast<size_t>(st - ctx.steps.begin());
        if (p == kPhaseForward) {
          if (own_track[si] != t) continue;
          if (fw_end[si] == 0) fw_begin[si] = forward.size();
          forward.push_back({std::max(e.start_ns, st->start_ns), std::min(e.end_ns, st->end_ns)});
          fw_end[si] = forward.size();
          continue;
        }
        edges[si].push_back({std::max(e.start_ns, st->start_ns), p, +1});
        edges[si].push_back({std::min(e.end_ns, st->end_ns), p, -1});
      }
    }
  }
  std::vector<std::vector<Segment>> segments(ctx.steps.size());
  for (size_t si = 0; si < ctx.steps.size(); ++si) {
    out.steps.push_back(SweepStep(ctx.steps[si], edges[si], forward, fw_begin[si], fw_end[si],
                                  &segments[si]));
  }
  AttributeGpuTime(ctx, range_start, segments, &out);
  const double n = static_cast<double>(out.steps.size());
  for (int k = 0; k < kNumPhases; ++k) {
    double host = 0, gpu = 0;
    for (const StepPhases& r : out.steps) {
      host += static_cast<double>(r.host_ns[k]);
      gpu += static_cast<double>(r.gpu_ns[k]);
    }
    out.mean_host_ns[k] = static_cast<int64_t>(host / n + 0.5);
    out.mean_gpu_ns[k] = static_cast<int64_t>(gpu / n + 0.5);
  }
  out.present = true;
}

// data_loader_bound: data loading is a large share of the steps while the GPU (if any) idles
// under it.
void DataLoaderBound(const AnalysisContext& ctx, Summary* summary) {
  const PhaseSummary& ph = summary->phases;
  if (!ph.present) return;
  const AnalysisOptions& o = *ctx.options;
  int64_t data_ns = 0, step_ns = 0, gpu_busy_ns = 0;
  for (const StepPhases& r : ph.steps) {
    data_ns += r.host_ns[kPhaseDataLoading];
    step_ns += r.duration_ns;
  }
  if (step_ns <= 0 || data_ns <= 0) return;
  const double share = static_cast<double>(data_ns) / static_cast<double>(step_ns);
  if (share < o.data_loader_min_share) return;
  // GPU busy during data loading: GPU work overlapping the DataLoader ranges (merged, so a
  // binary search finds the ones each GPU op meets).
  std::vector<Interval> loads;
  for (const auto& track : ctx.data->events_by_track) {
    for (const Event& e : track) {
      if (IsCpuRange(e.kind) && PhaseOfName(ctx.Name(e)) == kPhaseDataLoading)
        loads.push_back({e.start_ns, e.end_ns});
    }
  }
  std::sort(loads.begin(), loads.end(),
            [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  std::vector<Interval> merged;
  for (const Interval& l : loads) {
    if (!merged.empty() && l.start_ns <= merged.back().end_ns) {
      merged.back().end_ns = std::max(merged.back().end_ns, l.end_ns);
    } else {
      merged.push_back(l);
    }
  }
  for (const DeviceWork& dw : ctx.devices) {
    for (const GpuOp& g : dw.ops) {
      const int64_t gs = ctx.Start(g), ge = ctx.End(g);
      auto it = std::lower_bound(merged.begin(), merged.end(), gs,
                                 [](const Interval& l, int64_t v) { return l.end_ns <= v; });
      for (; it != merged.end() && it->start_ns < ge; ++it)
        gpu_busy_ns += std::min(it->end_ns, ge) - std::max(it->start_ns, gs);
    }
  }
  const double gpu_busy = static_cast<double>(gpu_busy_ns) /
                          static_cast<double>(data_ns * std::max<size_t>(1, ctx.devices.size()));
  if (gpu_busy >= o.data_loader_max_gpu_busy) return;
  FindingBuilder b(ctx, "data_loader_bound", "Steps wait for the data loader", -1);
  b.Impact(data_ns, share >= 2 * o.data_loader_min_share ? "high" : "medium");
  b.Evidence("data_loading_share_of_step", share)
      .Evidence("data_loading_ns_per_step", static_cast<double>(ph.mean_host_ns[kPhaseDataLoading]))
      .Evidence("mean_step_ns", static_cast<double>(step_ns) / static_cast<double>(ph.steps.size()))
      .Evidence("gpu_busy_during_loading", std::min(1.0, gpu_busy))
      .Evidence("steps", static_cast<double>(ph.steps.size()));
  std::string host;
  if (summary->host.present) {
    int cores = 0;
    for (const CounterTrack& t : ctx.data->counter_tracks)
      if (t.name.rfind("cpu.util.core", 0) == 0) ++cores;
    b.Evidence("host_cpu_util_pct", summary->host.cpu_util_mean_pct)
        .Evidence("process_cpu_pct_of_one_core", summary->host.process_cpu_mean_pct);
    if (cores > 0) b.Evidence("host_cores", cores);
    host =
        summary->host.cpu_util_mean_pct < 70
            ? " The host CPUs are not saturated (" +
                  std::to_string(static_cast<int>(summary->host.cpu_util_mean_pct)) +
                  "% busy): more DataLoader workers (num_workers, up to the free cores) will help."
            : " The host CPUs are busy (" +
                  std::to_string(static_cast<int>(summary->host.cpu_util_mean_pct)) +
                  "%): more workers will not help; make each sample cheaper (decode, augment on "
                  "the GPU) or cache.";
  }
  summary->findings.push_back(b.Done(
      "Each step spends a large share of its time fetching the next batch while the GPU has "
      "nothing to do. Load in background processes (DataLoader num_workers > 0, "
      "persistent_workers=True), prefetch (prefetch_factor), pin host memory (pin_memory=True, "
      "with non_blocking copies)." +
      host));
}

}  // namespace kairos::internal

namespace kairos {
const char* PhaseId(int phase) {
  switch (phase) {
    case kPhaseDataLoading:
      return "data_loading";
    case kPhaseOptimizer:
      return "optimizer";
    case kPhaseBackward:
      return "backward";
    case kPhaseForward:
      return "forward";
    default:
      return "other";
  }
}
}  // namespace kairos
