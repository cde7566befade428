// File: json_writer_test.cc
// Layer: tests (output). JsonTraceWriter: exact layout, field values and structural
// invariants, checked on the raw text and through a real JSON parser.
// Threading: single-threaded.
#include "output/json_writer.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "model/detail_values.h"
#include "output/event_args.h"
#include "output/json_out.h"
#include "json_test_util.h"
#include "trace_fixture.h"

namespace kairos {
namespace {

using testing::OrderedJson;

std::string WriteToString(const TraceData& data) {
  testing::StringSink sink;
  JsonTraceWriter writer;
  REQUIRE(writer.Write(data, sink).ok());
  CHECK(sink.finish_calls == 0);
  return sink.text;
}

OrderedJson ParseOrFail(const std::string& text) {
  OrderedJson j;
  std::string why;
  INFO(why);
  REQUIRE(testing::ParseStrict(text, &j, &why));
  return j;
}

std::vector<std::string> TopLevelKeys(const OrderedJson& j) {
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  return keys;
}

// The lines between `"traceEvents": [` and `],`, each one event (with its trailing comma
// removed).
std::vector<std::string> EventLines(const std::string& text) {
  std::vector<std::string> out;
  bool in = false;
  for (std::string line : testing::SplitLines(text)) {
    if (line == "\"traceEvents\": [") {
      in = true;
      continue;
    }
    if (in && line == "],") break;
    if (!in) continue;
    if (!line.empty() && line.back() == ',') line.pop_back();
    out.push_back(line);
  }
  return out;
}

TEST_CASE("FormatMicros writes three fraction digits") {
  char buf[32];
  auto f = [&](int64_t ns) { return std::string(buf, internal::FormatMicros(ns, buf)); };
  CHECK(f(1234567) == "1234.567");
  CHECK(f(0) == "0.000");
  CHECK(f(1) == "0.001");
  CHECK(f(999) == "0.999");
  CHECK(f(1000) == "1.000");
  CHECK(f(8000) == "8.000");
  CHECK(f(4447152481407127LL) == "4447152481407.127");
  CHECK(f(-5) == "0.000");
  CHECK(f(INT64_MAX) == "9223372036854775.807");
  // Against printf's text: every digit count and its edges, and 200000 values spread over
  // the whole range (a fixed seed, so a failure repeats).
  auto want = [](int64_t ns) {
    char w[40];
    const uint64_t v = ns < 0 ? 0 : static_cast<uint64_t>(ns);
    std::snprintf(w, sizeof(w), "%llu.%03u", static_cast<unsigned long long>(v / 1000),
                  static_cast<unsigned>(v % 1000));
    return std::string(w);
  };
  std::vector<int64_t> values = {INT64_MIN, -1, 9, 10, 99, 100, 101, 9999, 10000};
  for (int64_t p = 1000; p > 0 && p <= INT64_MAX / 10; p *= 10) {
    for (int64_t d : {-1001, -1000, -1, 0, 1, 999, 1000}) values.push_back(p + d);
  }
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 200000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    values.push_back(static_cast<int64_t>(x >> (x % 63)));  // every magnitude
  }
  size_t mismatches = 0, uint_mismatches = 0;
  for (int64_t v : values) {
    if (f(v) != want(v) && ++mismatches <= 3) CHECK(f(v) == want(v));
    // The integer writer the args and ids use, against to_chars.
    char a[32], b[32];
    const auto u = static_cast<uint64_t>(v);
    const std::string put(a, internal::JsonOut::PutUint(u, a));
    const std::string ref(b, std::to_chars(b, b + sizeof(b), u).ptr);
    if (put != ref && ++uint_mismatches <= 3) CHECK(put == ref);
  }
  CHECK(mismatches == 0);
  CHECK(uint_mismatches == 0);
}

TEST_CASE("CPU-only trace: layout, key order, rank with a space, empty deviceProperties") {
  TraceData data;
  testing::BuildCpuOnly(&data);
  const std::string text = WriteToString(data);
  const OrderedJson j = ParseOrFail(text);
  CHECK(TopLevelKeys(j) == std::vector<std::string>{
                               "schemaVersion", "deviceProperties", "host_name", "kairos_stats",
                               "kairos_warnings",
                               "kairos_config", "distributedInfo", "displayTimeUnit",
                               "baseTimeNanoseconds", "traceEvents", "traceName"});
  CHECK(j["schemaVersion"] == 1);
  CHECK(j["displayTimeUnit"] == "ms");
  CHECK(j["baseTimeNanoseconds"].get<int64_t>() == testing::kBase);
  CHECK(j["traceName"] == "/tmp/out.json");
  CHECK(j["distributedInfo"].dump() == R"j({"backend":"","rank":0,"world_size":1,"local_rank":0})j");
  // HTA's regex "rank":\s+(\d+) needs the space, and must find it before traceEvents.
  const size_t rank = text.find("\"rank\": 0");
  REQUIRE(rank != std::string::npos);
  CHECK(rank < text.find("\"traceEvents\""));
  CHECK(text.find("\"rank\":0") == std::string::npos);
  // No GPU: an empty list, not a missing key (issue 12 item 5).
  CHECK(text.find("\"deviceProperties\": [],") != std::string::npos);
  CHECK(j["deviceProperties"].dump() == "[]");

  const std::vector<std::string> lines = EventLines(text);
  REQUIRE(lines.size() == 7);
  CHECK(lines[0] == R"j({"ph":"M","name":"process_name","ts":0.500,"pid":4242,"tid":0,"args":{"name":"train.py"}})j");
  CHECK(lines[1] == R"j({"ph":"M","name":"process_labels","ts":0.500,"pid":4242,"tid":0,"args":{"labels":"CPU"}})j");
  CHECK(lines[2] == R"j({"ph":"M","name":"process_sort_index","ts":0.500,"pid":4242,"tid":0,"args":{"sort_index":4242}})j");
  CHECK(lines[3] == R"j({"ph":"M","name":"thread_name","ts":0.500,"pid":4242,"tid":4242,"args":{"name":"thread 4242 (main)"}})j");
  CHECK(lines[4] == R"j({"ph":"M","name":"thread_sort_index","ts":0.500,"pid":4242,"tid":4242,"args":{"sort_index":4242}})j");
  CHECK(lines[5] == R"j({"ph":"X","cat":"user_annotation","name":"ProfilerStep#0","pid":4242,"tid":4242,"ts":1.000,"dur":1234.567,"args":{"External id":1}})j");
  CHECK(lines[6] == R"j({"ph":"i","s":"g","name":"Record Window End","pid":"","tid":"","ts":5000.000})j");
  CHECK(j["traceEvents"].size() == 7);
  // Whole-file shape: header lines, then the array, then traceName last.
  CHECK(text.substr(0, 23) == "{\n\"schemaVersion\": 1,\n\"");
  const std::string tail = "}\n],\n\"traceName\": \"/tmp/out.json\"\n}\n";
  CHECK(text.substr(text.size() - tail.size()) == tail);
}

TEST_CASE("Full trace: every kind formatted exactly") {
  TraceData data;
  testing::BuildFull(&data);
  const std::string text = WriteToString(data);
  const OrderedJson j = ParseOrFail(text);
  CHECK(TopLevelKeys(j) == std::vector<std::string>{
                               "schemaVersion", "deviceProperties", "trace_id", "host_name",
                               "kairos_stats", "kairos_warnings", "kairos_config",
                               "distributedInfo", "displayTimeUnit", "baseTimeNanoseconds",
                               "traceEvents", "traceName"});
  REQUIRE(j["deviceProperties"].size() == 2);
  CHECK(j["deviceProperties"][0].dump() ==
        R"j({"id":0,"name":"NVIDIA H100 80GB HBM3","totalGlobalMem":85045460992,"computeMajor":9,"computeMinor":0,"maxThreadsPerBlock":1024,"maxThreadsPerMultiprocessor":2048,"regsPerBlock":65536,"warpSize":32,"sharedMemPerBlock":49152,"numSms":132,"regsPerMultiprocessor":65536,"sharedMemPerBlockOptin":232448,"sharedMemPerMultiprocessor":233472})j");
  CHECK(j["deviceProperties"][1]["id"] == 1);
  CHECK(j["trace_id"] == "req-7");
  CHECK(j["kairos_stats"].dump() == R"j({"buffer_overflow":0,"cupti_dropped":4})j");
  CHECK(j["kairos_warnings"].dump() == R"j(["GPU 1 \"missing\""])j");
  CHECK(j["kairos_config"] == "ACTIVITIES_DURATION_MSECS=500\nKAIROS_OUTPUT_FORMAT=json");
  CHECK(text.find("\n\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3, \"world_size\": 8, \"local_rank\": 0},\n") !=
        std::string::npos);

  const std::vector<std::string> lines = EventLines(text);
  REQUIRE(lines.size() == 49);
  REQUIRE(j["traceEvents"].size() == 49);
  const std::vector<std::string> meta(lines.begin(), lines.begin() + 23);
  const std::vector<std::string> expected_meta = {
      R"j({"ph":"M","name":"process_name","ts":1.000,"pid":4242,"tid":0,"args":{"name":"train.py"}})j",
      R"j({"ph":"M","name":"process_labels","ts":1.000,"pid":4242,"tid":0,"args":{"labels":"CPU"}})j",
      R"j({"ph":"M","name":"process_sort_index","ts":1.000,"pid":4242,"tid":0,"args":{"sort_index":4242}})j",
      R"j({"ph":"M","name":"thread_name","ts":1.000,"pid":4242,"tid":4242,"args":{"name":"thread 4242 (main)"}})j",
      R"j({"ph":"M","name":"thread_sort_index","ts":1.000,"pid":4242,"tid":4242,"args":{"sort_index":4242}})j",
      R"j({"ph":"M","name":"thread_name","ts":1.000,"pid":4242,"tid":4243,"args":{"name":"thread 4243"}})j",
      R"j({"ph":"M","name":"thread_sort_index","ts":1.000,"pid":4242,"tid":4243,"args":{"sort_index":4243}})j",
      R"j({"ph":"M","name":"process_name","ts":1.000,"pid":0,"tid":0,"args":{"name":"train.py"}})j",
      R"j({"ph":"M","name":"process_labels","ts":1.000,"pid":0,"tid":0,"args":{"labels":"GPU 0"}})j",
      R"j({"ph":"M","name":"process_sort_index","ts":1.000,"pid":0,"tid":0,"args":{"sort_index":5000000}})j",
      R"j({"ph":"M","name":"thread_name","ts":1.000,"pid":0,"tid":7,"args":{"name":"stream 7"}})j",
      R"j({"ph":"M","name":"thread_sort_index","ts":1.000,"pid":0,"tid":7,"args":{"sort_index":7}})j",
      R"j({"ph":"M","name":"thread_name","ts":1.000,"pid":0,"tid":1000007,"args":{"name":"stream 7 (sync)"}})j",
      R"j({"ph":"M","name":"thread_sort_index","ts":1.000,"pid":0,"tid":1000007,"args":{"sort_index":7}})j",
      R"j({"ph":"M","name":"thread_name","ts":1.000,"pid":0,"tid":4000000000,"args":{"name":"Device 0"}})j",
      R"j({"ph":"M","name":"thread_sort_index","ts":1.000,"pid":0,"tid":4000000000,"args":{"sort_index":-1}})j",
      R"j({"ph":"M","name":"process_name","ts":1.000,"pid":-1,"tid":0,"args":{"name":"CUPTI Overhead"}})j",
      R"j({"ph":"M","name":"process_sort_index","ts":1.000,"pid":-1,"tid":0,"args":{"sort_index":1048576}})j",
      R"j({"ph":"M","name":"process_name","ts":1.000,"pid":1,"tid":0,"args":{"name":"train.py"}})j",
      R"j({"ph":"M","name":"process_labels","ts":1.000,"pid":1,"tid":0,"args":{"labels":"GPU 1"}})j",
      R"j({"ph":"M","name":"process_sort_index","ts":1.000,"pid":1,"tid":0,"args":{"sort_index":5000001}})j",
      R"j({"ph":"M","name":"thread_name","ts":1.000,"pid":1,"tid":13,"args":{"name":"stream 13"}})j",
      R"j({"ph":"M","name":"thread_sort_index","ts":1.000,"pid":1,"tid":13,"args":{"sort_index":13}})j",
  };
  CHECK(meta == expected_meta);

  const std::vector<std::string> events(lines.begin() + 23, lines.end());
  const std::vector<std::string> expected_events = {
      R"j({"ph":"C","name":"cpu.util","pid":4242,"ts":1.500,"args":{"%":12.5}})j",
      R"j({"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":4242,"tid":4242,"ts":2.000,"dur":898.000,"args":{"External id":1}})j",
      R"j({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":4242,"tid":4242,"ts":3.000,"dur":47.000,"args":{"External id":2}})j",
      R"j({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":4242,"tid":4242,"ts":4.000,"dur":5.000,"args":{"External id":2,"cbid":211,"correlation":100}})j",
      R"j({"ph":"s","id":100,"pid":4242,"tid":4242,"ts":4.000,"cat":"ac2g","name":"ac2g"})j",
      R"j({"ph":"X","cat":"cpu_op","name":"worker op","pid":4242,"tid":4243,"ts":5.000,"dur":1.000})j",
      R"j({"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":4242,"tid":4242,"ts":10.000,"dur":2.000,"args":{"External id":2,"cbid":41,"correlation":101}})j",
      R"j({"ph":"s","id":101,"pid":4242,"tid":4242,"ts":10.000,"cat":"ac2g","name":"ac2g"})j",
      R"j({"ph":"X","cat":"cuda_driver","name":"cuLaunchKernel","pid":4242,"tid":4242,"ts":13.000,"dur":0.500,"args":{"cbid":307,"correlation":102}})j",
      R"j({"ph":"f","id":100,"pid":0,"tid":7,"ts":20.000,"cat":"ac2g","name":"ac2g","bp":"e"})j",
      R"j({"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":20.000,"dur":10.500,"args":{"External id":2,"queued":0,"device":0,"context":1,"stream":7,"correlation":100,"registers per thread":32,"shared memory":3072,"blocks per SM":2,"warps per SM":8,"grid":[264,1,1],"block":[128,1,1],"est. achieved occupancy %":12,"graph id":0,"graph node id":0}})j",
      R"j({"ph":"C","name":"mem.used","pid":"Host Memory","ts":30.500,"args":{"bytes":1e+09}})j",
      R"j({"ph":"f","id":101,"pid":0,"tid":7,"ts":40.000,"cat":"ac2g","name":"ac2g","bp":"e"})j",
      R"j({"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":40.000,"dur":1.000,"args":{"External id":2,"device":0,"context":1,"stream":7,"correlation":101,"bytes":1000000,"memory bandwidth (GB/s)":1000,"graph id":0,"graph node id":0}})j",
      R"j({"ph":"X","cat":"gpu_memset","name":"Memset (Device)","pid":0,"tid":7,"ts":42.000,"dur":0.000,"args":{"device":0,"context":1,"stream":7,"correlation":103,"bytes":8,"graph id":0,"graph node id":0}})j",
      R"j({"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":0,"tid":1000007,"ts":45.000,"dur":1.000,"args":{"cuda_sync_kind":"Stream Sync","stream":7,"correlation":105,"device":0,"context":1}})j",
      R"j({"ph":"X","cat":"cuda_sync","name":"Context Sync","pid":0,"tid":4000000000,"ts":47.000,"dur":1.000,"args":{"cuda_sync_kind":"Context Sync","stream":-1,"correlation":106,"device":0,"context":1}})j",
      R"j({"ph":"X","cat":"cuda_sync","name":"Event Sync","pid":0,"tid":4000000000,"ts":48.200,"dur":0.200,"args":{"cuda_sync_kind":"Event Sync","wait_on_stream":7,"wait_on_cuda_event_record_corr_id":99,"wait_on_cuda_event_id":9,"stream":-1,"correlation":107,"device":0,"context":1}})j",
      R"j({"ph":"X","cat":"cuda_event","name":"cudaEvent","pid":0,"tid":7,"ts":48.500,"dur":0.001,"args":{"event_id":9,"stream":7,"correlation":108,"device":0,"context":1}})j",
      R"j({"ph":"X","cat":"kernel","name":"Kernel","pid":0,"tid":7,"ts":50.000,"dur":1.000,"args":{"queued":0,"device":5,"context":1,"stream":7,"correlation":104,"registers per thread":32,"shared memory":3072,"blocks per SM":"inf","warps per SM":null,"grid":[264,1,1],"block":[128,1,1],"graph id":3,"graph node id":77}})j",
      R"j({"ph":"i","cat":"cpu_instant_event","s":"t","name":"mark","pid":4242,"tid":4242,"ts":60.000,"args":{"domain":"dom","category":"cat\"x","color":"#12ab34","payload":-5}})j",
      R"j({"ph":"X","cat":"overhead","name":"Buffer Flush","pid":-1,"tid":0,"ts":70.000,"dur":1.000})j",
      R"j({"ph":"X","cat":"gpu_memcpy","name":"Memcpy PtoP (Device -> Device)","pid":1,"tid":13,"ts":80.000,"dur":0.500,"args":{"fromDevice":0,"inDevice":1,"toDevice":1,"fromContext":1,"inContext":2,"toContext":2,"stream":13,"correlation":109,"bytes":4096,"memory bandwidth (GB/s)":8.192,"graph id":3,"graph node id":77,"channel":5,"channel_type":2}})j",
      R"j({"ph":"X","cat":"user_annotation","name":"open range","pid":4242,"tid":4242,"ts":800.000,"dur":9200.000,"args":{"External id":3,"finished":false}})j",
      R"j({"ph":"C","name":"cpu.util","pid":4242,"ts":9000.000,"args":{"%":null}})j",
      R"j({"ph":"i","s":"g","name":"Record Window End","pid":"","tid":"","ts":10000.000})j",
  };
  REQUIRE(events.size() == expected_events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    INFO("event " << i);
    CHECK(events[i] == expected_events[i]);
  }
}

