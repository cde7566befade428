// File: json_reader_test.cc
// Layer: test (output_perfetto). The streaming Kineto JSON reader: exact timestamps, both
// time bases, string pids and legacy categories, compressed input, errors with offsets,
// and a lossless JSON -> TraceData -> JSON round trip of the reference session.
// Threading: single-threaded.
#include "output/json_reader.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "output/json_writer.h"
#include "output_perfetto/json_compare.h"
#include "output_perfetto/reference_trace.h"
#include "output_perfetto/string_sink.h"
#include "temp_dir.h"

namespace kairos {
namespace {

using nlohmann::json;

using testing::StringSink;

std::string JsonOf(const TraceData& d) {
  StringSink s;
  JsonTraceWriter w;
  REQUIRE(w.Write(d, s).ok());
  return s.out;
}

TEST_CASE("callbacks see metadata keys in order and events with exact ns times") {
  const char* text = R"J({"schemaVersion": 1, "host_name": "h", "baseTimeNanoseconds": 1790857026000000000,
    "traceEvents": [
      {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":4447152481407.127,"dur":8.000,"args":{"grid":[1,2,3]}},
      7,
      {"ph":"i","s":"g","name":"Record Window End","pid":"","tid":"","ts":0.001}
    ],
    "traceName": "x.json"})J";
  std::vector<std::string> keys;
  std::vector<KinetoEvent> events;
  KinetoJsonCallbacks cb;
  cb.on_metadata = [&](std::string_view k, const JsonValue&) { keys.emplace_back(k); };
  cb.on_event = [&](const KinetoEvent& e) { events.push_back(e); };
  KinetoJsonStats stats;
  REQUIRE(ReadKinetoJsonText(text, cb, &stats).ok());
  CHECK(keys == std::vector<std::string>{"schemaVersion", "host_name", "baseTimeNanoseconds", "traceName"});
  CHECK(stats.events == 2);
  CHECK(stats.skipped == 1);
  REQUIRE(events.size() == 2);
  CHECK(events[0].ts_ns == 1790857026000000000LL + 4447152481407127LL);
  CHECK(events[0].dur_ns == 8000);
  CHECK(events[0].args.Find("grid")->items[2].AsUint() == 3);
  CHECK(events[1].pid.is_string());
  CHECK(events[1].ts_ns == 1790857026000000001LL);
}

TEST_CASE("PyTorch-style absolute integer microseconds, string pids and legacy categories") {
  const char* text = R"J({"traceEvents":[
    {"ph":"X","cat":"Operator","name":"aten::add","pid":1166,"tid":1166,"ts":1740461679471323,"dur":22,"args":{"external id":5}},
    {"ph":"X","cat":"Runtime","name":"cudaLaunchKernel","pid":1166,"tid":1166,"ts":1740461679471330,"dur":5,"args":{"correlation":9,"cbid":211}},
    {"ph":"s","id":9,"pid":1166,"tid":1166,"ts":1740461679471330,"cat":"ac2g","name":"ac2g"},
    {"ph":"f","id":9,"pid":0,"tid":7,"ts":1740461679471346,"cat":"ac2g","name":"ac2g","bp":"e"},
    {"ph":"X","cat":"Kernel","name":"k","pid":0,"tid":7,"ts":1740461679471346,"dur":52,"args":{"correlation":9,"device":0,"stream":7,"grid":[4096,1,1],"block":[128,1,1]}},
    {"ph":"X","cat":"Trace","name":"PyTorch Profiler (0)","pid":"Spans","tid":"PyTorch Profiler","ts":1740461679471300,"dur":100}
  ]})J";
  absl::StatusOr<TraceData> d = ReadKinetoJsonTraceText(text);
  REQUIRE(d.ok());
  CHECK(d->EventCount() == 3);
  CHECK(d->stats.at("json_reader.unmapped") == 1);  // the span
  REQUIRE(d->tracks.size() == 2);
  const Event& op = d->events_by_track[0][0];
  CHECK(op.kind == EventKind::kCpuOp);
  CHECK(op.start_ns == 1740461679471323000LL);
  CHECK(op.end_ns == 1740461679471345000LL);
  CHECK(op.external_id == 5);
  const Event& rt = d->events_by_track[0][1];
  CHECK(rt.kind == EventKind::kRuntime);
  CHECK(rt.aux == 211);
  CHECK(rt.flags == kFlagFlowOut);
  CHECK(d->tracks[1].type == TrackType::kGpuStream);
  CHECK(d->tracks[1].stream == 7);
  const Event& k = d->events_by_track[1][0];
  CHECK(k.flags == kFlagFlowIn);
  REQUIRE(k.detail == 0);
  CHECK(d->kernels[0].grid[0] == 4096);
  CHECK(d->kernels[0].block[0] == 128);
}

