// File: trace_data.cc — see trace_data.h.
#include "trace_data.h"

#include <algorithm>

namespace kairos {

uint32_t TraceData::AddTrack(Track track) {
  tracks.push_back(std::move(track));
  events_by_track.emplace_back();
  return static_cast<uint32_t>(tracks.size() - 1);
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

EventMerger::EventMerger(const TraceData& data) {
  for (uint32_t t = 0; t < data.events_by_track.size(); ++t) {
    const auto& v = data.events_by_track[t];
    if (!v.empty()) heap_.push_back(Head{v.data(), v.data() + v.size(), t});
  }
  for (size_t i = heap_.size(); i-- > 0;) SiftDown(i);
}

bool EventMerger::Less(const Head& a, const Head& b) const {
  if (EventBefore(*a.cur, *b.cur)) return true;
  if (EventBefore(*b.cur, *a.cur)) return false;
  return a.track < b.track;
}

void EventMerger::SiftDown(size_t i) {
  const size_t n = heap_.size();
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && Less(heap_[l], heap_[m])) m = l;
    if (r < n && Less(heap_[r], heap_[m])) m = r;
    if (m == i) return;
    std::swap(heap_[i], heap_[m]);
    i = m;
  }
}

bool EventMerger::Next(const Event** event, uint32_t* track_index) {
  if (heap_.empty()) return false;
  Head& top = heap_[0];
  *event = top.cur;
  *track_index = top.track;
  if (++top.cur == top.end) {
    heap_[0] = heap_.back();
    heap_.pop_back();
  }
  if (!heap_.empty()) SiftDown(0);
  return true;
}

}  // namespace kairos
