// File: telemetry_tally_benchmark.cc
// Layer: benchmark. What telemetry mode (docs/TELEMETRY.md) costs kairos per GPU record: the
// CuptiTally pass its buffer worker makes over every kernel and copy record, in and out of
// trace windows. Timed on hand-built CUDA 13 buffers of kernel records with a copy every 8th
// launch (telemetry enables no API records), against two baselines from the same run: the
// bare record walk (the floor: reading each record's kind) and the previous tally (three
// std::map lookups per record, before CuptiTally). It prints the
// CPU share this costs a job at a given GPU record rate: the part of issue 15's 1.005x
// telemetry budget that is kairos' own (the driver's cost of producing the records is not
// measurable without a GPU).
// The records are delivered as CUPTI delivers them: in 4 MiB buffers (kairos' default), one
// buffer refilled and handed over again and again, as the pool reuses its buffers.
// Usage: telemetry_tally_benchmark [launches=10000000]
// Threading: single thread (the tally runs on one kairos worker in the library).
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#if defined(KAIROS_HAVE_CUPTI)
#include "activity/cupti_convert.h"
#include "activity/cupti_tally.h"
#include "bench_clock.h"
#include "bench_headline.h"
#include "cupti_bench_buffers.h"

namespace {

using kairos::bench::Better;
using kairos::bench::Headline;

// A training loop's GPU records: 5 us kernels back to back on two streams, a 1 MiB copy
// every 8th launch, one device, starting at *t: as many launches as fit in `bytes`.
// Returns the valid size; adds the launches and records written.
size_t Fill(uint8_t* base, size_t bytes, uint64_t* t, size_t* launches, size_t* records) {
  size_t off = 0;
  for (uint32_t corr = 1;; ++corr) {
    if (off + sizeof(CUpti_ActivityKernel10) + sizeof(CUpti_ActivityMemcpy6) > bytes) break;
    const uint64_t now = *t;
    kairos::bench::LaunchRecords r = kairos::bench::BaseLaunch(corr);
    r.kernel.start = now;
    r.kernel.end = now + 5000;
    r.kernel.streamId = 7 + corr % 2;
    std::memcpy(base + off, &r.kernel, sizeof r.kernel);
    off += sizeof r.kernel;
    ++*records;
    if (r.has_memcpy) {
      r.memcpy.start = now + 1000;
      r.memcpy.end = now + 40000;
      std::memcpy(base + off, &r.memcpy, sizeof r.memcpy);
      off += sizeof r.memcpy;
      ++*records;
    }
    ++*launches;
    *t += 6000;
  }
  return off;
}

// The previous tally, kept as the baseline: per record a map lookup for the device, one for
// the millisecond's counts and one for the device's busy masks.
struct MapTally {
  struct Counts {
    int64_t kernels = 0, bytes = 0;
  };
  std::map<uint32_t, std::map<int64_t, Counts>> tally;
  std::map<uint32_t, std::map<int64_t, uint64_t>> busy;
  void Add(const uint8_t* buffer, size_t size) {
    kairos::internal::ForEachCuptiRecord(buffer, size, [&](uint32_t kind, const uint8_t* p) {
      uint32_t device;
      uint64_t start, end, bytes = 0;
      bool kernel = kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      if (kernel) {
        CUpti_ActivityKernel10 k;
        std::memcpy(&k, p, sizeof k);
        device = k.deviceId, start = k.start, end = k.end;
      } else if (kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
        CUpti_ActivityMemcpy6 m;
        std::memcpy(&m, p, sizeof m);
        device = m.deviceId, start = m.start, end = m.end, bytes = m.bytes;
      } else {
        return;
      }
      Counts& c = tally[device][static_cast<int64_t>(end) / 1000000];
      if (kernel) ++c.kernels; else c.bytes += static_cast<int64_t>(bytes);
      auto& b = busy[device];
      for (int64_t ms = static_cast<int64_t>(start) / 1000000; ms * 1000000 < static_cast<int64_t>(end); ++ms)
        b[ms] |= 1;  // the mask arithmetic is the same in both; the lookups are what differ
    });
  }
};

}  // namespace