// A wait whose cudaEventRecord CUPTI never described (no CUDA_EVENT record: simulator, or
// device timestamps unavailable) has no record correlation. libkineto writes -1 there, and HTA
// defaults the column to -1; 0 would read as a known id to a consumer testing `>= 0`.
TEST_CASE("An Event Sync without its event record writes wait_on_cuda_event_record_corr_id -1") {
  TraceData data;
  testing::BuildFull(&data);
  SyncDetail& es = data.syncs[2];  // the fixture's Event Sync
  REQUIRE(es.sync_type == kSyncEvent);
  es.wait_on_stream = -1;
  es.wait_on_event_record_correlation = 0;
  const std::vector<std::string> events = EventLines(WriteToString(data));
  const std::string want =
      R"j({"ph":"X","cat":"cuda_sync","name":"Event Sync","pid":0,"tid":4000000000,"ts":48.200,"dur":0.200,"args":{"cuda_sync_kind":"Event Sync","wait_on_stream":-1,"wait_on_cuda_event_record_corr_id":-1,"wait_on_cuda_event_id":9,"stream":-1,"correlation":107,"device":0,"context":1}})j";
  CHECK(std::count(events.begin(), events.end(), want) == 1);
}

TEST_CASE("An NCCL kernel carries the operation's args, named as PyTorch names them") {
  TraceData data;
  testing::BuildFull(&data);  // world_size 8
  CollectiveRecord whole;  // on the "Kernel" event (correlation 104): spans the job
  whole.correlation = 104;
  whole.func = CollectiveFunc::kAllGather;
  whole.dtype = CollectiveDtype::kBfloat16;
  whole.comm_rank = 3;
  whole.comm_size = 8;
  whole.in_nelems = 1024;
  whole.out_nelems = 8192;
  CollectiveRecord sub = whole;  // on "gemm" (100): a group of two in a 4-rank communicator
  sub.correlation = 100;
  sub.coalesced = 2;
  sub.dtype = CollectiveDtype::kUnknown;
  sub.comm_size = 4;
  data.collectives = {sub, whole};
  const std::vector<std::string> lines = EventLines(WriteToString(data));
  auto line_of = [&](const std::string& name) {
    for (const std::string& l : lines) {
      if (l.find("\"cat\":\"kernel\",\"name\":\"" + name + "\"") != std::string::npos) return l;
    }
    return std::string("<none>");
  };
  CHECK(line_of("Kernel") ==
        R"j({"ph":"X","cat":"kernel","name":"Kernel","pid":0,"tid":7,"ts":50.000,"dur":1.000,"args":{"queued":0,"device":5,"context":1,"stream":7,"correlation":104,"registers per thread":32,"shared memory":3072,"blocks per SM":"inf","warps per SM":null,"grid":[264,1,1],"block":[128,1,1],"graph id":3,"graph node id":77,"Collective name":"all_gather","In msg nelems":1024,"Out msg nelems":8192,"dtype":"BFloat16","Group size":8,"Process Group Ranks":"[0, 1, 2, 3, 4, 5, 6, 7]"}})j");
  const std::string gemm = line_of("gemm");
  CHECK(gemm.find(R"j("graph node id":0,"Collective name":"coalesced","In msg nelems":1024,"Out msg nelems":8192,"Group size":4}})j") !=
        std::string::npos);
}

