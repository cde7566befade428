// File: perfetto_convert_test.cc
// Layer: test (output_perfetto). The Perfetto reader and `kairos convert`: protobuf ->
// TraceData is lossless against the JSON writer, and the CLI round-trips
// JSON -> protobuf (plain and zstd) -> JSON without losing events; usage errors exit 2,
// I/O errors exit 1.
// Threading: single-threaded (runs the CLI as a child process).
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "output/compress_sinks.h"
#include "output/json_writer.h"
#include "output/perfetto_writer.h"
#include "output/proto/perfetto_reader.h"
#include "output/writer.h"
#include "output_perfetto/json_compare.h"
#include "output_perfetto/reference_trace.h"
#include "output_perfetto/string_sink.h"
#include "sanitizer_skip.h"
#include "temp_dir.h"

namespace kairos {
namespace {

using nlohmann::json;

using testing::StringSink;
using testing::TempDir;

std::string JsonOf(const TraceData& d) {
  StringSink s;
  JsonTraceWriter w;
  REQUIRE(w.Write(d, s).ok());
  return s.out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int Run(const std::string& args) {
  int rc = std::system((std::string(KAIROS_CLI_PATH) + " convert " + args + " >/dev/null 2>&1").c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST_CASE("protobuf -> TraceData -> JSON equals the JSON of the original data") {
  TraceData ref = testing::BuildReferenceTrace(100);
  StringSink pb;
  PerfettoTraceWriter w;
  REQUIRE(w.Write(ref, pb).ok());
  absl::StatusOr<TraceData> back = ReadPerfettoTraceBytes(pb.out);
  REQUIRE(back.ok());
  CHECK(back->EventCount() == ref.EventCount());
  CHECK(back->stats.count("perfetto_reader.unmapped") == 0);
  json a = json::parse(JsonOf(ref)), b = json::parse(JsonOf(*back));
  CHECK(testing::SortedEvents(a) == testing::SortedEvents(b));
  CHECK(testing::TopLevelWithoutEvents(a) == testing::TopLevelWithoutEvents(b));
}

// A [memory] event and a python_function whose side-table rows have the same index (row 0
// of each table) on one track: each keeps its own args through protobuf, the line args too.
TEST_CASE("protobuf keeps [memory] and python_function args apart, with their Python lines") {
  TraceData d;
  d.pid = 7;
  d.tracks.push_back({});
  d.tracks[0].type = TrackType::kThread;
  d.tracks[0].pid = 7;
  d.tracks[0].tid = 7;
  d.events_by_track.resize(1);
  d.python_frames.push_back({1, 0, 0, 12});
  MemoryDetail m{};
  m.addr = 5000;
  m.bytes = 64;
  m.total_allocated = 64;
  m.device = -1;
  m.stream = 0xFFFFFFFFu;  // none
  m.py_line = 42;
  d.memory.push_back(m);
  Event f{};
  f.start_ns = 1000000;
  f.end_ns = 2000000;
  f.name = d.strings.Intern("/job/train.py(40): step");
  f.detail = 0;
  f.kind = EventKind::kPythonFunction;
  Event mem = f;
  mem.start_ns = mem.end_ns = 1500000;
  mem.name = d.strings.Intern("[memory]");
  mem.kind = EventKind::kInstant;
  mem.aux = kAuxMemory;
  d.events_by_track[0] = {f, mem};
  StringSink pb;
  PerfettoTraceWriter w;
  REQUIRE(w.Write(d, pb).ok());
  absl::StatusOr<TraceData> back = ReadPerfettoTraceBytes(pb.out);
  REQUIRE(back.ok());
  REQUIRE(back->memory.size() == 1);
  CHECK(back->memory[0].bytes == 64);
  CHECK(back->memory[0].py_line == 42);
  REQUIRE(back->python_frames.size() == 1);
  CHECK(back->python_frames[0].id == 1);
  CHECK(back->python_frames[0].caller_line == 12);
}

TEST_CASE("kairos convert round-trips JSON -> protobuf -> JSON without losing events") {
  const TempDir temp("kairos_cv_");
  const std::string& dir = temp.path();
  TraceData ref = testing::BuildReferenceTrace(2000);
  OutputOptions req;
  req.path = dir + "/in.json";
  REQUIRE(WriteTraceFile(ref, req).ok());
  json original = json::parse(ReadFile(req.path));

  for (const char* mid : {"mid.pftrace", "mid.pftrace.zst", "mid.perfetto-trace"}) {
    INFO(mid);
    std::string m = dir + "/" + mid;
    REQUIRE(Run(dir + "/in.json " + m) == 0);
    std::string out = dir + "/out_" + mid + ".json.zst";
    REQUIRE(Run(m + " " + out + " --zstd-level 5") == 0);
    REQUIRE(std::system(("zstd -q -d -f " + out + " -o " + dir + "/out.json").c_str()) == 0);
    json back = json::parse(ReadFile(dir + "/out.json"));
    CHECK(back["traceEvents"].size() == original["traceEvents"].size());
    CHECK(testing::SortedEvents(back) == testing::SortedEvents(original));
    CHECK(testing::TopLevelWithoutEvents(back) == testing::TopLevelWithoutEvents(original));
  }
  // --format overrides the name.
  REQUIRE(Run(dir + "/in.json " + dir + "/forced.bin --format perfetto") == 0);
  CHECK(ReadFile(dir + "/forced.bin").substr(0, 1) == "\x0a");
}

TEST_CASE("kairos convert usage and I/O errors") {
  CHECK(Run("") == 2);
  CHECK(Run("--help") == 0);
  CHECK(Run("a.json") == 2);
  CHECK(Run("a.json b.pftrace --format xml") == 2);
  CHECK(Run("a.json b.pftrace --zstd-level 0") == 2);
  CHECK(Run("a.json b.pftrace --bogus") == 2);
  CHECK(Run("/nonexistent/a.json /tmp/b.pftrace") == 1);
  CHECK(Run("/dev/null /nonexistent-dir/b.pftrace") == 1);
}

TEST_CASE("kairos convert rejects a ts that does not fit instead of wrapping it") {
  const TempDir temp("kairos_convert_ts_");
  const std::string& dir = temp.path();
  {
    std::ofstream f(dir + "/in.json");
    f << R"J({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":99999999999999999999,"dur":1}]})J";
  }
  const std::string cmd = std::string(KAIROS_CLI_PATH) + " convert " + dir + "/in.json " + dir +
                          "/out.json 2>" + dir + "/err";
  const int rc = std::system(cmd.c_str());
  CHECK((WIFEXITED(rc) ? WEXITSTATUS(rc) : -1) == 1);
  CHECK(ReadFile(dir + "/err").find("\"ts\": 99999999999999999999 does not fit a 64-bit ns time") !=
        std::string::npos);
  CHECK_FALSE(std::ifstream(dir + "/out.json").good());
}

// One zstd frame of `prefix` followed by `zeros` zero bytes.
std::string ZstdFrame(const std::string& prefix, size_t zeros) {
  StringSink out;
  ZstdSink z(out, 1);
  REQUIRE(z.Write(prefix.data(), prefix.size()).ok());
  const std::string chunk(1 << 20, '\0');
  for (size_t left = zeros; left > 0; left -= std::min(left, chunk.size()))
    REQUIRE(z.Write(chunk.data(), std::min(left, chunk.size())).ok());
  REQUIRE(z.Finish().ok());
  return out.out;
}

// Trace.packet header: tag 0x0A and the varint length.
std::string PacketHeader(uint64_t len) {
  std::string h = "\x0a";
  do {
    h.push_back(static_cast<char>((len & 0x7F) | (len > 0x7F ? 0x80 : 0)));
    len >>= 7;
  } while (len != 0);
  return h;
}

TEST_CASE("the Perfetto reader refuses a packet past the cap with the cap named") {
  // A length field that claims 4 GiB: refused when the header is read, never buffered.
  const std::string bytes = PacketHeader(4ull << 30) + std::string(64, '\0');
  absl::StatusOr<TraceData> r = ReadPerfettoTraceBytes(bytes);
  REQUIRE_FALSE(r.ok());
  CHECK(absl::IsResourceExhausted(r.status()));
  CHECK(r.status().message() == "perfetto: packet at byte 0 is 4294967296 bytes; the limit is 67108864 bytes");
  // The cap is an option: a real trace under a 16-byte cap names the first larger packet.
  StringSink pb;
  REQUIRE(PerfettoTraceWriter().Write(testing::BuildReferenceTrace(10), pb).ok());
  TraceReadOptions tiny;
  tiny.perfetto_max_packet_bytes = 16;
  r = ReadPerfettoTraceBytes(pb.out, tiny);
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("; the limit is 16 bytes") != std::string::npos);
  // A length varint longer than 64 bits is malformed, not a huge length.
  r = ReadPerfettoTraceBytes("\x0a" + std::string(10, '\xff') + "\x01");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "perfetto: packet length overflows at byte 0");
}