// `kairos summarize` reads with for_analysis: side-table rows keep only the fields the
// analysis reads and are stored once per distinct row; CpuArgs are not kept; events are.
TEST_CASE("for_analysis keeps the analysed side-table fields, each distinct row once, and no CpuArgs") {
  const char* text = R"J({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"nvtx","pid":1,"tid":1,"ts":1,"dur":50,"args":{"domain":"d","color":"#ff0000"}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":2,"dur":1,"args":{"correlation":1,"cbid":211}},
    {"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":10,"dur":1,"args":{"correlation":1,"device":0,"stream":7,"queued":100,"grid":[2,1,1],"block":[128,1,1],"registers per thread":32,"shared memory":1024}},
    {"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":12,"dur":1,"args":{"correlation":2,"device":0,"stream":7,"queued":200,"grid":[2,1,1],"block":[128,1,1],"registers per thread":32,"shared memory":1024}},
    {"ph":"X","cat":"kernel","name":"b","pid":0,"tid":7,"ts":14,"dur":1,"args":{"correlation":3,"device":0,"stream":7,"queued":300,"grid":[4,1,1],"block":[128,1,1],"registers per thread":32,"shared memory":1024}},
    {"ph":"X","cat":"kernel","name":"a","pid":0,"tid":8,"ts":16,"dur":1,"args":{"correlation":4,"device":0,"stream":8,"queued":400,"grid":[2,1,1],"block":[128,1,1],"registers per thread":32,"shared memory":1024}},
    {"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pageable)","pid":0,"tid":7,"ts":18,"dur":1,"args":{"correlation":5,"device":0,"context":1,"stream":7,"bytes":4}},
    {"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pageable)","pid":0,"tid":8,"ts":20,"dur":1,"args":{"correlation":6,"device":0,"context":1,"stream":8,"bytes":4}},
    {"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pageable)","pid":0,"tid":8,"ts":22,"dur":1,"args":{"correlation":7,"device":0,"context":1,"stream":8,"bytes":8}},
    {"ph":"X","cat":"gpu_memset","name":"Memset (Device)","pid":0,"tid":7,"ts":24,"dur":1,"args":{"correlation":8,"device":0,"context":1,"stream":7,"bytes":64}},
    {"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":0,"tid":1000007,"ts":26,"dur":1,"args":{"device":0,"context":1,"stream":7,"cuda_sync_kind":"Stream Sync"}},
    {"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":0,"tid":1000008,"ts":28,"dur":1,"args":{"device":0,"context":1,"stream":8,"cuda_sync_kind":"Stream Sync"}}
  ]})J";
  absl::StatusOr<TraceData> full = ReadKinetoJsonTraceText(text);
  TraceReadOptions options;
  options.for_analysis = true;
  absl::StatusOr<TraceData> lean = ReadKinetoJsonTraceText(text, options);
  REQUIRE(full.ok());
  REQUIRE(lean.ok());
  CHECK(full->kernels.size() == 4);
  CHECK(full->memcpys.size() == 3);
  CHECK(full->memsets.size() == 1);
  CHECK(full->syncs.size() == 2);
  CHECK(full->cpu_args.size() == 1);
  // Every event is kept; kernels a (three launches, two streams, four queued times) share a
  // row, b has its own; the copies differ only in stream (one row) or in bytes (a second).
  CHECK(lean->EventCount() == 12);
  CHECK(lean->EventCount() == full->EventCount());
  CHECK(lean->kernels.size() == 2);
  CHECK(lean->memcpys.size() == 2);
  CHECK(lean->memsets.size() == 1);
  CHECK(lean->syncs.size() == 1);
  CHECK(lean->cpu_args.empty());
  REQUIRE(lean->tracks.size() == full->tracks.size());
  std::vector<uint32_t> kernel_rows, copy_rows;
  for (size_t t = 0; t < lean->tracks.size(); ++t) {
    REQUIRE(lean->events_by_track[t].size() == full->events_by_track[t].size());
    for (size_t i = 0; i < lean->events_by_track[t].size(); ++i) {
      const Event& l = lean->events_by_track[t][i];
      const Event& f = full->events_by_track[t][i];
      CHECK(l.start_ns == f.start_ns);
      CHECK(l.end_ns == f.end_ns);
      CHECK(lean->strings.Get(l.name) == full->strings.Get(f.name));  // ids differ: no domain "d"
      CHECK(l.correlation == f.correlation);
      if (l.kind == EventKind::kKernel) kernel_rows.push_back(l.detail);
      if (l.kind == EventKind::kMemcpy) copy_rows.push_back(l.detail);
      if (l.kind == EventKind::kUserAnnotation) CHECK(l.detail == kNoDetail);
    }
  }
  // Tracks in order of first appearance: the host thread, stream 7, stream 8, two sync rows.
  CHECK(kernel_rows == std::vector<uint32_t>{0, 0, 1, 0});
  CHECK(copy_rows == std::vector<uint32_t>{0, 0, 1});
  const KernelDetail& k = lean->kernels[1];
  CHECK(k.grid[0] == 4);
  CHECK(k.block[0] == 128);
  CHECK(k.registers_per_thread == 32);
  CHECK(k.static_shared_memory == 1024);
  CHECK(k.queued == 0);  // not analysed: zeroed
  CHECK(k.stream == 0);
  CHECK(full->kernels[2].queued == 300);
  CHECK(lean->memcpys[1].bytes == 8);
  CHECK(lean->memcpys[1].copy_kind == full->memcpys[2].copy_kind);
  CHECK(lean->memcpys[1].dst_kind == full->memcpys[2].dst_kind);
  CHECK(lean->memcpys[1].stream == 0);
  CHECK(lean->memsets[0].bytes == 0);
  CHECK(lean->syncs[0].sync_type == full->syncs[0].sync_type);
  CHECK(lean->syncs[0].sync_type != 0);
}

