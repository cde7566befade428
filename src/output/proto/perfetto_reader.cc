// File: perfetto_reader.cc
// Layer: kairos_perfetto_proto. See perfetto_reader.h. Replays each sequence as trace
// processor does (incremental state, interning, the delta clock, the default track) and
// maps the writer's track uuids and annotations back to TraceData fields. Event args go
// through the same Kineto args mapping as the JSON reader, so both readers agree.
// Threading: no shared state.
#include "output/proto/perfetto_reader.h"

#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <new>
#include <vector>

#include "absl/strings/str_cat.h"
#include "util/checked_time.h"
#include "util/input_file.h"
#include "output/json_reader.h"
#include "output/perfetto_writer.h"
#include "output/proto/perfetto_trace.pb.h"

namespace kairos {
namespace {

namespace pp = perfetto::protos;

JsonValue Num(std::string text) {
  JsonValue v;
  v.type = JsonValue::Type::kNumber;
  v.text = std::move(text);
  return v;
}

JsonValue Str(std::string text) {
  JsonValue v;
  v.type = JsonValue::Type::kString;
  v.text = std::move(text);
  return v;
}

JsonValue DoubleValue(double d) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), d);
  return Num(std::string(buf, r.ptr));
}

EventKind DefaultKind(TrackType type) {  // mirrors the writer's choice
  switch (type) {
    case TrackType::kThread: return EventKind::kUserAnnotation;
    case TrackType::kGpuStream: return EventKind::kKernel;
    case TrackType::kGpuStreamSync:
    case TrackType::kGpuDevice: return EventKind::kSync;
    case TrackType::kOverhead: return EventKind::kOverhead;
  }
  return EventKind::kCpuOp;
}

struct Seq {
  bool incremental = false;
  int64_t last = 0;  // the delta clock's time, ns
  uint64_t default_track = 0;
  std::map<uint64_t, std::string> names, cats, arg_names, strs;
};

class Reader {
 public:
  explicit Reader(const TraceReadOptions& options) : rows_(options) {}
  absl::Status Packet(const pp::TracePacket& p);
  TraceData Finish();

 private:
  uint32_t TrackIndex(uint64_t uuid);
  void Descriptor(const pp::TrackDescriptor& td);
  void Metadata(const pp::TrackEvent& te);
  JsonValue Args(const pp::TrackEvent& te, Seq& s);
  void Counter(const pp::TrackEvent& te, uint64_t uuid, int64_t ts);
  void SliceEnd(uint32_t track, int64_t ts);
  void SliceBegin(const pp::TrackEvent& te, Seq& s, uint32_t track, int64_t ts);
  void Unmapped() { data_.AddStat("perfetto_reader.unmapped", 1); }

  TraceData data_;
  internal::DetailRows rows_;
  std::map<uint32_t, Seq> seqs_;
  std::map<uint64_t, uint32_t> track_of_uuid_;
  std::map<uint64_t, std::string> group_names_;
  std::map<uint64_t, uint32_t> counter_of_uuid_;
  std::map<uint32_t, std::vector<Event>> open_;
};

uint32_t Reader::TrackIndex(uint64_t uuid) {
  auto it = track_of_uuid_.find(uuid);
  if (it != track_of_uuid_.end()) return it->second;
  Track t;  // a track never described: a thread-like row keyed by its uuid
  t.tid = static_cast<int64_t>(uuid);
  t.pid = data_.pid;
  uint32_t idx = data_.AddTrack(std::move(t));
  track_of_uuid_[uuid] = idx;
  return idx;
}

