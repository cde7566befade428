// File: correlation.cc
// Layer: kairos_activity (CUDA builds only). See correlation.h.
// Threading: session thread only.
#include "activity/correlation.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "activity/cupti_cbids.h"

namespace kairos::internal {
namespace {

bool IsGpuWork(EventKind k) {
  return k == EventKind::kKernel || k == EventKind::kMemcpy || k == EventKind::kMemset;
}
bool IsFlowEnd(EventKind k) {
  return IsGpuWork(k) || k == EventKind::kSync || k == EventKind::kCudaEvent;
}
bool IsApi(EventKind k) { return k == EventKind::kRuntime || k == EventKind::kDriver; }

bool IsFlowStart(const Event& e) {
  return e.kind == EventKind::kRuntime ? IsFlowStartRuntimeCbid(e.aux)
                                       : IsFlowStartDriverCbid(e.aux);
}

struct TrackKey {
  TrackType type;
  int64_t pid;
  int64_t tid;
  bool operator==(const TrackKey& o) const {
    return type == o.type && pid == o.pid && tid == o.tid;
  }
  template <typename H>
  friend H AbslHashValue(H h, const TrackKey& k) {
    return H::combine(std::move(h), static_cast<int>(k.type), k.pid, k.tid);
  }
};

Track ToTrack(const LocalTrack& t, int64_t pid) {
  Track out;
  out.type = t.type;
  out.device = t.device;
  out.stream = t.id;
  switch (t.type) {
    case TrackType::kThread:
      out.pid = pid;
      out.tid = t.id;
      out.device = 0;
      out.stream = 0;
      break;
    case TrackType::kGpuStream:
      out.pid = t.device;
      out.tid = t.id;
      break;
    case TrackType::kGpuStreamSync:
      out.pid = t.device;
      out.tid = static_cast<int64_t>(t.id) + kStreamSyncTidOffset;
      break;
    case TrackType::kGpuDevice:
      out.pid = t.device;
      out.tid = kDeviceRowTid;
      out.stream = 0;
      break;
    case TrackType::kOverhead:
      out.pid = -1;
      out.tid = 0;
      out.device = 0;
      out.stream = 0;
      break;
  }
  return out;
}

// Correlation id -> the index in the store of its launching call. CUPTI gives every API call
// its own id and reports only the driver calls the program makes itself, so one id has one
// call; should a tool (or another CUPTI version) report a runtime call and a driver call under
// one id, the runtime call, the one the program made, is the launch.
// CUPTI hands out correlation ids from one increasing counter, so the ids of a window are
// dense: they index a flat array (4 bytes per id, at most 8 per event) instead of a hash map,
// unless the range is sparse (then the hash map keeps memory bounded by the events).
class LaunchIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  explicit LaunchIndex(const EventStore& events) {
    for (const Event& e : events) {
      if (e.correlation == 0) continue;
      min_ = std::min(min_, e.correlation);
      max_ = std::max(max_, e.correlation);
    }
    dense_ = min_ <= max_ && uint64_t{max_} - min_ < 2 * uint64_t{events.size()} + 1024;
    if (dense_) by_id_.assign(size_t{max_} - min_ + 1, kNone);
    else sparse_.reserve(events.size() / 2 + 1);
    uint32_t i = UINT32_MAX;
    for (const Event& e : events) {
      ++i;
      if (!IsApi(e.kind) || e.correlation == 0) continue;
      uint32_t* l = dense_ ? &by_id_[e.correlation - min_]
                           : &sparse_.try_emplace(e.correlation, kNone).first->second;
      if (*l == kNone || (events[*l].kind == EventKind::kDriver && e.kind == EventKind::kRuntime)) {
        *l = i;
      }
    }
  }
  uint32_t Find(uint32_t correlation) const {
    if (dense_) return by_id_[correlation - min_];
    auto it = sparse_.find(correlation);
    return it == sparse_.end() ? kNone : it->second;
  }
  // Dense: every correlation id of the window is in [min(), max()].
  bool dense() const { return dense_; }
  uint32_t min() const { return min_; }
  uint32_t max() const { return max_; }

