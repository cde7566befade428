// File: collective_launch_table_test.cc — the ring of NCCL operations by launch
// (src/activity/collective_launch_table.h): warm-up records kept, in-window losses counted
// exactly, a failed allocation loses and counts everything.
// Threading: single-threaded.
#include "activity/collective_launch_table.h"

#include <catch2/catch.hpp>

namespace kairos::internal {
namespace {

CollectiveRecord Op(uint32_t correlation) {
  CollectiveRecord r;
  r.correlation = correlation;
  r.in_nelems = correlation;
  return r;
}

TEST_CASE("the ring keeps warm-up records and counts what the window loses") {
  constexpr size_t kCap = CollectiveLaunchTable::kCapacity;
  CollectiveLaunchTable t;
  REQUIRE(t.Create());
  for (uint32_t c = 1; c <= 10; ++c) t.Add(Op(c));  // warm-up
  t.BeginWindow();
  for (uint32_t c = 11; c <= 20; ++c) t.Add(Op(c));
  std::vector<CollectiveRecord> got = t.Collect();
  REQUIRE(got.size() == 20);  // warm-up's stay: they may be the window's first step
  CHECK(got.front().correlation == 1);
  CHECK(got.back().correlation == 20);
  CHECK(t.overflow() == 0);

  // Past the capacity inside the window: the oldest fall out, exactly the excess is counted.
  const uint32_t window_adds = static_cast<uint32_t>(kCap) + 7;
  t.Clear();
  t.BeginWindow();
  for (uint32_t c = 1; c <= window_adds; ++c) t.Add(Op(c));
  t.EndWindow();
  t.Add(Op(window_adds + 1));  // after the window: overwrites, not counted
  got = t.Collect();
  REQUIRE(got.size() == kCap);
  CHECK(got.front().correlation == 9);  // 1..8 overwritten (7 by the window, 1 after it)
  CHECK(got.back().correlation == window_adds + 1);
  CHECK(got[100].in_nelems == got[100].correlation);  // whole records, sorted
  CHECK(t.overflow() == 7);

  t.Clear();
  CHECK(t.Collect().empty());
  CHECK(t.overflow() == 0);
}

TEST_CASE("without storage every record of the window is counted as lost") {
  CollectiveLaunchTable t;  // Create() never called (as when the allocation fails)
  t.BeginWindow();
  for (uint32_t c = 1; c <= 5; ++c) t.Add(Op(c));
  CHECK(t.Collect().empty());
  CHECK(t.overflow() == 5);
}

}  // namespace
}  // namespace kairos::internal