void Reader::Descriptor(const pp::TrackDescriptor& td) {
  const uint64_t uuid = td.uuid();
  if (td.has_process()) {
    if (uuid == kPerfettoProcessUuid || data_.process_name.empty()) {
      data_.pid = td.process().pid();
      data_.process_name = td.process().process_name();
    }
    return;
  }
  if (td.has_counter()) {
    CounterTrack c;
    c.name = td.name();
    c.unit = td.counter().unit_name();
    auto g = group_names_.find(td.parent_uuid());
    if (g != group_names_.end()) c.group = g->second;
    // A GPU counter (PM sampling) sits under the device's process track.
    if (td.parent_uuid() >= kPerfettoDeviceUuidBase && td.parent_uuid() < kPerfettoTrackUuidBase) {
      c.device = static_cast<int32_t>(td.parent_uuid() - kPerfettoDeviceUuidBase);
      c.group = "GPU " + std::to_string(c.device);
    }
    counter_of_uuid_[uuid] = static_cast<uint32_t>(data_.counter_tracks.size());
    data_.counter_tracks.push_back(std::move(c));
    return;
  }
  Track t;
  const std::string& name = td.name();
  unsigned long n = 0;
  auto number_after = [&](size_t pos) {
    n = strtoul(name.c_str() + pos, nullptr, 10);
  };
  bool under_gpu = td.parent_uuid() >= kPerfettoDeviceUuidBase && td.parent_uuid() < kPerfettoTrackUuidBase;
  uint32_t device = under_gpu ? static_cast<uint32_t>(td.parent_uuid() - kPerfettoDeviceUuidBase) : 0;
  if (td.has_thread()) {
    t.type = TrackType::kThread;
    t.pid = td.thread().pid();
    t.tid = td.thread().tid();
    t.name = td.thread().thread_name();
  } else if (under_gpu && name.rfind("stream ", 0) == 0) {
    number_after(7);
    bool sync = name.size() > 7 && name.find(" (sync)") != std::string::npos;
    t.type = sync ? TrackType::kGpuStreamSync : TrackType::kGpuStream;
    t.pid = device;
    t.device = device;
    t.stream = static_cast<uint32_t>(n);
    t.tid = sync ? int64_t(n) + kStreamSyncTidOffset : int64_t(n);
  } else if (under_gpu && name.rfind("Device ", 0) == 0) {
    t.type = TrackType::kGpuDevice;
    t.pid = device;
    t.device = device;
    t.tid = kDeviceRowTid;
  } else if (name == "CUPTI Overhead") {
    t.type = TrackType::kOverhead;
    t.pid = -1;
    t.tid = 0;
  } else {
    // Groups (GPUs, counter groups) and the metadata track hold no events of their own.
    group_names_[uuid] = name;
    return;
  }
  track_of_uuid_[uuid] = data_.AddTrack(std::move(t));
}

void Reader::Metadata(const pp::TrackEvent& te) {
  for (const pp::DebugAnnotation& a : te.debug_annotations()) {
    const std::string& k = a.name();
    const std::string& s = a.string_value();
    int64_t i = a.int_value();
    if (k == "pid") data_.pid = i;
    else if (k == "process_name") data_.process_name = s;
    else if (k == "host_name") data_.host_name = s;
    else if (k == "base_time_ns") data_.base_time_ns = i;
    else if (k == "window_start_ns") data_.window_start_ns = i;
    else if (k == "window_end_ns") data_.window_end_ns = i;
    else if (k == "trace_name") data_.trace_name = s;
    else if (k == "trace_id") data_.trace_id = s;
    else if (k == "distributed.rank") data_.distributed.rank = i;
    else if (k == "distributed.world_size") data_.distributed.world_size = i;
    else if (k == "distributed.local_rank") data_.distributed.local_rank = i;
    else if (k == "distributed.backend") data_.distributed.backend = s;
    else if (k == "config") data_.config_text = s;
    else if (k.rfind("meta.", 0) == 0) data_.metadata.emplace_back(k.substr(5), s);
    else if (k.rfind("json.", 0) == 0) data_.metadata_json.emplace_back(k.substr(5), s);
    else if (k.rfind("stats.", 0) == 0) data_.stats[k.substr(6)] = static_cast<uint64_t>(i);
    else if (k.rfind("warning.", 0) == 0) data_.warnings.push_back(s);
    else if (k.rfind("device.", 0) == 0) {
      size_t dot = k.find('.', 7);
      if (dot == std::string::npos) continue;
      uint32_t id = static_cast<uint32_t>(strtoul(k.c_str() + 7, nullptr, 10));
      std::string field = k.substr(dot + 1);
      DeviceInfo* d = nullptr;
      for (DeviceInfo& x : data_.devices)
        if (x.id == id) d = &x;
      if (!d) {
        data_.devices.emplace_back();
        d = &data_.devices.back();
        d->id = id;
      }
      if (field == "name") d->name = s;
      else if (field == "totalGlobalMem") d->total_global_mem = uint64_t(i);
      else if (field == "computeMajor") d->compute_major = int32_t(i);
      else if (field == "computeMinor") d->compute_minor = int32_t(i);
      else if (field == "maxThreadsPerBlock") d->max_threads_per_block = int32_t(i);
      else if (field == "maxThreadsPerMultiprocessor") d->max_threads_per_multiprocessor = int32_t(i);
      else if (field == "regsPerBlock") d->regs_per_block = int32_t(i);
      else if (field == "warpSize") d->warp_size = int32_t(i);
      else if (field == "sharedMemPerBlock") d->shared_mem_per_block = uint64_t(i);
      else if (field == "numSms") d->num_sms = int32_t(i);
      else if (field == "regsPerMultiprocessor") d->regs_per_multiprocessor = int32_t(i);
      else if (field == "sharedMemPerBlockOptin") d->shared_mem_per_block_optin = uint64_t(i);
      else if (field == "sharedMemPerMultiprocessor") d->shared_mem_per_multiprocessor = uint64_t(i);
      else if (field == "maxBlocksPerMultiprocessor") d->max_blocks_per_multiprocessor = int32_t(i);
    }
  }
}

