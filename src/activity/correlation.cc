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

}  // namespace

MergeResult MergeIntoTraceData(CuptiConverter& converter, TraceData& data) {
  MergeResult result;
  converter.Finalize();
  EventStore& events = converter.events();

  // Pass 1: correlation id -> launching call. CUPTI gives every API call its own id and
  // reports only the driver calls the program makes itself, so one id has one call; should a
  // tool (or another CUPTI version) report a runtime call and a driver call under one id, the
  // runtime call, the one the program made, is the launch.
  // CUPTI hands out correlation ids from one increasing counter, so the ids of a window are
  // dense: they index a flat array (4 bytes per id, at most 8 per event) instead of a hash map,
  // unless the range is sparse (then the hash map keeps memory bounded by the events).
  uint32_t min_corr = UINT32_MAX, max_corr = 0;
  for (const Event& e : events) {
    if (e.correlation == 0) continue;
    min_corr = std::min(min_corr, e.correlation);
    max_corr = std::max(max_corr, e.correlation);
  }
  constexpr uint32_t kNoLaunch = UINT32_MAX;
  const bool dense = min_corr <= max_corr && uint64_t{max_corr} - min_corr < 2 * uint64_t{events.size()} + 1024;
  std::vector<uint32_t> launch_dense(dense ? size_t{max_corr} - min_corr + 1 : 0, kNoLaunch);
  absl::flat_hash_map<uint32_t, uint32_t> launch_sparse;
  if (!dense) launch_sparse.reserve(events.size() / 2 + 1);
  auto slot = [&](uint32_t correlation) -> uint32_t* {  // where the launch of an id is kept
    if (dense) return &launch_dense[correlation - min_corr];
    return &launch_sparse.try_emplace(correlation, kNoLaunch).first->second;
  };
  auto find_launch = [&](uint32_t correlation) -> uint32_t {
    if (dense) return launch_dense[correlation - min_corr];
    auto it = launch_sparse.find(correlation);
    return it == launch_sparse.end() ? kNoLaunch : it->second;
  };
  uint32_t i = UINT32_MAX;
  for (const Event& e : events) {
    ++i;
    if (!IsApi(e.kind) || e.correlation == 0) continue;
    uint32_t* l = slot(e.correlation);
    if (*l == kNoLaunch ||
        (events[*l].kind == EventKind::kDriver && e.kind == EventKind::kRuntime)) {
      *l = i;
    }
  }

  // Pass 2: external ids and flows. With dense ids the links are copied into an array by
  // correlation id first (one hash probe per event was a third of the merge); only links whose
  // id some event carries can match, and those are in [min_corr, max_corr].
  const auto& external = converter.external_ids();
  std::vector<uint32_t> ext_dense;
  std::vector<uint8_t> ext_present;
  if (dense) {
    ext_dense.assign(launch_dense.size(), 0);
    ext_present.assign(launch_dense.size(), 0);
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
        ++result.linked_to_cpu;
      }
    } else if (auto ext = external.find(e.correlation); ext != external.end()) {
      e.external_id = static_cast<uint32_t>(ext->second);
      ++result.linked_to_cpu;
    }
    if (IsMemoryEvent(e)) {
      // An allocation or free goes on the thread of the call that made it (MEMORY2 records
      // carry no thread), and to that call's CPU range.
      const uint32_t l = find_launch(e.correlation);
      if (l == kNoLaunch) continue;
      e.track = events[l].track;
      if (e.external_id == 0) e.external_id = events[l].external_id;
      continue;
    }
    if (!IsFlowEnd(e.kind)) continue;
    if (IsGpuWork(e.kind)) ++result.gpu_events;
    const uint32_t l = find_launch(e.correlation);
    if (l == kNoLaunch) {
      if (IsGpuWork(e.kind)) ++result.uncorrelated_gpu;
      continue;
    }
    Event& call = events[l];
    if (e.external_id == 0) e.external_id = call.external_id;
    if (IsFlowStart(call)) {
      call.flags |= kFlagFlowOut;
      e.flags |= kFlagFlowIn;
      ++result.flows;
    }
  }

  // Names.
  const StringTable& strings = converter.strings();
  std::vector<StringId> name_map(strings.size());
  for (StringId i = 0; i < strings.size(); ++i) name_map[i] = data.strings.Intern(strings.Get(i));

  // Tracks: reuse the CPU source's thread rows and any GPU rows already present.
  absl::flat_hash_map<TrackKey, uint32_t> existing;
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
      result.devices.push_back(lt.device);
    }
  }
  std::sort(result.devices.begin(), result.devices.end());
  result.devices.erase(std::unique(result.devices.begin(), result.devices.end()),
                       result.devices.end());

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
          case EventKind::kKernel: e.detail += kernel_base; break;
          case EventKind::kMemcpy: e.detail += memcpy_base; break;
          case EventKind::kMemset: e.detail += memset_base; break;
          case EventKind::kSync:
          case EventKind::kCudaEvent: e.detail += sync_base; break;
          case EventKind::kInstant:
            if (e.aux == kAuxMemory) e.detail += memory_base;
            break;
          default: break;
        }
      }
      data.events_by_track[track].push_back(e);
    }
    events.ReleaseChunk(c);
  }
  events.Release();
  return result;
}

}  // namespace kairos::internal
