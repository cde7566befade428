// File: perfetto_encoder.h
// Layer: kairos_output (internal to the Perfetto writer). The encoder's field numbers, per-
// sequence interning state and the Encoder class, shared by perfetto_writer.cc (sequences,
// interning, events, counters) and perfetto_descriptors.cc (clock snapshot, track
// descriptors, metadata).
// Threading: one Encoder per Write() call.
#ifndef KAIROS_SRC_OUTPUT_PERFETTO_ENCODER_H_
#define KAIROS_SRC_OUTPUT_PERFETTO_ENCODER_H_

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "output/event_args.h"
#include "output/perfetto_writer.h"
#include "output/proto_encoder.h"

namespace kairos::internal::perfetto {

using ::kairos::internal::ProtoEncoder;

// Perfetto field numbers (perfetto_trace.proto).
enum PacketField : uint32_t {
  kTracePacket = 1,
  kPktClockSnapshot = 6,
  kPktTimestamp = 8,
  kPktSequenceId = 10,
  kPktTrackEvent = 11,
  kPktInternedData = 12,
  kPktSequenceFlags = 13,
  kPktClockId = 58,
  kPktDefaults = 59,
  kPktTrackDescriptor = 60,
  kPktFirstOnSequence = 87,
};
enum TrackEventField : uint32_t {
  kTeCategoryIids = 3,
  kTeDebugAnnotations = 4,
  kTeType = 9,
  kTeNameIid = 10,
  kTeTrackUuid = 11,
  kTeName = 23,
  kTeCounterValue = 30,
  kTeFlowIdsOld = 36,
  kTeDoubleCounterValue = 44,
};
enum TrackEventType : uint32_t { kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4 };
enum DebugAnnotationField : uint32_t {
  kDaNameIid = 1,
  kDaBool = 2,
  kDaUint = 3,
  kDaInt = 4,
  kDaDouble = 5,
  kDaString = 6,
  kDaName = 10,
  kDaStringIid = 17,
};
inline constexpr uint32_t kClockRealtime = 1;
inline constexpr uint32_t kClockBoottime = 6;
inline constexpr uint32_t kSeqIncrementalStateCleared = 1;
inline constexpr uint32_t kSeqNeedsIncrementalState = 2;

// Debug annotation names interned per sequence; iid = index + 1.
enum class Arg : uint8_t {
  kExternalId = 0, kCorrelation, kCbid, kBandwidth, kFinished, kDetail, kCollective, kMeasured, kCount
};
inline constexpr const char* kArgNames[] = {::kairos::internal::arg_keys::kExternalId, ::kairos::internal::arg_keys::kCorrelation,
                                     ::kairos::internal::arg_keys::kCbid,       ::kairos::internal::arg_keys::kBandwidth,
                                     ::kairos::internal::arg_keys::kFinished,   kPerfettoDetailArg,
                                     kPerfettoCollectiveArg,           kPerfettoMeasuredArg};
static_assert(sizeof(kArgNames) / sizeof(kArgNames[0]) == static_cast<size_t>(Arg::kCount));

// Events of a track's most common kind omit their category (the reader restores it), which
// saves 2 bytes per range; every other kind names its category.
inline EventKind DefaultKind(TrackType type) {
  switch (type) {
    case TrackType::kThread: return EventKind::kUserAnnotation;
    case TrackType::kGpuStream: return EventKind::kKernel;
    case TrackType::kGpuStreamSync:
    case TrackType::kGpuDevice: return EventKind::kSync;
    case TrackType::kOverhead: return EventKind::kOverhead;
  }
  return EventKind::kCpuOp;
}

// A direct-mapped cache in front of an interning map: a trace uses a few dozen names per
// track in long repeating patterns, so nearly every lookup hits here and skips the hash map
// probe (a one-entry cache only helped runs of the same name).
class IidCache {
 public:
  static constexpr size_t kSlots = 64;
  // The iid cached for `key`, or nullptr.
  const uint32_t* Find(uint64_t key) const {
    const Slot& s = slots_[SlotOf(key)];
    return s.key == key ? &s.iid : nullptr;
  }
  void Put(uint64_t key, uint32_t iid) { slots_[SlotOf(key)] = Slot{key, iid}; }

 private:
  struct Slot {
    uint64_t key = ~0ull;  // no key is ~0: names are 32-bit ids or tagged below 2^40
    uint32_t iid = 0;
  };
  static size_t SlotOf(uint64_t key) { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 58); }
  Slot slots_[kSlots];
};

