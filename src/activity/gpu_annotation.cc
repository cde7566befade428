// File: gpu_annotation.cc
// Layer: kairos_activity. See gpu_annotation.h.
// Threading: session thread only.
#include "activity/gpu_annotation.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace kairos::internal {
namespace {

struct Range {
  uint32_t parent = 0;  // external id of the enclosing range on the same thread, 0 = none
  StringId name = 0;
  bool annotation = false;  // kUserAnnotation: projected; kCpuOp: only links its children
};

struct Key {
  uint32_t range;
  uint32_t track;
  bool operator==(const Key& o) const { return range == o.range && track == o.track; }
  template <typename H>
  friend H AbslHashValue(H h, const Key& k) {
    return H::combine(std::move(h), k.range, k.track);
  }
};

struct Span {
  int64_t first_start;
  int64_t last_end;
};

}  // namespace

size_t ProjectGpuAnnotations(TraceData& data) {
  // CPU ranges by id, with their parents from a stack walk over each thread in time order.
  absl::flat_hash_map<uint32_t, Range> ranges;
  for (size_t t = 0; t < data.tracks.size(); ++t) {
    if (data.tracks[t].type != TrackType::kThread) continue;
    const std::vector<Event>& evs = data.events_by_track[t];
    std::vector<uint32_t> order;
    for (uint32_t i = 0; i < evs.size(); ++i) {
      const Event& e = evs[i];
      if ((e.kind == EventKind::kUserAnnotation || e.kind == EventKind::kCpuOp) &&
          e.external_id != 0) {
        order.push_back(i);
      }
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return EventBefore(evs[a], evs[b]); });
    std::vector<const Event*> stack;
    for (uint32_t i : order) {
      const Event& e = evs[i];
      while (!stack.empty() && stack.back()->end_ns < e.end_ns) stack.pop_back();
      Range r;
      r.parent = stack.empty() ? 0 : stack.back()->external_id;
      r.name = e.name;
      r.annotation = e.kind == EventKind::kUserAnnotation;
      ranges.emplace(e.external_id, r);
      stack.push_back(&e);
    }
  }
  if (ranges.empty()) return 0;

  // (range id, GPU track) -> span of the GPU work it launched.
  absl::flat_hash_map<Key, Span> spans;
  std::vector<Key> order;  // first-seen order keeps the output deterministic
  for (uint32_t t = 0; t < data.tracks.size(); ++t) {
    if (data.tracks[t].type != TrackType::kGpuStream) continue;
    for (const Event& e : data.events_by_track[t]) {
      if (e.kind != EventKind::kKernel && e.kind != EventKind::kMemcpy &&
          e.kind != EventKind::kMemset) {
        continue;
      }
      uint32_t id = e.external_id;
      for (int depth = 0; id != 0 && depth < 256; ++depth) {
        auto it = ranges.find(id);
        if (it == ranges.end()) break;
        if (it->second.annotation) {
          auto [s, inserted] = spans.try_emplace(Key{id, t}, Span{e.start_ns, e.end_ns});
          if (inserted) {
            order.push_back(Key{id, t});
          } else {
            s->second.first_start = std::min(s->second.first_start, e.start_ns);
            s->second.last_end = std::max(s->second.last_end, e.end_ns);
          }
        }
        id = it->second.parent;
      }
    }
  }

  for (const Key& k : order) {
    const Span& s = spans[k];
    Event e{};
    e.kind = EventKind::kGpuUserAnnotation;
    e.start_ns = s.first_start - 1;
    e.end_ns = s.last_end + 1;
    e.name = ranges[k.range].name;
    e.track = k.track;
    e.correlation = 0;
    e.external_id = k.range;
    e.detail = kNoDetail;
    e.flags = kFlagNone;
    e.aux = 0;
    data.events_by_track[k.track].push_back(e);
  }
  return order.size();
}

}  // namespace kairos::internal
