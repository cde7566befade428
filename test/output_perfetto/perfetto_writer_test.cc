// File: perfetto_writer_test.cc
// Layer: test (output_perfetto). Decodes what PerfettoTraceWriter writes with the
// protoc-generated classes, replaying Perfetto's sequence rules (incremental state,
// interning, delta clock, default track), and compares every event, name, timestamp, arg
// and flow with the TraceData and with the JSON writer's output of the same data.
// Threading: single-threaded.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "output/json_writer.h"
#include "output/event_args.h"
#include "output/perfetto_writer.h"
#include "output/proto/perfetto_reader.h"
#include "output/proto/perfetto_trace.pb.h"
#include "output/writer.h"
#include "output_perfetto/reference_trace.h"
#include "output_perfetto/string_sink.h"
#include "temp_dir.h"

namespace kairos {
namespace {

namespace pp = perfetto::protos;
using nlohmann::json;
using testing::BuildReferenceTrace;

using testing::StringSink;

// Fails like a full disk once `limit` bytes have been accepted.
class FullDiskSink : public ByteSink {
 public:
  explicit FullDiskSink(size_t limit) : limit_(limit) {}
  absl::Status Write(const void*, size_t size) override {
    ++calls;
    if (failed_) ++calls_after_failure;
    if (failed_ || written_ + size > limit_) {
      failed_ = true;
      return absl::ResourceExhaustedError("write: No space left on device");
    }
    written_ += size;
    return absl::OkStatus();
  }
  absl::Status Finish() override { return absl::OkStatus(); }
  int calls = 0;
  int calls_after_failure = 0;

