// File: json_writer.cc
// Layer: kairos_output. Kineto-compatible JSON trace layout; see json_writer.h and
// docs/OUTPUT.md. Per-kind names and args come from the one mapping in event_args.h.
// Threading: Write() runs on one kairos thread; no state survives the call.
#include "output/json_writer.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "util/log.h"
#include "json/json_reader.h"
#include "output/event_args.h"
#include "output/json_out.h"

namespace kairos {
namespace internal {

// Every event's ts and dur go through here (two per event, one per flow end): PutDecimal and
// a digit pair for the fraction, rather than std::to_chars plus three divisions (that form
// was a quarter of the JSON writer's instructions in the flush).
size_t FormatMicros(int64_t ns, char* out) {
  const uint64_t v = ns < 0 ? 0 : static_cast<uint64_t>(ns);
  const uint64_t us = v / 1000;
  const auto frac = static_cast<unsigned>(v - us * 1000);
  char* p = PutDecimal(us, out);
  p[0] = '.';
  p[1] = static_cast<char>('0' + frac / 100);
  std::memcpy(p + 2, kDigitPairs + 2 * (frac % 100), 2);
  return static_cast<size_t>(p + 4 - out);
}

}  // namespace internal

namespace {

using internal::JsonOut;

// Top-level keys the writer owns; client metadata may not reuse them (a duplicate key makes
// the result parser-dependent, trace-format-kineto-json.md §11 #4).
const char* const kReservedTopLevelKeys[] = {
    "schemaVersion", "deviceProperties", "trace_id",      "host_name",
    "kairos_stats",  "kairos_warnings",  "kairos_config", "distributedInfo",
    "displayTimeUnit", "baseTimeNanoseconds", "traceEvents", "traceName"};

constexpr int64_t kGpuSortIndexBase = 5000000;
constexpr int64_t kOverheadSortIndex = 1048576;

class TraceJsonWriter {
 public:
  TraceJsonWriter(const TraceData& data, ByteSink& sink)
      : data_(data),
        out_(sink),
        args_(data),
        kernel_rows_(data.kernels.size()),
        name_slot_(data.strings.size(), 0) {
    for (size_t k = 0; k <= kEventKindCount; ++k) {
      const char* cat = k < kEventKindCount ? kEventCategory[k] : "unknown";
      complete_prefix_[k] = absl::StrCat("\"ph\":\"X\",\"cat\":\"", cat, "\",\"name\":");
      instant_prefix_[k] = absl::StrCat("\"ph\":\"i\",\"cat\":\"", cat, "\",\"s\":\"t\",\"name\":");
    }
    pid_tid_.reserve(data.tracks.size());
    for (const Track& t : data.tracks) pid_tid_.push_back(absl::StrCat(",\"pid\":", t.pid, ",\"tid\":", t.tid));
  }

  // Invalid UTF-8 subparts replaced by U+FFFD in everything written so far.
  uint64_t replaced_utf8() const { return out_.replaced() + cached_name_replaced_; }

  absl::Status Run() {
    PlanMetadata();
    WriteHeader();
    if (absl::Status s = out_.Flush(); !s.ok()) return s;
    if (absl::Status s = WriteMetadataEvents(); !s.ok()) return s;
    if (absl::Status s = WriteEvents(); !s.ok()) return s;
    out_.Raw(",\n{\"ph\":\"i\",\"s\":\"g\",\"name\":\"Record Window End\",\"pid\":\"\",\"tid\":\"\","
             "\"ts\":");
    out_.Micros(Rel(data_.window_end_ns));
    out_.Raw("}\n],\n\"traceName\": ");
    out_.Str(data_.trace_name);
    out_.Raw("\n}\n");
    return out_.Flush();
  }

 private:
  int64_t Rel(int64_t ns) const { return ns - data_.base_time_ns; }

  // Decides which client metadata keys are written before anything is emitted, so that the
  // warnings about dropped ones can still go into "kairos_warnings".
  void PlanMetadata() {
    std::set<std::string> used(std::begin(kReservedTopLevelKeys), std::end(kReservedTopLevelKeys));
    for (const auto& [key, value] : data_.metadata) {
      if (!used.insert(key).second) {
        Warn(absl::StrCat("metadata key '", key, "' duplicates another top-level key; dropped"));
        continue;
      }
      metadata_.push_back({&key, &value, false});
    }
    for (const auto& [key, value] : data_.metadata_json) {
      if (!used.insert(key).second) {
        Warn(absl::StrCat("metadata key '", key, "' duplicates another top-level key; dropped"));
        continue;
      }
      const bool valid = IsValidJson(value);
      if (!valid) {
        Warn(absl::StrCat("metadata '", key, "' is not valid JSON; written as a string"));
      }
      metadata_.push_back({&key, &value, valid});
    }
  }
  void Warn(std::string msg) {
    KAIROS_LOG_WARNING("json writer: %s", msg.c_str());
    writer_warnings_.push_back(std::move(msg));
  }