// The sequence's incremental state a packet carries: defaults, the delta clock's snapshot,
// interned strings.
void UpdateSequence(const pp::TracePacket& p, Seq& s) {
  if (p.has_trace_packet_defaults()) {
    s.incremental = p.trace_packet_defaults().timestamp_clock_id() == kPerfettoIncrementalClockId;
    s.default_track = p.trace_packet_defaults().track_event_defaults().track_uuid();
  }
  if (p.has_clock_snapshot())
    for (const auto& c : p.clock_snapshot().clocks())
      if (c.clock_id() == kPerfettoIncrementalClockId && c.is_incremental())
        s.last = static_cast<int64_t>(c.timestamp());
  if (p.has_interned_data()) {
    const auto& id = p.interned_data();
    for (const auto& e : id.event_names()) s.names[e.iid()] = e.name();
    for (const auto& e : id.event_categories()) s.cats[e.iid()] = e.name();
    for (const auto& e : id.debug_annotation_names()) s.arg_names[e.iid()] = e.name();
    for (const auto& e : id.debug_annotation_string_values()) s.strs[e.iid()] = e.str();
  }
}

// The packet's time in ns. An absolute timestamp is int64 ns in two's complement (the
// writers encode a negative time, e.g. a merged rank shifted before the epoch, as
// static_cast<uint64_t>), so every value maps. A delta is added checked (checked_time.h): one
// that carries the sequence's clock past int64 is refused, never wrapped into a time of the
// wrong sign.
absl::Status PacketTime(const pp::TracePacket& p, Seq& s, int64_t* ts) {
  uint32_t clock = p.has_timestamp_clock_id() ? p.timestamp_clock_id()
                                              : (s.incremental ? kPerfettoIncrementalClockId : 6);
  *ts = static_cast<int64_t>(p.timestamp());
  if (clock == kPerfettoIncrementalClockId) {
    if (!AddDeltaNs(s.last, p.timestamp(), ts))
      return absl::OutOfRangeError(absl::StrCat("perfetto: timestamp delta ", p.timestamp(), " after ", s.last,
                                                " ns does not fit a 64-bit ns time"));
    s.last = *ts;
  }
  return absl::OkStatus();
}

JsonValue AnnotationValue(const pp::DebugAnnotation& a, Seq& s) {
  JsonValue v;
  if (a.has_uint_value()) v = Num(std::to_string(a.uint_value()));
  else if (a.has_int_value()) v = Num(std::to_string(a.int_value()));
  else if (a.has_double_value()) v = DoubleValue(a.double_value());
  else if (a.has_bool_value()) v.type = JsonValue::Type::kBool, v.boolean = a.bool_value();
  else if (a.has_string_value()) v = Str(a.string_value());
  else if (a.has_string_value_iid()) v = Str(s.strs[a.string_value_iid()]);
  return v;
}