TEST_CASE("Full trace: structural invariants through the parser") {
  TraceData data;
  testing::BuildFull(&data);
  const OrderedJson j = ParseOrFail(WriteToString(data));
  const auto& ev = j["traceEvents"];
  // M events first and unique per (pid, tid, name).
  std::set<std::tuple<std::string, std::string, std::string>> meta;
  size_t first_non_meta = 0;
  while (first_non_meta < ev.size() && ev[first_non_meta]["ph"] == "M") {
    const auto& e = ev[first_non_meta];
    CHECK(meta.insert({e["pid"].dump(), e["tid"].dump(), e["name"]}).second);
    ++first_non_meta;
  }
  CHECK(first_non_meta == 23);
  // Everything else sorted by ts, no M events after the first non-M, window end last.
  double last_ts = -1;
  std::map<uint64_t, int> starts, finishes;
  for (size_t i = first_non_meta; i < ev.size(); ++i) {
    const auto& e = ev[i];
    CHECK(e["ph"] != "M");
    const double ts = e["ts"].get<double>();
    CHECK(ts >= last_ts);
    last_ts = ts;
    if (e["ph"] == "s") ++starts[e["id"].get<uint64_t>()];
    if (e["ph"] == "f") {
      ++finishes[e["id"].get<uint64_t>()];
      CHECK(e["bp"] == "e");
    }
    if (e["ph"] == "X") {
      auto keys = std::vector<std::string>();
      for (auto it = e.begin(); it != e.end(); ++it) keys.push_back(it.key());
      std::vector<std::string> want = {"ph", "cat", "name", "pid", "tid", "ts", "dur"};
      if (e.contains("args")) want.push_back("args");
      CHECK(keys == want);
      if (e.contains("args") && e["args"].contains("External id")) {
        CHECK(e["args"].begin().key() == "External id");
      }
    }
  }
  CHECK(ev.back()["name"] == "Record Window End");
  // Flows are paired: every "f" id has an "s" and vice versa.
  CHECK(starts == std::map<uint64_t, int>{{100, 1}, {101, 1}});
  CHECK(finishes == std::map<uint64_t, int>{{100, 1}, {101, 1}});
}

