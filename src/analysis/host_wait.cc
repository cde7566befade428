// File: host_wait.cc
// Layer: kairos_analysis (internal). Names what the host was doing while the GPU waited
// for it: the CPU range with the most *self* time (time not inside a child range) during
// each device's host-wait intervals. ProfilerStep ranges are skipped; they enclose all.
// Threading: calling thread only.
#include <algorithm>

#include "analysis/analysis_context.h"
#include "analysis/python_frames.h"

namespace kairos::internal {
namespace {

// Covered length of sorted disjoint intervals before time t, via prefix sums.
class Coverage {
 public:
  explicit Coverage(std::vector<Interval> iv) : iv_(std::move(iv)) {
    prefix_.reserve(iv_.size() + 1);
    prefix_.push_back(0);
    for (const Interval& i : iv_) prefix_.push_back(prefix_.back() + (i.end_ns - i.start_ns));
  }
  int64_t Before(int64_t t) const {
    auto it = std::upper_bound(iv_.begin(), iv_.end(), t,
                               [](int64_t v, const Interval& i) { return v < i.start_ns; });
    const size_t k = static_cast<size_t>(it - iv_.begin());  // intervals starting <= t
    if (k == 0) return 0;
    const Interval& last = iv_[k - 1];
    return prefix_[k - 1] + (std::min(t, last.end_ns) - last.start_ns);
  }
  int64_t Overlap(int64_t s, int64_t e) const { return e > s ? Before(e) - Before(s) : 0; }
  bool empty() const { return iv_.empty(); }

  // Overlap for a track's events in start order, without two binary searches per event (they
  // were most of this pass): a cursor follows the starts, and each end is found by galloping
  // forward from it (ranges are short next to the whole window). Same sums as Overlap.
  class Scan {
   public:
    explicit Scan(const Coverage& c) : c_(c) {}
    int64_t Overlap(int64_t s, int64_t e) {
      if (e <= s) return 0;
      const size_t n = c_.iv_.size();
      if (s < last_s_) {  // not in start order after all: search afresh
        k_ = static_cast<size_t>(
            std::upper_bound(c_.iv_.begin(), c_.iv_.end(), s,
                             [](int64_t v, const Interval& i) { return v < i.start_ns; }) -
            c_.iv_.begin());
      }
      last_s_ = s;
      while (k_ < n && c_.iv_[k_].start_ns <= s) ++k_;  // intervals starting <= s
      // First interval starting after e, at or after k_: gallop, then binary search.
      size_t lo = k_, step = 1, hi = k_;
      while (hi < n && c_.iv_[hi].start_ns <= e) {
        lo = hi + 1;
        hi += step;
        step *= 2;
      }
      if (hi > n) hi = n;
      const auto it = std::upper_bound(c_.iv_.begin() + static_cast<std::ptrdiff_t>(lo),
                                       c_.iv_.begin() + static_cast<std::ptrdiff_t>(hi), e,
                                       [](int64_t v, const Interval& i) { return v < i.start_ns; });
      const size_t ke = static_cast<size_t>(it - c_.iv_.begin());
      return c_.BeforeAt(ke, e) - c_.BeforeAt(k_, s);
    }

   private:
    const Coverage& c_;
    size_t k_ = 0;
    int64_t last_s_ = INT64_MIN;
  };

 private:
  // Before(t) given k = the number of intervals starting at or before t.
  int64_t BeforeAt(size_t k, int64_t t) const {
    if (k == 0) return 0;
    const Interval& last = iv_[k - 1];
    return prefix_[k - 1] + (std::min(t, last.end_ns) - last.start_ns);
  }

 public:

 private:
  std::vector<Interval> iv_;
  std::vector<int64_t> prefix_;
};

// The name with the most *self* time during the waits among the thread events `keep`
// selects: each event's overlap minus that of the kept events nested inside it. Ties go to
// the smaller name, so the answer does not depend on hash order. 0 when nothing overlaps.
template <typename Keep>
StringId TopSelfName(const TraceData& data, const Coverage& cov, Keep keep) {
  absl::flat_hash_map<StringId, int64_t> self;
  struct Open {
    int64_t end_ns;
    StringId name;
  };
  std::vector<Open> stack;
  for (size_t t = 0; t < data.tracks.size() && t < data.events_by_track.size(); ++t) {
    if (data.tracks[t].type != TrackType::kThread) continue;
    stack.clear();
    Coverage::Scan scan(cov);  // a track's events come in start order
    for (const Event& e : data.events_by_track[t]) {
      if (!keep(e)) continue;
      while (!stack.empty() && stack.back().end_ns <= e.start_ns) stack.pop_back();
      const int64_t ov = scan.Overlap(e.start_ns, e.end_ns);
      if (ov > 0) {
        self[e.name] += ov;
        if (!stack.empty()) self[stack.back().name] -= ov;
      }
      stack.push_back({e.end_ns, e.name});
    }
  }
  StringId best = 0;
  int64_t best_ns = 0;
  for (const auto& [name, ns] : self) {
    if (ns > best_ns || (ns == best_ns && ns > 0 && data.strings.Get(name) < data.strings.Get(best))) {
      best = name;
      best_ns = ns;
    }
  }
  return best_ns > 0 ? best : 0;
}

// The user's code site (frame and line) with the most self time during the waits: "the line of
// my script the GPU waited on". A site is a user frame's own time (line unknown), a library
// frame it called (the user's line is that frame's "Python caller line": torch internals count
// for the line that called them) or an operator it called directly (the op's "Python line").
// Sites nest (a user frame under a library frame): each counts its self time only.
std::string TopUserSite(const TraceData& data, const Coverage& cov) {
  struct Open {
    int64_t end_ns;
    uint8_t what;  // 0 op, 1 user frame, 2 library frame
    StringId frame;  // the user frame this entry is in (or is)
    int32_t site;    // index in `sites` when it is one, else -1
    int32_t nearest;  // the innermost site at or under this entry (O(1) for deep stacks), or -1
  };
  std::vector<std::pair<uint64_t, int64_t>> sites;  // (frame << 32 | line, self ns)
  absl::flat_hash_map<uint64_t, int32_t> site_of;
  absl::flat_hash_map<StringId, bool> user;
  std::vector<Open> stack;
  for (size_t t = 0; t < data.tracks.size() && t < data.events_by_track.size(); ++t) {
    if (data.tracks[t].type != TrackType::kThread) continue;
    stack.clear();
    Coverage::Scan scan(cov);
    for (const Event& e : data.events_by_track[t]) {
      const bool op = e.kind == EventKind::kCpuOp;
      if (!op && (e.kind != EventKind::kPythonFunction || e.detail >= data.python_frames.size())) continue;
      while (!stack.empty() && stack.back().end_ns <= e.start_ns) stack.pop_back();
      auto [u, fresh] = user.try_emplace(e.name, false);
      if (fresh && !op) u->second = IsUserPythonFrame(data.strings.Get(e.name));
      const uint8_t what = op ? 0 : u->second ? 1 : 2;
      // The innermost open Python frame, and whether an op was opened inside it already.
      const Open* py = nullptr;
      bool op_inside = false;
      for (auto it = stack.rbegin(); it != stack.rend() && py == nullptr; ++it) {
        if (it->what == 0) op_inside = true; else py = &*it;
      }
      const int32_t enclosing = stack.empty() ? -1 : stack.back().nearest;
      Open o{e.end_ns, what, py != nullptr ? py->frame : 0, -1, enclosing};
      uint32_t line = 0;
      bool is_site = what == 1;
      if (what == 1) {
        o.frame = e.name;
      } else if (py != nullptr && py->what == 1 && !op_inside) {
        is_site = true;
        line = op ? (e.detail < data.cpu_args.size() ? data.cpu_args[e.detail].py_line : 0)
                  : data.python_frames[e.detail].caller_line;
      }
      if (is_site) {
        const uint64_t key = (static_cast<uint64_t>(o.frame) << 32) | line;
        auto [it, added] = site_of.try_emplace(key, static_cast<int32_t>(sites.size()));
        if (added) sites.push_back({key, 0});
        o.site = o.nearest = it->second;
        const int64_t ov = scan.Overlap(e.start_ns, e.end_ns);
        sites[static_cast<size_t>(o.site)].second += ov;
        if (enclosing >= 0) sites[static_cast<size_t>(enclosing)].second -= ov;  // its self time
      }
      stack.push_back(o);
    }
  }
  const std::pair<uint64_t, int64_t>* best = nullptr;
  for (const auto& s : sites) {
    if (s.second <= 0) continue;
    if (best == nullptr || s.second > best->second || (s.second == best->second && s.first < best->first)) best = &s;
  }
  return best != nullptr ? PythonSiteKeyLabel(data, best->first) : std::string();
}

}  // namespace

std::string TopUserSiteDuring(const TraceData& data, std::vector<Interval> intervals) {
  if (data.python_frames.empty() || intervals.empty()) return std::string();
  return TopUserSite(data, Coverage(std::move(intervals)));
}

void AttributeHostWaits(const AnalysisContext& ctx, Summary* summary) {
  const TraceData& data = *ctx.data;
  for (size_t di = 0; di < ctx.devices.size(); ++di) {
    std::vector<Interval> waits;
    // Reserved at the exact count (one per host-bound gap, up to one per GPU op): grown by
    // doubling, the old and new arrays were the analysis' peak.
    const std::vector<IdleGap>& gaps = ctx.devices[di].gaps;
    waits.reserve(static_cast<size_t>(
        std::count_if(gaps.begin(), gaps.end(), [](const IdleGap& g) { return g.host_wait_ns > 0; })));
    for (const IdleGap& g : ctx.devices[di].gaps) {
      if (g.host_wait_ns > 0) waits.push_back({g.start_ns, g.start_ns + g.host_wait_ns});
    }
    if (waits.empty()) continue;
    const Coverage cov(std::move(waits));
    const StringId best = TopSelfName(data, cov, [&](const Event& e) {
      return IsCpuRange(e.kind) && !ctx.IsStepName(e.name);
    });
    if (best != 0) summary->devices[di].host_wait_top_range = std::string(data.strings.Get(best));
    if (!data.python_frames.empty()) {
      summary->devices[di].host_wait_top_python = TopUserSite(data, cov);
    }
  }
}

}  // namespace kairos::internal
