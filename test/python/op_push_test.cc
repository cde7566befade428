// File: op_push_test.cc
// Layer: test (bindings/c, framework bridge entry points). kairos_op_push records a cpu_op
// with PyTorch's args; its id is the innermost CPU range id (the one CUPTI activity links
// to as "External id"); Input Dims text that is not a plain JSON array is written as a
// string; after kairos_op_attach, PROFILE_REPORT_INPUT_SHAPES decides whether shapes stay.
// Threading: single test thread (the session's controller thread writes the traces).
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "activity/cpu_recorder.h"
#include "kairos.h"
#include "temp_dir.h"

namespace {

using kairos::testing::TempDir;

void Trace(const std::string& config) {
  REQUIRE(kairos_init(config.c_str()) == KAIROS_OK);
  REQUIRE(kairos_start() == KAIROS_OK);
}

nlohmann::json FlushAndRead() {
  const char* path = kairos_flush();
  REQUIRE(path != nullptr);
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  return j;
}

nlohmann::json Only(const nlohmann::json& t, const std::string& name) {
  nlohmann::json found;
  int n = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e.value("name", "") == name && e.value("ph", "") == "X") {
      found = e;
      ++n;
    }
  }
  REQUIRE(n == 1);
  return found;
}

kairos_op_args Args(const char* dims, const char* types) {
  kairos_op_args a;
  a.sequence_nr = 5;
  a.fwd_thread_id = 3;
  a.record_function_id = 9;
  a.input_dims = dims;
  a.input_types = types;
  return a;
}

}  // namespace

TEST_CASE("kairos_op_push: cpu_op with args, linked id, safe text, shapes filter") {
  const TempDir temp("kairos-op-");
  const std::string& dir = temp.path();
  const std::string base = "KAIROS_SUMMARY=off\nACTIVITIES_LOG_FILE=" + dir + "/op.json\n";

  // Not recording: nothing happens, no id.
  kairos_op_args a = Args("[[2, 3], [3, 4]]", "[\"float\", \"float\"]");
  kairos_op_push("aten::idle", &a);
  CHECK(kairos::internal::CurrentCpuRangeId() == 0);
  kairos_range_pop();

  Trace(base);
  kairos_range_push("outer");
  kairos_op_push("aten::mm", &a);
  const uint32_t id = kairos::internal::CurrentCpuRangeId();  // what CUPTI records link to
  CHECK(id != 0);
  kairos_range_pop();
  kairos_op_args bad = Args("[[1, 2]", "[\"\\\"quoted\\\"\"]");
  bad.sequence_nr = -1;
  kairos_op_push("aten::bad", &bad);
  kairos_range_pop();
  kairos_op_push("aten::noargs", nullptr);
  kairos_range_pop();
  kairos_range_pop();
  nlohmann::json t = FlushAndRead();
  const nlohmann::json mm = Only(t, "aten::mm");
  CHECK(mm["cat"] == "cpu_op");
  CHECK(mm["args"]["External id"] == id);
  CHECK(mm["args"]["Record function id"] == 9);
  CHECK(mm["args"]["Sequence number"] == 5);
  CHECK(mm["args"]["Fwd thread id"] == 3);
  CHECK(mm["args"]["Input Dims"] == nlohmann::json::parse("[[2, 3], [3, 4]]"));
  CHECK(mm["args"]["Input type"] == nlohmann::json::parse("[\"float\", \"float\"]"));
  CHECK(Only(t, "outer")["cat"] == "user_annotation");
  const nlohmann::json b = Only(t, "aten::bad");
  CHECK(b["args"]["Input Dims"] == "[[1, 2]");           // not an array: written as a string
  CHECK(b["args"]["Input type"] == "[\"\\\"quoted\\\"\"]");  // escapes: as a string
  CHECK_FALSE(b["args"].contains("Sequence number"));     // -1: no sequence number
  CHECK(Only(t, "aten::noargs")["cat"] == "cpu_op");
  CHECK_FALSE(Only(t, "aten::noargs")["args"].contains("Input Dims"));

  // With a bridge attached, the trace's PROFILE_REPORT_INPUT_SHAPES decides.
  kairos_op_attach();
  kairos_op_attach();  // idempotent
  Trace(base);
  kairos_op_push("aten::mm", &a);
  kairos_range_pop();
  t = FlushAndRead();
  CHECK_FALSE(Only(t, "aten::mm")["args"].contains("Input Dims"));
  CHECK(Only(t, "aten::mm")["args"]["Sequence number"] == 5);
  Trace(base + "PROFILE_REPORT_INPUT_SHAPES=true\n");
  kairos_op_push("aten::mm", &a);
  kairos_range_pop();
  t = FlushAndRead();
  CHECK(Only(t, "aten::mm")["args"]["Input Dims"] == nlohmann::json::parse("[[2, 3], [3, 4]]"));
}