TEST_CASE("A graph launch fans out: one s, one f per replayed kernel") {
  TraceData data;
  testing::BuildCpuOnly(&data);
  Track stream;
  stream.type = TrackType::kGpuStream;
  stream.pid = 0;
  stream.tid = 3;
  stream.stream = 3;
  const uint32_t gpu = data.AddTrack(stream);
  Event launch = testing::MakeEvent(EventKind::kRuntime, testing::kBase + 2000,
                                    testing::kBase + 3000, data.strings.Intern("cudaGraphLaunch"),
                                    0);
  launch.correlation = 55;
  launch.aux = 311;
  launch.flags = kFlagFlowOut;
  data.events_by_track[0].push_back(launch);
  for (int i = 0; i < 3; ++i) {
    Event k = testing::MakeEvent(EventKind::kKernel, testing::kBase + 5000 + i * 1000,
                                 testing::kBase + 5500 + i * 1000, data.strings.Intern("node"),
                                 gpu);
    k.correlation = 55;
    k.flags = kFlagFlowIn;
    data.events_by_track[gpu].push_back(k);
  }
  data.SortTracks();
  const std::string text = WriteToString(data);
  const OrderedJson j = ParseOrFail(text);
  int s = 0, f = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "s") ++s;
    if (e["ph"] == "f") ++f;
  }
  CHECK(s == 1);
  CHECK(f == 3);
  CHECK(text.find(R"j({"ph":"f","id":55,"pid":0,"tid":3,"ts":7.000,"cat":"ac2g","name":"ac2g","bp":"e"})j") !=
        std::string::npos);
  // A kernel without a detail row still carries its correlation.
  CHECK(text.find(R"j("name":"node","pid":0,"tid":3,"ts":5.000,"dur":0.500,"args":{"correlation":55}})j") !=
        std::string::npos);
}

