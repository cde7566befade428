// File: trace_data.h
// Layer: kairos_model. Everything a finished session hands to writers and analysis:
// identity and metadata, the string table, tracks, per-track event vectors (each sorted by
// start time), side tables, counters and loss statistics. Writers and analysis read only
// this; they know nothing of CUPTI, NVTX or the daemon.
// Threading: built by the session thread, then read-only (several writers may read it).
#ifndef KAIROS_SRC_TRACE_DATA_H_
#define KAIROS_SRC_TRACE_DATA_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/collective.h"
#include "model/event.h"
#include "model/string_table.h"

namespace kairos {

enum class TrackType : uint8_t {
  kThread = 0,      // host thread: pid = process id, tid = OS tid
  kGpuStream,       // GPU stream: pid = device ordinal, tid = stream id
  kGpuStreamSync,   // "Stream Sync" row: pid = device, tid = stream + 1,000,000
  kGpuDevice,       // device-level sync/event row (no stream): pid = device, tid = kDeviceRowTid
  kOverhead,        // CUPTI overhead row: pid = -1, tid = 0
};

// Dedicated tid for the device-level row (the anchor writes -1 as 1 and merges it with
// stream 1; see trace-format-kineto-json.md §11 #11).
inline constexpr int64_t kDeviceRowTid = 4000000000LL;
inline constexpr int64_t kStreamSyncTidOffset = 1000000;

struct Track {
  TrackType type = TrackType::kThread;
  int64_t pid = 0;
  int64_t tid = 0;
  uint32_t device = 0;
  uint32_t stream = 0;
  std::string name;  // thread name (pthread name) or empty; writers derive row labels
};

struct DeviceInfo {
  uint32_t id = 0;
  std::string name;
  uint64_t total_global_mem = 0;
  int32_t compute_major = 0, compute_minor = 0;
  int32_t max_threads_per_block = 0;
  int32_t max_threads_per_multiprocessor = 0;
  int32_t regs_per_block = 0;
  int32_t warp_size = 0;
  uint64_t shared_mem_per_block = 0;
  int32_t num_sms = 0;
  int32_t regs_per_multiprocessor = 0;
  uint64_t shared_mem_per_block_optin = 0;
  uint64_t shared_mem_per_multiprocessor = 0;
  int32_t max_blocks_per_multiprocessor = 0;
};

struct DistributedInfo {
  int64_t rank = 0;
  int64_t world_size = 1;
  int64_t local_rank = 0;
  std::string backend;  // empty if unknown
};

struct CounterTrack {
  std::string name;   // e.g. "cpu.util.core3"
  std::string unit;   // e.g. "%", "bytes", "bytes/s"
  std::string group;  // e.g. "Host CPU"; writers may use it as a process/row label
  // >= 0: a GPU counter (PM sampling) that writers place under that device's process
  // (JSON pid = device ordinal, like the device's streams); -1: host counter (group/pid).
  int32_t device = -1;
};

// Measured hardware counters of one kernel: the mean of the PM samples it overlaps
// (src/model/gpu_counters.h says how), keyed by the kernel's CUPTI correlation id.
struct KernelCounters {
  uint32_t correlation = 0;
  uint32_t samples = 0;          // PM samples the means are taken over
  float sm_active_pct = -1.0f;   // -1 = metric not sampled
  float occupancy_pct = -1.0f;   // achieved occupancy (warps active), -1 = not sampled
};

struct CounterSample {
  int64_t ts_ns;
  double value;
  uint32_t track;  // index into TraceData::counter_tracks
};

struct TraceData {
  // Identity.
  int64_t pid = 0;
  std::string process_name;
  std::string host_name;
  int64_t base_time_ns = 0;      // every JSON ts is relative to this (<= earliest event)
  int64_t window_start_ns = 0;   // recording window, Unix ns
  int64_t window_end_ns = 0;
  std::string trace_name;        // the path the trace is written to
  std::string trace_id;          // REQUEST_TRACE_ID, empty if none
  DistributedInfo distributed;

  // Trace-level metadata. `metadata` values are plain strings (escaped by writers);
  // `metadata_json` values are raw JSON text that writers validate before splicing in.
  std::vector<std::pair<std::string, std::string>> metadata;
  std::vector<std::pair<std::string, std::string>> metadata_json;
  std::string config_text;       // the config the session ran with
  std::map<std::string, uint64_t> stats;  // loss/drop counters -> "kairos_stats"
  std::vector<std::string> warnings;      // e.g. why GPU data is missing

  std::vector<DeviceInfo> devices;
  StringTable strings;
  std::vector<Track> tracks;
  // events_by_track[i] holds the events of tracks[i], sorted by (start asc, end desc) so an
  // enclosing range precedes what it encloses.
  std::vector<std::vector<Event>> events_by_track;

