// File: perfetto_descriptors.cc
// Layer: kairos_output. The Perfetto writer's first packets: the clock snapshot, one track
// descriptor per process, thread, GPU, stream and counter, and the trace's metadata
// (perfetto_encoder.h; the packet layout is in perfetto_writer.h).
// Threading: one Encoder per Write() call.
#include <algorithm>
#include <set>
#include <string>

#include "output/perfetto_encoder.h"
#include "util/log.h"

namespace kairos::internal::perfetto {

int64_t Encoder::FirstTimestamp() const {
  int64_t t = data_.window_start_ns > 0 ? data_.window_start_ns : INT64_MAX;
  for (const auto& v : data_.events_by_track)
    if (!v.empty()) t = std::min(t, v.front().start_ns);
  if (!data_.counter_samples.empty()) t = std::min(t, data_.counter_samples.front().ts_ns);
  return t == INT64_MAX ? 0 : std::max<int64_t>(t, 0);
}

void Encoder::WriteClockSnapshot(int64_t t0) {
  // REALTIME is the trace clock, so trace-processor timestamps are Unix ns exactly as
  // recorded; BOOTTIME (the default for packets without a clock id) is pinned to it.
  size_t pk = enc_.BeginNested(kTracePacket);
  enc_.Varint(kPktTimestamp, t0);
  enc_.Varint(kPktSequenceId, kPerfettoMetadataSequence);
  size_t cs = enc_.BeginNested(kPktClockSnapshot);
  for (uint32_t clock : {kClockRealtime, kClockBoottime}) {
    size_t c = enc_.BeginNested(1);
    enc_.Varint(1, clock);
    enc_.Varint(2, t0);
    enc_.EndNested(c);
  }
  enc_.Varint(2, kClockRealtime);  // primary_trace_clock
  enc_.EndNested(cs);
  enc_.EndNested(pk);
  ++stats_->packets;
}

std::pair<size_t, size_t> Encoder::BeginDescriptor(int64_t t0, uint64_t uuid, uint64_t parent) {
  size_t pk = enc_.BeginNested(kTracePacket);
  enc_.Varint(kPktTimestamp, t0);
  enc_.Varint(kPktSequenceId, kPerfettoMetadataSequence);
  size_t td = enc_.BeginNested(kPktTrackDescriptor);
  enc_.Varint(1, uuid);
  if (parent) enc_.Varint(5, parent);
  return std::make_pair(pk, td);
}

void Encoder::EndDescriptor(std::pair<size_t, size_t> m) {
  enc_.EndNested(m.second);
  enc_.EndNested(m.first);
  ++stats_->packets;
}

void Encoder::WriteDescriptors(int64_t t0) {
  {
    auto m = BeginDescriptor(t0, kPerfettoProcessUuid, 0);
    size_t p = enc_.BeginNested(3);
    enc_.SignedVarint(1, static_cast<int32_t>(data_.pid));
    if (!data_.process_name.empty()) enc_.String(6, data_.process_name);
    enc_.EndNested(p);
    EndDescriptor(m);
  }
  {
    auto m = BeginDescriptor(t0, kPerfettoMetadataUuid, 0);
    enc_.String(2, "kairos metadata");
    EndDescriptor(m);
  }
  std::set<uint32_t> devices;
  for (const DeviceInfo& d : data_.devices) devices.insert(d.id);
  for (const Track& t : data_.tracks)
    if (t.type != TrackType::kThread && t.type != TrackType::kOverhead) devices.insert(t.device);
  for (const CounterTrack& c : data_.counter_tracks)
    if (c.device >= 0) devices.insert(static_cast<uint32_t>(c.device));
  for (uint32_t d : devices) {
    auto m = BeginDescriptor(t0, DeviceUuid(d), 0);
    enc_.String(2, "GPU " + std::to_string(d));
    EndDescriptor(m);
  }
  for (size_t i = 0; i < data_.tracks.size(); ++i) WriteTrackDescriptor(t0, i);
  WriteCounterDescriptors(t0);
}

void Encoder::WriteTrackDescriptor(int64_t t0, size_t i) {
  const Track& t = data_.tracks[i];
  const uint64_t uuid = kPerfettoTrackUuidBase + i;
  switch (t.type) {
    case TrackType::kThread: {
      auto m = BeginDescriptor(t0, uuid, kPerfettoProcessUuid);
      size_t th = enc_.BeginNested(4);
      enc_.SignedVarint(1, static_cast<int32_t>(t.pid));
      enc_.SignedVarint(2, t.tid);
      if (!t.name.empty()) enc_.String(5, t.name);
      enc_.EndNested(th);
      EndDescriptor(m);
      break;
    }
    case TrackType::kGpuStream:
    case TrackType::kGpuStreamSync:
    case TrackType::kGpuDevice: {
      auto m = BeginDescriptor(t0, uuid, DeviceUuid(t.device));
      std::string name = t.type == TrackType::kGpuDevice
                             ? "Device " + std::to_string(t.device)
                             : "stream " + std::to_string(t.stream) +
                                   (t.type == TrackType::kGpuStreamSync ? " (sync)" : "");
      enc_.String(2, name);
      EndDescriptor(m);
      break;
    }
    case TrackType::kOverhead: {
      auto m = BeginDescriptor(t0, uuid, 0);
      enc_.String(2, "CUPTI Overhead");
      EndDescriptor(m);
      break;
    }
  }
}

// Counter tracks: a GPU's under its device, host counters under one track per group.
void Encoder::WriteCounterDescriptors(int64_t t0) {
  std::vector<std::string> groups;
  for (const CounterTrack& c : data_.counter_tracks)
    if (c.device < 0 && !c.group.empty() && std::find(groups.begin(), groups.end(), c.group) == groups.end())
      groups.push_back(c.group);
  for (size_t g = 0; g < groups.size(); ++g) {
    auto m = BeginDescriptor(t0, kPerfettoCounterGroupUuidBase + g, 0);
    enc_.String(2, groups[g]);
    EndDescriptor(m);
  }
  for (size_t j = 0; j < data_.counter_tracks.size(); ++j) {
    const CounterTrack& c = data_.counter_tracks[j];
    uint64_t parent = 0;
    if (c.device >= 0)
      parent = DeviceUuid(static_cast<uint32_t>(c.device));  // under the GPU's process
    else if (!c.group.empty())
      parent = kPerfettoCounterGroupUuidBase +
               (std::find(groups.begin(), groups.end(), c.group) - groups.begin());
    auto m = BeginDescriptor(t0, kPerfettoCounterUuidBase + j, parent);
    enc_.String(2, c.name);
    size_t cd = enc_.BeginNested(8);
    if (!c.unit.empty()) enc_.String(6, c.unit);
    enc_.EndNested(cd);
    EndDescriptor(m);
  }
}

// Trace-level metadata as one instant with plain (non-interned) annotation names; the
// reader turns it back into TraceData fields.
void Encoder::WriteMetadata(int64_t t0) {
  size_t pk = enc_.BeginNested(kTracePacket);
  enc_.Varint(kPktTimestamp, t0);
  enc_.Varint(kPktSequenceId, kPerfettoMetadataSequence);
  size_t te = enc_.BeginNested(kPktTrackEvent);
  enc_.Varint(kTeType, kInstant);
  enc_.Varint(kTeTrackUuid, kPerfettoMetadataUuid);
  enc_.String(kTeName, "kairos metadata");
  auto str = [&](const std::string& name, std::string_view v) {
    size_t a = enc_.BeginNested(kTeDebugAnnotations);
    enc_.String(kDaName, name);
    enc_.String(kDaString, v);
    enc_.EndNested(a);
  };
  auto num = [&](const std::string& name, int64_t v) {
    size_t a = enc_.BeginNested(kTeDebugAnnotations);
    enc_.String(kDaName, name);
    enc_.SignedVarint(kDaInt, v);
    enc_.EndNested(a);
  };
  num("pid", data_.pid);
  str("process_name", data_.process_name);
  str("host_name", data_.host_name);
  num("base_time_ns", data_.base_time_ns);
  num("window_start_ns", data_.window_start_ns);
  num("window_end_ns", data_.window_end_ns);
  str("trace_name", data_.trace_name);
  if (!data_.trace_id.empty()) str("trace_id", data_.trace_id);
  num("distributed.rank", data_.distributed.rank);
  num("distributed.world_size", data_.distributed.world_size);
  num("distributed.local_rank", data_.distributed.local_rank);
  if (!data_.distributed.backend.empty()) str("distributed.backend", data_.distributed.backend);
  for (const auto& [k, v] : data_.metadata) str("meta." + k, v);
  for (const auto& [k, v] : data_.metadata_json) str("json." + k, v);
  if (!data_.config_text.empty()) str("config", data_.config_text);
  for (const auto& [k, v] : data_.stats) num("stats." + k, static_cast<int64_t>(v));
  for (size_t i = 0; i < data_.warnings.size(); ++i) str("warning." + std::to_string(i), data_.warnings[i]);
  for (const DeviceInfo& d : data_.devices) {
    std::string p = "device." + std::to_string(d.id) + ".";
    str(p + "name", d.name);
    num(p + "totalGlobalMem", static_cast<int64_t>(d.total_global_mem));
    num(p + "computeMajor", d.compute_major);
    num(p + "computeMinor", d.compute_minor);
    num(p + "maxThreadsPerBlock", d.max_threads_per_block);
    num(p + "maxThreadsPerMultiprocessor", d.max_threads_per_multiprocessor);
    num(p + "regsPerBlock", d.regs_per_block);
    num(p + "warpSize", d.warp_size);
    num(p + "sharedMemPerBlock", static_cast<int64_t>(d.shared_mem_per_block));
    num(p + "numSms", d.num_sms);
    num(p + "regsPerMultiprocessor", d.regs_per_multiprocessor);
    num(p + "sharedMemPerBlockOptin", static_cast<int64_t>(d.shared_mem_per_block_optin));
    num(p + "sharedMemPerMultiprocessor", static_cast<int64_t>(d.shared_mem_per_multiprocessor));
    num(p + "maxBlocksPerMultiprocessor", d.max_blocks_per_multiprocessor);
  }
  enc_.EndNested(te);
  enc_.EndNested(pk);
  ++stats_->packets;
}

}  // namespace kairos::internal::perfetto
