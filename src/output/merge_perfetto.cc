// File: merge_perfetto.cc
// Layer: kairos_output. The Perfetto form of `kairos merge` (merge_internal.h): every rank
// gets a process for its host process ("rank R: <name> (pid P)", pid R * kMergePidStride) and
// one per GPU ("rank R: GPU d"), threads and streams under them, slices as begin/end pairs
// per track, counters as counter tracks. Names are written inline (no interning), so every
// packet stands alone and ranks need no shared sequence state; each rank is its own packet
// sequence. Timestamps are Unix ns plus the rank's clock shift.
// Threading: calling thread.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "util/checked_time.h"
#include "output/compress_sinks.h"
#include "output/file_sink.h"
#include "output/json_reader.h"
#include "output/merge_internal.h"
#include "output/proto_encoder.h"

namespace kairos::internal {
namespace {

// Perfetto field numbers (perfetto_trace.proto: Trace, TracePacket, TrackDescriptor,
// ProcessDescriptor, ThreadDescriptor, TrackEvent, CounterDescriptor).
constexpr uint32_t kTracePacket = 1;
constexpr uint32_t kPktTimestamp = 8, kPktSequenceId = 10, kPktTrackEvent = 11, kPktTrackDescriptor = 60;
constexpr uint32_t kTdUuid = 1, kTdName = 2, kTdProcess = 3, kTdThread = 4, kTdParent = 5, kTdCounter = 8;
constexpr uint32_t kPdPid = 1, kPdName = 6;
constexpr uint32_t kThPid = 1, kThTid = 2, kThName = 5;
constexpr uint32_t kTeType = 9, kTeTrackUuid = 11, kTeCategories = 22, kTeName = 23, kTeDoubleCounter = 44;
constexpr uint32_t kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4;
// Inside a rank's pid block: the CPU process is 0, GPU d is 1 + d (d < 1000), thread tracks
// get tids from kThreadBase up (tids must not repeat across ranks).
constexpr int64_t kGpuPidBase = 1;
constexpr int64_t kThreadBase = 1001;

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::char_traits<char>::length(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

class RankEncoder {
 public:
  RankEncoder(ByteSink& sink, const MergeRankInfo& info) : sink_(sink), info_(info) {
    base_uuid_ = (static_cast<uint64_t>(info.rank) + 1) << 40;
    seq_ = static_cast<uint32_t>(info.rank + 1);
  }

  absl::Status Write(const TraceData& d, uint64_t* events) {
    const std::string prefix = "rank " + std::to_string(info_.rank) + ": ";
    const int64_t block = info_.rank * kMergePidStride;
    // Descriptors carry the window start; one that does not fit shifted is left unshifted
    // (a descriptor's time only orders it before the events).
    int64_t t0;
    if (!AddNs(d.window_start_ns, info_.shift_ns, &t0)) t0 = d.window_start_ns;
    const uint64_t cpu_uuid = base_uuid_ + 1;
    Descriptor(t0, cpu_uuid, 0, [&] {
      size_t p = enc_.BeginNested(kTdProcess);
      enc_.Varint(kPdPid, static_cast<uint64_t>(block));
      enc_.String(kPdName, prefix + (d.process_name.empty() ? "process" : d.process_name) + " (pid " +
                               std::to_string(d.pid) + ")");
      enc_.EndNested(p);
    });
    std::vector<uint32_t> devices;
    for (const Track& t : d.tracks) {
      if (t.type != TrackType::kThread && t.type != TrackType::kOverhead &&
          std::find(devices.begin(), devices.end(), t.device) == devices.end()) {
        devices.push_back(t.device);
      }
    }
    for (uint32_t dev : devices) {
      Descriptor(t0, GpuUuid(dev), 0, [&] {
        size_t p = enc_.BeginNested(kTdProcess);
        enc_.Varint(kPdPid, static_cast<uint64_t>(block + kGpuPidBase + std::min<uint32_t>(dev, 999)));
        enc_.String(kPdName, prefix + "GPU " + std::to_string(dev));
        enc_.EndNested(p);
      });
    }
    for (size_t i = 0; i < d.tracks.size(); ++i) {
      const Track& t = d.tracks[i];
      const uint64_t uuid = TrackUuid(i);
      switch (t.type) {
        case TrackType::kThread:
          Descriptor(t0, uuid, cpu_uuid, [&] {
            size_t th = enc_.BeginNested(kTdThread);
            // Threads of different ranks must not share a tid either.
            enc_.Varint(kThPid, static_cast<uint64_t>(block));
            enc_.Varint(kThTid, static_cast<uint64_t>(block + std::min<int64_t>(kThreadBase + static_cast<int64_t>(i), kMergePidStride - 1)));
            if (!t.name.empty()) enc_.String(kThName, t.name);
            enc_.EndNested(th);
          });
          break;
        case TrackType::kOverhead:
          Descriptor(t0, uuid, cpu_uuid, [&] { enc_.String(kTdName, "CUPTI Overhead"); });
          break;
        default: {
          const std::string name = t.type == TrackType::kGpuDevice ? "Device " + std::to_string(t.device)
                                   : "stream " + std::to_string(t.stream) +
                                         (t.type == TrackType::kGpuStreamSync ? " (sync)" : "");
          Descriptor(t0, uuid, GpuUuid(t.device), [&] { enc_.String(kTdName, name); });
        }
      }
    }
    for (size_t j = 0; j < d.counter_tracks.size(); ++j) {
      Descriptor(t0, CounterUuid(j), cpu_uuid, [&] {
        enc_.String(kTdName, d.counter_tracks[j].name);
        size_t c = enc_.BeginNested(kTdCounter);
        enc_.EndNested(c);
      });
    }
    absl::Status st = Flush();
    for (size_t i = 0; i < d.tracks.size() && st.ok(); ++i) {
      // Events are sorted by (start asc, end desc): a stack of open slices gives begin/end
      // pairs; a slice that overlaps its parent's end without nesting is cut at that end.
      std::vector<int64_t> open;
      for (const Event& e : d.events_by_track[i]) {
        int64_t unused;
        if (!AddNs(e.start_ns, info_.shift_ns, &unused) || !AddNs(e.end_ns, info_.shift_ns, &unused)) {
          ++dropped_;  // its shifted time does not fit: left out and reported, never wrapped
          continue;
        }
        while (!open.empty() && open.back() <= e.start_ns) {
          End(open.back(), TrackUuid(i));
          open.pop_back();
        }
        const std::string_view name = d.strings.Get(e.name);
        const char* cat = kEventCategory[static_cast<size_t>(e.kind)];
        if (e.kind == EventKind::kInstant || e.end_ns <= e.start_ns) {
          Slice(e.start_ns, kInstant, TrackUuid(i), name, cat);
        } else {
          const int64_t end = open.empty() ? e.end_ns : std::min(e.end_ns, open.back());
          Slice(e.start_ns, kSliceBegin, TrackUuid(i), name, cat);
          open.push_back(end);
        }
        ++*events;
        if (enc_.size() >= (1u << 20)) st = Flush();
      }
      while (!open.empty()) {
        End(open.back(), TrackUuid(i));
        open.pop_back();
      }
    }
    for (const CounterSample& c : d.counter_samples) {
      if (!st.ok()) break;
      int64_t ts;
      if (!AddNs(c.ts_ns, info_.shift_ns, &ts)) {
        ++dropped_;
        continue;
      }
      size_t pk = enc_.BeginNested(kTracePacket);
      enc_.Varint(kPktTimestamp, static_cast<uint64_t>(ts));
      enc_.Varint(kPktSequenceId, seq_);
      size_t te = enc_.BeginNested(kPktTrackEvent);
      enc_.Varint(kTeType, kCounter);
      enc_.Varint(kTeTrackUuid, CounterUuid(c.track));
      enc_.Double(kTeDoubleCounter, c.value);
      enc_.EndNested(te);
      enc_.EndNested(pk);
      ++*events;
      if (enc_.size() >= (1u << 20)) st = Flush();
    }
    if (st.ok()) st = Flush();
    return st;
  }
  // Events and counter samples left out: their shifted time does not fit 64-bit ns.
  uint64_t dropped() const { return dropped_; }

 private:
  uint64_t GpuUuid(uint32_t dev) const { return base_uuid_ + 0x100 + dev; }
  uint64_t TrackUuid(size_t i) const { return base_uuid_ + 0x100000 + i; }
  uint64_t CounterUuid(size_t j) const { return base_uuid_ + 0x80000000ull + j; }

  template <typename Body>
  void Descriptor(int64_t ts, uint64_t uuid, uint64_t parent, Body body) {
    size_t pk = enc_.BeginNested(kTracePacket);
    enc_.Varint(kPktTimestamp, static_cast<uint64_t>(ts));
    enc_.Varint(kPktSequenceId, seq_);
    size_t td = enc_.BeginNested(kPktTrackDescriptor);
    enc_.Varint(kTdUuid, uuid);
    if (parent != 0) enc_.Varint(kTdParent, parent);
    body();
    enc_.EndNested(td);
    enc_.EndNested(pk);
  }

  // Slice and End take times already checked to fit shifted (Write leaves out the others).
  void Slice(int64_t ts, uint32_t type, uint64_t track, std::string_view name, const char* cat) {
    size_t pk = enc_.BeginNested(kTracePacket);
    enc_.Varint(kPktTimestamp, static_cast<uint64_t>(ts + info_.shift_ns));
    enc_.Varint(kPktSequenceId, seq_);
    size_t te = enc_.BeginNested(kPktTrackEvent);
    enc_.Varint(kTeType, type);
    enc_.Varint(kTeTrackUuid, track);
    enc_.String(kTeCategories, cat);
    enc_.String(kTeName, name);
    enc_.EndNested(te);
    enc_.EndNested(pk);
  }

  void End(int64_t ts, uint64_t track) {
    size_t pk = enc_.BeginNested(kTracePacket);
    enc_.Varint(kPktTimestamp, static_cast<uint64_t>(ts + info_.shift_ns));
    enc_.Varint(kPktSequenceId, seq_);
    size_t te = enc_.BeginNested(kPktTrackEvent);
    enc_.Varint(kTeType, kSliceEnd);
    enc_.Varint(kTeTrackUuid, track);
    enc_.EndNested(te);
    enc_.EndNested(pk);
  }

  absl::Status Flush() {
    absl::Status st = sink_.Write(enc_.data(), enc_.size());
    enc_.Clear();
    return st;
  }

  ByteSink& sink_;
  const MergeRankInfo& info_;
  uint64_t base_uuid_ = 0;
  uint32_t seq_ = 1;
  uint64_t dropped_ = 0;
  ProtoEncoder enc_{1 << 21};
};

}  // namespace

absl::Status WriteMergedPerfetto(const MergeOptions& o, const std::vector<MergeRankInfo>& ranks,
                                 uint64_t* events, std::vector<std::string>* warnings) {
  absl::StatusOr<std::unique_ptr<AtomicFileSink>> file = AtomicFileSink::Create(o.out_path);
  if (!file.ok()) return file.status();
  std::unique_ptr<ByteSink> compressor;
  ByteSink* sink = file->get();
  if (EndsWith(o.out_path, ".zst")) {
    compressor = std::make_unique<ZstdSink>(**file, o.zstd_level);
    sink = compressor.get();
  }
  for (const MergeRankInfo& r : ranks) {
    absl::StatusOr<TraceData> data = r.perfetto ? o.read_perfetto(r.path) : ReadKinetoJsonTrace(r.path);
    if (!data.ok()) return data.status();
    RankEncoder enc(*sink, r);
    absl::Status st = enc.Write(*data, events);
    if (!st.ok()) return st;
    if (enc.dropped() != 0) warnings->push_back(DroppedWarning(r, enc.dropped()));
  }
  return sink->Finish();
}

}  // namespace kairos::internal