TEST_CASE("Metadata strings are escaped; raw JSON validated; duplicate keys dropped") {
  TraceData data;
  testing::BuildCpuOnly(&data);
  data.host_name = "h\"o\\st\n";
  data.metadata.push_back({"PT_PROFILER_JOB_NAME", "job \"x\"\t\x01"});
  data.metadata.push_back({"bad\xFFkey", "emoji \xF0\x9F\x98\x80 bad \xC3\x28 end"});
  data.metadata.push_back({"host_name", "dup of a writer key"});
  data.metadata_json.push_back({"with_stack", "true"});
  data.metadata_json.push_back({"record_shapes", "{\"a\": [1, 2.5e3, null]}"});
  data.metadata_json.push_back({"broken", "{\"a\": 1,}"});
  data.metadata_json.push_back({"PT_PROFILER_JOB_NAME", "1"});
  const std::string text = WriteToString(data);
  const OrderedJson j = ParseOrFail(text);
  CHECK(TopLevelKeys(j) ==
        std::vector<std::string>{"schemaVersion", "deviceProperties", "host_name", "PT_PROFILER_JOB_NAME",
                                 "bad\xEF\xBF\xBDkey", "with_stack", "record_shapes", "broken",
                                 "kairos_stats", "kairos_warnings", "kairos_config",
                                 "distributedInfo", "displayTimeUnit", "baseTimeNanoseconds",
                                 "traceEvents", "traceName"});
  CHECK(text.find("\n\"host_name\": \"h\\\"o\\\\st\\n\",\n") != std::string::npos);
  CHECK(text.find("\n\"PT_PROFILER_JOB_NAME\": \"job \\\"x\\\"\\t\\u0001\",\n") !=
        std::string::npos);
  CHECK(j["bad\xEF\xBF\xBDkey"] == "emoji \xF0\x9F\x98\x80 bad \xEF\xBF\xBD( end");
  CHECK(j["with_stack"] == true);
  CHECK(text.find("\n\"record_shapes\": {\"a\": [1, 2.5e3, null]},\n") != std::string::npos);
  CHECK(j["broken"] == "{\"a\": 1,}");
  CHECK(j["kairos_warnings"].dump() ==
        R"j(["metadata key 'host_name' duplicates another top-level key; dropped","metadata 'broken' is not valid JSON; written as a string","metadata key 'PT_PROFILER_JOB_NAME' duplicates another top-level key; dropped"])j");
}

