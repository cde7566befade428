// File: writer_golden_test.cc
// Layer: test (output_perfetto). Pins the exact bytes the Perfetto and JSON writers produce
// for the reference trace: the FNV-1a 64 hash and size of each output were recorded from
// the writers before the issue 18 speed work (commit 403be25), so any encoding change that
// alters a single byte fails here. The decoding tests (perfetto_writer_test, json tests)
// say whether output is correct; this one says it did not change. If a format change is
// intended, re-record the constants and say why in the commit.
// Threading: single-threaded.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "output/json_writer.h"
#include "output/perfetto_writer.h"
#include "output_perfetto/reference_trace.h"
#include "output_perfetto/string_sink.h"

namespace kairos {
namespace {

using testing::StringSink;

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string Perfetto(const TraceData& d, size_t chunk) {
  PerfettoWriterOptions o;
  o.chunk_bytes = chunk;
  PerfettoTraceWriter w(o);
  StringSink sink;
  REQUIRE(w.Write(d, sink).ok());
  return sink.out;
}

std::string Json(const TraceData& d) {
  JsonTraceWriter w;
  StringSink sink;
  REQUIRE(w.Write(d, sink).ok());
  return sink.out;
}

// Many names (more than any small lookup cache holds, in an order that revisits them), equal
// start times across tracks (the merge's tie order), nested ranges, kernels and memcpys with
// side-table rows, flows, and counters: the cases a faster encoder or merge could get wrong.
TraceData BuildStressTrace() {
  TraceData d;
  d.pid = 77;
  d.base_time_ns = testing::kRefBase;
  d.window_start_ns = d.base_time_ns + 500;
  uint32_t threads[3], streams[2];
  for (int t = 0; t < 3; ++t) threads[t] = d.AddTrack({TrackType::kThread, 77, 100 + t, 0, 0, "w"});
  for (int s = 0; s < 2; ++s)
    streams[s] = d.AddTrack({TrackType::kGpuStream, 0, 7 + s, 0, uint32_t(7 + s), ""});
  StringId names[300];
  for (int i = 0; i < 300; ++i) names[i] = d.strings.Intern("name_" + std::to_string(i * 7919 % 1000));
  for (int c = 0; c < 100; ++c) {
    KernelDetail k{};
    k.grid[0] = 64 + c;
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = 128;
    k.block[1] = k.block[2] = 1;
    k.stream = 7 + c % 2;
    k.registers_per_thread = 32 + c % 5;
    d.kernels.push_back(k);
  }
  for (int c = 0; c < 10; ++c) {
    MemcpyDetail m{};
    m.bytes = 4096u << c;
    d.memcpys.push_back(m);
  }
  uint32_t lcg = 12345;
  auto next = [&lcg](uint32_t mod) {
    lcg = lcg * 1103515245u + 12345u;
    return (lcg >> 8) % mod;
  };
  for (uint32_t i = 0; i < 6000; ++i) {
    // Steps of 1 us, every 97th of 200 ms: one-byte and multi-byte timestamp deltas.
    const int64_t t = d.window_start_ns + int64_t(i) * 1000 + int64_t(i / 97) * 200000000;
    const uint32_t th = threads[i % 3];
    Event outer{t, t + 900, names[next(300)], th, 0, i + 1, kNoDetail, EventKind::kCpuOp, 0, 0};
    Event inner{t + 100, t + 100 + next(700), names[next(300)], th, 0, 0, kNoDetail,
                EventKind::kUserAnnotation, 0, 0};
    d.events_by_track[th].push_back(outer);
    d.events_by_track[th].push_back(inner);
    const uint32_t corr = i + 1;
    Event launch{t + 200, t + 400, names[i % 7], th, corr, i + 1, kNoDetail, EventKind::kRuntime,
                 kFlagFlowOut, 211};
    d.events_by_track[th].push_back(launch);
    const uint32_t st = streams[i % 2];
    if (i % 5 == 4) {
      Event copy{t + 1000, t + 1000 + next(5000), names[3], st, corr, i + 1, next(10),
                 EventKind::kMemcpy, kFlagFlowIn, 0};
      d.events_by_track[st].push_back(copy);
    } else {
      // Same start as the next outer range on thread 0 whenever i % 3 == 2.
      Event k{t + 1000, t + 1000 + next(3000), names[next(300)], st, corr, i + 1, next(100),
              EventKind::kKernel, kFlagFlowIn, 0};
      d.events_by_track[st].push_back(k);
    }
    if (i % 50 == 0) {
      Event inst{t + 100, t + 100, names[next(300)], th, 0, 0, kNoDetail, EventKind::kInstant, 0, 0};
      d.events_by_track[th].push_back(inst);
    }
  }
  d.counter_tracks.push_back({"cpu.util", "%", "Host"});
  d.counter_tracks.push_back({"sm__throughput", "%", "", 0});
  for (int k = 0; k < 2000; ++k) {
    d.counter_samples.push_back({d.window_start_ns + k * 3000, double(k % 100) + 0.25, 0});
    d.counter_samples.push_back({d.window_start_ns + k * 3000, double(k * 37 % 1000), 1});
  }
  d.window_end_ns = d.window_start_ns + 6000 * 1000 + 62 * 200000000LL;
  d.SortTracks();
  return d;
}

TEST_CASE("Perfetto writer output is byte-identical to the recorded golden bytes") {
  struct Golden {
    int bulk;
    size_t size;
    uint64_t hash;
  };
  for (Golden g : {Golden{0, 5182, 0x639c44298c4c02e1ull}, Golden{300, 12457, 0x9dea09b138f85340ull},
                   Golden{20000, 485257, 0x446c60fd9bc22841ull}}) {
    INFO("bulk ranges " << g.bulk);
    TraceData d = testing::BuildReferenceTrace(g.bulk);
    std::string a = Perfetto(d, 256 * 1024);
    CHECK(a.size() == g.size);
    CHECK(Fnv1a(a) == g.hash);
    // Chunking must not change a byte: a 1 KiB chunk flushes after almost every packet.
    CHECK(Perfetto(d, 1024) == a);
  }
}

TEST_CASE("JSON writer output is byte-identical to the recorded golden bytes") {
  struct Golden {
    int bulk;
    size_t size;
    uint64_t hash;
  };
  for (Golden g : {Golden{0, 7894, 0x2a0c3431c6826b19ull}, Golden{300, 37534, 0xafa9a0253f5ea692ull},
                   Golden{20000, 1994994, 0x16ae280ee634af8cull}}) {
    INFO("bulk ranges " << g.bulk);
    std::string a = Json(testing::BuildReferenceTrace(g.bulk));
    CHECK(a.size() == g.size);
    CHECK(Fnv1a(a) == g.hash);
  }
}

TEST_CASE("both writers' output of the stress trace is byte-identical to the golden bytes") {
  TraceData d = BuildStressTrace();
  std::string p = Perfetto(d, 256 * 1024);
  CHECK(p == Perfetto(d, 1024));
  std::string j = Json(d);
  CHECK(p.size() == 1018705);
  CHECK(Fnv1a(p) == 0xabca056d8499ad23ull);
  CHECK(j.size() == 5594799);
  CHECK(Fnv1a(j) == 0x73b1ef9ccf7c99aaull);
}

}  // namespace
}  // namespace kairos
