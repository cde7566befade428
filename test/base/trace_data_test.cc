// Tests for src/trace_data.h: track bookkeeping and the time-ordered merge.
#include "trace_data.h"

#include <catch2/catch.hpp>
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

TEST_CASE("AddStat accumulates") {
  TraceData d;
  d.AddStat("cpu_dropped", 3);
  d.AddStat("cpu_dropped", 4);
  CHECK(d.stats.at("cpu_dropped") == 7);
}

}  // namespace kairos