TEST_CASE("Event names keep UTF-8, escape control characters, replace invalid bytes") {
  TraceData data;
  testing::BuildCpuOnly(&data);
  auto& e = data.events_by_track[0][0];
  e.name = data.strings.Intern("caf\xC3\xA9 \"q\"\n\x1F \xFF");
  const std::string text = WriteToString(data);
  const OrderedJson j = ParseOrFail(text);
  CHECK(text.find(R"j("name":"caf)j" "\xC3\xA9" R"j( \"q\"\n\u001f )j" "\xEF\xBF\xBD" R"j(")j") !=
        std::string::npos);
  CHECK(j["traceEvents"][5]["name"] == "caf\xC3\xA9 \"q\"\n\x1F \xEF\xBF\xBD");
}

TEST_CASE("Negative durations clamp to 0.000") {
  TraceData data;
  testing::BuildCpuOnly(&data);
  auto& e = data.events_by_track[0][0];
  e.end_ns = e.start_ns - 10;
  const std::string text = WriteToString(data);
  CHECK(text.find(R"j("ts":1.000,"dur":0.000,)j") != std::string::npos);
}

TEST_CASE("Output streams in bounded chunks and stops at the first sink error") {
  TraceData data;
  testing::BuildCpuOnly(&data);
  const StringId name = data.strings.Intern("aten::add");
  auto& v = data.events_by_track[0];
  for (int i = 0; i < 50000; ++i) {
    v.push_back(testing::MakeEvent(EventKind::kCpuOp, testing::kBase + 2000000 + i * 10,
                                   testing::kBase + 2000000 + i * 10 + 5, name, 0));
  }
  data.SortTracks();
  testing::StringSink sink;
  JsonTraceWriter writer;
  REQUIRE(writer.Write(data, sink).ok());
  CHECK(sink.write_sizes.size() > 10);
  for (size_t s : sink.write_sizes) CHECK(s < JsonTraceWriter::kChunkBytes + 1024);
  const OrderedJson j = ParseOrFail(sink.text);
  CHECK(j["traceEvents"].size() == 50007);

  testing::StringSink failing;
  failing.FailAfter(200000);
  const absl::Status s = writer.Write(data, failing);
  CHECK(s.code() == absl::StatusCode::kResourceExhausted);
  CHECK(failing.failed_writes == 1);  // nothing is attempted after the first error
  CHECK(failing.text.size() <= 200000);
}

