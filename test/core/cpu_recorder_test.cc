// File: cpu_recorder_test.cc
// Layer: test/core. The CPU recorder alone (no session): nesting, names, drops, window
// edges, cross-thread ranges, ProfilerStep#N, NVTX-style args, many threads.
// Threading: single-threaded except the multi-thread cases, which join before collecting.
#include "activity/cpu_recorder.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace kairos::internal {
namespace {

// One session of the recorder with a fixed 1 tick = 1 ns clock anchored at 0.
struct Session {
  explicit Session(size_t ring_records) : rec(CpuRecorderOptions{ring_records, 64}) {
    REQUIRE(rec.StartWarmup(Config{}).ok());
    rec.StartRecording(0);
    start_raw = ReadRawClock();
  }
  TraceData Finish(uint64_t end = 0) {
    end_raw = end ? end : ReadRawClock();
    rec.StopRecording(0);
    ClockConverter clock;
    clock.SetForTest(0, 0, 1.0);
    rec.SetWindow(start_raw, end_raw, clock, false);
    TraceData data;
    rec.Collect(data);
    data.SortTracks();
    rec.Reset();
    return data;
  }
  CpuRecorder rec;
  uint64_t start_raw = 0, end_raw = 0;
};

std::string NameOf(const TraceData& d, const Event& e) { return std::string(d.strings.Get(e.name)); }

TEST_CASE("disabled recorder records nothing and reports no open range") {
  REQUIRE(g_cpu_epoch.load() == 0);
  PushRange("x");
  CHECK(CurrentCpuRangeId() == 0);
  PopRange();
  CHECK(StartRange("y") == 0);
}

TEST_CASE("nested ranges, marks and names") {
  Session s(1024);
  PushRange("outer");
  const uint32_t outer_id = CurrentCpuRangeId();
  PushRange("inner");
  const uint32_t inner_id = CurrentCpuRangeId();
  Mark("tick");
  PopRange();
  CHECK(CurrentCpuRangeId() == outer_id);
  PopRange();
  CHECK(CurrentCpuRangeId() == 0);
  TraceData d = s.Finish();

  REQUIRE(d.tracks.size() == 1);
  CHECK(d.tracks[0].type == TrackType::kThread);
  CHECK(d.tracks[0].tid > 0);
  const auto& ev = d.events_by_track[0];
  REQUIRE(ev.size() == 3);
  CHECK(NameOf(d, ev[0]) == "outer");
  CHECK(ev[0].kind == EventKind::kUserAnnotation);
  CHECK(ev[0].external_id == outer_id);
  CHECK(NameOf(d, ev[1]) == "inner");
  CHECK(ev[1].external_id == inner_id);
  CHECK(NameOf(d, ev[2]) == "tick");
  CHECK(ev[2].kind == EventKind::kInstant);
  CHECK(outer_id != 0);
  CHECK(inner_id != outer_id);
  // inner nests in outer, the mark lies inside inner.
  CHECK(ev[0].start_ns <= ev[1].start_ns);
  CHECK(ev[1].end_ns <= ev[0].end_ns);
  CHECK(ev[2].start_ns >= ev[1].start_ns);
  CHECK(ev[2].start_ns <= ev[1].end_ns);
  CHECK(ev[0].flags == 0);
  CHECK(d.stats.at("cpu_dropped") == 0);
  CHECK(d.stats.at("cpu_unmatched_pops") == 0);
}

TEST_CASE("a reused name buffer is interned by content, not pointer") {
  Session s(1024);
  char buf[32];
  std::strcpy(buf, "step_a");
  PushRange(buf);
  PopRange();
  std::strcpy(buf, "step_b");
  PushRange(buf);
  PopRange();
  std::string long_name(200, 'L');  // longer than the cache holds: always the cold path
  PushRange(long_name.c_str());
  PopRange();
  TraceData d = s.Finish();
  REQUIRE(d.events_by_track.size() == 1);
  const auto& ev = d.events_by_track[0];
  REQUIRE(ev.size() == 3);
  CHECK(NameOf(d, ev[0]) == "step_a");
  CHECK(NameOf(d, ev[1]) == "step_b");
  CHECK(NameOf(d, ev[2]) == long_name);
}

TEST_CASE("a full ring drops and counts exactly what did not fit") {
  Session s(8);
  for (int i = 0; i < 10; ++i) {  // 20 records into 8 slots
    PushRange("r");
    PopRange();
  }
  TraceData d = s.Finish();
  REQUIRE(d.events_by_track.size() == 1);
  CHECK(d.events_by_track[0].size() == 4);
  CHECK(d.stats.at("cpu_dropped") == 12);
}

TEST_CASE("window edges: clamped starts, unfinished ends, pops without push") {
  Session s(1024);
  PopRange();  // no push in this session
  PushRange("straddles_start");
  const uint64_t window_start = ReadRawClock();
  PushRange("inside");
  PopRange();
  PopRange();  // closes straddles_start
  PushRange("open_at_end");
  const uint64_t window_end = ReadRawClock();
  PushRange("after_end");
  PopRange();
  s.start_raw = window_start;
  TraceData d = s.Finish(window_end);
  REQUIRE(d.events_by_track.size() == 1);
  const auto& ev = d.events_by_track[0];
  REQUIRE(ev.size() == 3);
  CHECK(NameOf(d, ev[0]) == "straddles_start");
  CHECK(ev[0].start_ns == static_cast<int64_t>(window_start));
  CHECK(ev[0].flags == kFlagBeganBeforeWindow);
  CHECK(NameOf(d, ev[1]) == "inside");
  CHECK(ev[1].flags == 0);
  CHECK(NameOf(d, ev[2]) == "open_at_end");
  CHECK(ev[2].end_ns == static_cast<int64_t>(window_end));
  CHECK(ev[2].flags == kFlagUnfinished);
  // The unmatched pop came before the window start, so it is not counted; one inside is.
  CHECK(d.stats.at("cpu_unmatched_pops") == 0);
  CHECK(d.stats.at("cpu_unfinished_ranges") == 1);

  Session s2(1024);
  PopRange();
  PopRange();
  TraceData d2 = s2.Finish();
  CHECK(d2.stats.at("cpu_unmatched_pops") == 2);
  CHECK(d2.EventCount() == 0);
}

TEST_CASE("a new session does not see the previous session's records or open ranges") {
  {
    Session s(1024);
    PushRange("left_open");
    s.Finish();
  }
  Session s(1024);
  CHECK(CurrentCpuRangeId() == 0);
  PushRange("fresh");
  PopRange();
  TraceData d = s.Finish();
  REQUIRE(d.EventCount() == 1);
  CHECK(NameOf(d, d.events_by_track[0][0]) == "fresh");
}

TEST_CASE("cross-thread ranges end on another thread and land on the starting thread") {
  Session s(1024);
  const uint32_t id = StartRange("async");
  REQUIRE(id != 0);
  std::thread([id] {
    EndRange(id);
    EndRange(id + 100000);  // never started
  }).join();
  TraceData d = s.Finish();
  int found = 0;
  for (size_t t = 0; t < d.tracks.size(); ++t) {
    for (const Event& e : d.events_by_track[t]) {
      if (NameOf(d, e) == "async") {
        ++found;
        CHECK(e.external_id == id);
        CHECK(e.flags == 0);
        CHECK(d.tracks[t].tid == d.tracks[0].tid);
      }
    }
  }
  CHECK(found == 1);
  CHECK(d.stats.at("cpu_unmatched_range_ends") == 1);
}

TEST_CASE("step boundaries become ProfilerStep#N ranges") {
  Session s(1024);
  RecordStep(5, ReadRawClock());  // iteration 5 begins
  PushRange("work");
  PopRange();
  RecordStep(6, ReadRawClock());
  RecordStep(7, ReadRawClock());
  TraceData d = s.Finish();
  std::vector<std::string> steps;
  for (const Event& e : d.events_by_track[0]) {
    const std::string n = NameOf(d, e);
    if (n.rfind("ProfilerStep#", 0) == 0) steps.push_back(n);
  }
  // #4 runs from the window start to the first boundary; #7 is still open at the end.
  CHECK(steps == std::vector<std::string>{"ProfilerStep#4", "ProfilerStep#5", "ProfilerStep#6",
                                          "ProfilerStep#7"});
  for (const Event& e : d.events_by_track[0]) {
    if (NameOf(d, e) == "ProfilerStep#4") CHECK(e.flags == kFlagBeganBeforeWindow);
    if (NameOf(d, e) == "ProfilerStep#5") CHECK(e.flags == 0);
    if (NameOf(d, e) == "ProfilerStep#7") CHECK(e.flags == kFlagUnfinished);
  }
}

TEST_CASE("NVTX-style args go to the CpuArgs side table") {
  Session s(1024);
  RangeArgs a;
  a.domain = "NCCL";
  a.category = "comm";
  a.category_id = 7;
  a.color_argb = 0xFF00FF00u;
  a.has_color = 1;
  a.payload_type = 1;
  a.payload_bits = 42;
  PushRange("allreduce", &a);
  PopRange();
  TraceData d = s.Finish();
  REQUIRE(d.EventCount() == 1);
  const Event& e = d.events_by_track[0][0];
  REQUIRE(e.detail < d.cpu_args.size());
  const CpuArgs& c = d.cpu_args[e.detail];
  CHECK(d.strings.Get(c.domain) == "NCCL");
  CHECK(d.strings.Get(c.category) == "comm");
  CHECK(c.category_id == 7);
  CHECK(c.color_argb == 0xFF00FF00u);
  CHECK(c.has_color == 1);
  CHECK(c.payload_type == 1);
  CHECK(c.payload_bits == 42);
}

TEST_CASE("many threads: one track each, exact counts, monotonic timestamps") {
  constexpr int kThreads = 8, kRanges = 1000;
  Session s(4 * kRanges);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < kRanges; ++i) {
        PushRange("loop");
        Mark("m");
        PopRange();
      }
    });
  }
  for (auto& t : threads) t.join();
  TraceData d = s.Finish();
  REQUIRE(d.tracks.size() == kThreads);
  for (const auto& ev : d.events_by_track) {
    REQUIRE(ev.size() == 2 * kRanges);
    for (size_t i = 1; i < ev.size(); ++i) CHECK(ev[i - 1].start_ns <= ev[i].start_ns);
  }
  CHECK(d.stats.at("cpu_dropped") == 0);
  CHECK(d.stats.at("cpu_threads") == kThreads);
}

}  // namespace
}  // namespace kairos::internal
