// Tests for src/model/trace_data.h: track bookkeeping and the time-ordered merge.
#include "model/trace_data.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <limits>
#include <tuple>
#include <vector>

namespace kairos {
namespace {
Event Ev(int64_t start, int64_t end, StringId name) {
  Event e{};
  e.start_ns = start;
  e.end_ns = end;
  e.name = name;
  e.detail = kNoDetail;
  e.kind = EventKind::kUserAnnotation;
  return e;
}
}  // namespace

TEST_CASE("SortTracks puts enclosing ranges before what they enclose") {
  TraceData d;
  uint32_t t = d.AddTrack(Track{});
  d.events_by_track[t] = {Ev(20, 30, 3), Ev(10, 40, 1), Ev(10, 15, 2)};
  d.SortTracks();
  const auto& v = d.events_by_track[t];
  REQUIRE(v.size() == 3);
  CHECK(v[0].name == 1);  // [10,40] encloses [10,15]
  CHECK(v[1].name == 2);
  CHECK(v[2].name == 3);
}

TEST_CASE("EventMerger yields every event once in global time order") {
  TraceData d;
  uint32_t a = d.AddTrack(Track{});
  uint32_t b = d.AddTrack(Track{});
  uint32_t c = d.AddTrack(Track{});  // stays empty
  d.events_by_track[a] = {Ev(1, 5, 1), Ev(7, 8, 2), Ev(20, 21, 3)};
  d.events_by_track[b] = {Ev(0, 2, 4), Ev(7, 9, 5), Ev(30, 31, 6)};
  CHECK(d.EventCount() == 6);
  EventMerger m(d);
  const Event* e;
  uint32_t track;
  std::vector<StringId> names;
  std::vector<uint32_t> tracks;
  while (m.Next(&e, &track)) {
    names.push_back(e->name);
    tracks.push_back(track);
  }
  // At ts 7 the longer event (track b, ends 9) comes first.
  CHECK(names == std::vector<StringId>{4, 1, 5, 2, 3, 6});
  CHECK(tracks == std::vector<uint32_t>{b, a, b, a, a, b});
  (void)c;
  CHECK_FALSE(m.Next(&e, &track));
}

TEST_CASE("EventMerger on an empty trace") {
  TraceData d;
  d.AddTrack(Track{});
  EventMerger m(d);
  const Event* e;
  uint32_t track;
  CHECK_FALSE(m.Next(&e, &track));
}

TEST_CASE("EventMerger breaks exact ties by track index, across padding and empty tracks") {
  // 5 non-empty tracks (the tree pads to 8) with empty ones between them; every track holds
  // the same three (start, end) keys, so every output position is a tie decided by index.
  TraceData d;
  std::vector<uint32_t> nonempty;
  for (uint32_t t = 0; t < 9; ++t) {
    d.AddTrack(Track{});
    if (t % 2 == 1) continue;  // tracks 1, 3, 5, 7 stay empty
    nonempty.push_back(t);
    d.events_by_track[t] = {Ev(10, 50, 100 + t), Ev(10, 20, 200 + t), Ev(30, 40, 300 + t)};
  }
  EventMerger m(d);
  const Event* e;
  uint32_t track;
  std::vector<uint32_t> tracks;
  std::vector<StringId> names;
  while (m.Next(&e, &track)) {
    tracks.push_back(track);
    names.push_back(e->name);
  }
  // (10,50) on every track in index order, then (10,20) likewise, then (30,40).
  std::vector<uint32_t> want_tracks;
  std::vector<StringId> want_names;
  for (StringId base : {100u, 200u, 300u})
    for (uint32_t t : nonempty) {
      want_tracks.push_back(t);
      want_names.push_back(base + t);
    }
  CHECK(tracks == want_tracks);
  CHECK(names == want_names);
  CHECK_FALSE(m.Next(&e, &track));
}

TEST_CASE("EventMerger yields an event with the most extreme key before exhausted tracks") {
  // The merger marks an exhausted track with a sentinel of key (INT64_MAX, INT64_MIN); an
  // event with that very key on a higher track must still come out, and exactly once.
  TraceData d;
  for (int t = 0; t < 3; ++t) d.AddTrack(Track{});
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  d.events_by_track[0] = {Ev(5, 6, 1)};
  d.events_by_track[2] = {Ev(7, 8, 2), Ev(kMax, kMin, 3)};
  EventMerger m(d);
  const Event* e;
  uint32_t track;
  std::vector<StringId> names;
  std::vector<uint32_t> tracks;
  while (m.Next(&e, &track)) {
    names.push_back(e->name);
    tracks.push_back(track);
  }
  CHECK(names == std::vector<StringId>{1, 2, 3});
  CHECK(tracks == std::vector<uint32_t>{0, 2, 2});
}

TEST_CASE("EventMerger order equals a stable sort by (start, longer first, track)") {
  // 1 to 40 tracks of random lengths with many duplicate keys; the reference is a stable
  // sort of all events tagged with their track, which is the documented order.
  uint32_t seed = 7;
  auto rnd = [&seed](uint32_t mod) {
    seed = seed * 1664525u + 1013904223u;
    return (seed >> 8) % mod;
  };
  for (uint32_t ntracks : {1u, 2u, 3u, 7u, 8u, 9u, 40u}) {
    TraceData d;
    std::vector<std::tuple<int64_t, int64_t, uint32_t, StringId>> all;
    StringId id = 1;
    for (uint32_t t = 0; t < ntracks; ++t) {
      d.AddTrack(Track{});
      const uint32_t n = rnd(4) == 0 ? 0 : rnd(200);
      for (uint32_t i = 0; i < n; ++i) {
        int64_t start = rnd(50), end = start + rnd(5);
        d.events_by_track[t].push_back(Ev(start, end, id++));
      }
      d.SortTracks();
      for (const Event& e : d.events_by_track[t]) all.emplace_back(e.start_ns, e.end_ns, t, e.name);
    }
    std::stable_sort(all.begin(), all.end(), [](const auto& x, const auto& y) {
      if (std::get<0>(x) != std::get<0>(y)) return std::get<0>(x) < std::get<0>(y);
      if (std::get<1>(x) != std::get<1>(y)) return std::get<1>(x) > std::get<1>(y);
      return std::get<2>(x) < std::get<2>(y);
    });
    EventMerger m(d);
    const Event* e;
    uint32_t track;
    size_t i = 0;
    bool same = true;
    while (m.Next(&e, &track)) {
      if (i >= all.size() || std::get<2>(all[i]) != track || std::get<3>(all[i]) != e->name) same = false;
      ++i;
    }
    INFO("tracks " << ntracks);
    CHECK(i == all.size());
    CHECK(same);
  }
}

TEST_CASE("AddStat accumulates") {
  TraceData d;
  d.AddStat("cpu_dropped", 3);
  d.AddStat("cpu_dropped", 4);
  CHECK(d.stats.at("cpu_dropped") == 7);
}

}  // namespace kairos