// The JSON writer keeps a kernel row's constant args as text (RowTextCache) and copies it for
// the row's next launches. Every event's args, kept or not, must be the bytes formatting them
// gives: rows used once and many times, with and without an External id, unfinished, on a
// device with and without an SM count, and past the cache's byte bound (the rows after it are
// formatted every time).
TEST_CASE("Kernel args replayed from a row's kept text equal the args formatted") {
  TraceData d;
  d.devices.push_back(testing::H100(0));
  // Rows of ~250 bytes of text: 20000 of them pass the 4 MiB bound.
  constexpr uint32_t kRows = 20000;
  for (uint32_t r = 0; r < kRows; ++r) {
    KernelDetail k{};
    k.device = r % 7 == 0 ? 3 : 0;  // device 3 has no DeviceInfo: "inf" blocks per SM
    k.context = 1;
    k.stream = 7 + r % 5;
    k.grid[0] = 1000 + r;
    k.grid[1] = 1 + r % 3;
    k.grid[2] = 1;
    k.block[0] = 32 << (r % 6);
    k.block[1] = k.block[2] = 1;
    k.registers_per_thread = 16 + r % 200;
    k.static_shared_memory = 1024 * (r % 4);
    k.graph_id = r % 11 == 0 ? 4 : 0;
    k.graph_node_id = r % 11 == 0 ? 100 + r : 0;
    k.channel_type = r % 13 == 0 ? 1 : 0;
    k.channel_id = r % 13;
    d.kernels.push_back(k);
  }
  testing::StringSink null_sink;
  internal::JsonOut formatted(null_sink), replayed(null_sink);
  internal::EventArgs plain(d), kept(d);
  internal::RowTextCache rows(d.kernels.size());
  size_t events = 0, differ = 0;
  // Each row three times (the second and third from kept text), rows in two passes.
  for (int pass = 0; pass < 3; ++pass) {
    for (uint32_t r = 0; r < kRows; ++r) {
      Event e{};
      e.kind = EventKind::kKernel;
      e.detail = r;
      e.correlation = 1 + r + pass * kRows;
      e.external_id = (r + pass) % 3 == 0 ? 0 : 500 + r;
      e.flags = r % 17 == 0 ? kFlagUnfinished : 0;
      e.start_ns = 1000;
      e.end_ns = 2000;
      formatted.Clear();
      replayed.Clear();
      {
        internal::JsonArgsSink a(formatted);
        plain.Visit(e, internal::ArgScope::kEvent, a);
        a.Close();
      }
      {
        internal::JsonArgsSink b(replayed, &rows);
        kept.Visit(e, internal::ArgScope::kEvent, b);
        b.Close();
      }
      ++events;
      if (formatted.view() != replayed.view()) {
        if (++differ <= 3) {
          INFO("row " << r << " pass " << pass);
          CHECK(std::string(replayed.view()) == std::string(formatted.view()));
        }
      }
    }
  }
  CHECK(events == 3 * kRows);
  CHECK(differ == 0);
  // Both paths ran: the bound was reached, and a row kept early replays its text.
  CHECK(rows.kept_bytes() >= internal::RowTextCache::kMaxBytes);
  CHECK(rows.kept_bytes() < internal::RowTextCache::kMaxBytes + internal::RowTextCache::kMaxText);
  CHECK(rows.kept_rows() < kRows);
  CHECK(rows.kept_rows() > kRows / 2);
  // The index is bounded too: a row past kMaxRows is never kept (its args are formatted).
  internal::RowTextCache huge(internal::RowTextCache::kMaxRows + 10);
  bool called = false;
  const std::string_view past = huge.Get(
      static_cast<uint32_t>(internal::RowTextCache::kMaxRows + 5), 0,
      [&](internal::JsonArgsSink&) { called = true; });
  CHECK(past.data() == nullptr);
  CHECK_FALSE(called);
  // A part number past kParts would land on the next row's slot: never kept.
  CHECK(huge.Get(0, internal::RowTextCache::kParts, [&](internal::JsonArgsSink&) { called = true; })
            .data() == nullptr);
  CHECK_FALSE(called);
}

}  // namespace
}  // namespace kairos