TEST_CASE("kairos_op_attach before fork(): the child's session applies the shapes rule too") {
  const TempDir temp("kairos-op-");
  const std::string& dir = temp.path();
  kairos_op_attach();  // in the parent, before the fork (DataLoader workers, launchers)
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child has a fresh root; the bridge does not call attach again.
    const std::string cfg = "KAIROS_SUMMARY=off\nACTIVITIES_LOG_FILE=" + dir + "/child.json\n";
    if (kairos_init(cfg.c_str()) != KAIROS_OK || kairos_start() != KAIROS_OK) _exit(2);
    kairos_op_args a = Args("[[2, 3]]", "[\"float\"]");
    kairos_op_push("aten::child_mm", &a);
    kairos_range_pop();
    _exit(kairos_flush() != nullptr ? 0 : 3);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  // The trace name gains the child's pid (child_<pid>.json).
  std::ifstream in(dir + "/child_" + std::to_string(child) + ".json");
  std::stringstream ss;
  ss << in.rdbuf();
  const nlohmann::json t = nlohmann::json::parse(ss.str(), nullptr, false);
  REQUIRE_FALSE(t.is_discarded());
  const nlohmann::json mm = Only(t, "aten::child_mm");
  CHECK(mm["args"]["Sequence number"] == 5);
  // PROFILE_REPORT_INPUT_SHAPES is off by default: the child drops the shapes as the parent would.
  CHECK_FALSE(mm["args"].contains("Input Dims"));
}

