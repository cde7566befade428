// File: ring_feeder_test.cc
// Layer: test/core. Rings grow resident memory with use, ahead of the writer, off the
// writer's thread: ThreadRing::MakeResident / ReleaseBeyond checked page by page against the
// kernel's own view (mincore), and the feeder's pass (FeedRings) driven with explicit times
// so the rate, lead and chunk arithmetic are exact. No feeder thread runs in these cases:
// a session is never started, recording is switched on by storing the epoch.
// Threading: single-threaded.
#include "activity/cpu_recorder.h"

#include <catch2/catch.hpp>

#include <dirent.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <cstdint>
#include <thread>
#include <vector>

namespace kairos::internal {
namespace {

size_t Page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
size_t RoundUp(size_t n) { return (n + Page() - 1) / Page() * Page(); }

// Resident pages among the first `bytes` after `p` (p page-aligned), per the kernel.
size_t ResidentPages(const void* p, size_t bytes) {
  std::vector<unsigned char> v(RoundUp(bytes) / Page());
  REQUIRE(mincore(const_cast<void*>(p), RoundUp(bytes), v.data()) == 0);
  size_t n = 0;
  for (unsigned char c : v) n += c & 1;
  return n;
}

RingRecord Rec(uint32_t i) {
  return RingRecord{1000u + i, i, i, 0, RecordType::kMark, {0, 0, 0}};
}

TEST_CASE("MakeResident populates exactly the pages asked, and never changes a byte") {
  constexpr size_t kCap = 1u << 20;  // 24 MiB of records, mapped
  ThreadRing ring(kCap, 4u << 20);
  REQUIRE(ring.mapped());
  const void* base = &ring.at(0);
  CHECK(ResidentPages(base, ring.record_bytes()) == 0);
  CHECK(ring.resident_record_bytes() == 0);
  // The writer went first into the first 10 records (it faulted one page itself).
  for (uint32_t i = 0; i < 10; ++i) REQUIRE(ring.Append(Rec(i)));
  CHECK(ResidentPages(base, ring.record_bytes()) == 1);

  const size_t got = ring.MakeResident(3 * Page() + 1, 0, ~size_t{0});
  CHECK(got == 4 * Page());
  CHECK(ring.resident_record_bytes() == 4 * Page());
  CHECK(ResidentPages(base, ring.record_bytes()) == 4);
  for (uint32_t i = 0; i < 10; ++i) CHECK(ring.at(i).raw_time == 1000u + i);

  // A budget bounds one call; the next call goes on from there.
  CHECK(ring.MakeResident(100 * Page(), 0, 8 * Page()) == 8 * Page());
  CHECK(ring.resident_record_bytes() == 12 * Page());
  CHECK(ResidentPages(base, ring.record_bytes()) == 12);
  CHECK(ring.MakeResident(100 * Page(), 0, ~size_t{0}) == 88 * Page());
  CHECK(ResidentPages(base, ring.record_bytes()) == 100);
  // Asking again for what is resident populates nothing.
  CHECK(ring.MakeResident(100 * Page(), 0, ~size_t{0}) == 0);

  // The side area grows on its own count; asking past its end stops at the mapping's end.
  const size_t aux_got = ring.MakeResident(0, 2 * Page(), ~size_t{0});
  CHECK(aux_got == 2 * Page());
  CHECK(ring.resident_aux_bytes() == 2 * Page());
  ring.MakeResident(ring.record_bytes() + Page(), ring.aux_bytes() + Page(), ~size_t{0});
  CHECK(ring.resident());
  CHECK(ResidentPages(base, ring.record_bytes() + ring.aux_bytes()) ==
        RoundUp(ring.record_bytes() + ring.aux_bytes()) / Page());
}

TEST_CASE("ReleaseBeyond returns every page past the head and keeps the head's bytes") {
  constexpr size_t kCap = 1u << 18;  // 6 MiB of records
  ThreadRing ring(kCap, 1u << 20);
  // Everything resident, as after a long window: the records and a quarter of the args.
  ring.MakeResident(ring.record_bytes(), ring.aux_bytes() / 4 + 1, ~size_t{0});
  REQUIRE(ring.resident());
  const void* base = &ring.at(0);
  const size_t all = ResidentPages(base, ring.record_bytes());
  CHECK(all == RoundUp(ring.record_bytes()) / Page());
  for (uint32_t i = 0; i < 1000; ++i) REQUIRE(ring.Append(Rec(i)));

  ring.ReleaseBeyond(2 * Page());
  CHECK(ring.resident_record_bytes() == 2 * Page());
  // 6 MiB of records end on a page boundary: the side area's first page is the next one.
  CHECK(ResidentPages(base, ring.record_bytes()) == 2);
  CHECK(ResidentPages(ring.aux(), Page()) == 1);
  CHECK(ResidentPages(static_cast<const char*>(ring.aux()) + Page(), ring.aux_bytes() - Page()) == 0);
  // The head kept its records; past it the contents are gone (zero pages).
  const size_t per_page = Page() / sizeof(RingRecord);
  CHECK(ring.at(per_page - 1).raw_time == 1000u + per_page - 1);
  CHECK(ring.at(3 * per_page).raw_time == 0);

  ring.Release();
  CHECK(ring.resident_record_bytes() == 0);
  CHECK(ring.resident_aux_bytes() == 0);
  CHECK(ResidentPages(base, ring.record_bytes() + ring.aux_bytes()) == 0);
}

// The kernel's view of the mappings overlapping [p, p + bytes): AnonHugePages summed (bytes)
// and whether every one of them is marked MADV_NOHUGEPAGE ("nh") and none MADV_HUGEPAGE.
struct MapView {
  size_t anon_huge = 0;
  bool all_nohuge = true;
  int vmas = 0;
};
MapView ViewOf(const void* p, size_t bytes) {
  MapView v;
  const auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + bytes;
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    unsigned long a = 0, b = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &a, &b) == 2 && line.find(':') > line.find(' ')) {
      inside = a < hi && b > lo;
      v.vmas += inside ? 1 : 0;
    } else if (inside && line.rfind("AnonHugePages:", 0) == 0) {
      v.anon_huge += std::strtoul(line.c_str() + 14, nullptr, 10) * 1024;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      v.all_nohuge = v.all_nohuge && line.find(" nh") != std::string::npos &&
                     line.find(" hg") == std::string::npos;
    }
  }
  return v;
}