 private:
  uint32_t min_ = UINT32_MAX, max_ = 0;
  bool dense_ = false;
  std::vector<uint32_t> by_id_;
  absl::flat_hash_map<uint32_t, uint32_t> sparse_;
};

// Pass 2: external ids and flows. With dense ids the links are copied into an array by
// correlation id first (one hash probe per event was a third of the merge); only links whose
// id some event carries can match, and those are in [min, max].
void LinkEvents(const CuptiConverter& converter, EventStore& events, const LaunchIndex& launches,
                MergeResult* result) {
  const auto& external = converter.external_ids();
  const bool dense = launches.dense();
  const uint32_t min_corr = launches.min(), max_corr = launches.max();
  std::vector<uint32_t> ext_dense;
  std::vector<uint8_t> ext_present;
  if (dense) {
    ext_dense.assign(size_t{max_corr} - min_corr + 1, 0);
    ext_present.assign(ext_dense.size(), 0);
    for (const auto& [correlation, id] : external) {
      if (correlation < min_corr || correlation > max_corr) continue;
      ext_dense[correlation - min_corr] = static_cast<uint32_t>(id);
      ext_present[correlation - min_corr] = 1;
    }
  }
  for (Event& e : events) {
    if (e.correlation == 0) continue;
    if (dense) {
      if (ext_present[e.correlation - min_corr]) {
        e.external_id = ext_dense[e.correlation - min_corr];
        ++result->linked_to_cpu;
      }
    } else if (auto ext = external.find(e.correlation); ext != external.end()) {
      e.external_id = static_cast<uint32_t>(ext->second);
      ++result->linked_to_cpu;
    }
    if (IsMemoryEvent(e)) {
      // An allocation or free goes on the thread of the call that made it (MEMORY2 records
      // carry no thread), and to that call's CPU range.
      const uint32_t l = launches.Find(e.correlation);
      if (l == LaunchIndex::kNone) continue;
      e.track = events[l].track;
      if (e.external_id == 0) e.external_id = events[l].external_id;
      continue;
    }
    if (!IsFlowEnd(e.kind)) continue;
    if (IsGpuWork(e.kind)) ++result->gpu_events;
    const uint32_t l = launches.Find(e.correlation);
    if (l == LaunchIndex::kNone) {
      if (IsGpuWork(e.kind)) ++result->uncorrelated_gpu;
      continue;
    }
    Event& call = events[l];
    if (e.external_id == 0) e.external_id = call.external_id;
    if (IsFlowStart(call)) {
      call.flags |= kFlagFlowOut;
      e.flags |= kFlagFlowIn;
      ++result->flows;
    }
  }
}

// Tracks: reuse the CPU source's thread rows and any GPU rows already present. Returns the
// converter's track -> the trace's row; `existing` keeps every row by key for later additions.
std::vector<uint32_t> MapTracks(const CuptiConverter& converter, TraceData& data,
                                absl::flat_hash_map<TrackKey, uint32_t>& existing,
                                MergeResult* result) {
  for (uint32_t i = 0; i < data.tracks.size(); ++i) {
    const Track& t = data.tracks[i];
    existing.emplace(TrackKey{t.type, t.pid, t.tid}, i);
  }
  std::vector<uint32_t> track_map(converter.tracks().size());
  for (size_t i = 0; i < converter.tracks().size(); ++i) {
    Track t = ToTrack(converter.tracks()[i], data.pid);
    auto [it, inserted] = existing.try_emplace(TrackKey{t.type, t.pid, t.tid}, 0);
    if (inserted) it->second = data.AddTrack(std::move(t));
    track_map[i] = it->second;
    const LocalTrack& lt = converter.tracks()[i];
    if (lt.type != TrackType::kThread && lt.type != TrackType::kOverhead) {
      result->devices.push_back(lt.device);
    }
  }
  std::sort(result->devices.begin(), result->devices.end());
  result->devices.erase(std::unique(result->devices.begin(), result->devices.end()),
                       result->devices.end());
  return track_map;
}

// Where each side table's rows of this window start in the trace's tables.
struct DetailBases {
  uint32_t kernel, memcpy, memset, sync, memory;
};

// Every event into its track's vector, names and rows renumbered for the trace.
void CopyEvents(EventStore& events, const std::vector<StringId>& name_map,
                const std::vector<uint32_t>& track_map, const DetailBases& base, TraceData& data) {
  // Reserve each destination once (growing by doubling copied every event ~twice).
  std::vector<size_t> per_track(data.events_by_track.size(), 0);
  for (const Event& e : events) ++per_track[track_map[e.track]];
  for (size_t t = 0; t < per_track.size(); ++t)
    if (per_track[t]) data.events_by_track[t].reserve(data.events_by_track[t].size() + per_track[t]);
  // Chunk by chunk, each handed back to the kernel once copied: the store and the per-track
  // copy are not both whole at the peak of the flush.
  for (size_t c = 0; c < events.chunk_count(); ++c) {
    Event* chunk = events.chunk(c);
    const size_t n = events.chunk_size(c);
    for (size_t i = 0; i < n; ++i) {
      Event& e = chunk[i];
      e.name = name_map[e.name];
      const uint32_t track = track_map[e.track];
      e.track = track;
      if (e.detail != kNoDetail) {
        switch (e.kind) {
          case EventKind::kKernel: e.detail += base.kernel; break;
          case EventKind::kMemcpy: e.detail += base.memcpy; break;
          case EventKind::kMemset: e.detail += base.memset; break;
          case EventKind::kSync:
          case EventKind::kCudaEvent: e.detail += base.sync; break;
          case EventKind::kInstant:
            if (e.aux == kAuxMemory) e.detail += base.memory;
            break;
          default: break;
        }
      }
      data.events_by_track[track].push_back(e);
    }
    events.ReleaseChunk(c);
  }
}

}  // namespace