int main(int argc, char** argv) {
  const size_t want_launches = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10000000;
  constexpr size_t kBuffer = 4u << 20;
  std::vector<uint64_t> storage(kBuffer / 8);
  auto* buf = reinterpret_cast<uint8_t*>(storage.data());
  // Each pass refills the buffer with the next launches (outside the timed part) and hands
  // it to the three consumers; timestamps advance, so buckets come and go as in a job.
  double walk = 0, tally_s = 0, map_s = 0;
  size_t launches = 0, records = 0;
  uint64_t sink = 0;
  kairos::internal::CuptiTally tally;
  MapTally old;
  uint64_t t = 1'700'000'000'000'000'000ull;
  int64_t counted = 0;
  while (launches < want_launches) {
    // Each consumer gets the buffer just written, as the worker gets a buffer CUPTI has just
    // filled (the same bytes each time: the fill restarts from the pass's first launch).
    const uint64_t pass_t = t;
    size_t pass_launches = 0, pass_records = 0;
    auto refill = [&] {
      t = pass_t;
      pass_launches = pass_records = 0;
      return Fill(buf, kBuffer, &t, &pass_launches, &pass_records);
    };
    size_t valid = refill();
    double t0 = kairos::bench::ThreadCpuSeconds();
    kairos::internal::ForEachCuptiRecord(buf, valid, [&](uint32_t kind, const uint8_t*) { sink += kind; });
    walk += kairos::bench::ThreadCpuSeconds() - t0;
    valid = refill();
    t0 = kairos::bench::ThreadCpuSeconds();
    tally.AddBuffer(buf, valid, 0);
    // Telemetry takes once per interval; here once per buffer, which only adds Take's cost.
    counted += tally.Take(0, static_cast<int64_t>(t) - 1000000).kernels;
    tally_s += kairos::bench::ThreadCpuSeconds() - t0;
    valid = refill();
    t0 = kairos::bench::ThreadCpuSeconds();
    old.Add(buf, valid);
    for (auto& [dev, m] : old.tally) m.erase(m.begin(), m.lower_bound(static_cast<int64_t>(t) / 1000000 - 1));
    for (auto& [dev, m] : old.busy) m.erase(m.begin(), m.lower_bound(static_cast<int64_t>(t) / 1000000 - 1));
    map_s += kairos::bench::ThreadCpuSeconds() - t0;
    launches += pass_launches;
    records += pass_records;
  }
  counted += tally.Take(0, INT64_MAX).kernels;
  if (counted != static_cast<int64_t>(launches)) {
    std::printf("ERROR: counted %lld kernels of %zu\n", static_cast<long long>(counted), launches);
    return 1;
  }
  const double ns_walk = walk * 1e9 / records, ns_tally = tally_s * 1e9 / records,
               ns_map = map_s * 1e9 / records;
  std::printf("telemetry tally: %zu records (%zu launches) in %.1f MB buffers, thread CPU time\n",
              records, launches, kBuffer / 1e6);
  std::printf("  record walk only (floor)   %6.2f ns/record\n", ns_walk);
  std::printf("  CuptiTally                 %6.2f ns/record  = %.2fx the walk\n", ns_tally, ns_tally / ns_walk);
  std::printf("  previous map tally         %6.2f ns/record  = %.2fx the walk; CuptiTally is %.2fx faster\n",
              ns_map, ns_map / ns_walk, ns_map / ns_tally);
  Headline("telemetry_tally_benchmark", "tally_vs_record_walk", ns_tally / ns_walk, Better::kLower,
           "x");
  Headline("telemetry_tally_benchmark", "previous_map_tally_vs_tally", ns_map / ns_tally,
           Better::kHigher, "x");
  std::printf("  kairos' CPU share at a GPU record rate (of one core; 1.005x budget = 0.5%%):\n");
  for (double rate : {1e4, 1e5, 1e6})
    std::printf("    %8.0f records/s: %.4f%%\n", rate, rate * ns_tally * 1e-9 * 100);
  return sink == 42 ? 1 : 0;
}

#else
int main() {
  std::printf("telemetry_tally_benchmark: built without CUPTI headers; nothing to measure\n");
  return 0;
}
#endif
