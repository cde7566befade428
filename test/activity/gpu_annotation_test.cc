// File: gpu_annotation_test.cc
// Layer: test (kairos_activity). Projection of CPU annotations onto GPU streams.
// Threading: single-threaded.
#include "activity/gpu_annotation.h"

#include <catch2/catch.hpp>

namespace kairos::internal {
namespace {

Event Make(EventKind kind, int64_t start, int64_t end, StringId name, uint32_t ext) {
  Event e{};
  e.kind = kind;
  e.start_ns = start;
  e.end_ns = end;
  e.name = name;
  e.external_id = ext;
  e.detail = kNoDetail;
  return e;
}

uint32_t AddTrack(TraceData& data, TrackType type, int64_t pid, int64_t tid) {
  Track t;
  t.type = type;
  t.pid = pid;
  t.tid = tid;
  return data.AddTrack(t);
}

TEST_CASE("nested annotations project onto each stream their work ran on",
          "[gpu_annotation]") {
  TraceData data;
  const StringId step = data.strings.Intern("ProfilerStep#3");
  const StringId fwd = data.strings.Intern("forward");
  const StringId op = data.strings.Intern("aten::mm");
  const uint32_t cpu = AddTrack(data, TrackType::kThread, 10, 10);
  const uint32_t s7 = AddTrack(data, TrackType::kGpuStream, 0, 7);
  const uint32_t s8 = AddTrack(data, TrackType::kGpuStream, 0, 8);
  // Unsorted on purpose: the CPU source's events are sorted only later.
  data.events_by_track[cpu].push_back(Make(EventKind::kCpuOp, 250, 260, op, 12));
  data.events_by_track[cpu].push_back(Make(EventKind::kUserAnnotation, 200, 500, fwd, 11));
  data.events_by_track[cpu].push_back(Make(EventKind::kUserAnnotation, 100, 1000, step, 10));
  data.events_by_track[s7].push_back(Make(EventKind::kKernel, 300, 350, 0, 12));
  data.events_by_track[s7].push_back(Make(EventKind::kKernel, 400, 450, 0, 11));
  data.events_by_track[s8].push_back(Make(EventKind::kMemcpy, 600, 700, 0, 10));
  data.events_by_track[s8].push_back(Make(EventKind::kKernel, 800, 900, 0, 0));  // unlinked

  CHECK(ProjectGpuAnnotations(data) == 3);
  std::vector<Event> on7, on8;
  for (const Event& e : data.events_by_track[s7]) {
    if (e.kind == EventKind::kGpuUserAnnotation) on7.push_back(e);
  }
  for (const Event& e : data.events_by_track[s8]) {
    if (e.kind == EventKind::kGpuUserAnnotation) on8.push_back(e);
  }
  REQUIRE(on7.size() == 2);
  REQUIRE(on8.size() == 1);
  // forward (11) covers both kernels on stream 7 (the aten::mm kernel is its child's).
  const Event& f7 = on7[0].external_id == 11 ? on7[0] : on7[1];
  const Event& s7e = on7[0].external_id == 10 ? on7[0] : on7[1];
  CHECK(f7.external_id == 11);
  CHECK(f7.name == fwd);
  CHECK(f7.start_ns == 299);
  CHECK(f7.end_ns == 451);
  CHECK(s7e.external_id == 10);
  CHECK(s7e.name == step);
  CHECK(s7e.start_ns == 299);
  CHECK(s7e.end_ns == 451);
  CHECK(on8[0].external_id == 10);
  CHECK(on8[0].start_ns == 599);
  CHECK(on8[0].end_ns == 701);
  CHECK(on8[0].correlation == 0);
  CHECK(on8[0].detail == kNoDetail);
}

TEST_CASE("no CPU ranges, no annotations", "[gpu_annotation]") {
  TraceData data;
  const uint32_t s7 = AddTrack(data, TrackType::kGpuStream, 0, 7);
  data.events_by_track[s7].push_back(Make(EventKind::kKernel, 300, 350, 0, 12));
  CHECK(ProjectGpuAnnotations(data) == 0);
  CHECK(data.events_by_track[s7].size() == 1);
}

}  // namespace
}  // namespace kairos::internal
