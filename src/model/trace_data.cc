// File: trace_data.cc — see trace_data.h.
#include "model/trace_data.h"

#include <algorithm>

namespace kairos {

uint32_t TraceData::AddTrack(Track track) {
  tracks.push_back(std::move(track));
  events_by_track.emplace_back();
  return static_cast<uint32_t>(tracks.size() - 1);
}

const CollectiveRecord* TraceData::FindCollective(uint32_t correlation) const {
  auto it = std::lower_bound(
      collectives.begin(), collectives.end(), correlation,
      [](const CollectiveRecord& c, uint32_t id) { return c.correlation < id; });
  return it != collectives.end() && it->correlation == correlation ? &*it : nullptr;
}

void SortCollectives(TraceData& data) {
  std::stable_sort(data.collectives.begin(), data.collectives.end(),
                   [](const CollectiveRecord& a, const CollectiveRecord& b) {
                     return a.correlation < b.correlation;
                   });
}

size_t TraceData::EventCount() const {
  size_t n = 0;
  for (const auto& v : events_by_track) n += v.size();
  return n;
}

void TraceData::SortTracks() {
  // Sources append already-sorted runs (a thread's ranges, then the CUPTI runtime calls on
  // the same thread), so most tracks are sorted or two sorted runs: those take one pass or
  // one merge instead of a full sort. inplace_merge is stable (first run first on ties), so
  // the order is exactly stable_sort's.
  for (auto& v : events_by_track) {
    auto mid = std::is_sorted_until(v.begin(), v.end(), EventBefore);
    if (mid == v.end()) continue;
    if (std::is_sorted(mid, v.end(), EventBefore)) std::inplace_merge(v.begin(), mid, v.end(), EventBefore);
    else std::stable_sort(v.begin(), v.end(), EventBefore);
  }
}

const Event EventMerger::kExhausted = {std::numeric_limits<int64_t>::max(),
                                       std::numeric_limits<int64_t>::min(),
                                       0, 0, 0, 0, kNoDetail, EventKind::kCount, 0, 0};

EventMerger::EventMerger(const TraceData& data) {
  for (uint32_t t = 0; t < data.events_by_track.size(); ++t) {
    const auto& v = data.events_by_track[t];
    if (v.empty()) continue;
    cur_.push_back(v.data());
    end_.push_back(v.data() + v.size());
    track_.push_back(t);
  }
  size_t k = 1;
  while (k < cur_.size()) k *= 2;
  cur_.resize(k, &kExhausted);
  end_.resize(k, nullptr);
  track_.resize(k, 0);
  tree_.assign(k, 0);
  tree_[0] = Build(1);
}

// Plays the matches below `node` (leaves are cur_.size() + i); stores each match's loser
// at its node and returns the winner.
uint32_t EventMerger::Build(size_t node) {
  const size_t k = cur_.size();
  if (node >= k) return static_cast<uint32_t>(node - k);
  const uint32_t a = Build(2 * node), b = Build(2 * node + 1);
  if (Beats(b, a)) {
    tree_[node] = a;
    return b;
  }
  tree_[node] = b;
  return a;
}

}  // namespace kairos