  std::vector<KernelDetail> kernels;
  std::vector<MemcpyDetail> memcpys;
  std::vector<MemsetDetail> memsets;
  std::vector<SyncDetail> syncs;
  std::vector<CpuArgs> cpu_args;
  // Rows of the "[memory]" instants (IsMemoryEvent), one per event.
  std::vector<MemoryDetail> memory;
  std::vector<PythonFrame> python_frames;  // EventKind::kPythonFunction rows

  std::vector<CounterTrack> counter_tracks;
  std::vector<CounterSample> counter_samples;  // sorted by ts_ns
  // Per-kernel measured counters, sorted by correlation (empty without PM sampling).
  std::vector<KernelCounters> kernel_counters;
  // NCCL operations and the launches that carried them, sorted by correlation (empty unless
  // the NCCL profiler plugin saw some: docs/OUTPUT.md, "Collective kernels").
  std::vector<CollectiveRecord> collectives;

  // The collective carried by the launch with this correlation id, or null (`collectives`
  // must be sorted: SortCollectives).
  const CollectiveRecord* FindCollective(uint32_t correlation) const;
  // Adds a track and its (empty) event vector; returns the track index.
  uint32_t AddTrack(Track track);
  void AddStat(const std::string& key, uint64_t delta) { stats[key] += delta; }
  size_t EventCount() const;
  // Sorts every track's events by (start asc, end desc, insertion order).
  void SortTracks();
};

// What a trace reader (ReadKinetoJsonTrace, ReadPerfettoTrace) keeps of what it reads.
struct TraceReadOptions {
  // Keep only what Analyze (src/analysis) reads, for `kairos summarize`: side-table rows hold
  // only the fields the analysis reads (kernel grid, block, registers and shared memory;
  // memcpy kinds and bytes; the sync type; memset rows nothing), the others zeroed, and each
  // distinct row is stored once, so a million launches of a few configurations keep a few
  // rows instead of a million. CpuArgs (NVTX domain, category, colour, payload) are not kept.
  // Events, names, tracks, counters and collectives are kept whole.
  bool for_analysis = false;
  // The Perfetto reader's limit on one TracePacket (it streams the rest, one packet at a
  // time): a length field past it is refused with an error naming both, never buffered.
  // kairos' own packets are a few KB; the largest (interned names) stay far below this.
  uint64_t perfetto_max_packet_bytes = 64ull << 20;
};

// Sorts `data.collectives` by correlation id (readers, after the last event).
void SortCollectives(TraceData& data);

// Ordering used everywhere: earlier start first; on a tie the longer (enclosing) event first.
inline bool EventBefore(const Event& a, const Event& b) {
  if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
  return a.end_ns > b.end_ns;
}

// Visits every event of `data` in global time order by k-way merging the per-track vectors
// (each already sorted), without copying them. Ties across tracks go to the lower track index.
// A loser tree: each internal node keeps the loser of the match played there, so replacing
// the winner replays one path of log2(k) single comparisons (a binary heap's sift-down takes
// two per level). Writers call Next once per event, so this is on their hottest loop.
class EventMerger {
 public:
  explicit EventMerger(const TraceData& data);
  // Returns false when exhausted; otherwise sets *event and *track_index.
  bool Next(const Event** event, uint32_t* track_index) {
    uint32_t w = tree_[0];
    const Event* e = cur_[w];
    if (e == &kExhausted) return false;  // the winner is exhausted only when all are
    *event = e;
    *track_index = track_[w];
    cur_[w] = ++e == end_[w] ? &kExhausted : e;
    for (size_t node = (w + cur_.size()) >> 1; node != 0; node >>= 1) {
      const uint32_t l = tree_[node];
      if (Beats(l, w)) {
        tree_[node] = w;
        w = l;
      }
    }
    tree_[0] = w;
    return true;
  }

 private:
  // Whether head a's next event goes out before head b's. An exhausted head points at
  // kExhausted, whose key sorts after every event (latest start, earliest end), so the hot
  // comparison needs no emptiness test; only on a full key tie is it checked, so that even
  // an event with that extreme key goes out before an exhausted head. Heads are in track
  // order, so the lower index wins a tie.
  bool Beats(uint32_t a, uint32_t b) const {
    const Event* x = cur_[a];
    const Event* y = cur_[b];
    if (x->start_ns != y->start_ns) return x->start_ns < y->start_ns;
    if (x->end_ns != y->end_ns) return x->end_ns > y->end_ns;
    if (x == &kExhausted) return false;
    if (y == &kExhausted) return true;
    return a < b;
  }
  uint32_t Build(size_t node);

  static const Event kExhausted;
  // Per head (a power of two of them; padding heads are exhausted): the next event, the
  // end of its track's vector, and the track index.
  std::vector<const Event*> cur_;
  std::vector<const Event*> end_;
  std::vector<uint32_t> track_;
  std::vector<uint32_t> tree_;  // [0] = overall winner, [1, size) = loser at each node
};

}  // namespace kairos

#endif  // KAIROS_SRC_TRACE_DATA_H_