// The event's debug annotations as Kineto args; the detail, collective and measured
// annotations hold JSON objects whose members are spliced in.
JsonValue Reader::Args(const pp::TrackEvent& te, Seq& s) {
  JsonValue args;
  args.type = JsonValue::Type::kObject;
  for (const pp::DebugAnnotation& a : te.debug_annotations()) {
    std::string key = a.has_name_iid() ? s.arg_names[a.name_iid()] : a.name();
    JsonValue v = AnnotationValue(a, s);
    if ((key == kPerfettoDetailArg || key == kPerfettoCollectiveArg || key == kPerfettoMeasuredArg) &&
        v.is_string()) {
      absl::StatusOr<JsonValue> detail = ParseJson(v.text);
      if (detail.ok()) {
        for (auto& m : detail->members) args.members.push_back(std::move(m));
        continue;
      }
      Unmapped();
      continue;
    }
    args.members.emplace_back(std::move(key), std::move(v));
  }
  return args;
}

void Reader::Counter(const pp::TrackEvent& te, uint64_t uuid, int64_t ts) {
  auto it = counter_of_uuid_.find(uuid);
  if (it == counter_of_uuid_.end()) return Unmapped();
  double v = te.has_double_counter_value() ? te.double_counter_value() : double(te.counter_value());
  data_.counter_samples.push_back({ts, v, it->second});
}

void Reader::SliceEnd(uint32_t track, int64_t ts) {
  std::vector<Event>& open = open_[track];
  if (open.empty()) return Unmapped();
  Event e = open.back();
  open.pop_back();
  e.end_ns = ts;
  if (e.end_ns < e.start_ns) {  // an end before its begin: a zero-length slice, counted
    e.end_ns = e.start_ns;
    data_.AddStat("perfetto_reader.negative_dur", 1);
  }
  data_.events_by_track[track].push_back(e);
}

// A slice's begin (kept open until its end) or an instant.
void Reader::SliceBegin(const pp::TrackEvent& te, Seq& s, uint32_t track, int64_t ts) {
  Event e;
  memset(&e, 0, sizeof(e));
  e.track = track;
  e.detail = kNoDetail;
  e.start_ns = e.end_ns = ts;
  e.kind = DefaultKind(data_.tracks[track].type);
  for (uint64_t c : te.category_iids()) {
    auto it = s.cats.find(c);
    if (it != s.cats.end()) internal::KindFromCategory(it->second, &e.kind);
  }
  for (const std::string& c : te.categories()) internal::KindFromCategory(c, &e.kind);
  if (te.type() == pp::TrackEvent::TYPE_INSTANT) e.kind = EventKind::kInstant;
  std::string name = te.has_name_iid() ? s.names[te.name_iid()] : te.name();
  JsonValue args = Args(te, s);
  e.name = data_.strings.Intern(name);
  const bool flow = te.flow_ids_size() > 0 || te.flow_ids_old_size() > 0;
  // The writer omits the `correlation` annotation of an event with a flow: the flow id is
  // the correlation id. Set before the args are applied, which key side tables by it (an
  // NCCL kernel's operation); a `correlation` arg, if any, still wins.
  if (flow) e.correlation = static_cast<uint32_t>(te.flow_ids_size() > 0 ? te.flow_ids(0) : te.flow_ids_old(0));
  internal::ApplyKinetoArgs(args, name, data_, e, rows_);
  if (flow) {
    e.flags |= (e.kind == EventKind::kRuntime || e.kind == EventKind::kDriver) ? kFlagFlowOut : kFlagFlowIn;
  }
  if (te.type() == pp::TrackEvent::TYPE_INSTANT) {
    data_.events_by_track[track].push_back(e);
  } else {
    open_[track].push_back(e);
  }
}

absl::Status Reader::Packet(const pp::TracePacket& p) {
  Seq& s = seqs_[p.trusted_packet_sequence_id()];
  if (p.sequence_flags() & 1) s = Seq{};
  UpdateSequence(p, s);
  int64_t ts;
  if (absl::Status st = PacketTime(p, s, &ts); !st.ok()) return st;
  if (p.has_track_descriptor()) Descriptor(p.track_descriptor());
  if (!p.has_track_event()) return absl::OkStatus();
  const pp::TrackEvent& te = p.track_event();
  uint64_t uuid = te.has_track_uuid() ? te.track_uuid() : s.default_track;
  if (uuid == kPerfettoMetadataUuid) {
    Metadata(te);
  } else if (te.type() == pp::TrackEvent::TYPE_COUNTER) {
    Counter(te, uuid, ts);
  } else if (te.type() == pp::TrackEvent::TYPE_SLICE_END) {
    SliceEnd(TrackIndex(uuid), ts);
  } else if (te.type() == pp::TrackEvent::TYPE_SLICE_BEGIN || te.type() == pp::TrackEvent::TYPE_INSTANT) {
    SliceBegin(te, s, TrackIndex(uuid), ts);
  } else {
    TrackIndex(uuid);  // a track of an event of another type still exists, as before
    Unmapped();
  }
  return absl::OkStatus();
}