struct Sequence {
  uint32_t id = 0;
  bool started = false;
  EventKind default_kind = EventKind::kCpuOp;
  int64_t last_ts = 0;
  uint32_t categories_defined = 0;  // bit per EventKind
  uint32_t args_defined = 0;        // bit per Arg
  uint32_t next_name_iid = 1;
  uint32_t next_string_iid = 1;
  IidCache name_cache;
  IidCache detail_cache;
  absl::flat_hash_map<uint64_t, uint32_t> name_iids;  // DisplayNameKey -> iid
  absl::flat_hash_map<uint64_t, uint32_t> detail_iids;
  absl::flat_hash_map<std::string, uint32_t> collective_iids;  // args text -> string iid
  absl::flat_hash_map<std::string, uint32_t> measured_iids;
  std::vector<int64_t> open_ends;  // non-increasing: enclosing ranges end last
  // The bytes every packet of this sequence repeats after its timestamp, precomputed:
  // trusted_packet_sequence_id, and for END packets also the whole TrackEvent.
  uint8_t seq_field[8] = {};
  uint8_t seq_field_len = 0;
  uint8_t end_tail[12] = {};
  uint8_t end_tail_len = 0;

  void SetId(uint32_t sequence_id) {
    id = sequence_id;
    seq_field_len = static_cast<uint8_t>(
        ::kairos::internal::PutVarintField(::kairos::internal::TagValue(10, ::kairos::internal::WireType::kVarint), id, seq_field) -
        seq_field);
    memcpy(end_tail, seq_field, seq_field_len);
    // TrackEvent (field 11) of 2 bytes: type (field 9) = SLICE_END (2).
    const uint8_t te[4] = {::kairos::internal::TagValue(11, ::kairos::internal::WireType::kBytes), 2,
                           ::kairos::internal::TagValue(9, ::kairos::internal::WireType::kVarint), 2};
    memcpy(end_tail + seq_field_len, te, sizeof(te));
    end_tail_len = static_cast<uint8_t>(seq_field_len + sizeof(te));
  }
};

// Interned entries a packet defines; filled before the packet's TrackEvent is encoded and
// written after it (the reader applies a packet's interned_data before its TrackEvent).
struct NewInterned {
  bool name = false;
  uint32_t name_iid = 0;
  const Event* name_event = nullptr;
  int category = -1;
  uint32_t args = 0;  // bit per Arg
  uint32_t string_iid = 0;
  std::string* string_text = nullptr;
};

class Encoder {
 public:
  Encoder(const TraceData& data, ByteSink& sink, const PerfettoWriterOptions& options,
          PerfettoWriteStats* stats)
      : data_(data), sink_(sink), options_(options), stats_(stats),
        enc_(options.chunk_bytes + 4096), event_args_(data) {}

  absl::Status Run();

 private:
  int64_t FirstTimestamp() const;
  void WriteClockSnapshot(int64_t t0);
  void WriteDescriptors(int64_t t0);
  // One TrackDescriptor packet on the metadata sequence: Begin returns the packet's and the
  // descriptor's nesting marks, which End closes.
  std::pair<size_t, size_t> BeginDescriptor(int64_t t0, uint64_t uuid, uint64_t parent);
  void EndDescriptor(std::pair<size_t, size_t> marks);
  void WriteTrackDescriptor(int64_t t0, size_t track);
  void WriteCounterDescriptors(int64_t t0);
  void WriteMetadata(int64_t t0);
  void StartSequence(Sequence& s, int64_t t0, uint64_t default_track);
  absl::Status WriteCounters();
  // The per-event path, inline and defined in perfetto_writer.cc (its only user): out of line
  // (external linkage since this class left that file) they were not inlined into Run, and
  // kernels and training events encoded 12-18% slower (docs/PERFORMANCE.md, "The run of
  // 2026-11-28, session 15").
  inline void WriteEvent(Sequence& s, const Event& e, uint32_t type, int64_t ts);
  uint32_t CollectiveIid(Sequence& s, const Event& e);
  inline uint8_t* BeginPacketInPlace(Sequence& s, int64_t ts, size_t bytes, uint8_t** packet);
  uint32_t MeasuredIid(Sequence& s, const Event& e);
  // `text`'s string iid on sequence `s`, defined by a packet of its own when new.
  uint32_t InternText(Sequence& s, absl::flat_hash_map<std::string, uint32_t>& iids,
                      std::string_view text);
  inline void WriteEnd(Sequence& s, int64_t ts);
  inline uint32_t NameIid(Sequence& s, const Event& e, NewInterned& ni);
  inline uint32_t DetailIid(Sequence& s, const Event& e, NewInterned& ni);
  void WriteInterned(const NewInterned& ni);
  uint64_t DeviceUuid(uint32_t device) const { return kPerfettoDeviceUuidBase + device; }
  absl::Status Flush() {
    if (enc_.size() == 0) return absl::OkStatus();
    stats_->bytes += enc_.size();
    absl::Status st = sink_.Write(enc_.data(), enc_.size());
    enc_.Clear();
    return st;
  }

  const TraceData& data_;
  ByteSink& sink_;
  const PerfettoWriterOptions& options_;
  PerfettoWriteStats* stats_;
  ProtoEncoder enc_;
  std::string scratch_;
  ::kairos::internal::EventArgs event_args_;  // THE argument mapping (detail rows)
};

}  // namespace kairos::internal::perfetto

#endif  // KAIROS_SRC_OUTPUT_PERFETTO_ENCODER_H_