// Framework allocator events (the torch bridge's PyTorch allocator reporter, docs/MEMORY.md
// "PyTorch allocator events"): written as PyTorch's [memory] instants with the values given,
// under the innermost open range, only in traces with PROFILE_PROFILE_MEMORY=true.
TEST_CASE("kairos_memory_event: [memory] instants with the allocator's own totals") {
  const TempDir temp("kairos-op-");
  const std::string& dir = temp.path();
  const std::string base = "KAIROS_SUMMARY=off\nACTIVITIES_LOG_FILE=" + dir + "/mem.json\n";
  auto memory = [](const nlohmann::json& t) {
    std::vector<nlohmann::json> out;
    for (const auto& e : t["traceEvents"])
      if (e.value("name", "") == "[memory]") out.push_back(e);
    return out;
  };
  auto record = [] {
    kairos_op_push("aten::empty", nullptr);
    const uint32_t id = kairos::internal::CurrentCpuRangeId();
    kairos_memory_event(reinterpret_cast<void*>(0x1000), 4096, 4096, 8192, 0, -1);
    kairos_range_pop();
    kairos_memory_event(reinterpret_cast<void*>(0x1000), -4096, 0, 8192, 1, 3);
    kairos_memory_event(reinterpret_cast<void*>(0x2000), int64_t{1} << 60, -(int64_t{1} << 60), 0, 1, 3);
    return id;
  };
  kairos_memory_event(reinterpret_cast<void*>(0x1000), 4096, 4096, 0, 0, -1);  // idle: nothing

  Trace(base + "PROFILE_PROFILE_MEMORY=true\n");
  const uint32_t id = record();
  nlohmann::json t = FlushAndRead();
  const std::vector<nlohmann::json> m = memory(t);
  REQUIRE(m.size() == 3);
  CHECK(m[0]["cat"] == "cpu_instant_event");
  CHECK(m[0]["ph"] == "i");
  CHECK(m[0]["tid"] == Only(t, "aten::empty")["tid"]);
  const nlohmann::json& a = m[0]["args"];
  CHECK(a["External id"] == id);  // under the op that allocated
  CHECK(a["Device Type"] == 0);
  CHECK(a["Device Id"] == -1);
  CHECK(a["Addr"] == 0x1000);
  CHECK(a["Bytes"] == 4096);
  CHECK(a["Total Allocated"] == 4096);  // as given: not recomputed from a baseline
  CHECK(a["Total Reserved"] == 8192);
  CHECK_FALSE(a.contains("memory kind"));
  CHECK_FALSE(a.contains("allocated before window"));  // a free of an unseen block is normal here
  const nlohmann::json& f = m[1]["args"];
  CHECK_FALSE(f.contains("External id"));  // outside every range
  CHECK(f["Device Type"] == 1);
  CHECK(f["Device Id"] == 3);
  CHECK(f["Bytes"] == -4096);
  CHECK(f["Total Allocated"] == 0);
  CHECK(f["Total Reserved"] == 8192);
  CHECK_FALSE(f.contains("allocated before window"));
  CHECK(m[2]["args"]["Bytes"] == int64_t{1} << 50);             // hostile values clamped
  CHECK(m[2]["args"]["Total Allocated"] == -(int64_t{1} << 50));
  CHECK(t["kairos_stats"]["framework_memory_events"] == 3);

  Trace(base);  // the key off: the events are not kept
  record();
  t = FlushAndRead();
  CHECK(memory(t).empty());
  CHECK_FALSE(t["kairos_stats"].contains("framework_memory_events"));

  // The smallest buffer (4 KiB: 170 ring records, 170 args slots): each event takes one record
  // and one args slot; the slots run out with the ring's room still there (nothing in
  // cpu_dropped), every event past them is counted, and the ones kept carry their own values.
  Trace("KAIROS_SUMMARY=off\nPROFILE_PROFILE_MEMORY=true\nKAIROS_CPU_BUFFER_KB_PER_THREAD=4\n"
        "ACTIVITIES_LOG_FILE=" + dir + "/full.json\n");
  for (int i = 0; i < 200; ++i)
    kairos_memory_event(reinterpret_cast<void*>(uintptr_t{0x10000} + 16 * i), 16 + i, 16 * (i + 1), 4096, 0, -1);
  t = FlushAndRead();
  const std::vector<nlohmann::json> kept = memory(t);
  REQUIRE(kept.size() == 170);
  for (size_t i = 0; i < kept.size(); ++i) {
    CHECK(kept[i]["args"]["Addr"] == 0x10000 + 16 * i);
    CHECK(kept[i]["args"]["Bytes"] == 16 + i);
    CHECK(kept[i]["args"]["Total Allocated"] == 16 * (i + 1));
  }
  CHECK(t["kairos_stats"]["framework_memory_events"] == 170);
  CHECK(t["kairos_stats"]["cpu_args_dropped"] == 30);
  CHECK(t["kairos_stats"]["cpu_dropped"] == 0);
}