TraceData Reader::Finish() {
  for (auto& [track, open] : open_) {
    for (Event& e : open) {  // never ended: keep them, unfinished, at their start
      e.flags |= kFlagUnfinished;
      data_.events_by_track[track].push_back(e);
    }
  }
  std::stable_sort(data_.counter_samples.begin(), data_.counter_samples.end(),
                   [](const CounterSample& a, const CounterSample& b) { return a.ts_ns < b.ts_ns; });
  data_.SortTracks();
  SortCollectives(data_);
  return std::move(data_);
}

}  // namespace

namespace {

// Splits the uncompressed stream into Trace.packet records (tag 0x0A, varint length, packet
// bytes) as it arrives and hands each to the Reader, so the reader holds at most one packet
// and one input chunk: a 100 KB .pftrace.zst that expands to 3 GB used to be decompressed
// whole into one string (std::bad_alloc under a 2 GB limit). One packet is capped
// (TraceReadOptions::perfetto_max_packet_bytes): a length field claiming gigabytes is refused
// with the cap named instead of buffered.
class PacketStream {
 public:
  PacketStream(Reader& reader, uint64_t max_packet) : reader_(reader), max_packet_(max_packet) {}

  // Parses every complete packet in pending bytes + `data`; keeps a partial one for later.
  absl::Status Feed(std::string_view data) {
    if (pending_.empty()) {
      size_t used = 0;
      absl::Status st = Consume(data, &used);
      if (st.ok()) pending_.assign(data.data() + used, data.size() - used);
      return st;
    }
    pending_.append(data.data(), data.size());
    size_t used = 0;
    absl::Status st = Consume(pending_, &used);
    pending_.erase(0, used);
    return st;
  }
  // At the end of the stream a partial packet is a truncated trace.
  absl::Status End() const {
    if (pending_.empty()) return absl::OkStatus();
    return absl::DataLossError(absl::StrCat("perfetto: truncated packet at byte ", offset_));
  }

 private:
  absl::Status Consume(std::string_view buf, size_t* used) {
    const uint64_t base = offset_;  // stream offset of buf[0]
    size_t pos = 0;
    while (pos < buf.size()) {
      const uint64_t at = base + pos;  // the packet's offset in the whole stream
      if (static_cast<uint8_t>(buf[pos]) != 0x0A)
        return absl::InvalidArgumentError(absl::StrCat("perfetto: unexpected field tag at byte ", at));
      size_t p = pos + 1;
      uint64_t len = 0;
      int shift = 0;
      bool complete = false;
      while (p < buf.size()) {
        const uint8_t b = static_cast<uint8_t>(buf[p++]);
        if (shift == 63 && b > 1)
          return absl::InvalidArgumentError(absl::StrCat("perfetto: packet length overflows at byte ", at));
        len |= uint64_t(b & 0x7F) << shift;
        shift += 7;
        if (!(b & 0x80)) {
          complete = true;
          break;
        }
        if (shift > 63)
          return absl::InvalidArgumentError(absl::StrCat("perfetto: packet length overflows at byte ", at));
      }
      if (complete && len > max_packet_)
        return absl::ResourceExhaustedError(absl::StrCat("perfetto: packet at byte ", at, " is ", len,
                                                         " bytes; the limit is ", max_packet_, " bytes"));
      if (!complete || len > buf.size() - p) break;  // the rest arrives with the next chunk
      if (!packet_.ParseFromArray(buf.data() + p, static_cast<int>(len)))
        return absl::DataLossError(absl::StrCat("perfetto: malformed packet at byte ", at));
      absl::Status st = reader_.Packet(packet_);
      if (!st.ok()) return absl::Status(st.code(), absl::StrCat(st.message(), " (packet at byte ", at, ")"));
      pos = p + len;
      *used = pos;
      offset_ = base + pos;
    }
    return absl::OkStatus();
  }