 private:
  size_t limit_;
  size_t written_ = 0;
  bool failed_ = false;
};

struct Slice {
  uint64_t track = 0;
  uint32_t seq = 0;
  std::string name;
  std::string category;
  int64_t ts = 0;
  int64_t end = -1;
  bool instant = false;
  json args = json::object();
  std::vector<uint64_t> flows;
};

struct Decoded {
  std::vector<Slice> slices;
  std::map<uint64_t, pp::TrackDescriptor> tracks;
  std::map<uint64_t, std::vector<std::pair<int64_t, double>>> counters;
  std::vector<std::string> errors;
  size_t packets = 0;
};

json AnnotationValue(const pp::DebugAnnotation& a, const std::map<uint64_t, std::string>& strs,
                     std::vector<std::string>* errors) {
  if (a.has_uint_value()) return a.uint_value();
  if (a.has_int_value()) return a.int_value();
  if (a.has_double_value()) return a.double_value();
  if (a.has_bool_value()) return a.bool_value();
  if (a.has_string_value()) return a.string_value();
  if (a.has_string_value_iid()) {
    auto it = strs.find(a.string_value_iid());
    if (it == strs.end()) {
      errors->push_back("undefined string iid " + std::to_string(a.string_value_iid()));
      return nullptr;
    }
    return it->second;
  }
  errors->push_back("annotation without value");
  return nullptr;
}

// Replays the trace the way trace processor reads a sequence.
Decoded Decode(const std::string& bytes) {
  Decoded out;
  pp::Trace trace;
  REQUIRE(trace.ParseFromString(bytes));
  struct Seq {
    bool cleared = false;
    bool incremental = false;
    uint64_t last = 0;
    uint64_t default_track = 0;
    std::map<uint64_t, std::string> names, cats, arg_names, strs;
  };
  std::map<uint32_t, Seq> seqs;
  std::map<uint64_t, std::vector<size_t>> open;  // per track: indices of open slices
  auto define = [&](std::map<uint64_t, std::string>& table, uint64_t iid, const std::string& v,
                    const char* what) {
    if (iid == 0) out.errors.push_back(std::string(what) + " iid 0");
    if (!table.emplace(iid, v).second) out.errors.push_back(std::string(what) + " iid redefined");
  };
  for (const pp::TracePacket& p : trace.packet()) {
    ++out.packets;
    if (!p.has_trusted_packet_sequence_id() || p.trusted_packet_sequence_id() == 0) {
      out.errors.push_back("packet without sequence id");
      continue;
    }
    uint32_t seq_id = p.trusted_packet_sequence_id();
    Seq& s = seqs[seq_id];
    if (p.sequence_flags() & 1) s = Seq{}, s.cleared = true;
    if (p.has_trace_packet_defaults()) {
      s.incremental = p.trace_packet_defaults().timestamp_clock_id() == kPerfettoIncrementalClockId;
      s.default_track = p.trace_packet_defaults().track_event_defaults().track_uuid();
    }
    if (p.has_clock_snapshot())
      for (const auto& c : p.clock_snapshot().clocks())
        if (c.clock_id() == kPerfettoIncrementalClockId && c.is_incremental()) s.last = c.timestamp();
    if (p.has_interned_data()) {
      if (!s.cleared) out.errors.push_back("interned data before incremental state cleared");
      const auto& id = p.interned_data();
      for (const auto& e : id.event_names()) define(s.names, e.iid(), e.name(), "name");
      for (const auto& e : id.event_categories()) define(s.cats, e.iid(), e.name(), "category");
      for (const auto& e : id.debug_annotation_names()) define(s.arg_names, e.iid(), e.name(), "arg name");
      for (const auto& e : id.debug_annotation_string_values()) define(s.strs, e.iid(), e.str(), "string");
    }
    uint32_t clock = p.has_timestamp_clock_id() ? p.timestamp_clock_id()
                                                : (s.incremental ? kPerfettoIncrementalClockId : 6);
    int64_t ts = static_cast<int64_t>(p.timestamp());
    if (clock == kPerfettoIncrementalClockId) ts = static_cast<int64_t>(s.last += p.timestamp());
    if (p.has_track_descriptor()) out.tracks[p.track_descriptor().uuid()] = p.track_descriptor();
    if (!p.has_track_event()) continue;
    const pp::TrackEvent& te = p.track_event();
    uint64_t track = te.has_track_uuid() ? te.track_uuid() : s.default_track;
    if (te.type() == pp::TrackEvent::TYPE_COUNTER) {
      // Whole non-negative values are written as int64 counter_value, others as doubles.
      out.counters[track].push_back(
          {ts, te.has_counter_value() ? double(te.counter_value()) : te.double_counter_value()});
      continue;
    }
    if (te.type() == pp::TrackEvent::TYPE_SLICE_END) {
      if (open[track].empty()) {
        out.errors.push_back("END without BEGIN");
        continue;
      }
      out.slices[open[track].back()].end = ts;
      open[track].pop_back();
      continue;
    }
    Slice sl;
    sl.track = track;
    sl.seq = seq_id;
    sl.ts = ts;
    sl.instant = te.type() == pp::TrackEvent::TYPE_INSTANT;
    if (sl.instant) sl.end = ts;
    if (te.has_name_iid()) {
      auto it = s.names.find(te.name_iid());
      if (it == s.names.end()) out.errors.push_back("undefined name iid");
      else sl.name = it->second;
    } else {
      sl.name = te.name();
    }
    for (uint64_t c : te.category_iids()) {
      auto it = s.cats.find(c);
      if (it == s.cats.end()) out.errors.push_back("undefined category iid");
      else sl.category = it->second;
    }
    for (const auto& a : te.debug_annotations()) {
      std::string name = a.name();
      if (a.has_name_iid()) {
        auto it = s.arg_names.find(a.name_iid());
        if (it == s.arg_names.end()) {
          out.errors.push_back("undefined arg name iid");
          continue;
        }
        name = it->second;
      }
      json v = AnnotationValue(a, s.strs, &out.errors);
      if (name == kPerfettoDetailArg || name == kPerfettoCollectiveArg || name == kPerfettoMeasuredArg) {
        json detail = json::parse(v.get<std::string>());
        for (auto& [k, dv] : detail.items()) sl.args[k] = dv;
      } else {
        sl.args[name] = v;
      }
    }
    for (uint64_t f : te.flow_ids()) sl.flows.push_back(f);
    for (uint64_t f : te.flow_ids_old()) sl.flows.push_back(f);
    // The documented rule (docs/PERFETTO.md): an event with a flow carries its correlation
    // id only as the flow id.
    if (!sl.flows.empty() && !sl.args.contains("correlation")) sl.args["correlation"] = sl.flows.front();
    out.slices.push_back(std::move(sl));
    if (te.type() == pp::TrackEvent::TYPE_SLICE_BEGIN) open[track].push_back(out.slices.size() - 1);
  }
  for (auto& [track, v] : open)
    if (!v.empty()) out.errors.push_back("slice never ended on track " + std::to_string(track));
  return out;
}

std::string WritePerfetto(const TraceData& data, size_t chunk = 4096, PerfettoWriteStats* stats = nullptr) {
  PerfettoWriterOptions opt;
  opt.chunk_bytes = chunk;
  PerfettoTraceWriter w(opt);
  StringSink sink;
  REQUIRE(w.Write(data, sink).ok());
  if (stats) *stats = w.stats();
  return sink.out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST_CASE("every event decodes with exact names, timestamps and tracks") {
  TraceData data = BuildReferenceTrace();
  PerfettoWriteStats stats;
  std::string bytes = WritePerfetto(data, 4096, &stats);
  Decoded dec = Decode(bytes);
  INFO((dec.errors.empty() ? std::string() : dec.errors.front()));
  REQUIRE(dec.errors.empty());
  CHECK(stats.bytes == bytes.size());
  CHECK(stats.packets == dec.packets);
  CHECK(stats.clamped_overlaps == 0);

  struct Key {
    uint64_t track;
    int64_t ts, end;
    std::string name;
    bool operator<(const Key& o) const {
      return std::tie(track, ts, end, name) < std::tie(o.track, o.ts, o.end, o.name);
    }
    bool operator==(const Key& o) const {
      return track == o.track && ts == o.ts && end == o.end && name == o.name;
    }
  };
  std::vector<Key> want, got;
  std::string scratch;
  for (size_t ti = 0; ti < data.tracks.size(); ++ti)
    for (const Event& e : data.events_by_track[ti])
      want.push_back({kPerfettoTrackUuidBase + ti, e.start_ns, e.end_ns,
                      std::string(internal::DisplayName(data, e, &scratch))});
  for (const Slice& s : dec.slices)
    if (s.track != kPerfettoMetadataUuid) got.push_back({s.track, s.ts, s.end, s.name});
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  REQUIRE(got.size() == data.EventCount());
  CHECK(got == want);

  // Track descriptors: process, metadata, one GPU, 7 event tracks, counter group + 2 counters.
  CHECK(dec.tracks.size() == 13);
  const pp::TrackDescriptor& main_thread = dec.tracks.at(kPerfettoTrackUuidBase + 0);
  CHECK(main_thread.thread().pid() == 4242);
  CHECK(main_thread.thread().tid() == 4242);
  CHECK(main_thread.thread().thread_name() == "main");
  CHECK(dec.tracks.at(kPerfettoProcessUuid).process().process_name() == "train.py");
  CHECK(dec.tracks.at(kPerfettoTrackUuidBase + 2).name() == "stream 7");
  CHECK(dec.tracks.at(kPerfettoTrackUuidBase + 2).parent_uuid() == kPerfettoDeviceUuidBase + 0);
  CHECK(dec.tracks.at(kPerfettoTrackUuidBase + 4).name() == "stream 7 (sync)");
  CHECK(dec.tracks.at(kPerfettoTrackUuidBase + 6).name() == "CUPTI Overhead");
  CHECK(dec.tracks.at(kPerfettoCounterUuidBase + 0).counter().unit_name() == "%");

  // Counters: 5 samples per track, exact ns and values.
  REQUIRE(dec.counters[kPerfettoCounterUuidBase + 0].size() == 5);
  REQUIRE(dec.counters[kPerfettoCounterUuidBase + 1].size() == 5);
  CHECK(dec.counters[kPerfettoCounterUuidBase + 0][3] ==
        std::make_pair<int64_t, double>(testing::kRefT0 + 300000, 31.5));
  CHECK(dec.counters[kPerfettoCounterUuidBase + 1][4] ==
        std::make_pair<int64_t, double>(testing::kRefT0 + 400001, 1e9 + 4));

  // Trace-level metadata instant.
  const Slice* meta = nullptr;
  for (const Slice& s : dec.slices)
    if (s.track == kPerfettoMetadataUuid) meta = &s;
  REQUIRE(meta != nullptr);
  CHECK(meta->args["host_name"] == "node-1");
  CHECK(meta->args["trace_id"] == "run-7");
  CHECK(meta->args["meta.PT_PROFILER_JOB_NAME"] == "job \"q\" \x01 \xc3\xa9");
  CHECK(meta->args["json.custom"] == "{\"a\":[1,2]}");
  CHECK(meta->args["stats.cupti_dropped"] == 3);
  CHECK(meta->args["distributed.rank"] == 3);
  CHECK(meta->args["device.0.numSms"] == 132);
}

// Every slice's args and flows against the JSON writer's output of the same data.
void CheckArgsMatchJson(const TraceData& data) {
  Decoded dec = Decode(WritePerfetto(data));
  REQUIRE(dec.errors.empty());
  StringSink js;
  JsonTraceWriter jw;
  REQUIRE(jw.Write(data, js).ok());
  json doc = json::parse(js.out);
  int64_t base = doc["baseTimeNanoseconds"].get<int64_t>();
  std::map<std::pair<std::string, int64_t>, json> json_events;  // (name, ts) -> event
  std::set<std::pair<uint64_t, int64_t>> json_flow_s, json_flow_f;
  for (const json& ev : doc["traceEvents"]) {
    std::string ph = ev["ph"];
    if (!ev.contains("ts")) continue;
    int64_t ts = base + std::llround(ev["ts"].get<double>() * 1000.0);
    if (ph == "s") json_flow_s.insert({ev["id"].get<uint64_t>(), ts});
    if (ph == "f") json_flow_f.insert({ev["id"].get<uint64_t>(), ts});
    if ((ph == "X" || ph == "i") && ev.contains("cat"))
      json_events[{ev["name"].get<std::string>(), ts}] = ev;
  }
  size_t compared = 0;
  std::set<std::pair<uint64_t, int64_t>> pf_flows;
  for (const Slice& s : dec.slices) {
    if (s.track == kPerfettoMetadataUuid) continue;
    auto it = json_events.find({s.name, s.ts});
    INFO(s.name << " @" << s.ts);
    REQUIRE(it != json_events.end());
    const json& ev = it->second;
    json args = ev.contains("args") ? ev["args"] : json::object();
    CHECK(s.args == args);
    if (ev["ph"] == "X") {
      int64_t dur = std::llround(ev["dur"].get<double>() * 1000.0);
      CHECK(s.end - s.ts == dur);
    }
    for (uint64_t f : s.flows) pf_flows.insert({f, s.ts});
    ++compared;
  }
  CHECK(compared == data.EventCount());
  std::set<std::pair<uint64_t, int64_t>> json_flows = json_flow_s;
  json_flows.insert(json_flow_f.begin(), json_flow_f.end());
  CHECK(pf_flows == json_flows);
  CHECK(pf_flows.size() == 4);  // 2 launches -> kernel and memcpy
}

TEST_CASE("args and flows match the JSON writer's output of the same data") {
  CheckArgsMatchJson(BuildReferenceTrace(20));
}

TEST_CASE("NCCL kernels carry their operation's args, each distinct text interned once") {
  TraceData data = BuildReferenceTrace(20);
  data.distributed.world_size = 4;
  // Eight more launches of the first kernel on its stream, after everything else.
  for (size_t ti = 0; ti < data.events_by_track.size(); ++ti) {
    auto& track = data.events_by_track[ti];
    auto k = std::find_if(track.begin(), track.end(), [](const Event& e) { return e.kind == EventKind::kKernel; });
    if (k == track.end()) continue;
    Event more = *k;
    for (uint32_t i = 0; i < 8; ++i) {
      more.correlation = 1000 + i;
      more.flags = 0;
      more.external_id = 0;
      more.start_ns = data.window_end_ns - 10000 + 1000 * i;
      more.end_ns = more.start_ns + 500;
      track.push_back(more);
    }
    break;
  }
  data.SortTracks();
  size_t kernels = 0;
  for (const auto& track : data.events_by_track) {
    for (const Event& e : track) {
      if (e.kind != EventKind::kKernel) continue;
      ++kernels;
      CollectiveRecord c;
      c.correlation = e.correlation;
      c.func = CollectiveFunc::kAllReduce;
      c.dtype = CollectiveDtype::kFloat32;
      c.comm_size = 4;
      c.in_nelems = c.out_nelems = 65536;
      data.collectives.push_back(c);
    }
  }
  REQUIRE(kernels == 10);
  std::sort(data.collectives.begin(), data.collectives.end(),
            [](const CollectiveRecord& a, const CollectiveRecord& b) { return a.correlation < b.correlation; });
  // Three of them also measured by PM sampling (one without an occupancy value).
  for (uint32_t c : {1001u, 1003u, 1005u}) {
    KernelCounters kc;
    kc.correlation = c;
    kc.samples = c - 1000;
    kc.sm_active_pct = 12.5f * static_cast<float>(c - 1000);
    kc.occupancy_pct = c == 1003 ? -1.0f : 40.0f;
    data.kernel_counters.push_back(kc);
  }
  CheckArgsMatchJson(data);  // "Collective name" ... and "SM active %" ... as in JSON
  const std::string bytes = WritePerfetto(data);
  const std::string text =
      R"({"Collective name":"allreduce","In msg nelems":65536,"Out msg nelems":65536,"dtype":"Float","Group size":4,"Process Group Ranks":"[0, 1, 2, 3]"})";
  size_t copies = 0;
  for (size_t at = bytes.find(text); at != std::string::npos; at = bytes.find(text, at + 1)) ++copies;
  CHECK(copies == 2);  // once on each of the two GPU stream sequences, however many kernels
  // kairos' own reader (kairos convert, summarize) gets the records back.
  absl::StatusOr<TraceData> back = ReadPerfettoTraceBytes(bytes);
  REQUIRE(back.ok());
  REQUIRE(back->collectives.size() == data.collectives.size());
  for (size_t i = 0; i < data.collectives.size(); ++i) {
    CHECK(back->collectives[i].correlation == data.collectives[i].correlation);
    CHECK(back->collectives[i].func == CollectiveFunc::kAllReduce);
    CHECK(back->collectives[i].in_nelems == 65536);
  }
}

TEST_CASE("interned tables: each name and arg name defined once per sequence, on first use") {
  TraceData data = BuildReferenceTrace(300);
  std::string bytes = WritePerfetto(data);
  pp::Trace trace;
  REQUIRE(trace.ParseFromString(bytes));
  std::map<uint32_t, std::set<std::string>> names;
  std::map<uint32_t, int> first_flags;
  for (const auto& p : trace.packet()) {
    uint32_t seq = p.trusted_packet_sequence_id();
    if (!first_flags.count(seq)) first_flags[seq] = p.sequence_flags();
    for (const auto& n : p.interned_data().event_names()) CHECK(names[seq].insert(n.name()).second);
  }
  // The worker thread (sequence 3 + 1) names exactly its 6 distinct names once.
  CHECK(names[kPerfettoFirstTrackSequence + 1] ==
        std::set<std::string>{"op \"\xc3\xbc\"\n", "fwd", "bwd", "optim", "zero_grad", "load"});
  for (const auto& [seq, flags] : first_flags)
    if (seq >= kPerfettoFirstTrackSequence) CHECK(flags == 3);
}

TEST_CASE("a lean range costs 24 bytes once names are interned") {
  auto build = [](int n) {
    TraceData d;
    d.pid = 1;
    uint32_t t = d.AddTrack({TrackType::kThread, 1, 1, 0, 0, ""});
    StringId name = d.strings.Intern("step");
    for (int i = 0; i < n; ++i) {
      Event e{};
      e.start_ns = 1700000000000000000LL + i * 1000;
      e.end_ns = e.start_ns + 500;
      e.name = name;
      e.track = t;
      e.detail = kNoDetail;
      e.kind = EventKind::kUserAnnotation;
      d.events_by_track[t].push_back(e);
    }
    return d;
  };
  size_t a = WritePerfetto(build(100)).size();
  size_t b = WritePerfetto(build(200)).size();
  // BEGIN: packet tag+len 2, ts delta 1+2, sequence 2, track_event tag+len 2, type 2,
  // name_iid 2 = 13; END: 2 + 3 + 2 + 2 + 2 = 11.
  CHECK(b - a == 100 * 24);
}

TEST_CASE("writer stops at the first sink error and reports it") {
  TraceData data = BuildReferenceTrace(2000);
  PerfettoWriterOptions opt;
  opt.chunk_bytes = 1024;
  PerfettoTraceWriter w(opt);
  FullDiskSink sink(8192);
  absl::Status st = w.Write(data, sink);
  CHECK(st.code() == absl::StatusCode::kResourceExhausted);
  CHECK(std::string(st.message()).find("No space left") != std::string::npos);
  CHECK(sink.calls >= 2);
  CHECK(sink.calls_after_failure == 0);  // nothing is written after the first error
}

TEST_CASE("ENOSPC-like failure mid-file leaves no partial file under the final name") {
  TraceData data = BuildReferenceTrace(5000);
  const testing::TempDir temp("kairos_pf_");
  const std::string& dir = temp.path();
  std::string path = dir + "/trace.pftrace";
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit old;
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
  struct rlimit small = old;
  small.rlim_cur = 16384;  // EFBIG after 16 KiB: the disk-full path of write(2)
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  OutputOptions req;
  req.path = path;
  absl::Status st = WriteTraceFile(data, req);
  REQUIRE(setrlimit(RLIMIT_FSIZE, &old) == 0);
  CHECK(!st.ok());
  CHECK(std::string(st.message()).find("trace.pftrace") != std::string::npos);
  struct stat sb;
  CHECK(stat(path.c_str(), &sb) != 0);
  CHECK(std::system(("test -z \"$(ls -A " + dir + ")\"").c_str()) == 0);  // no temp file left
}

TEST_CASE("WriteTraceFile picks the format from the name; zstd decompresses to the same bytes") {
  TraceData data = BuildReferenceTrace(3000);
  const testing::TempDir temp("kairos_pf_");
  const std::string& dir = temp.path();
  OutputOptions plain;
  plain.path = dir + "/t.pftrace";
  REQUIRE(WriteTraceFile(data, plain).ok());
  OutputOptions zst;
  zst.path = dir + "/t.pftrace.zst";
  zst.zstd_level = 3;
  REQUIRE(WriteTraceFile(data, zst).ok());
  std::string raw = ReadFile(plain.path);
  CHECK(raw == WritePerfetto(data));
  REQUIRE(std::system(("zstd -q -d -c " + zst.path + " > " + dir + "/d.pftrace").c_str()) == 0);
  CHECK(ReadFile(dir + "/d.pftrace") == raw);
  CHECK(ReadFile(zst.path).size() < raw.size() / 2);
}

TEST_CASE("partially overlapping events are clamped to nest and counted") {
  TraceData d;
  d.pid = 1;
  uint32_t t = d.AddTrack({TrackType::kThread, 1, 1, 0, 0, "x"});
  auto add = [&](int64_t s, int64_t e) {
    Event ev{};
    ev.start_ns = s;
    ev.end_ns = e;
    ev.name = d.strings.Intern("r");
    ev.track = t;
    ev.detail = kNoDetail;
    ev.kind = EventKind::kCpuOp;
    d.events_by_track[t].push_back(ev);
  };
  add(1000, 2000);
  add(1500, 2500);  // crosses the end of the first
  PerfettoWriteStats stats;
  Decoded dec = Decode(WritePerfetto(d, 4096, &stats));
  REQUIRE(dec.errors.empty());
  CHECK(stats.clamped_overlaps == 1);
  REQUIRE(dec.slices.size() == 3);  // metadata instant + 2
  CHECK(dec.slices[2].ts == 1500);
  CHECK(dec.slices[2].end == 2000);
}

}  // namespace
}  // namespace kairos