// A TracePacket with the given fields (varints only; `body` appended as is).
std::string Packet(const std::string& body) { return PacketHeader(body.size()) + body; }
std::string Varint(uint64_t v) { return PacketHeader(v).substr(1); }
std::string VarintField(uint32_t field, uint64_t v) { return Varint(uint64_t{field} << 3) + Varint(v); }
std::string LenField(uint32_t field, const std::string& body) {
  return Varint(uint64_t{field} << 3 | 2) + Varint(body.size()) + body;
}

TEST_CASE("the Perfetto reader refuses a delta clock carried past int64 and counts ends before begins") {
  // Sequence 1 on the delta clock (64): a defaults packet, then a slice begin at delta
  // 2^63 - 10 and one at delta 100 (the sum passes INT64_MAX). The old reader wrapped it into
  // a negative time.
  const std::string defaults = LenField(59, VarintField(58, 64));  // trace_packet_defaults
  const std::string begin = LenField(11, VarintField(9, 1) + VarintField(11, 5) + LenField(23, "s"));
  std::string bytes = Packet(VarintField(10, 1) + defaults);
  bytes += Packet(VarintField(8, (uint64_t{1} << 63) - 10) + VarintField(10, 1) + begin);
  const size_t second = bytes.size();
  bytes += Packet(VarintField(8, 100) + VarintField(10, 1) + begin);
  absl::StatusOr<TraceData> r = ReadPerfettoTraceBytes(bytes);
  REQUIRE_FALSE(r.ok());
  CHECK(absl::IsOutOfRange(r.status()));
  CHECK(r.status().message() == "perfetto: timestamp delta 100 after 9223372036854775798 ns does not fit a "
                                "64-bit ns time (packet at byte " + std::to_string(second) + ")");
  // Absolute clock: a begin at 1000 and its end at 10: a zero-length slice, counted.
  const std::string end = LenField(11, VarintField(9, 2) + VarintField(11, 5));
  bytes = Packet(VarintField(8, 1000) + VarintField(10, 2) + begin) + Packet(VarintField(8, 10) + VarintField(10, 2) + end);
  r = ReadPerfettoTraceBytes(bytes);
  REQUIRE(r.ok());
  REQUIRE(r->EventCount() == 1);
  for (const auto& track : r->events_by_track) {
    for (const Event& e : track) CHECK((e.start_ns == 1000 && e.end_ns == 1000));
  }
  CHECK(r->stats.at("perfetto_reader.negative_dur") == 1);
}