bool ThpEnabled() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  return std::getline(in, line) && line.find("[never]") == std::string::npos;
}

TEST_CASE("whole chunks past the first are populated as huge pages; the writer's own stay small") {
  constexpr size_t kCap = 1u << 20;  // 24 MiB of records
  ThreadRing ring(kCap, 0);
  REQUIRE(ring.mapped());
  const void* base = &ring.at(0);
  // The records start on a huge-chunk boundary, and the mapping is marked no-huge-page, so
  // a page the writer faults in itself is a small one.
  CHECK(reinterpret_cast<uintptr_t>(base) % kRingHugeBytes == 0);
  CHECK(ViewOf(base, ring.record_bytes()).all_nohuge);
  REQUIRE(ring.Append(Rec(0)));
  CHECK(ViewOf(base, ring.record_bytes()).anon_huge == 0);

  // 7 MiB: the first chunk as small pages (the page the writer faulted in counts: the ring
  // only knows what it populated), two whole chunks, and 1 MiB of the fourth as small pages.
  const size_t got = ring.MakeResident(7u << 20, 0, ~size_t{0});
  CHECK(got == (7u << 20));
  CHECK(ring.resident_record_bytes() == (7u << 20));
  CHECK(ResidentPages(base, ring.record_bytes()) == (7u << 20) / Page());
  CHECK(ring.at(0).raw_time == 1000u);
  const MapView v = ViewOf(base, ring.record_bytes());
  // The mark is back on every part of the ring after the populates (no writer fault in a
  // chunk past the feeder's turns into a huge one).
  CHECK(v.all_nohuge);
  // The kernel may hand out small pages for a huge-page request when no free 2 MiB block is
  // at hand (fragmented memory on a busy host): residency above is the contract; which page
  // size backs it is checked as far as the kernel promises (whole chunks, never more than two).
  CHECK(v.anon_huge % kRingHugeBytes == 0);
  CHECK(v.anon_huge <= 2 * kRingHugeBytes);
  if (ThpEnabled() && v.anon_huge != 2 * kRingHugeBytes) {
    WARN("transparent huge pages are enabled but only " << v.anon_huge / kRingHugeBytes
         << " of the 2 whole chunks came back huge (no free 2 MiB blocks?)");
  }
  // A release returns whole huge chunks at once (nothing left to a later split).
  ring.ReleaseBeyond(256u << 10);
  CHECK(ResidentPages(base, ring.record_bytes()) == (256u << 10) / Page());
  CHECK(ViewOf(base, ring.record_bytes()).anon_huge == 0);
}