  void WriteHeader() {
    out_.Raw("{\n\"schemaVersion\": 1");
    // Always present, an empty list without a GPU: consumers index it without a key check.
    out_.Raw(",\n\"deviceProperties\": [");
    {
      bool first = true;
      for (const DeviceInfo& d : data_.devices) {
        out_.Raw(first ? "\n{\"id\":" : ",\n{\"id\":");
        first = false;
        out_.Uint(d.id);
        out_.Raw(",\"name\":");
        out_.Str(d.name);
        out_.Raw(",\"totalGlobalMem\":");
        out_.Uint(d.total_global_mem);
        out_.Raw(",\"computeMajor\":");
        out_.Int(d.compute_major);
        out_.Raw(",\"computeMinor\":");
        out_.Int(d.compute_minor);
        out_.Raw(",\"maxThreadsPerBlock\":");
        out_.Int(d.max_threads_per_block);
        out_.Raw(",\"maxThreadsPerMultiprocessor\":");
        out_.Int(d.max_threads_per_multiprocessor);
        out_.Raw(",\"regsPerBlock\":");
        out_.Int(d.regs_per_block);
        out_.Raw(",\"warpSize\":");
        out_.Int(d.warp_size);
        out_.Raw(",\"sharedMemPerBlock\":");
        out_.Uint(d.shared_mem_per_block);
        out_.Raw(",\"numSms\":");
        out_.Int(d.num_sms);
        out_.Raw(",\"regsPerMultiprocessor\":");
        out_.Int(d.regs_per_multiprocessor);
        out_.Raw(",\"sharedMemPerBlockOptin\":");
        out_.Uint(d.shared_mem_per_block_optin);
        out_.Raw(",\"sharedMemPerMultiprocessor\":");
        out_.Uint(d.shared_mem_per_multiprocessor);
        out_.Char('}');
      }
      out_.Raw(data_.devices.empty() ? "]" : "\n]");
    }
    if (!data_.trace_id.empty()) {
      out_.Raw(",\n\"trace_id\": ");
      out_.Str(data_.trace_id);
    }
    out_.Raw(",\n\"host_name\": ");
    out_.Str(data_.host_name);
    for (const PlannedMetadata& m : metadata_) {
      out_.Raw(",\n");
      out_.Str(*m.key);
      out_.Raw(": ");
      if (m.raw_json) {
        out_.Raw(*m.value);
      } else {
        out_.Str(*m.value);
      }
    }
    out_.Raw(",\n\"kairos_stats\": {");
    bool first = true;
    for (const auto& [key, value] : data_.stats) {
      if (!first) out_.Raw(", ");
      first = false;
      out_.Str(key);
      out_.Raw(": ");
      out_.Uint(value);
    }
    out_.Raw("},\n\"kairos_warnings\": [");
    first = true;
    for (const std::vector<std::string>* list :
         {&data_.warnings, static_cast<const std::vector<std::string>*>(&writer_warnings_)}) {
      for (const std::string& w : *list) {
        if (!first) out_.Raw(", ");
        first = false;
        out_.Str(w);
      }
    }
    out_.Raw("],\n\"kairos_config\": ");
    out_.Str(data_.config_text);
    // The space after "rank": is load-bearing: HTA finds the rank with the regex
    // "rank":\s+(\d+) over the raw text (trace-consumers.md).
    out_.Raw(",\n\"distributedInfo\": {\"backend\": ");
    out_.Str(data_.distributed.backend);
    out_.Raw(", \"rank\": ");
    out_.Int(data_.distributed.rank);
    out_.Raw(", \"world_size\": ");
    out_.Int(data_.distributed.world_size);
    // Kineto writes local_rank too (PyTorch's distributedInfo); multi-rank tools read it.
    out_.Raw(", \"local_rank\": ");
    out_.Int(data_.distributed.local_rank);
    out_.Raw("},\n\"displayTimeUnit\": \"ms\",\n\"baseTimeNanoseconds\": ");
    out_.Int(data_.base_time_ns);
    out_.Raw(",\n\"traceEvents\": [");
  }