TEST_CASE("malformed input fails with the byte offset") {
  absl::StatusOr<TraceData> d = ReadKinetoJsonTraceText(R"J({"traceEvents":[{"ph":"X",}]})J");
  REQUIRE(!d.ok());
  CHECK(std::string(d.status().message()) == "JSON: expected '\"' at byte 26");
  CHECK(!ReadKinetoJsonTraceText(R"J({"a": "unterminated)J").ok());
  CHECK(!ReadKinetoJsonTraceText("{} x").ok());
  CHECK(!ReadKinetoJsonFile("/nonexistent/t.json", {}).ok());
}

TEST_CASE("a ts or dur that does not fit 64-bit ns is rejected, not wrapped") {
  // 9223372036854776 us = 2^63 ns + 192 ns: one past the largest int64 ns.
  absl::StatusOr<TraceData> d = ReadKinetoJsonTraceText(
      R"J({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":9223372036854776,"dur":1}]})J");
  REQUIRE(!d.ok());
  CHECK(d.status().code() == absl::StatusCode::kOutOfRange);
  CHECK(std::string(d.status().message()) ==
        "JSON: \"ts\": 9223372036854776 does not fit a 64-bit ns time (event ending at byte 98)");
  // The largest that fits is accepted exactly; base + ts overflowing is caught too.
  CHECK(ReadKinetoJsonTraceText(
            R"J({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":9223372036854775.807,"dur":0}]})J")
            .ok());
  CHECK(ReadKinetoJsonTraceText(
            R"J({"baseTimeNanoseconds":9223372036854775807,"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1}]})J")
            .status()
            .code() == absl::StatusCode::kOutOfRange);
  CHECK(ReadKinetoJsonTraceText(
            R"J({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1e300}]})J")
            .status()
            .code() == absl::StatusCode::kOutOfRange);
}