// Runs `body` on a new thread: each case starts with a thread that never recorded (no
// remembered rate, no state).
template <typename F>
void OnFreshThread(F&& body) {
  std::thread t(body);
  t.join();
}

// Switches recording on for a fresh epoch without a session (so no feeder thread runs) and
// returns it; the calling thread's first record arms its state with the head resident.
uint32_t RecordWithoutFeeder(CpuRecorder& rec, size_t ring_records) {
  (void)ring_records;
  const uint32_t epoch = rec.Prepare(Config{});
  g_recorder.epoch.store(epoch, std::memory_order_release);
  return epoch;
}

TEST_CASE("a feeder pass keeps the writer's measured rate x 32 ms resident ahead of it") {
  OnFreshThread([] {
  constexpr size_t kRecords = 4u << 20;  // 96 MiB of address space
  CpuRecorder rec(CpuRecorderOptions{kRecords, 8, 0});
  const uint32_t epoch = RecordWithoutFeeder(rec, kRecords);
  PushRange("first");
  PopRange();
  ThreadState* s = t_thread_state;
  REQUIRE(s != nullptr);
  ThreadRing* ring = s->ring_storage.get();
  REQUIRE(ring != nullptr);
  REQUIRE(ring->capacity() == kRecords);
  // The first record armed the state on this thread with only the head resident.
  CHECK(ring->resident_record_bytes() == kPreArmedPrefaultBytes);

  // Pass 1 (t = 1 s): no rate yet, a ring with records gets the minimum lead.
  FeedRings(epoch, 1'000'000'000);
  const size_t used1 = ring->size() * sizeof(RingRecord);
  CHECK(ring->resident_record_bytes() == RoundUp(used1 + kFeedMinLeadBytes));

  // 100,000 ranges (4.8 MB) in the next 10 ms: 0.48 B/ns, a lead of 15.36 MB at 32 ms.
  for (int i = 0; i < 100000; ++i) {
    PushRange("step");
    PopRange();
  }
  const size_t used2 = ring->size() * sizeof(RingRecord);
  REQUIRE(used2 == used1 + 100000 * 2 * sizeof(RingRecord));
  const FeedPass p2 = FeedRings(epoch, 1'010'000'000);
  const double rate = 4'800'000.0 / 10'000'000.0;
  CHECK(ring->feed.record_bytes_per_ns == Approx(rate));
  const size_t target = used2 + static_cast<size_t>(rate * kFeedLeadNs);
  // The writer ran 4.8 MB past the populated 260 KiB (no feeder ran): its pages are
  // resident because it wrote them; the feeder does not race it through the rest of its
  // 2 MiB chunk at small-page speed but goes on from that chunk's end, one whole (huge)
  // chunk a pass, and says it is behind.
  const size_t skip_to = (used2 + kRingHugeBytes - 1) / kRingHugeBytes * kRingHugeBytes;
  CHECK(p2.populated_bytes == kRingHugeBytes);
  CHECK(ring->resident_record_bytes() == skip_to + kRingHugeBytes);
  CHECK(p2.behind);
  // Passes at the same instant measure no new rate and finish the lead pass by pass: whole
  // aligned 2 MiB chunks (a chunk once begun is finished, so a pass may overshoot its 1 MiB
  // budget by less than a chunk), then the tail past the last whole chunk as small pages.
  int passes = 0;
  uint64_t most = 0;
  for (bool behind = true; behind; ++passes) {
    const FeedPass p = FeedRings(epoch, 1'010'000'000);
    most = std::max(most, p.populated_bytes);
    behind = p.behind;
    REQUIRE(passes < 100);
  }
  CHECK(most == kRingHugeBytes);
  const size_t whole_end = RoundUp(target) / kRingHugeBytes * kRingHugeBytes;
  const size_t whole_chunks = (whole_end - (skip_to + kRingHugeBytes)) / kRingHugeBytes;
  const size_t tail_passes = (RoundUp(target) - whole_end + kFeedChunkBytes - 1) / kFeedChunkBytes;
  CHECK(passes == static_cast<int>(whole_chunks + tail_passes));
  CHECK(ring->resident_record_bytes() == RoundUp(target));
  // Resident: what the writer wrote, and from its chunk's end on what the feeder populated;
  // the rest of the writer's chunk is left to the writer.
  CHECK(ResidentPages(&ring->at(0), ring->record_bytes()) ==
        (RoundUp(used2) + RoundUp(target) - skip_to) / Page());

  // A quiet millisecond lowers the rate by the decay only (a half-life of 16 ms).
  FeedRings(epoch, 1'011'000'000);
  CHECK(ring->feed.record_bytes_per_ns == Approx(rate * std::exp2(-1.0 / 16)));

  // No args were stored: the args area stays at its first page.
  CHECK(ring->resident_aux_bytes() == Page());

  g_recorder.epoch.store(0, std::memory_order_release);
  rec.Reset();
  // After the window only the armed head stays resident; the rate is remembered.
  CHECK(ring->resident_record_bytes() == kArmedHeadBytes);
  CHECK(ring->feed.record_bytes_per_ns > 0);
  });
}

TEST_CASE("a writer seen for the first time gets its rate from its own timestamps") {
  OnFreshThread([] {
  constexpr size_t kRecords = 4u << 20;
  CpuRecorder rec(CpuRecorderOptions{kRecords, 8, 0});
  const uint32_t epoch = RecordWithoutFeeder(rec, kRecords);
  PushRange("a");
  PopRange();
  for (int i = 0; i < 99999; ++i) {
    PushRange("b");
    PopRange();
  }
  ThreadRing* ring = t_thread_state->ring_storage.get();
  // Raw ticks read as ns (1 tick = 1 ns): the first record was 4 ms before `now`, so the
  // 4.8 MB written are 1.2 B/ns, a lead of 38.4 MB, at the first pass.
  const uint64_t first_raw = ring->at(0).raw_time;
  const int64_t now = 7'000'000'000;
  FeedClock clock;
  clock.raw = first_raw + 4'000'000;
  clock.ns = now;
  clock.ns_per_tick = 1.0;
  FeedRings(epoch, now, clock);
  CHECK(ring->feed.record_bytes_per_ns == Approx(100000 * 2 * sizeof(RingRecord) / 4e6));
  while (FeedRings(epoch, now, clock).behind) {
  }
  CHECK(ring->resident_record_bytes() ==
        RoundUp(100000 * 2 * sizeof(RingRecord) +
                static_cast<size_t>(100000 * 2 * sizeof(RingRecord) / 4e6 * kFeedLeadNs)));
  // Without a measured clock the first pass can only give the minimum lead.
  g_recorder.epoch.store(0, std::memory_order_release);
  rec.Reset();
  });
}

TEST_CASE("the next window's lead is resident before its first record (remembered rate)") {
  OnFreshThread([] {
  constexpr size_t kRecords = 4u << 20;
  CpuRecorder rec(CpuRecorderOptions{kRecords, 8, 0});
  uint32_t epoch = RecordWithoutFeeder(rec, kRecords);
  PushRange("a");
  PopRange();
  ThreadRing* ring = t_thread_state->ring_storage.get();
  FeedRings(epoch, 5'000'000'000);
  for (int i = 0; i < 50000; ++i) {
    PushRange("b");
    PopRange();
  }
  FeedRings(epoch, 5'010'000'000);  // 2.4 MB in 10 ms
  const double rate = ring->feed.record_bytes_per_ns;
  CHECK(rate == Approx(0.24));
  g_recorder.epoch.store(0, std::memory_order_release);
  rec.Reset();
  CHECK(ring->resident_record_bytes() == kArmedHeadBytes);

  // Next window: re-arming (warm-up) keeps the head; the first pass, before any record,
  // makes the remembered rate's lead resident (7.68 MB: more than the 2.4 MB used).
  const size_t used = ring->feed.last_window_record_bytes;
  CHECK(used == 50001 * 2 * sizeof(RingRecord));
  epoch = rec.Prepare(Config{});
  ArmRegisteredThreads(epoch);
  REQUIRE(t_thread_state->epoch.load() == epoch);
  REQUIRE(ring->size() == 0);
  while (FeedRings(epoch, 9'000'000'000).behind) {
  }
  CHECK(ring->resident_record_bytes() == RoundUp(static_cast<size_t>(rate * kFeedLeadNs)));
  // This window writes the same 2.4 MB slowly, over 10 s: the rate falls to 0.00024 B/ns
  // (a lead of the minimum 256 KiB).
  g_recorder.epoch.store(epoch, std::memory_order_release);
  for (int i = 0; i < 50000; ++i) {
    PushRange("b");
    PopRange();
  }
  FeedRings(epoch, 19'000'000'000);
  CHECK(ring->feed.record_bytes_per_ns == Approx(2'400'000.0 / 10e9));
  g_recorder.epoch.store(0, std::memory_order_release);
  rec.Reset();

  // The next window's warm-up still makes what the last window used (2.4 MB) resident
  // before the first record, not just the slow writer's lead.
  epoch = rec.Prepare(Config{});
  ArmRegisteredThreads(epoch);
  while (FeedRings(epoch, 29'000'000'000).behind) {
  }
  CHECK(ring->resident_record_bytes() == RoundUp(50000 * 2 * sizeof(RingRecord)));
  rec.Reset();
  });
}

TEST_CASE("an idle thread's ring keeps only its head; args slots grow only when used") {
  OnFreshThread([] {
  constexpr size_t kRecords = 1u << 20;
  CpuRecorder rec(CpuRecorderOptions{kRecords, 8, 0});
  const uint32_t epoch = RecordWithoutFeeder(rec, kRecords);
  RangeArgs args;
  args.cpu_op = 1;
  args.input_dims = "[[2, 3]]";
  PushRange("op", &args);
  PopRange();
  ThreadRing* ring = t_thread_state->ring_storage.get();
  FeedRings(epoch, 1'000'000'000);
  const size_t aux1 = ring->resident_aux_bytes();
  CHECK(aux1 == RoundUp(sizeof(StoredArgs) + kFeedMinLeadBytes));
  for (int i = 0; i < 10000; ++i) {
    PushRange("op", &args);
    PopRange();
  }
  FeedRings(epoch, 1'001'000'000);
  const size_t used_args = 10001 * sizeof(StoredArgs);
  const double args_rate = 10000.0 * sizeof(StoredArgs) / 1'000'000.0;
  CHECK(ring->feed.args_bytes_per_ns == Approx(args_rate));
  while (FeedRings(epoch, 1'001'000'000).behind) {
  }
  CHECK(ring->resident_aux_bytes() ==
        std::min(RoundUp(used_args + static_cast<size_t>(args_rate * kFeedLeadNs)),
                 ring->aux_bytes()));
  g_recorder.epoch.store(0, std::memory_order_release);
  rec.Reset();
  });
}

TEST_CASE("one pass populates one chunk for all rings together, and every ring gets its turn") {
  // Four busy writers: a pass holds the registry mutex for one chunk, not four, and the
  // next pass starts where the last stopped, so the fourth writer is not starved.
  constexpr size_t kRecords = 4u << 20;
  CpuRecorder rec(CpuRecorderOptions{kRecords, 8, 0});
  const uint32_t epoch = RecordWithoutFeeder(rec, kRecords);
  std::atomic<int> ready{0};
  std::atomic<bool> done{false};
  std::vector<ThreadRing*> rings(4, nullptr);
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < 20000; ++i) {
        PushRange("w");
        PopRange();
      }
      rings[w] = t_thread_state->ring_storage.get();
      ready.fetch_add(1);
      while (!done.load()) std::this_thread::yield();  // alive: an exited thread is not fed
    });
  }
  while (ready.load() != 4) std::this_thread::yield();
  FeedRings(epoch, 1'000'000'000);
  // 40,000 records (960 KB) in 10 ms each: 0.096 B/ns, a lead of 3.07 MB per ring.
  int passes = 0;
  uint64_t most = 0;
  for (bool behind = true; behind && passes < 100; ++passes) {
    const FeedPass p = FeedRings(epoch, 1'010'000'000);
    most = std::max(most, p.populated_bytes);
    behind = p.behind;
  }
  CHECK(most <= kFeedChunkBytes);
  CHECK(passes < 100);
  for (ThreadRing* r : rings) {
    REQUIRE(r != nullptr);
    const size_t used = r->size() * sizeof(RingRecord);
    CHECK(r->resident_record_bytes() >=
          std::min(r->record_bytes(), used + static_cast<size_t>(r->feed.record_bytes_per_ns * kFeedLeadNs)));
  }
  done = true;
  for (auto& t : writers) t.join();
  g_recorder.epoch.store(0, std::memory_order_release);
  rec.Reset();
}

// The scheduler slice of this process's thread named `comm` (ns, from /proc's sched file),
// or -1 when there is no such thread or the kernel does not say.
long long SliceOf(const char* comm) {
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return -1;
  long long slice = -1;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string base = std::string("/proc/self/task/") + e->d_name;
    std::ifstream c(base + "/comm");
    std::string name;
    std::getline(c, name);
    if (name != comm) continue;
    std::ifstream sched(base + "/sched");
    std::string line;
    while (std::getline(sched, line)) {
      if (line.rfind("se.slice", 0) == 0) slice = std::atoll(line.c_str() + line.find(':') + 1);
    }
  }
  closedir(d);
  return slice;
}

// Linux 6.12 and later take a normal task's custom slice (sched_attr.sched_runtime).
bool KernelTakesCustomSlice() {
  utsname u{};
  int major = 0, minor = 0;
  return uname(&u) == 0 && std::sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
         (major > 6 || (major == 6 && minor >= 12));
}

TEST_CASE("the feeder thread runs with a short scheduler slice") {
  // With the default slice the feeder, woken beside a writer that had just woken on its
  // core, waited 1.5-3 ms for a core while the writer ran through its head.
  CpuRecorder rec(CpuRecorderOptions{1u << 20, 8, 0});
  REQUIRE(rec.StartWarmup(Config{}).ok());
  // The thread names itself and asks for the slice as it starts: wait for its first pass.
  while (rec.feeder().passes() == 0) std::this_thread::yield();
  const long long slice = SliceOf("kairos-prefault");
  rec.StopRecording(0);
  rec.Reset();
  if (slice < 0 || !KernelTakesCustomSlice()) {
    WARN("kernel without custom slices (or no se.slice in /proc): nothing to check");
    return;
  }
  CHECK(slice == static_cast<long long>(kFeedSliceNs));
}

TEST_CASE("a session's feeder populates beside a writer without changing a record") {
  // The real feeder thread, a writer filling 48 MB beside it: every record is kept, in
  // order, and the pages came from the feeder (memory followed use, not the ring's size).
  constexpr size_t kRecords = 4u << 20;  // 96 MiB ring
  constexpr int kRanges = 1'000'000;
  CpuRecorder rec(CpuRecorderOptions{kRecords, 8, 0});
  REQUIRE(rec.StartWarmup(Config{}).ok());
  rec.StartRecording(0);
  const uint64_t start_raw = ReadRawClock();
  size_t used = 0;
  std::thread writer([&] {
    for (int i = 0; i < kRanges; ++i) {
      PushRange("w");
      PopRange();
    }
    ThreadRing* ring = t_thread_state->ring_storage.get();
    used = ring->size() * sizeof(RingRecord);
  });
  writer.join();
  rec.StopRecording(0);
  ClockConverter clock;
  clock.SetForTest(0, 0, 1.0);
  rec.SetWindow(start_raw, ReadRawClock(), clock, false);
  TraceData data;
  rec.Collect(data);
  data.SortTracks();
  size_t ranges = 0;
  bool ordered = true;
  for (const auto& events : data.events_by_track) {
    int64_t last_start = 0;
    for (const Event& e : events) {
      if (e.kind != EventKind::kUserAnnotation) continue;
      ++ranges;
      ordered = ordered && e.start_ns >= last_start && e.end_ns >= e.start_ns;
      last_start = e.start_ns;
    }
  }
  CHECK(ranges == static_cast<size_t>(kRanges));
  CHECK(ordered);
  CHECK(data.stats.at("cpu_dropped") == 0);
  CHECK(used == size_t{kRanges} * 2 * sizeof(RingRecord));
  CHECK(rec.feeder().passes() > 0);
  CHECK(rec.feeder().populated_bytes() > 0);
  rec.Reset();
}

}  // namespace
}  // namespace kairos::internal