  // Starts one element of traceEvents (the first without a comma).
  void BeginEvent() {
    out_.Raw(first_event_ ? "\n{" : ",\n{");
    first_event_ = false;
  }

  template <typename Tid, typename Value>
  void Meta(int64_t pid, Tid tid, const char* name, const char* arg_key, const Value& value) {
    if (!meta_seen_.insert({pid, static_cast<int64_t>(tid), name}).second) return;
    BeginEvent();
    out_.Raw("\"ph\":\"M\",\"name\":\"");
    out_.Raw(name);
    out_.Raw("\",\"ts\":");
    out_.Micros(Rel(data_.window_start_ns));
    out_.Raw(",\"pid\":");
    out_.Int(pid);
    out_.Raw(",\"tid\":");
    out_.Int(static_cast<int64_t>(tid));
    out_.Raw(",\"args\":{\"");
    out_.Raw(arg_key);
    out_.Raw("\":");
    if constexpr (std::is_integral_v<Value>) {
      out_.Int(static_cast<int64_t>(value));
    } else {
      out_.Str(value);
    }
    out_.Raw("}}");
  }

  void CpuProcessMeta(int64_t pid) {
    Meta(pid, 0, "process_name", "name", std::string_view(data_.process_name));
    Meta(pid, 0, "process_labels", "labels", std::string_view("CPU"));
    Meta(pid, 0, "process_sort_index", "sort_index", pid);
  }
  void DeviceProcessMeta(const Track& t) {
    Meta(t.pid, 0, "process_name", "name", std::string_view(data_.process_name));
    Meta(t.pid, 0, "process_labels", "labels", absl::StrCat("GPU ", t.device));
    Meta(t.pid, 0, "process_sort_index", "sort_index", kGpuSortIndexBase + t.device);
  }