namespace {
// The text of the trace `path` names (kairos_flush()).
std::string FileText(const char* path) {
  REQUIRE(path != nullptr);
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
// The raw JSON text from `"Input Dims":` to the end of the "Input type" array of the one
// event named `name` (written on one line by the JSON writer).
std::string ShapeText(const std::string& trace, const std::string& name) {
  const size_t at = trace.find("\"name\":\"" + name + "\"");
  REQUIRE(at != std::string::npos);
  const size_t dims = trace.find("\"Input Dims\":", at);
  REQUIRE(dims != std::string::npos);
  const size_t types = trace.find("\"Input type\":", dims);
  REQUIRE(types != std::string::npos);
  const size_t end = trace.find(']', types);
  REQUIRE(end != std::string::npos);
  return trace.substr(dims, end + 1 - dims);
}
}  // namespace

TEST_CASE("kairos_op_push_inputs: raw sizes formatted at collection, byte for byte the text form") {
  const TempDir temp("kairos-op-");
  const std::string& dir = temp.path();
  const std::string base = "KAIROS_SUMMARY=off\nPROFILE_REPORT_INPUT_SHAPES=true\n"
                           "PROFILE_WITH_FLOPS=true\nACTIVITIES_LOG_FILE=" + dir + "/raw.json\n";
  kairos_op_attach();
  static const char kFloat[] = "float";
  static const char kLong[] = "long int";
  static const char kScalar[] = "Scalar";
  const uint32_t ranks[] = {2, 0, 3, 0, 1};
  const int64_t sizes[] = {64, 32, 1, -2, 12345678901234, 7};  // any int64 is written as given
  const char* const types[] = {kFloat, kScalar, kLong, nullptr, kFloat};
  const kairos_op_inputs in{5, ranks, sizes, types};
  const kairos_op_inputs none{0, nullptr, nullptr, nullptr};
  kairos_op_args a = Args(nullptr, nullptr);
  kairos_op_args text = Args("[[64, 32], [], [1, -2, 12345678901234], [], [7]]",
                             "[\"float\", \"Scalar\", \"long int\", \"\", \"float\"]");

  kairos_op_push_inputs("aten::idle", &a, -1, &in);  // not recording: nothing
  CHECK(kairos::internal::CurrentCpuRangeId() == 0);

  Trace(base);
  kairos_op_push_inputs("aten::raw", &a, 42, &in);
  kairos_range_pop();
  kairos_op_push("aten::text", &text);
  kairos_range_pop();
  kairos_op_push_inputs("aten::noinputs", &a, -1, &none);
  kairos_range_pop();
  kairos_op_push_inputs("aten::nullinputs", nullptr, -1, nullptr);
  kairos_range_pop();
  // Past the bounds (kMaxOpInputs inputs, kMaxOpInputSizes sizes): no shapes, counted.
  const kairos_op_inputs many{kairos::internal::kMaxOpInputs + 1, ranks, sizes, types};
  kairos_op_push_inputs("aten::many", &a, -1, &many);
  kairos_range_pop();
  const uint32_t long_rank[] = {kairos::internal::kMaxOpInputSizes + 1};
  const kairos_op_inputs deep{1, long_rank, sizes, types};
  kairos_op_push_inputs("aten::deep", &a, -1, &deep);
  kairos_range_pop();
  const std::string raw = FileText(kairos_flush());
  CHECK(ShapeText(raw, "aten::raw") ==
        "\"Input Dims\":[[64, 32], [], [1, -2, 12345678901234], [], [7]],"
        "\"Input type\":[\"float\", \"Scalar\", \"long int\", \"\", \"float\"]");
  CHECK(ShapeText(raw, "aten::raw") == ShapeText(raw, "aten::text"));
  CHECK(ShapeText(raw, "aten::noinputs") == "\"Input Dims\":[],\"Input type\":[]");
  const nlohmann::json t = nlohmann::json::parse(raw);
  CHECK(Only(t, "aten::raw")["args"]["flops"] == 42);
  CHECK(Only(t, "aten::raw")["args"]["Sequence number"] == 5);
  CHECK(Only(t, "aten::raw")["args"]["Record function id"] == 9);
  CHECK_FALSE(Only(t, "aten::nullinputs")["args"].contains("Input Dims"));
  CHECK(Only(t, "aten::many")["cat"] == "cpu_op");
  CHECK_FALSE(Only(t, "aten::many")["args"].contains("Input Dims"));
  CHECK(Only(t, "aten::deep")["args"]["Record function id"] == 9);
  CHECK_FALSE(Only(t, "aten::deep")["args"].contains("Input Dims"));
  CHECK(t["kairos_stats"]["cpu_args_dropped"] == 2);

  // The smallest ring (4 KiB: 170 records, 170 args slots of 80 bytes, 85 of them kept for the
  // ranges the ring can hold): 1000 sizes (101 slots) do not fit; they are left out and
  // counted, the op keeps its other args, and later ops still fit.
  Trace("KAIROS_SUMMARY=off\nPROFILE_REPORT_INPUT_SHAPES=true\nPROFILE_WITH_FLOPS=true\n"
        "KAIROS_CPU_BUFFER_KB_PER_THREAD=4\nACTIVITIES_LOG_FILE=" + dir + "/small.json\n");
  static int64_t wide[1000] = {};
  const uint32_t wide_rank[] = {1000};
  const kairos_op_inputs wide_in{1, wide_rank, wide, types};
  kairos_op_push_inputs("aten::wide", &a, 7, &wide_in);
  kairos_range_pop();
  kairos_op_push_inputs("aten::after", &a, -1, &in);
  kairos_range_pop();
  const std::string small = FileText(kairos_flush());
  const nlohmann::json s = nlohmann::json::parse(small);
  CHECK_FALSE(Only(s, "aten::wide")["args"].contains("Input Dims"));
  CHECK(Only(s, "aten::wide")["args"]["flops"] == 7);
  CHECK(ShapeText(small, "aten::after") == ShapeText(raw, "aten::raw"));
  CHECK(s["kairos_stats"]["cpu_args_dropped"] == 1);

  // Filling that ring with ops of 5 inputs (3 slots each): shapes stop where the slots left
  // are the ones kept for the ranges the ring can still take, and every op the ring holds
  // keeps its own args. Op k stores shapes while 84 - 2k >= 2: ops 0..41; ops 42..99 without
  // (58 counted: the args are stored before the ring takes the record, so the last 15, whose
  // 30 records the full ring (170 = 85 ops) drops, count too).
  Trace("KAIROS_SUMMARY=off\nPROFILE_REPORT_INPUT_SHAPES=true\n"
        "KAIROS_CPU_BUFFER_KB_PER_THREAD=4\nACTIVITIES_LOG_FILE=" + dir + "/fill.json\n");
  for (int i = 0; i < 100; ++i) {
    kairos_op_push_inputs("aten::fill", &a, -1, &in);
    kairos_range_pop();
  }
  const nlohmann::json f = nlohmann::json::parse(FileText(kairos_flush()));
  int ops = 0, with_args = 0, with_shapes = 0;
  for (const auto& e : f["traceEvents"]) {
    if (e.value("name", "") != "aten::fill") continue;
    ++ops;
    with_args += e["args"].value("Record function id", 0) == 9 ? 1 : 0;
    with_shapes += e["args"].contains("Input Dims") ? 1 : 0;
  }
  CHECK(ops == 85);
  CHECK(with_args == 85);
  CHECK(with_shapes == 42);
  CHECK(f["kairos_stats"]["cpu_args_dropped"] == 58);
  CHECK(f["kairos_stats"]["cpu_dropped"] == 30);
}

namespace {
// ts and ts + dur of the one complete event `name`.
std::pair<double, double> Span(const nlohmann::json& t, const std::string& name) {
  const nlohmann::json e = Only(t, name);
  return {e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()};
}
bool Inside(const nlohmann::json& t, const std::string& inner, const std::string& outer) {
  const auto in = Span(t, inner), out = Span(t, outer);
  return in.first >= out.first && in.second <= out.second;
}
}  // namespace

TEST_CASE("kairos_op_enter/exit: the op ranges of kairos_op_push_inputs, nesting kept by kairos") {
  const TempDir temp("kairos-op-");
  const std::string& dir = temp.path();
  const std::string base = "KAIROS_SUMMARY=off\nPROFILE_REPORT_INPUT_SHAPES=true\n"
                           "PROFILE_WITH_FLOPS=true\nACTIVITIES_LOG_FILE=" + dir + "/scope.json\n";
  kairos_op_attach();
  static const char kFloat[] = "float";
  const uint32_t ranks[] = {2, 0};
  const int64_t sizes[] = {4, 5};
  const char* const types[] = {kFloat, nullptr};
  const kairos_op_inputs in{2, ranks, sizes, types};
  // The same inputs packed: rank, type text address, sizes; then rank 0, no type text.
  const uint64_t words[] = {2, reinterpret_cast<uintptr_t>(kFloat), 4, 5, 0, 0};
  kairos_op_args a = Args(nullptr, nullptr);

  CHECK(kairos_op_enter("aten::idle", &a, -1, words, 6, 7) == 0);  // not recording: nothing
  CHECK(kairos::internal::CurrentCpuRangeId() == 0);
  Trace(base);
  // The scope entered before the window ends inside it: it pops nothing (not "outer").
  kairos_range_push("outer");
  kairos_op_exit(7);
  CHECK(kairos_op_enter("aten::enter", &a, 42, words, 6, 7) == 1);  // the thread's first scope
  CHECK(kairos_op_enter("user scope", nullptr, 99, words, 6, 7) == 0);
  kairos_op_exit(7);
  // An asynchronous scope's end on another thread (another key) closes nothing here.
  CHECK(kairos_op_enter("aten::async", &a, -1, nullptr, 0, 7) == 0);
  kairos_op_exit(8);
  CHECK(kairos_op_enter("aten::child", &a, -1, nullptr, 0, 7) == 0);
  kairos_op_exit(7);
  kairos_op_exit(7);  // aten::async
  kairos_op_exit(0);  // aten::enter: key 0 is no key
  kairos_op_exit(7);  // none left: "outer" stays open
  kairos_range_pop();
  kairos_op_push_inputs("aten::push", &a, 42, &in);
  kairos_range_pop();
  kairos_range_push("plain");
  kairos_range_pop();
  // No inputs; over the bound (counted); words whose rank runs past their end (not counted:
  // the collector finds it) are written without shapes.
  CHECK(kairos_op_enter("aten::none", &a, -1, words, 0, 7) == 0);
  kairos_op_exit(7);
  static uint64_t big[KAIROS_OP_MAX_INPUT_WORDS + 1] = {};
  CHECK(kairos_op_enter("aten::big", &a, 5, big, KAIROS_OP_MAX_INPUT_WORDS + 1, 7) == 0);
  kairos_op_exit(7);
  const uint64_t bad[] = {3, 0, 1};
  CHECK(kairos_op_enter("aten::bad", &a, -1, bad, 3, 7) == 0);
  kairos_op_exit(7);
  // A second thread: its own nesting and first scope.
  int thread_first = -1;
  std::thread other([&] {
    kairos_op_exit(0);  // nothing open on this thread
    thread_first = kairos_op_enter("aten::thread", &a, -1, nullptr, 0, 11);
    kairos_op_exit(11);
  });
  other.join();
  const std::string raw = FileText(kairos_flush());
  const nlohmann::json t = nlohmann::json::parse(raw);
  CHECK(thread_first == 1);
  CHECK(Inside(t, "aten::enter", "outer"));
  CHECK(Inside(t, "user scope", "aten::enter"));
  CHECK(Inside(t, "aten::async", "aten::enter"));
  CHECK(Inside(t, "aten::child", "aten::async"));
  CHECK(Span(t, "aten::enter").second <= Span(t, "aten::push").first);
  CHECK(Span(t, "outer").second <= Span(t, "aten::push").first);
  // The op's args are kairos_op_push_inputs' byte for byte, but for its own External id.
  nlohmann::json enter_args = Only(t, "aten::enter")["args"];
  nlohmann::json push_args = Only(t, "aten::push")["args"];
  CHECK(enter_args["External id"] != push_args["External id"]);
  enter_args.erase("External id");
  push_args.erase("External id");
  CHECK(enter_args.dump() == push_args.dump());
  CHECK(ShapeText(raw, "aten::enter") == "\"Input Dims\":[[4, 5], []],\"Input type\":[\"float\", \"\"]");
  CHECK(enter_args["flops"] == 42);
  CHECK(ShapeText(raw, "aten::none") == "\"Input Dims\":[],\"Input type\":[]");
  CHECK(Only(t, "aten::big")["args"]["flops"] == 5);
  CHECK_FALSE(Only(t, "aten::big")["args"].contains("Input Dims"));
  CHECK(Only(t, "aten::bad")["args"]["Record function id"] == 9);
  CHECK_FALSE(Only(t, "aten::bad")["args"].contains("Input Dims"));
  CHECK(t["kairos_stats"]["cpu_args_dropped"] == 1);
  // A scope without args is the plain range kairos_range_push writes.
  const nlohmann::json user = Only(t, "user scope"), plain = Only(t, "plain");
  CHECK(user["cat"] == plain["cat"]);
  CHECK(user["args"].size() == plain["args"].size());
  CHECK(Only(t, "aten::thread")["tid"] != Only(t, "aten::enter")["tid"]);

  // A scope left open when its window ends is not closed by the next window's exit, and each
  // window reports its first scope again.
  Trace(base);
  CHECK(kairos_op_enter("aten::unclosed", &a, -1, nullptr, 0, 7) == 1);
  CHECK(kairos_flush() != nullptr);
  Trace(base);
  kairos_range_push("outer2");
  kairos_op_exit(7);
  CHECK(kairos_op_enter("aten::again", &a, -1, nullptr, 0, 7) == 1);
  kairos_op_exit(7);
  kairos_range_pop();
  const nlohmann::json t2 = FlushAndRead();
  CHECK(Inside(t2, "aten::again", "outer2"));
}

namespace {
// A capture callback (kairos_op_enter_captured) that records what kairos offered and writes
// `write` words of rank-0, no-type inputs, or the packed words of `words` when set, and returns
// `result` (defaults to what it wrote).
struct FakeCapture {
  int calls = 0;
  uint32_t room = 0;
  const uint64_t* words = nullptr;
  uint32_t write = 0;
  int64_t result = -1;
};
uint32_t CaptureFake(void* ctx, uint64_t* w, uint32_t room) {
  auto* c = static_cast<FakeCapture*>(ctx);
  ++c->calls;
  c->room = room;
  const uint32_t n = c->write < room ? c->write : room;
  for (uint32_t i = 0; i < n; ++i) w[i] = c->words != nullptr ? c->words[i] : 0;
  return c->result >= 0 ? static_cast<uint32_t>(c->result) : n;
}
}  // namespace

TEST_CASE("kairos_op_enter_captured: inputs written in place equal kairos_op_enter's") {
  const TempDir temp("kairos-op-");
  const std::string& dir = temp.path();
  kairos_op_attach();
  static const char kFloat[] = "float";
  const uint64_t words[] = {2, reinterpret_cast<uintptr_t>(kFloat), 4, 5, 0, 0};
  kairos_op_args a = Args(nullptr, nullptr);

  FakeCapture idle{0, 0, words, 6};
  CHECK(kairos_op_enter_captured("aten::idle", &a, -1, &CaptureFake, &idle, 7) == 0);
  CHECK(idle.calls == 0);  // not recording: not called

  Trace("KAIROS_SUMMARY=off\nPROFILE_REPORT_INPUT_SHAPES=true\nPROFILE_WITH_FLOPS=true\n"
        "ACTIVITIES_LOG_FILE=" + dir + "/captured.json\n");
  FakeCapture six{0, 0, words, 6};
  CHECK(kairos_op_enter_captured("aten::captured", &a, 42, &CaptureFake, &six, 7) == 1);
  FakeCapture none{0, 0, nullptr, 0};
  CHECK(kairos_op_enter_captured("aten::none", &a, -1, &CaptureFake, &none, 7) == 0);
  kairos_op_exit(7);
  kairos_op_exit(7);
  CHECK(kairos_op_enter("aten::copied", &a, 42, words, 6, 7) == 0);
  kairos_op_exit(7);
  // Over the room (counted), and no callback at all (recorded without inputs, not counted).
  FakeCapture over{0, 0, nullptr, 0, KAIROS_OP_MAX_INPUT_WORDS + 1};
  CHECK(kairos_op_enter_captured("aten::over", &a, 5, &CaptureFake, &over, 7) == 0);
  kairos_op_exit(7);
  CHECK(kairos_op_enter_captured("aten::nocapture", &a, 6, nullptr, nullptr, 7) == 0);
  kairos_op_exit(7);
  const std::string raw = FileText(kairos_flush());
  const nlohmann::json t = nlohmann::json::parse(raw);
  CHECK(six.calls == 1);
  CHECK(six.room == KAIROS_OP_MAX_INPUT_WORDS);  // a fresh 1 MiB ring has room for the most
  CHECK(Inside(t, "aten::none", "aten::captured"));
  nlohmann::json captured = Only(t, "aten::captured")["args"];
  nlohmann::json copied = Only(t, "aten::copied")["args"];
  captured.erase("External id");
  copied.erase("External id");
  CHECK(captured.dump() == copied.dump());
  CHECK(ShapeText(raw, "aten::captured") == "\"Input Dims\":[[4, 5], []],\"Input type\":[\"float\", \"\"]");
  CHECK(ShapeText(raw, "aten::none") == "\"Input Dims\":[],\"Input type\":[]");
  CHECK(over.calls == 1);
  CHECK(Only(t, "aten::over")["args"]["flops"] == 5);
  CHECK_FALSE(Only(t, "aten::over")["args"].contains("Input Dims"));
  CHECK(Only(t, "aten::nocapture")["args"]["flops"] == 6);
  CHECK_FALSE(Only(t, "aten::nocapture")["args"].contains("Input Dims"));
  CHECK(t["kairos_stats"]["cpu_args_dropped"] == 1);

  // The smallest ring (4 KiB: 170 args slots of 80 bytes, 85 kept for the ranges the ring can
  // hold): the first op is offered the 84 spare slots, 840 words; it takes them all (420
  // inputs of rank 0), so the next op is offered none and one word is over.
  Trace("KAIROS_SUMMARY=off\nPROFILE_REPORT_INPUT_SHAPES=true\n"
        "KAIROS_CPU_BUFFER_KB_PER_THREAD=4\nACTIVITIES_LOG_FILE=" + dir + "/small.json\n");
  FakeCapture all{0, 0, nullptr, 2000};
  kairos_op_enter_captured("aten::all", &a, -1, &CaptureFake, &all, 7);
  kairos_op_exit(7);
  FakeCapture one{0, 0, nullptr, 1, 1};
  kairos_op_enter_captured("aten::one", &a, -1, &CaptureFake, &one, 7);
  kairos_op_exit(7);
  const nlohmann::json s = nlohmann::json::parse(FileText(kairos_flush()));
  CHECK(all.room == 840);
  CHECK(Only(s, "aten::all")["args"]["Input Dims"].size() == 420);
  CHECK(one.room == 0);
  CHECK_FALSE(Only(s, "aten::one")["args"].contains("Input Dims"));
  CHECK(s["kairos_stats"]["cpu_args_dropped"] == 1);
}
