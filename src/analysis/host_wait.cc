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

// The user's Python frame with the most time during the waits (library frames count for the
// user frame that called them: "the line of my script the GPU waited on").
std::string TopUserFrame(const TraceData& data, const Coverage& cov) {
  absl::flat_hash_map<StringId, bool> user;
  const StringId best = TopSelfName(data, cov, [&](const Event& e) {
    if (e.kind != EventKind::kPythonFunction) return false;
    auto [it, fresh] = user.try_emplace(e.name, false);
    if (fresh) it->second = IsUserPythonFrame(data.strings.Get(e.name));
    return it->second;
  });
  return best != 0 ? PythonFrameLabel(data.strings.Get(best)) : std::string();
}

}  // namespace

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
      summary->devices[di].host_wait_top_python = TopUserFrame(data, cov);
    }
  }
}

}  // namespace kairos::internal