TEST_CASE("a streamed .pftrace.zst reads exactly as the same bytes in memory") {
  // Large enough that packets straddle the decompressor's output chunks and the file's
  // 1 MiB read chunks.
  const TempDir temp("kairos_pf_stream_");
  const std::string& dir = temp.path();
  const TraceData ref = testing::BuildReferenceTrace(100000);
  StringSink pb;
  REQUIRE(PerfettoTraceWriter().Write(ref, pb).ok());
  REQUIRE(pb.out.size() > (2u << 20));
  for (const char* name : {"/t.pftrace", "/t.pftrace.zst"}) {
    OutputOptions o;
    o.path = dir + name;
    REQUIRE(WriteTraceFile(ref, o).ok());
    absl::StatusOr<TraceData> file = ReadPerfettoTrace(dir + name);
    absl::StatusOr<TraceData> mem = ReadPerfettoTraceBytes(pb.out);
    REQUIRE(file.ok());
    REQUIRE(mem.ok());
    CHECK(file->EventCount() == ref.EventCount());
    CHECK(JsonOf(*file) == JsonOf(*mem));
  }
  // Cut short: the last packet is truncated, named by its offset.
  std::ofstream(dir + "/cut.pftrace", std::ios::binary) << pb.out.substr(0, pb.out.size() - 3);
  absl::StatusOr<TraceData> cut = ReadPerfettoTrace(dir + "/cut.pftrace");
  REQUIRE_FALSE(cut.ok());
  CHECK(std::string(cut.status().message()).rfind(dir + "/cut.pftrace: perfetto: truncated packet at byte ", 0) == 0);
}

TEST_CASE("kairos summarize on a 4 GiB zstd bomb fails with one line under a 2 GiB address space") {
  KAIROS_SKIP_UNDER_SANITIZER("RLIMIT_AS cannot be combined with ASan/TSan's reservations");
  const TempDir temp("kairos_pf_bomb_");
  const std::string& dir = temp.path();
  // A packet header claiming 4 GiB then 4 GiB of zeros: 64 concatenated frames of 64 MiB,
  // about 130 KB on disk. The old reader decompressed it whole into one string and died of
  // std::bad_alloc (exit 134).
  const size_t frame = 64u << 20;
  std::string bomb = ZstdFrame(PacketHeader(4ull << 30), frame);
  const std::string zeros = ZstdFrame("", frame);
  for (int i = 1; i < 64; ++i) bomb += zeros;
  REQUIRE(bomb.size() < 200000);
  const std::string path = dir + "/bomb.pftrace.zst";
  std::ofstream(path, std::ios::binary) << bomb;
  const std::string cmd = "sh -c 'ulimit -v 2097152 && exec " + std::string(KAIROS_CLI_PATH) +
                          " summarize " + path + "' >/dev/null 2>" + dir + "/err";
  const int rc = std::system(cmd.c_str());
  CHECK((WIFEXITED(rc) ? WEXITSTATUS(rc) : -1) == 1);
  CHECK(ReadFile(dir + "/err") == "kairos summarize: " + path +
                                      ": perfetto: packet at byte 0 is 4294967296 bytes; the limit is "
                                      "67108864 bytes\n");
}

}  // namespace
}  // namespace kairos
