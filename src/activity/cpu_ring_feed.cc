// File: cpu_ring_feed.cc — see cpu_recorder.h (FeedRings).
// Layer: kairos_activity. Makes the recording threads' rings resident ahead of their writers:
// measures each writer's rate and populates the lead it will reach within kFeedLeadNs, so
// the hot path takes no page fault. Called by the ring feeder thread and, in warm-up, by
// the session thread.
// Threading: under the registry mutex, one budgeted pass at a time.
#include <algorithm>
#include <cmath>
#include <mutex>

#include "activity/cpu_process_state.h"
#include "activity/cpu_recorder.h"

namespace kairos::internal {

namespace {

// Bytes a writer at `bytes_per_ns` reaches within kFeedLeadNs, within the lead bounds; 0 for
// a ring with no records and no remembered rate (an idle thread keeps only its head).
size_t LeadBytes(double bytes_per_ns, bool has_records) {
  const double want = bytes_per_ns * static_cast<double>(kFeedLeadNs);
  if (!has_records && want < 1) return 0;
  if (want >= static_cast<double>(kFeedMaxLeadBytes)) return kFeedMaxLeadBytes;
  return std::max(kFeedMinLeadBytes, static_cast<size_t>(want));
}

// A burst raises a rate at once; a lull lowers it with this half-life, so a quiet
// millisecond does not cut the lead a busy writer needs, and passes run back to back (a
// lead populated chunk by chunk) do not wear the rate down.
constexpr double kRateHalfLifeNs = 16e6;

double UpdatedRate(double old_rate, size_t grown_bytes, int64_t dt_ns) {
  const double dt = static_cast<double>(dt_ns);
  const double now_rate = static_cast<double>(grown_bytes) / dt;
  return std::max(now_rate, old_rate * std::exp2(-dt / kRateHalfLifeNs));
}

// Updates `f`'s rates from the writer's progress to (n records, a args slots) at `now_ns`.
void MeasureWriter(const ThreadRing& ring, ThreadRing::FeedState& f, size_t n, size_t a,
                   int64_t now_ns, const FeedClock& clock) {
  if (f.last_ns == 0 && n > 0 && clock.ns_per_tick > 0) {
    // Seen with records for the first time: the rate since its first record's time on the
    // steady clock; a writer younger than 10 us is left to the next pass (too few records).
    const double first_ns =
        static_cast<double>(clock.ns) -
        (static_cast<double>(clock.raw) - static_cast<double>(ring.at(0).raw_time)) * clock.ns_per_tick;
    const double age = static_cast<double>(now_ns) - first_ns;
    if (age >= 10'000) {
      f.record_bytes_per_ns =
          std::max(f.record_bytes_per_ns, static_cast<double>(n * sizeof(RingRecord)) / age);
      f.args_bytes_per_ns =
          std::max(f.args_bytes_per_ns, static_cast<double>(a * sizeof(StoredArgs)) / age);
    }
  } else if (f.last_ns != 0 && now_ns > f.last_ns) {
    const int64_t dt = now_ns - f.last_ns;
    f.record_bytes_per_ns =
        UpdatedRate(f.record_bytes_per_ns, (n - std::min(n, f.records)) * sizeof(RingRecord), dt);
    f.args_bytes_per_ns =
        UpdatedRate(f.args_bytes_per_ns, (a - std::min(a, f.args)) * sizeof(StoredArgs), dt);
  }
  f.records = n;
  f.args = a;
  f.last_ns = now_ns;
}

}  // namespace

FeedPass FeedRings(uint32_t epoch, int64_t now_ns, const FeedClock& clock) {
  FeedPass pass;
  CpuThreadRegistry* reg = CpuRegistryIfCreated();
  if (reg == nullptr) return pass;
  std::lock_guard<std::mutex> lock(reg->mu);
  // One budget for the whole pass, so the registry mutex is held for about one chunk however
  // many threads record; the pass starts where the last one ran out, so a fast writer early
  // in the list cannot starve the ones after it.
  size_t budget = kFeedChunkBytes;
  const size_t count = reg->states.size();
  const size_t first = count > 0 ? reg->feed_cursor % count : 0;
  for (size_t k = 0; k < count; ++k) {
    const size_t index = (first + k) % count;
    ThreadState* s = reg->states[index];
    if (s->epoch.load(std::memory_order_acquire) != epoch) continue;
    ThreadRing* ring = s->ring_storage.get();
    // An exited thread's records are in a compact heap copy: nothing to feed.
    if (ring == nullptr || !ring->mapped() || s->exited.load(std::memory_order_acquire)) continue;
    ThreadRing::FeedState& f = ring->feed;
    const size_t n = ring->size();
    const size_t a = s->args_used.load(std::memory_order_relaxed);
    if (f.last_ns == 0 && n > 0) pass.young = true;
    MeasureWriter(*ring, f, n, a, now_ns, clock);
    // A writer ahead of the populated part: go on from the end of its chunk (SkipPastWriter).
    ring->SkipPastWriter(n * sizeof(RingRecord));
    const size_t rec_target =
        std::min(std::max(n * sizeof(RingRecord) + LeadBytes(f.record_bytes_per_ns, n > 0),
                          f.last_window_record_bytes),
                 ring->record_bytes());
    const size_t aux_target =
        std::min(std::max(a * sizeof(StoredArgs) + LeadBytes(f.args_bytes_per_ns, a > 0),
                          f.last_window_args_bytes),
                 ring->aux_bytes());
    const bool had_budget = budget > 0;
    const size_t got = had_budget ? ring->MakeResident(rec_target, aux_target, budget) : 0;
    budget -= got;
    pass.populated_bytes += got;
    const bool short_of_target =
        ring->resident_record_bytes() < rec_target || ring->resident_aux_bytes() < aux_target;
    // Short after the budget ran out: run again at once, from this ring. Short after
    // populating nothing with budget left: out of memory; the writer faults the rest in
    // itself, the feeder does not spin.
    if (short_of_target && (got > 0 || !had_budget)) {
      if (!pass.behind) reg->feed_cursor = index;
      pass.behind = true;
    }
    if (f.record_bytes_per_ns > 0) {
      const size_t used = n * sizeof(RingRecord);
      const size_t margin = ring->resident_record_bytes() > used ? ring->resident_record_bytes() - used : 0;
      pass.margin_ns = std::min(
          pass.margin_ns, static_cast<int64_t>(static_cast<double>(margin) / f.record_bytes_per_ns));
    }
  }
  return pass;
}

}  // namespace kairos::internal