TEST_CASE("an event whose end (ts + dur) does not fit 64-bit ns is rejected, not wrapped") {
  // ts fits, ts + dur does not: the old reader wrapped the end below the start and the
  // kernel vanished from the analysis ("No GPU work", exit 0).
  const std::string fast =
      R"J({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":9223372036854775,"dur":10}]})J";
  absl::StatusOr<TraceData> d = ReadKinetoJsonTraceText(fast);
  REQUIRE(!d.ok());
  CHECK(d.status().code() == absl::StatusCode::kOutOfRange);
  CHECK(std::string(d.status().message()) ==
        "JSON: \"ts\" + \"dur\" (9223372036854775000 + 10000 ns) does not fit a 64-bit ns time (event ending at "
        "byte 99)");
  // The same through the stream parser's path (an exponent), and below INT64_MIN.
  d = ReadKinetoJsonTraceText(
      R"J({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":9.2233720368547e15,"dur":1e5}]})J");
  REQUIRE(!d.ok());
  CHECK(std::string(d.status().message()).rfind("JSON: \"ts\" + \"dur\" (", 0) == 0);
  d = ReadKinetoJsonTraceText(
      R"J({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":-9223372036854775,"dur":-10}]})J");
  REQUIRE(!d.ok());
  CHECK(std::string(d.status().message()) ==
        "JSON: \"ts\" + \"dur\" (-9223372036854775000 + -10000 ns) does not fit a 64-bit ns time (event ending at "
        "byte 101)");
  // A negative duration that fits is clamped to 0 and counted.
  d = ReadKinetoJsonTraceText(
      R"J({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":5,"dur":-3,"args":{"device":0,"stream":7}}]})J");
  REQUIRE(d.ok());
  REQUIRE(d->EventCount() == 1);
  for (const auto& track : d->events_by_track) {
    for (const Event& e : track) CHECK(e.end_ns == e.start_ns);
  }
  CHECK(d->stats.at("json_reader.negative_dur") == 1);
}

TEST_CASE("JSON -> TraceData -> JSON keeps every event, arg, flow and metadata key") {
  TraceData ref = testing::BuildReferenceTrace(50);
  std::string j1 = JsonOf(ref);
  absl::StatusOr<TraceData> back = ReadKinetoJsonTraceText(j1);
  REQUIRE(back.ok());
  CHECK(back->EventCount() == ref.EventCount());
  CHECK(back->counter_samples.size() == ref.counter_samples.size());
  json a = json::parse(j1), b = json::parse(JsonOf(*back));
  CHECK(testing::SortedEvents(a) == testing::SortedEvents(b));
  CHECK(testing::TopLevelWithoutEvents(a) == testing::TopLevelWithoutEvents(b));
}

TEST_CASE("NCCL kernels' operation args come back, PyTorch's collective names too") {
  TraceData ref = testing::BuildReferenceTrace(50);
  ref.distributed.world_size = 2;
  for (const auto& track : ref.events_by_track) {
    for (const Event& e : track) {
      if (e.kind != EventKind::kKernel) continue;
      CollectiveRecord c;
      c.correlation = e.correlation;
      c.func = ref.collectives.empty() ? CollectiveFunc::kReduceScatter : CollectiveFunc::kAllReduce;
      c.dtype = CollectiveDtype::kBfloat16;
      c.comm_size = 2;
      c.in_nelems = 2048;
      c.out_nelems = 1024;
      ref.collectives.push_back(c);
    }
  }
  SortCollectives(ref);
  REQUIRE(ref.collectives.size() == 2);
  const std::string j1 = JsonOf(ref);
  absl::StatusOr<TraceData> back = ReadKinetoJsonTraceText(j1);
  REQUIRE(back.ok());
  REQUIRE(back->collectives.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const CollectiveRecord &a = ref.collectives[i], &b = back->collectives[i];
    CHECK(b.correlation == a.correlation);
    CHECK(b.func == a.func);
    CHECK(b.dtype == a.dtype);
    CHECK(b.comm_size == 2);
    CHECK(b.in_nelems == 2048);
    CHECK(b.out_nelems == 1024);
  }
  CHECK(testing::SortedEvents(json::parse(JsonOf(*back))) == testing::SortedEvents(json::parse(j1)));
  // A kernel as PyTorch's profiler writes it (record_param_comms names).
  absl::StatusOr<TraceData> torch = ReadKinetoJsonTraceText(R"J({"traceEvents":[
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllGather_RING_LL","pid":0,"tid":7,"ts":10,"dur":5,"args":{"correlation":4,"device":0,"stream":7,"grid":[2,1,1],"block":[512,1,1],"Collective name":"_allgather_base","In msg nelems":8,"Out msg nelems":64,"dtype":"Half","Group size":8}},
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":7,"ts":20,"dur":5,"args":{"correlation":3,"device":0,"stream":7,"grid":[2,1,1],"block":[512,1,1],"Collective name":"allreduce_coalesced","In msg nelems":100,"Out msg nelems":100,"dtype":"c10::complex<float>","Group size":8}}
  ]})J");
  REQUIRE(torch.ok());
  REQUIRE(torch->collectives.size() == 2);
  const CollectiveRecord& ar = torch->collectives[0];  // sorted by correlation: 3 first
  CHECK(ar.func == CollectiveFunc::kAllReduce);
  CHECK(ar.coalesced == 2);
  CHECK(ar.dtype == CollectiveDtype::kUnknown);
  const CollectiveRecord& ag = torch->collectives[1];
  CHECK(ag.func == CollectiveFunc::kAllGather);
  CHECK(ag.coalesced == 1);
  CHECK(ag.dtype == CollectiveDtype::kFloat16);
  CHECK((ag.in_nelems == 8 && ag.out_nelems == 64 && ag.comm_size == 8));
}