  absl::Status WriteMetadataEvents() {
    CpuProcessMeta(data_.pid);
    for (size_t i = 0; i < data_.tracks.size(); ++i) {
      if (i >= data_.events_by_track.size() || data_.events_by_track[i].empty()) continue;
      const Track& t = data_.tracks[i];
      switch (t.type) {
        case TrackType::kThread:
          CpuProcessMeta(t.pid);
          Meta(t.pid, t.tid, "thread_name", "name",
               t.name.empty() ? absl::StrCat("thread ", t.tid)
                              : absl::StrCat("thread ", t.tid, " (", t.name, ")"));
          Meta(t.pid, t.tid, "thread_sort_index", "sort_index", t.tid);
          break;
        case TrackType::kGpuStream:
          DeviceProcessMeta(t);
          Meta(t.pid, t.tid, "thread_name", "name", absl::StrCat("stream ", t.stream));
          Meta(t.pid, t.tid, "thread_sort_index", "sort_index", static_cast<int64_t>(t.stream));
          break;
        case TrackType::kGpuStreamSync:
          DeviceProcessMeta(t);
          Meta(t.pid, t.tid, "thread_name", "name", absl::StrCat("stream ", t.stream, " (sync)"));
          Meta(t.pid, t.tid, "thread_sort_index", "sort_index", static_cast<int64_t>(t.stream));
          break;
        case TrackType::kGpuDevice:
          DeviceProcessMeta(t);
          Meta(t.pid, t.tid, "thread_name", "name", absl::StrCat("Device ", t.device));
          Meta(t.pid, t.tid, "thread_sort_index", "sort_index", int64_t{-1});
          break;
        case TrackType::kOverhead:
          Meta(t.pid, 0, "process_name", "name", std::string_view("CUPTI Overhead"));
          Meta(t.pid, 0, "process_sort_index", "sort_index", kOverheadSortIndex);
          break;
      }
      if (absl::Status s = out_.MaybeFlush(); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // ac2g flows are written only in pairs (§11 #1): an "s" needs at least one "f" with its
  // correlation id and vice versa. CUPTI correlation ids are dense, so the usual plan is two
  // bitmaps over the id range (no sort; one bit test per flagged event when writing); ids
  // too sparse for that (more than 64 bits of range per flagged event) take sorted id
  // vectors (4 bytes per flagged event) and a binary search instead.
  void PlanFlows() {
    uint32_t max_id = 0;
    size_t flagged = 0;
    for (const auto& events : data_.events_by_track) {
      for (const Event& e : events) {
        if (e.correlation == 0 || !(e.flags & (kFlagFlowOut | kFlagFlowIn))) continue;
        max_id = std::max(max_id, e.correlation);
        ++flagged;
      }
    }
    if (flagged == 0) return;
    if (uint64_t{max_id} <= 64 * uint64_t{flagged} + 4096) {
      const size_t words = max_id / 64 + 1;
      std::vector<uint64_t> out_bits(words, 0);
      paired_bits_.assign(words, 0);
      for (const auto& events : data_.events_by_track) {
        for (const Event& e : events) {
          if (e.correlation == 0) continue;
          const uint64_t bit = uint64_t{1} << (e.correlation % 64);
          if (e.flags & kFlagFlowOut) out_bits[e.correlation / 64] |= bit;
          if (e.flags & kFlagFlowIn) paired_bits_[e.correlation / 64] |= bit;
        }
      }
      for (size_t w = 0; w < words; ++w) paired_bits_[w] &= out_bits[w];
      return;
    }
    std::vector<uint32_t> out_ids, in_ids;
    for (const auto& events : data_.events_by_track) {
      for (const Event& e : events) {
        if (e.correlation == 0) continue;
        if (e.flags & kFlagFlowOut) out_ids.push_back(e.correlation);
        if (e.flags & kFlagFlowIn) in_ids.push_back(e.correlation);
      }
    }
    auto sort_unique = [](std::vector<uint32_t>& v) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    };
    sort_unique(out_ids);
    sort_unique(in_ids);
    std::set_intersection(out_ids.begin(), out_ids.end(), in_ids.begin(), in_ids.end(),
                          std::back_inserter(paired_flows_));
  }
  bool Paired(const Event& e) const {
    if (e.correlation == 0) return false;
    if (!paired_bits_.empty()) {
      const size_t w = e.correlation / 64;
      return w < paired_bits_.size() && (paired_bits_[w] >> (e.correlation % 64) & 1);
    }
    return std::binary_search(paired_flows_.begin(), paired_flows_.end(), e.correlation);
  }

  // The event's display name as an escaped JSON string, escaped once per distinct name:
  // names repeat across a trace (a few hundred kernels and ops over millions of events),
  // and kernel names are long. The cache holds each distinct name once, escaped (bounded by
  // the string table plus the few derived memcpy/memset/sync names).
  void Name(const Event& e) {
    const uint64_t key = e.kind == EventKind::kUserAnnotation || e.kind == EventKind::kCpuOp
                             ? e.name
                             : internal::DisplayNameKey(data_, e);
    uint32_t* slot = key < name_slot_.size() ? &name_slot_[key] : &derived_name_slot_[key];
    if (*slot == 0) {
      const std::string_view name = internal::DisplayName(data_, e, &name_scratch_);
      const size_t off = name_text_.size();
      name_text_.resize(off + MaxEscapedSize(name.size()));
      uint64_t replaced = 0;
      const size_t n = EscapeJsonString(name, name_text_.data() + off, &replaced);
      name_text_.resize(off + n);
      names_.push_back(CachedName{off, n, replaced});
      *slot = static_cast<uint32_t>(names_.size());
    }
    const CachedName& c = names_[*slot - 1];
    out_.Raw(std::string_view(name_text_.data() + c.offset, c.size));
    cached_name_replaced_ += c.replaced;
  }

  void WriteFlow(const Event& e, uint32_t track, bool start) {
    BeginEvent();
    if (start) {
      out_.Raw("\"ph\":\"s\",\"id\":");
    } else {
      out_.Raw("\"ph\":\"f\",\"id\":");
    }
    out_.Uint(e.correlation);
    out_.Raw(pid_tid_[track]);
    out_.Raw(",\"ts\":");
    out_.Micros(Rel(e.start_ns));
    if (start) {
      out_.Raw(",\"cat\":\"ac2g\",\"name\":\"ac2g\"}");
    } else {
      out_.Raw(",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
    }
  }

  void WriteEvent(const Event& e, uint32_t track) {
    const size_t kind = std::min(static_cast<size_t>(e.kind), kEventKindCount);
    if ((e.flags & kFlagFlowIn) && Paired(e)) WriteFlow(e, track, false);
    BeginEvent();
    out_.Raw(e.kind == EventKind::kInstant ? instant_prefix_[kind] : complete_prefix_[kind]);
    Name(e);
    out_.Raw(pid_tid_[track]);
    out_.Raw(",\"ts\":");
    out_.Micros(Rel(e.start_ns));
    if (e.kind != EventKind::kInstant) {
      out_.Raw(",\"dur\":");
      out_.Micros(e.end_ns - e.start_ns);
    }
    internal::JsonArgsSink args(out_, &kernel_rows_);
    args_.Visit(e, internal::ArgScope::kEvent, args);
    args.Close();
    out_.Char('}');
    if ((e.flags & kFlagFlowOut) && Paired(e)) WriteFlow(e, track, true);
  }

  void WriteCounter(const CounterSample& c) {
    if (c.track >= data_.counter_tracks.size()) return;
    const CounterTrack& track = data_.counter_tracks[c.track];
    BeginEvent();
    out_.Raw("\"ph\":\"C\",\"name\":");
    out_.Str(track.name);
    out_.Raw(",\"pid\":");
    if (track.device >= 0) {
      out_.Int(track.device);  // under the GPU's process, next to its streams
    } else if (track.group.empty()) {
      out_.Int(data_.pid);
    } else {
      out_.Str(track.group);
    }
    out_.Raw(",\"ts\":");
    out_.Micros(Rel(c.ts_ns));
    out_.Raw(",\"args\":{");
    out_.Str(track.unit.empty() ? std::string_view("value") : std::string_view(track.unit));
    out_.Char(':');
    out_.Double(c.value);
    out_.Raw("}}");
  }

  absl::Status WriteEvents() {
    PlanFlows();
    EventMerger merger(data_);
    const Event* e = nullptr;
    uint32_t track = 0;
    size_t next_counter = 0;
    const auto& counters = data_.counter_samples;
    while (merger.Next(&e, &track)) {
      // Counters interleave by time; on a tie the counter goes first (it describes the
      // state the event starts in).
      while (next_counter < counters.size() && counters[next_counter].ts_ns <= e->start_ns) {
        WriteCounter(counters[next_counter++]);
      }
      if (track < data_.tracks.size()) WriteEvent(*e, track);
      if (absl::Status s = out_.MaybeFlush(); !s.ok()) return s;
    }
    while (next_counter < counters.size()) {
      WriteCounter(counters[next_counter++]);
      if (absl::Status s = out_.MaybeFlush(); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  struct PlannedMetadata {
    const std::string* key;
    const std::string* value;
    bool raw_json;
  };

  const TraceData& data_;
  JsonOut out_;
  internal::EventArgs args_;
  internal::RowTextCache kernel_rows_;  // kernels' row-constant args as text (json_out.h)
  std::string name_scratch_;  // backs derived display names
  std::vector<PlannedMetadata> metadata_;
  std::vector<std::string> writer_warnings_;
  std::set<std::tuple<int64_t, int64_t, std::string>> meta_seen_;
  std::vector<uint32_t> paired_flows_;  // sorted; used when paired_bits_ is empty
  std::vector<uint64_t> paired_bits_;   // bit per correlation id with both flow ends
  // Per kind (kEventKindCount = unknown): the event's text up to its name.
  std::string complete_prefix_[kEventKindCount + 1];
  std::string instant_prefix_[kEventKindCount + 1];
  std::vector<std::string> pid_tid_;  // per track: ,"pid":P,"tid":T
  struct CachedName {
    size_t offset;
    size_t size;
    uint64_t replaced;  // invalid UTF-8 subparts, counted again at every use
  };
  std::vector<uint32_t> name_slot_;  // StringId -> 1 + index into names_, 0 = not yet
  absl::flat_hash_map<uint64_t, uint32_t> derived_name_slot_;  // derived-name keys, the same
  std::vector<CachedName> names_;
  std::string name_text_;
  uint64_t cached_name_replaced_ = 0;
  bool first_event_ = true;
};

}  // namespace

absl::Status JsonTraceWriter::Write(const TraceData& data, ByteSink& sink) {
  TraceJsonWriter writer(data, sink);
  absl::Status s = writer.Run();
  replaced_utf8_ = writer.replaced_utf8();
  if (replaced_utf8_ != 0) {
    KAIROS_LOG_WARNING("json writer: %llu invalid UTF-8 sequences in names or metadata "
                       "written as U+FFFD", static_cast<unsigned long long>(replaced_utf8_));
  }
  return s;
}

}  // namespace kairos
