// File: cupti_tally_test.cc
// Layer: test (kairos_activity). CuptiTally, telemetry's kernel and copy totals, on
// hand-built CUDA 13 record buffers: exact counts, bytes and busy slots.
#include "activity/cupti_tally.h"

#include <catch2/catch.hpp>

#include "cupti_records.h"

namespace kairos::internal {
namespace {

using testing::Kernel;
using testing::Memcpy;
using testing::RecordBuffer;

constexpr int64_t kMs = CuptiTally::kBucketNs;
constexpr int64_t kSlot = CuptiTally::kSlotNs;  // 15625 ns
constexpr int64_t kT0 = 1764000000000LL * kMs;  // a whole millisecond, Unix ns

TEST_CASE("CuptiTally: counts by the millisecond a record ended; Take keeps later ones") {
  RecordBuffer buf;
  buf.Add(Kernel(1, kT0 + 100000, kT0 + 200000, "k"));                 // ends in ms 0
  buf.Add(Kernel(2, kT0 + 900000, kT0 + kMs + 100000, "k"));           // ends in ms 1
  buf.Add(Memcpy(3, kT0 + 300000, kT0 + 400000, 4096));                // ms 0
  buf.Add(Kernel(4, kT0 + 5 * kMs, kT0 + 5 * kMs + 1000, "k", 1));     // device 1, ms 5
  auto p2p = testing::Zero<CUpti_ActivityMemcpyPtoP4>();
  p2p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p2p.deviceId = 0;
  p2p.start = kT0 + 2 * kMs;
  p2p.end = kT0 + 2 * kMs + 10;
  p2p.bytes = 1000;
  buf.Add(p2p);
  CuptiTally t;
  t.AddBuffer(buf.data(), buf.size(), kT0 + 9 * kMs);

  CuptiTally::Totals a = t.Take(0, kT0 + kMs);  // milliseconds before ms 1
  CHECK(a.kernels == 1);
  CHECK(a.memcpy_bytes == 4096);
  // Slot i of a millisecond is busy when a record covers its midpoint, i * 15625 + 7812 ns:
  //   [100000, 200000): slots ceil(92188 / 15625) = 6 .. floor(192187 / 15625) = 12 -> 7
  //   [300000, 400000): 19 .. 25 -> 7
  //   kernel 2's part in ms 0, [900000, 1000000): 58 .. 63 -> 6
  CHECK(a.busy_ns == (7 + 7 + 6) * kSlot);

  CuptiTally::Totals b = t.Take(0, kT0 + 3 * kMs);
  CHECK(b.kernels == 1);            // kernel 2, ended in ms 1
  CHECK(b.memcpy_bytes == 1000);    // the peer-to-peer copy
  // ms 1: [0, 100000) of it -> slots 0 .. 5 (6); ms 2: a 10 ns copy covers no midpoint.
  CHECK(b.busy_ns == 6 * kSlot);

  CHECK(t.Take(0, kT0 + 3 * kMs).kernels == 0);  // forgotten
  CuptiTally::Totals d1 = t.Take(1, kT0 + 10 * kMs);
  CHECK(d1.kernels == 1);
  CHECK(d1.busy_ns == 0);  // 1 us from the bucket start covers no midpoint
  CHECK(t.Take(7, kT0 + 10 * kMs).kernels == 0);  // a device never seen
}

TEST_CASE("CuptiTally: overlapping records mark a slot once; a record spanning milliseconds") {
  CuptiTally t;
  // Two streams running the same 2 ms at once, then a record from ms 4.5 to 6.5.
  t.Add(0, true, 0, kT0, kT0 + 2 * kMs, 0);
  t.Add(0, true, 0, kT0, kT0 + 2 * kMs, 0);
  t.Add(0, false, 512, kT0 + 4 * kMs + kMs / 2, kT0 + 6 * kMs + kMs / 2, 0);
  CuptiTally::Totals a = t.Take(0, kT0 + 10 * kMs);
  CHECK(a.kernels == 2);
  CHECK(a.memcpy_bytes == 512);
  // 2 ms of union (128 slots) + 2 ms from the middle of ms 4 (32 + 64 + 32 slots).
  CHECK(a.busy_ns == (128 + 128) * kSlot);
}

TEST_CASE("CuptiTally: a record without valid timestamps counts at now and adds no busy time") {
  RecordBuffer buf;
  buf.Add(Kernel(1, 0, 0, "running"));  // still running at a forced flush
  buf.Add(Kernel(2, kT0 + 2 * kMs, kT0 + kMs, "k"));  // end before start
  CuptiTally t;
  t.AddBuffer(buf.data(), buf.size(), kT0 + 3 * kMs + 5);
  CHECK(t.Take(0, kT0 + 3 * kMs).kernels == 0);  // both count in ms 3, at now
  CuptiTally::Totals a = t.Take(0, kT0 + 4 * kMs);
  CHECK(a.kernels == 2);
  CHECK(a.busy_ns == 0);
}

TEST_CASE("CuptiTally: records out of time order and across devices land in their own buckets") {
  CuptiTally t;
  // Alternate devices and go back in time, so every cached device and bucket is missed.
  for (int i = 0; i < 100; ++i) {
    const int64_t ms = (i * 37) % 10;
    t.Add(static_cast<uint32_t>(i % 3), true, 0, kT0 + ms * kMs + 1000, kT0 + ms * kMs + 2000, 0);
  }
  int64_t total = 0;
  for (uint32_t dev = 0; dev < 3; ++dev) {
    const CuptiTally::Totals first = t.Take(dev, kT0 + 5 * kMs);
    const CuptiTally::Totals rest = t.Take(dev, kT0 + 10 * kMs);
    // i % 3 == dev and (i * 37) % 10 < 5, counted exactly.
    int64_t want_first = 0, want_rest = 0;
    for (int i = 0; i < 100; ++i) {
      if (i % 3 != static_cast<int>(dev)) continue;
      ((i * 37) % 10 < 5 ? want_first : want_rest) += 1;
    }
    CHECK(first.kernels == want_first);
    CHECK(rest.kernels == want_rest);
    total += first.kernels + rest.kernels;
  }
  CHECK(total == 100);
}

}  // namespace
}  // namespace kairos::internal
