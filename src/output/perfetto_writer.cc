// File: perfetto_writer.cc
// Layer: kairos_output. See perfetto_writer.h for the packet layout; docs/PERFETTO.md for
// what a user sees in ui.perfetto.dev.
// Threading: one Write() call at a time per writer object.
#include "output/perfetto_writer.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "util/log.h"
#include "output/perfetto_encoder.h"

namespace kairos::internal::perfetto {

void Encoder::StartSequence(Sequence& s, int64_t t0, uint64_t default_track) {
  size_t pk = enc_.BeginNested(kTracePacket);
  enc_.Varint(kPktTimestamp, t0);
  enc_.Varint(kPktClockId, kClockBoottime);  // explicit: the defaults below switch to clock 64
  enc_.Varint(kPktSequenceId, s.id);
  enc_.Varint(kPktSequenceFlags, kSeqIncrementalStateCleared | kSeqNeedsIncrementalState);
  enc_.Bool(kPktFirstOnSequence, true);
  size_t cs = enc_.BeginNested(kPktClockSnapshot);
  size_t c = enc_.BeginNested(1);
  enc_.Varint(1, kPerfettoIncrementalClockId);
  enc_.Varint(2, t0);
  enc_.Bool(3, true);  // is_incremental: each timestamp is a delta from the previous one
  enc_.EndNested(c);
  c = enc_.BeginNested(1);
  enc_.Varint(1, kClockRealtime);
  enc_.Varint(2, t0);
  enc_.EndNested(c);
  enc_.EndNested(cs);
  size_t d = enc_.BeginNested(kPktDefaults);
  enc_.Varint(58, kPerfettoIncrementalClockId);
  if (default_track) {
    size_t ted = enc_.BeginNested(11);
    enc_.Varint(11, default_track);
    enc_.EndNested(ted);
  }
  enc_.EndNested(d);
  enc_.EndNested(pk);
  ++stats_->packets;
  s.started = true;
  s.last_ts = t0;
}

// Upper bound of an event packet without interned data: header 2, timestamp 11, sequence
// id 6, TrackEvent header 2, category 2, type 2, name 6, flow 7, and at most five debug
// annotations (External id 10, cbid 8, correlation 10, bandwidth 13, finished 6, detail 11,
// collective 11, measured 11: at most 61 together, since cbid and bandwidth exclude each
// other and only kernels carry a collective or measured values, which have neither:
// 10 + 10 + 6 + 11 + 11 + 11 = 59). Both length prefixes therefore fit one byte, which the
// direct-write path relies on.
constexpr size_t kMaxEventPacket = 2 + 11 + 6 + 2 + 2 + 2 + 6 + 7 + 61;
static_assert(kMaxEventPacket - 2 < 0x80, "an event packet's length must fit one byte");

// Marks `arg`'s name as defined on first use (interned with this packet).
inline void UseArg(Arg arg, NewInterned& ni, Sequence& s) {
  const uint32_t bit = 1u << static_cast<uint32_t>(arg);
  if (!(s.args_defined & bit)) {
    s.args_defined |= bit;
    ni.args |= bit;
  }
}

// One debug annotation {name_iid, <value field>} written directly; `value_tag` is the tag of
// the value field (varint or fixed64).
inline uint8_t* PutAnnotation(Arg arg, uint32_t value_tag, uint64_t v, bool fixed64, uint8_t* p) {
  using internal::TagValue;
  using internal::WireType;
  *p++ = TagValue(kTeDebugAnnotations, WireType::kBytes);
  uint8_t* len = p++;
  *p++ = TagValue(kDaNameIid, WireType::kVarint);
  *p++ = static_cast<uint8_t>(static_cast<uint32_t>(arg) + 1);
  p = fixed64 ? internal::PutFixed64Field(value_tag, v, p) : internal::PutVarintField(value_tag, v, p);
  *len = static_cast<uint8_t>(p - len - 1);
  return p;
}

void Encoder::WriteInterned(const NewInterned& ni) {
  enc_.Varint(kPktSequenceFlags, kSeqNeedsIncrementalState);
  size_t id = enc_.BeginNested(kPktInternedData);
  if (ni.category >= 0) {
    size_t m = enc_.BeginNested(1);
    enc_.Varint(1, static_cast<uint32_t>(ni.category) + 1);
    enc_.String(2, kEventCategory[ni.category]);
    enc_.EndNested(m);
  }
  if (ni.name) {
    size_t m = enc_.BeginNested(2);
    enc_.Varint(1, ni.name_iid);
    std::string name_scratch;
    enc_.String(2, internal::DisplayName(data_, *ni.name_event, &name_scratch));
    enc_.EndNested(m);
  }
  for (uint32_t i = 0; i < static_cast<uint32_t>(Arg::kCount); ++i) {
    if (!(ni.args & (1u << i))) continue;
    size_t m = enc_.BeginNested(3);
    enc_.Varint(1, i + 1);
    enc_.String(2, kArgNames[i]);
    enc_.EndNested(m);
  }
  if (ni.string_iid) {
    size_t m = enc_.BeginNested(29);
    enc_.Varint(1, ni.string_iid);
    enc_.String(2, *ni.string_text);
    enc_.EndNested(m);
  }
  enc_.EndNested(id);
}

inline uint32_t Encoder::NameIid(Sequence& s, const Event& e, NewInterned& ni) {
  const uint64_t name_key = e.kind == EventKind::kUserAnnotation || e.kind == EventKind::kCpuOp
                                ? e.name
                                : internal::DisplayNameKey(data_, e);
  if (const uint32_t* iid = s.name_cache.Find(name_key)) return *iid;
  auto [it, inserted] = s.name_iids.try_emplace(name_key, s.next_name_iid);
  if (inserted) {
    ++s.next_name_iid;
    ni.name = true;
    ni.name_iid = it->second;
    ni.name_event = &e;
  }
  s.name_cache.Put(name_key, it->second);
  return it->second;
}

// The interned string iid of the event's side-table row as JSON text, 0 for a bad row.
inline uint32_t Encoder::DetailIid(Sequence& s, const Event& e, NewInterned& ni) {
  const uint64_t key = (uint64_t{internal::DetailTableOf(e)} << 32) | e.detail;
  if (const uint32_t* iid = s.detail_cache.Find(key)) return *iid;
  uint32_t iid = 0;
  auto it = s.detail_iids.find(key);
  if (it != s.detail_iids.end()) {
    iid = it->second;
  } else {
    JsonWriter detail;
    internal::JsonObjectArgsSink sink(detail);
    if (event_args_.Visit(e, internal::ArgScope::kDetailRow, sink)) {
      sink.Close();
      scratch_.assign(detail.view());
      iid = s.next_string_iid++;
      ni.string_iid = iid;
      ni.string_text = &scratch_;
    }
    s.detail_iids.emplace(key, iid);  // a bad row (0) is remembered so it is formatted once
  }
  s.detail_cache.Put(key, iid);
  return iid;
}

// The interned string iid of an NCCL kernel's operation args as JSON text, 0 for any other
// event. A text not seen on this sequence yet is interned by a packet of its own (interned
// data only), written here, before the event's packet.
uint32_t Encoder::CollectiveIid(Sequence& s, const Event& e) {
  JsonWriter text;
  internal::JsonObjectArgsSink sink(text);
  if (!event_args_.VisitCollective(e, sink)) return 0;
  sink.Close();
  return InternText(s, s.collective_iids, text.view());
}

// The same for a kernel's measured PM-sampling means (mostly distinct texts: one packet each).
uint32_t Encoder::MeasuredIid(Sequence& s, const Event& e) {
  JsonWriter text;
  internal::JsonObjectArgsSink sink(text);
  if (!event_args_.VisitMeasured(e, sink)) return 0;
  sink.Close();
  return InternText(s, s.measured_iids, text.view());
}

uint32_t Encoder::InternText(Sequence& s, absl::flat_hash_map<std::string, uint32_t>& iids,
                             std::string_view text) {
  auto [it, inserted] = iids.try_emplace(std::string(text), 0);
  if (!inserted) return it->second;
  it->second = s.next_string_iid++;
  size_t pk = enc_.BeginNested(kTracePacket);
  enc_.Varint(kPktSequenceId, s.id);
  enc_.Varint(kPktSequenceFlags, kSeqNeedsIncrementalState);
  size_t id = enc_.BeginNested(kPktInternedData);
  size_t m = enc_.BeginNested(29);  // debug_annotation_string_values
  enc_.Varint(1, it->second);
  enc_.String(2, it->first);
  enc_.EndNested(m);
  enc_.EndNested(id);
  enc_.EndNested(pk);
  ++stats_->packets;
  return it->second;
}

// The head every in-place packet shares: reserves `bytes`, writes the TracePacket tag (its
// one-byte length, pk[1], is the caller's to fill) and the timestamp as a delta from the
// sequence's last one. Sets *packet to the packet's start and returns where its fields go.
inline uint8_t* Encoder::BeginPacketInPlace(Sequence& s, int64_t ts, size_t bytes,
                                            uint8_t** packet) {
  using internal::TagValue;
  using internal::WireType;
  enc_.Reserve(bytes);
  uint8_t* const pk = enc_.ptr();
  pk[0] = TagValue(kTracePacket, WireType::kBytes);
  uint8_t* p = internal::PutVarintField(TagValue(kPktTimestamp, WireType::kVarint),
                                        static_cast<uint64_t>(ts - s.last_ts), pk + 2);
  s.last_ts = ts;
  *packet = pk;
  return p;
}

// The hot path: one Reserve, then the packet is written in place with one-byte length
// prefixes (kMaxEventPacket). Only a packet that also defines interned entries takes the
// generic encoder for those, and the general EndNested for the packet length.
// An annotation whose name is defined with this packet on first use (UseArg, PutAnnotation).
inline uint8_t* PutArg(Arg arg, uint32_t value_tag, uint64_t v, bool fixed64, NewInterned& ni,
                       Sequence& s, uint8_t* p) {
  UseArg(arg, ni, s);
  return PutAnnotation(arg, value_tag, v, fixed64, p);
}

// The event's kind as a category iid, unless it is the sequence's default kind; the category
// is interned with this packet on first use.
inline uint8_t* PutCategory(EventKind kind, NewInterned& ni, Sequence& s, uint8_t* p) {
  if (kind == s.default_kind || kind >= EventKind::kCount) return p;
  const uint32_t k = static_cast<uint32_t>(kind);
  if (!(s.categories_defined & (1u << k))) {
    s.categories_defined |= 1u << k;
    ni.category = static_cast<int>(k);
  }
  return internal::PutVarintField(internal::TagValue(kTeCategoryIids, internal::WireType::kVarint),
                                  k + 1, p);
}

// A copy's or memset's bandwidth in bytes per ns (== GB/s); omitted for a zero duration and
// for an event without its side-table row, as in the JSON writer.
inline uint8_t* PutBandwidth(const TraceData& data, const Event& e, NewInterned& ni, Sequence& s,
                             uint8_t* p) {
  bool has_row = false;
  uint64_t bytes = 0;
  if (e.kind == EventKind::kMemcpy && e.detail < data.memcpys.size()) {
    bytes = data.memcpys[e.detail].bytes;
    has_row = true;
  }
  if (e.kind == EventKind::kMemset && e.detail < data.memsets.size()) {
    bytes = data.memsets[e.detail].bytes;
    has_row = true;
  }
  const int64_t dur = e.end_ns - e.start_ns;
  if (dur <= 0 || !has_row) return p;
  const double bw = double(bytes) / double(dur);
  uint64_t bits;
  memcpy(&bits, &bw, 8);
  return PutArg(Arg::kBandwidth, internal::TagValue(kDaDouble, internal::WireType::kFixed64), bits,
                true, ni, s, p);
}

// The annotations that depend on the event's kind: a runtime or driver call's cbid, the
// correlation of a call or GPU activity (when no flow carries it), a transfer's bandwidth.
inline uint8_t* PutKindArgs(const TraceData& data, const Event& e, bool flow, NewInterned& ni,
                            Sequence& s, uint8_t* p) {
  constexpr uint32_t kUintTag = internal::TagValue(kDaUint, internal::WireType::kVarint);
  switch (e.kind) {
    case EventKind::kRuntime:
    case EventKind::kDriver:
      p = PutArg(Arg::kCbid, kUintTag, e.aux, false, ni, s, p);
      [[fallthrough]];
    case EventKind::kKernel:
    case EventKind::kSync:
    case EventKind::kCudaEvent:
      if (!flow) p = PutArg(Arg::kCorrelation, kUintTag, e.correlation, false, ni, s, p);
      return p;
    case EventKind::kMemcpy:
    case EventKind::kMemset:
      if (!flow) p = PutArg(Arg::kCorrelation, kUintTag, e.correlation, false, ni, s, p);
      return PutBandwidth(data, e, ni, s, p);
    default: return p;
  }
}

// The annotations after the kind's: unfinished, and the interned texts (side-table detail,
// collective, measured values), each when present.
inline uint8_t* PutTrailingArgs(const Event& e, uint32_t detail_iid, uint32_t collective_iid,
                                uint32_t measured_iid, NewInterned& ni, Sequence& s, uint8_t* p) {
  using internal::TagValue;
  using internal::WireType;
  constexpr uint32_t kIidTag = TagValue(kDaStringIid, WireType::kVarint);
  if (e.flags & kFlagUnfinished)
    p = PutArg(Arg::kFinished, TagValue(kDaBool, WireType::kVarint), 0, false, ni, s, p);
  if (detail_iid) p = PutArg(Arg::kDetail, kIidTag, detail_iid, false, ni, s, p);
  if (collective_iid) p = PutArg(Arg::kCollective, kIidTag, collective_iid, false, ni, s, p);
  if (measured_iid) p = PutArg(Arg::kMeasured, kIidTag, measured_iid, false, ni, s, p);
  return p;
}

inline void Encoder::WriteEvent(Sequence& s, const Event& e, uint32_t type, int64_t ts) {
  using internal::TagValue;
  using internal::WireType;
  NewInterned ni;
  const uint32_t name_iid = NameIid(s, e, ni);
  const uint32_t detail_iid = e.detail != kNoDetail ? DetailIid(s, e, ni) : 0;
  // Before the event packet: a new text goes out in a packet of its own.
  const uint32_t collective_iid = data_.collectives.empty() ? 0 : CollectiveIid(s, e);
  const uint32_t measured_iid = data_.kernel_counters.empty() ? 0 : MeasuredIid(s, e);

  uint8_t* pk;
  uint8_t* p = BeginPacketInPlace(s, ts, kMaxEventPacket, &pk);
  memcpy(p, s.seq_field, sizeof(s.seq_field));
  p += s.seq_field_len;
  uint8_t* const te = p;
  te[0] = TagValue(kPktTrackEvent, WireType::kBytes);
  p += 2;
  p = PutCategory(e.kind, ni, s, p);
  *p++ = TagValue(kTeType, WireType::kVarint);
  *p++ = static_cast<uint8_t>(type);
  p = internal::PutVarintField(TagValue(kTeNameIid, WireType::kVarint), name_iid, p);
  // The flow id is the correlation id, so an event with a flow does not repeat it as a
  // `correlation` annotation (8 bytes); readers take it from the flow (docs/PERFETTO.md).
  // flow_ids_old is the varint form of flow_ids (5 bytes instead of 10 for a fixed64);
  // trace processor reads both the same way.
  const bool flow = (e.flags & (kFlagFlowOut | kFlagFlowIn)) && e.correlation;
  if (flow) p = internal::PutVarintField(TagValue(kTeFlowIdsOld, WireType::kVarint), e.correlation, p);
  if (e.external_id)
    p = PutArg(Arg::kExternalId, TagValue(kDaUint, WireType::kVarint), e.external_id, false, ni, s, p);
  p = PutKindArgs(data_, e, flow, ni, s, p);
  p = PutTrailingArgs(e, detail_iid, collective_iid, measured_iid, ni, s, p);
  te[1] = static_cast<uint8_t>(p - te - 2);
  if (ni.name || ni.category >= 0 || ni.args || ni.string_iid) {
    enc_.SetEnd(p);
    const size_t mark = enc_.OffsetOf(pk + 1);
    WriteInterned(ni);
    enc_.EndNested(mark);
    return;
  }
  pk[1] = static_cast<uint8_t>(p - pk - 2);
  enc_.SetEnd(p);
}

inline void Encoder::WriteEnd(Sequence& s, int64_t ts) {
  using internal::TagValue;
  using internal::WireType;
  uint8_t* pk;
  uint8_t* p = BeginPacketInPlace(s, ts, 2 + 11 + sizeof(s.end_tail), &pk);
  memcpy(p, s.end_tail, sizeof(s.end_tail));
  p += s.end_tail_len;
  pk[1] = static_cast<uint8_t>(p - pk - 2);
  enc_.SetEnd(p);
}

absl::Status Encoder::WriteCounters() {
  if (data_.counter_samples.empty()) return absl::OkStatus();
  using internal::TagValue;
  using internal::WireType;
  Sequence s;
  s.SetId(kPerfettoCounterSequence);
  int64_t prev = data_.counter_samples.front().ts_ns;
  StartSequence(s, prev, 0);
  for (const CounterSample& c : data_.counter_samples) {
    if (c.track >= data_.counter_tracks.size()) continue;
    // Samples are sorted by ts; an out-of-order one is clamped rather than wrapping the
    // unsigned delta.
    int64_t ts = std::max(c.ts_ns, s.last_ts);
    // Written in place like WriteEvent: at most 2 + 11 + 6 + 2 + 2 + 6 + 10 bytes, so both
    // lengths take one byte.
    uint8_t* pk;
    uint8_t* p = BeginPacketInPlace(s, ts, 64, &pk);
    memcpy(p, s.seq_field, sizeof(s.seq_field));
    p += s.seq_field_len;
    uint8_t* const te = p;
    te[0] = TagValue(kPktTrackEvent, WireType::kBytes);
    p += 2;
    *p++ = TagValue(kTeType, WireType::kVarint);
    *p++ = kCounter;
    p = internal::PutVarintField(TagValue(kTeTrackUuid, WireType::kVarint), kPerfettoCounterUuidBase + c.track, p);
    // Whole values (bytes, counts, most percentages sampled as integers) as a varint
    // counter_value: 3-7 bytes instead of the 9 of a double. Negative ones stay doubles
    // (an int64 varint of a negative value takes 10 bytes).
    if (c.value >= 0 && c.value < 9007199254740992.0 && c.value == static_cast<double>(static_cast<int64_t>(c.value))) {
      p = internal::PutVarintField(TagValue(kTeCounterValue, WireType::kVarint), static_cast<uint64_t>(c.value), p);
    } else {
      uint64_t bits;
      memcpy(&bits, &c.value, 8);
      p = internal::PutFixed64Field(TagValue(kTeDoubleCounterValue, WireType::kFixed64), bits, p);
    }
    te[1] = static_cast<uint8_t>(p - te - 2);
    pk[1] = static_cast<uint8_t>(p - pk - 2);
    enc_.SetEnd(p);
    ++stats_->packets;
    if (enc_.size() >= options_.chunk_bytes) {
      absl::Status st = Flush();
      if (!st.ok()) return st;
    }
  }
  return absl::OkStatus();
}

absl::Status Encoder::Run() {
  int64_t t0 = FirstTimestamp();
  WriteClockSnapshot(t0);
  WriteDescriptors(t0);
  WriteMetadata(t0);
  absl::Status st = Flush();
  if (!st.ok()) return st;
  st = WriteCounters();
  if (!st.ok()) return st;

  std::vector<Sequence> seqs(data_.tracks.size());
  for (size_t i = 0; i < seqs.size(); ++i) {
    seqs[i].SetId(kPerfettoFirstTrackSequence + static_cast<uint32_t>(i));
    seqs[i].default_kind = DefaultKind(data_.tracks[i].type);
  }
  EventMerger merger(data_);
  const Event* e;
  uint32_t ti;
  while (merger.Next(&e, &ti)) {
    if (ti >= seqs.size()) continue;
    Sequence& s = seqs[ti];
    if (!s.started) StartSequence(s, e->start_ns, kPerfettoTrackUuidBase + ti);
    while (!s.open_ends.empty() && s.open_ends.back() <= e->start_ns) {
      WriteEnd(s, s.open_ends.back());
      s.open_ends.pop_back();
      ++stats_->packets;
    }
    if (e->kind == EventKind::kInstant) {
      WriteEvent(s, *e, kInstant, e->start_ns);
    } else {
      int64_t end = std::max(e->end_ns, e->start_ns);
      // Perfetto slices on one track must nest; a partial overlap is clamped to the
      // enclosing slice's end and counted.
      if (!s.open_ends.empty() && end > s.open_ends.back()) {
        end = s.open_ends.back();
        ++stats_->clamped_overlaps;
      }
      WriteEvent(s, *e, kSliceBegin, e->start_ns);
      s.open_ends.push_back(end);
    }
    ++stats_->packets;
    if (enc_.size() >= options_.chunk_bytes) {
      st = Flush();
      if (!st.ok()) return st;
    }
  }
  for (Sequence& s : seqs) {
    while (!s.open_ends.empty()) {
      WriteEnd(s, s.open_ends.back());
      s.open_ends.pop_back();
      ++stats_->packets;
      if (enc_.size() >= options_.chunk_bytes) {
        st = Flush();
        if (!st.ok()) return st;
      }
    }
  }
  if (stats_->clamped_overlaps)
    KAIROS_LOG_WARNING("perfetto writer: %llu events partially overlapped an enclosing event on "
                       "their track; their ends were clamped",
                       static_cast<unsigned long long>(stats_->clamped_overlaps));
  return Flush();
}

}  // namespace kairos::internal::perfetto

namespace kairos {

absl::Status PerfettoTraceWriter::Write(const TraceData& data, ByteSink& sink) {
  stats_ = PerfettoWriteStats{};
  internal::perfetto::Encoder encoder(data, sink, options_, &stats_);
  return encoder.Run();
}

}  // namespace kairos