// libkineto writes -1 for a wait whose cudaEventRecord it never saw; kairos reads that as
// "unknown" (0 in the event model) and writes it back as -1, not as 4294967295.
TEST_CASE("wait_on_cuda_event_record_corr_id -1 reads as unknown and is written back as -1") {
  absl::StatusOr<TraceData> t = ReadKinetoJsonTraceText(R"J({"traceEvents":[
    {"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","pid":0,"tid":7,"ts":10,"dur":1,"args":{"cuda_sync_kind":"Stream Wait Event","wait_on_stream":-1,"wait_on_cuda_event_record_corr_id":-1,"wait_on_cuda_event_id":3,"stream":7,"correlation":5,"device":0,"context":1}},
    {"ph":"X","cat":"cuda_sync","name":"Event Sync","pid":0,"tid":4000000000,"ts":20,"dur":1,"args":{"cuda_sync_kind":"Event Sync","wait_on_stream":13,"wait_on_cuda_event_record_corr_id":12,"wait_on_cuda_event_id":4,"stream":-1,"correlation":6,"device":0,"context":1}}
  ]})J");
  REQUIRE(t.ok());
  REQUIRE(t->syncs.size() == 2);
  CHECK(t->syncs[0].wait_on_stream == -1);
  CHECK(t->syncs[0].wait_on_event_record_correlation == 0);
  CHECK(t->syncs[1].wait_on_stream == 13);
  CHECK(t->syncs[1].wait_on_event_record_correlation == 12);
  std::vector<int64_t> written;
  const json out = json::parse(JsonOf(*t));
  for (const json& e : out["traceEvents"]) {
    if (e.value("cat", "") == "cuda_sync") written.push_back(e["args"]["wait_on_cuda_event_record_corr_id"].get<int64_t>());
  }
  CHECK(written == std::vector<int64_t>{-1, 12});
}

TEST_CASE("gzip and zstd input decompress while streaming") {
  TraceData ref = testing::BuildReferenceTrace(3000);
  std::string j = JsonOf(ref);
  const testing::TempDir dir("kairos_jr_");
  std::string base = dir.File("t.json");
  std::ofstream(base, std::ios::binary) << j;
  REQUIRE(std::system(("gzip -k -c " + base + " > " + base + ".gz").c_str()) == 0);
  REQUIRE(std::system(("zstd -q -c " + base + " > " + base + ".zst").c_str()) == 0);
  for (const std::string& p : {base, base + ".gz", base + ".zst"}) {
    KinetoJsonStats stats;
    uint64_t n = 0;
    KinetoJsonCallbacks cb;
    cb.on_event = [&](const KinetoEvent&) { ++n; };
    INFO(p);
    REQUIRE(ReadKinetoJsonFile(p, cb, &stats).ok());
    CHECK(stats.bytes == j.size());
    CHECK(n == stats.events);
    CHECK(n > ref.EventCount());
  }
}

}  // namespace
}  // namespace kairos