MergeResult MergeIntoTraceData(CuptiConverter& converter, TraceData& data) {
  MergeResult result;
  converter.Finalize();
  EventStore& events = converter.events();

  const LaunchIndex launches(events);
  LinkEvents(converter, events, launches, &result);

  // Names.
  const StringTable& strings = converter.strings();
  std::vector<StringId> name_map(strings.size());
  for (StringId i = 0; i < strings.size(); ++i) name_map[i] = data.strings.Intern(strings.Get(i));

  absl::flat_hash_map<TrackKey, uint32_t> existing;
  std::vector<uint32_t> track_map = MapTracks(converter, data, existing, &result);

  // Side tables.
  const uint32_t kernel_base = static_cast<uint32_t>(data.kernels.size());
  const uint32_t memcpy_base = static_cast<uint32_t>(data.memcpys.size());
  const uint32_t memset_base = static_cast<uint32_t>(data.memsets.size());
  const uint32_t sync_base = static_cast<uint32_t>(data.syncs.size());
  data.kernels.insert(data.kernels.end(), converter.kernels().begin(), converter.kernels().end());
  data.memcpys.insert(data.memcpys.end(), converter.memcpys().begin(), converter.memcpys().end());
  data.memsets.insert(data.memsets.end(), converter.memsets().begin(), converter.memsets().end());
  data.syncs.insert(data.syncs.end(), converter.syncs().begin(), converter.syncs().end());

  // Memory events whose call is not in the trace (its API kind off, or dropped) go on the
  // process's main thread row (tid = pid), counted.
  uint32_t memory_fallback = kUnresolvedTrack;
  for (Event& e : events) {
    if (e.track != kUnresolvedTrack) continue;
    if (memory_fallback == kUnresolvedTrack) {
      Track t;
      t.type = TrackType::kThread;
      t.pid = data.pid;
      t.tid = data.pid;
      auto [it, inserted] = existing.try_emplace(TrackKey{t.type, t.pid, t.tid}, 0);
      if (inserted) {
        it->second = data.AddTrack(std::move(t));
        track_map.push_back(it->second);
      } else {
        track_map.push_back(it->second);
      }
      memory_fallback = static_cast<uint32_t>(track_map.size() - 1);
    }
    e.track = memory_fallback;
    ++result.memory_without_call;
  }
  const uint32_t memory_base = static_cast<uint32_t>(data.memory.size());
  data.memory.insert(data.memory.end(), converter.memory().begin(), converter.memory().end());
  for (const MemoryDetail& m : converter.memory()) {
    if (m.device_type == 1 && m.device >= 0) result.devices.push_back(static_cast<uint32_t>(m.device));
  }
  std::sort(result.devices.begin(), result.devices.end());
  result.devices.erase(std::unique(result.devices.begin(), result.devices.end()),
                       result.devices.end());

  CopyEvents(events, name_map, track_map,
             {kernel_base, memcpy_base, memset_base, sync_base, memory_base}, data);
  events.Release();
  return result;
}

}  // namespace kairos::internal