  Reader& reader_;
  const uint64_t max_packet_;
  pp::TracePacket packet_;
  std::string pending_;  // a partial packet (header included) waiting for more bytes
  uint64_t offset_ = 0;  // stream offset of pending_[0]
};

// A reader that runs out of memory (a valid-looking trace that expands past the address
// space) reports it as an error; it never aborts the CLI.
template <typename Fn>
absl::StatusOr<TraceData> ReadGuarded(Fn&& fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("perfetto: out of memory while reading the trace");
  }
}

}  // namespace

absl::StatusOr<TraceData> ReadPerfettoTraceBytes(std::string_view bytes, const TraceReadOptions& options) {
  return internal::ReadPerfettoTraceChunked(bytes, bytes.size(), options);
}

absl::StatusOr<TraceData> internal::ReadPerfettoTraceChunked(std::string_view bytes, size_t chunk,
                                                             const TraceReadOptions& options) {
  return ReadGuarded([&]() -> absl::StatusOr<TraceData> {
    Reader reader(options);
    PacketStream stream(reader, options.perfetto_max_packet_bytes);
    if (chunk == 0) chunk = 1;
    for (size_t pos = 0; pos < bytes.size(); pos += chunk) {
      absl::Status st = stream.Feed(bytes.substr(pos, chunk));
      if (!st.ok()) return st;
    }
    absl::Status st = stream.End();
    if (!st.ok()) return st;
    return reader.Finish();
  });
}

absl::StatusOr<TraceData> ReadPerfettoTrace(const std::string& path, const TraceReadOptions& options) {
  // Never blocks on a FIFO, never reads a device or directory (input_file.h).
  absl::StatusOr<int> fd = OpenInputFile(path);
  if (!fd.ok()) return fd.status();
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{*fd};
  ZSTD_DCtx* dctx = nullptr;
  struct DctxFree {
    ZSTD_DCtx*& d;
    ~DctxFree() { ZSTD_freeDCtx(d); }
  } dctx_free{dctx};
  auto prefixed = [&](const absl::Status& st) {
    return absl::Status(st.code(), absl::StrCat(path, ": ", st.message()));
  };
  absl::StatusOr<TraceData> data = ReadGuarded([&]() -> absl::StatusOr<TraceData> {
    Reader reader(options);
    PacketStream stream(reader, options.perfetto_max_packet_bytes);
    std::vector<char> in(1 << 20), out;
    bool first = true;
    size_t zstd_ret = 0;  // 0: at a frame boundary
    for (;;) {
      ssize_t n;
      do {
        n = read(*fd, in.data(), in.size());
      } while (n < 0 && errno == EINTR);
      if (n < 0) return absl::DataLossError(absl::StrCat("read: ", strerror(errno)));
      if (first && n >= 4 && !memcmp(in.data(), "\x28\xb5\x2f\xfd", 4)) {
        dctx = ZSTD_createDCtx();
        if (dctx == nullptr) return absl::ResourceExhaustedError("zstd: cannot create context");
        out.resize(ZSTD_DStreamOutSize());
      }
      first = false;
      if (n == 0) break;
      if (dctx == nullptr) {
        absl::Status st = stream.Feed(std::string_view(in.data(), static_cast<size_t>(n)));
        if (!st.ok()) return st;
        continue;
      }
      ZSTD_inBuffer zin{in.data(), static_cast<size_t>(n), 0};
      bool out_full = false;  // a full output buffer may hide more pending output
      while (zin.pos < zin.size || out_full) {
        ZSTD_outBuffer zout{out.data(), out.size(), 0};
        zstd_ret = ZSTD_decompressStream(dctx, &zout, &zin);
        if (ZSTD_isError(zstd_ret)) return absl::DataLossError(absl::StrCat("zstd: ", ZSTD_getErrorName(zstd_ret)));
        absl::Status st = stream.Feed(std::string_view(out.data(), zout.pos));
        if (!st.ok()) return st;
        out_full = zout.pos == zout.size;
      }
    }
    if (dctx != nullptr && zstd_ret != 0) return absl::DataLossError("zstd: truncated stream");
    absl::Status st = stream.End();
    if (!st.ok()) return st;
    return reader.Finish();
  });
  if (!data.ok()) return prefixed(data.status());
  return data;
}

}  // namespace kairos
