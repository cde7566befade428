// File: summarize_roundtrip_test.cc
// Layer: tests for kairos_analysis + kairos_output. `kairos summarize` analyses a TraceData
// rebuilt from the JSON file; this checks that it gives the same summary, byte for byte, as
// the in-process analysis of the TraceData that was written. Files go to a TempDir each.
// Threading: single-threaded.
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "analysis/summary.h"
#include "analysis/trace_builder.h"
#include "model/detail_values.h"
#include "model/gpu_counters.h"
#include "model/memory_totals.h"
#include "output/json_reader.h"
#include "output/proto/perfetto_reader.h"
#include "output/writer.h"
#include "temp_dir.h"

namespace kairos {
namespace {

using kairos::testing::TempDir;
using kairos::testing::TraceBuilder;
constexpr int64_t kBase = 1790000000000000000LL, kUs = 1000, kMs = 1000000;

TraceReadOptions AnalysisRead() {
  TraceReadOptions o;
  o.for_analysis = true;
  return o;
}

// A bit of everything: starved steps with a data loader, a NCCL kernel on a second stream,
// small pageable copies, a DtoH loss copy per step, syncs and host counters.
TraceData Mixed() {
  TraceBuilder b(kBase, kBase + 10 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread(4243);
  const uint32_t s7 = b.Stream(0, 7), s8 = b.Stream(0, 8);
  uint32_t corr = 1;
  for (int i = 0; i < 10; ++i) {
    const int64_t t0 = kBase + i * kMs;
    b.Step(th, i, t0, t0 + kMs);
    b.Range(th, "dataloader", t0, t0 + 600 * kUs);
    b.Launch(th, t0 + 600 * kUs, t0 + 605 * kUs, corr, "cudaMemcpyAsync");
    b.Memcpy(s7, t0 + 606 * kUs, t0 + 616 * kUs, corr++, 4096, 1, /*pageable*/ 1, 3);
    b.Launch(th, t0 + 610 * kUs, t0 + 615 * kUs, corr);
    b.Kernel(s7, "volta_sgemm_128x64_nn", t0 + 620 * kUs, t0 + 900 * kUs, corr++, 80);
    b.Launch(th, t0 + 616 * kUs, t0 + 620 * kUs, corr);
    b.Kernel(s8, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", t0 + 850 * kUs, t0 + 950 * kUs, corr++);
    b.Launch(th, t0 + 900 * kUs, t0 + 902 * kUs, corr, "cudaMemcpyAsync");
    b.Memcpy(s7, t0 + 955 * kUs, t0 + 957 * kUs, corr++, 4, 2, 3, 2);
    b.Counter("cpu.util", t0 + 100 * kUs, 75.5);
    b.Counter("cpu.iowait", t0 + 100 * kUs, 3.25);
  }
  TraceData& d = b.Done();
  d.pid = 4242;
  d.process_name = "roundtrip";
  d.base_time_ns = kBase;
  d.tracks[th].pid = 4242;
  return std::move(d);
}

TEST_CASE("summarize on the written JSON equals the in-process summary") {
  const TraceData data = Mixed();
  const std::string in_process = SummaryToJson(Analyze(data));
  const TempDir temp("kairos_summarize_rt_");
  const std::string path = temp.File("kairos_summarize_rt_" + std::to_string(getpid()) + ".json");
  OutputOptions req;
  req.path = path;
  REQUIRE(WriteTraceFile(data, req).ok());
  absl::StatusOr<TraceData> back = ReadKinetoJsonTrace(path);
  // What `kairos summarize` reads: only the analysed fields, each distinct row once.
  absl::StatusOr<TraceData> lean = ReadKinetoJsonTrace(path, AnalysisRead());
  std::remove(path.c_str());
  REQUIRE(back.ok());
  REQUIRE(lean.ok());
  const Summary s = Analyze(*back);
  CHECK(SummaryToJson(s) == in_process);
  CHECK(SummaryToJson(Analyze(*lean)) == in_process);
  CHECK(back->kernels.size() == 20);
  CHECK(lean->kernels.size() == 2);  // the sgemm's and the NCCL kernel's configurations
  CHECK(back->memcpys.size() == 20);
  CHECK(lean->memcpys.size() == 2);  // the 4 KiB pageable upload, the 4-byte read-back
  // And the summary is not trivially empty.
  REQUIRE(s.devices.size() == 1);
  CHECK(s.devices[0].communication_ns > 0);
  CHECK(s.findings.size() >= 2);
}

// FLOPs (docs/FLOPS.md) survive the JSON file: one op with the bridge's "flops" arg, one with
// only "Input Dims" (its child's "flops" is its decomposition), on an A100: the summary read
// back (both readers) equals the in-process one, compute object included.
TEST_CASE("compute summary round-trips through the JSON file") {
  TraceBuilder b(kBase, kBase + 2 * kMs);
  DeviceInfo& dev = b.Device(0);
  dev.name = "NVIDIA A100-SXM4-80GB";
  const uint32_t th = b.Thread(4243), st = b.Stream(0, 7);
  TraceData& d = b.data();
  auto op = [&](const char* name, int64_t s, int64_t e, uint32_t ext, int64_t flops, const char* dims) {
    CpuArgs a{};
    a.cpu_op = 1;
    a.sequence_nr = -1;
    a.flops = flops;
    a.input_dims = dims ? d.strings.Intern(dims) : 0;
    a.input_types = d.strings.Intern("[\"c10::BFloat16\", \"c10::BFloat16\"]");
    d.cpu_args.push_back(a);
    b.Add(th, EventKind::kCpuOp, name, s, e, 0, static_cast<uint32_t>(d.cpu_args.size() - 1)).external_id = ext;
  };
  op("aten::mm", kBase + 10 * kUs, kBase + 20 * kUs, 11, 312000000, "[[1000, 1000], [1000, 156]]");
  op("aten::linear", kBase + 30 * kUs, kBase + 40 * kUs, 12, -1, "[[64, 256], [512, 256], []]");
  op("aten::addmm", kBase + 31 * kUs, kBase + 39 * kUs, 13, 16777216, nullptr);
  b.Launch(th, kBase + 12 * kUs, kBase + 13 * kUs, 1);
  b.Kernel(st, "sm80_xmma_gemm_bf16bf16_bf16f32_f32_nn_n", kBase + 100 * kUs, kBase + 104 * kUs, 1);
  d.events_by_track[st].back().external_id = 11;
  b.Launch(th, kBase + 32 * kUs, kBase + 33 * kUs, 2);
  b.Kernel(st, "ampere_bf16_s16816gemm_bf16_64x64_nn", kBase + 200 * kUs, kBase + 202 * kUs, 2);
  d.events_by_track[st].back().external_id = 13;
  TraceData& data = b.Done();
  data.pid = 4242;
  data.tracks[th].pid = 4242;
  const Summary in_process = Analyze(data);
  REQUIRE(in_process.compute.present);
  // 312e6 FLOPs in 4 us on the 312 TFLOP/s bf16 peak: 1 us at peak; linear 2*64*256*512.
  CHECK(in_process.compute.total_flops == 312000000 + 16777216);
  CHECK(in_process.compute.mfu == Approx((1000.0 + 16777216.0 / 312e3) / 2e6));
  CHECK(in_process.compute.top_ops[0].mfu == Approx(0.25));
  const TempDir temp("kairos_summarize_flops_");
  const std::string path =
      temp.File("kairos_summarize_flops_" + std::to_string(getpid()) + ".json");
  OutputOptions req;
  req.path = path;
  REQUIRE(WriteTraceFile(data, req).ok());
  absl::StatusOr<TraceData> back = ReadKinetoJsonTrace(path);
  absl::StatusOr<TraceData> lean = ReadKinetoJsonTrace(path, AnalysisRead());
  std::remove(path.c_str());
  REQUIRE(back.ok());
  REQUIRE(lean.ok());
  const std::string want = SummaryToJson(in_process);
  CHECK(SummaryToJson(Analyze(*back)) == want);
  CHECK(SummaryToJson(Analyze(*lean)) == want);
}

// PyTorch's own trace (no "flops" args, Input Dims only): `kairos summarize` computes the
// FLOPs from the shapes; a conv2d needs its "Concrete Inputs" (stride, padding, dilation,
// groups; PyTorch 2.x writes them): without them it gets none. Both readers agree, and the
// plain read's computed counts are not written back by a conversion.
TEST_CASE("summarize computes FLOPs from Input Dims of a PyTorch trace") {
  const std::string text = R"({"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3",
    "computeMajor":9,"computeMinor":0,"numSms":132}],"baseTimeNanoseconds":1700000000000000000,
    "traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"aten::bmm","pid":1,"tid":1,"ts":10,"dur":5,
     "args":{"External id":5,"Input Dims":[[8,128,64],[8,64,128]],"Input type":["c10::Half","c10::Half"]}},
    {"ph":"X","cat":"cpu_op","name":"aten::conv2d","pid":1,"tid":1,"ts":20,"dur":5,
     "args":{"External id":6,"Input Dims":[[2,3,8,8],[4,3,3,3],[],[],[],[],[]],"Input type":["float","float"]}},
    {"ph":"X","cat":"cpu_op","name":"aten::conv2d","pid":1,"tid":1,"ts":26,"dur":2,
     "args":{"External id":7,"Input Dims":[[2,4,9,9],[6,2,3,3],[],[],[],[],[]],"Input type":["float","float"],
             "Concrete Inputs":["","","","[2, 2]","[1, 1]","[1, 1]","2"]}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":11,"dur":1,
     "args":{"External id":5,"correlation":3}},
    {"ph":"X","cat":"kernel","name":"sm90_xmma_gemm_f16f16_f16f32","pid":0,"tid":7,"ts":30,"dur":2,
     "args":{"External id":5,"correlation":3,"device":0,"stream":7,"grid":[64,1,1],"block":[128,1,1]}}]})";
  absl::StatusOr<TraceData> lean = ReadKinetoJsonTraceText(text, AnalysisRead());
  absl::StatusOr<TraceData> full = ReadKinetoJsonTraceText(text);
  REQUIRE(lean.ok());
  REQUIRE(full.ok());
  for (const TraceData* t : {&*lean, &*full}) {
    const Summary s = Analyze(*t);
    REQUIRE(s.compute.present);
    CHECK(s.compute.op_count == 2);
    // bmm 2*8*128*64*128 = 16777216; the concrete conv2d 10800 (torch 1.13's value).
    CHECK(s.compute.total_flops == 16777216 + 10800);
    REQUIRE(s.compute.top_ops.size() == 2);
    CHECK(s.compute.top_ops[1].name == "aten::conv2d");
    CHECK(s.compute.top_ops[1].flops == 10800);
    CHECK(s.compute.top_ops[0].precision == "fp16");
    CHECK(s.compute.top_ops[0].kernel_ns == 2000);
    // 16777216 / 989.4e3 ns at the fp16 peak over the 2 us kernel.
    CHECK(s.compute.top_ops[0].mfu == Approx(16777216.0 / 989.4e3 / 2000));
  }
  const TempDir temp("kairos_summarize_pt_");
  const std::string path = temp.File("kairos_summarize_pt_" + std::to_string(getpid()) + ".json");
  OutputOptions req;
  req.path = path;
  REQUIRE(WriteTraceFile(*full, req).ok());
  absl::StatusOr<TraceData> back = ReadKinetoJsonTrace(path);
  std::FILE* fh = std::fopen(path.c_str(), "r");
  REQUIRE(fh != nullptr);
  std::string written;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, fh)) > 0;) written.append(buf, n);
  std::fclose(fh);
  std::remove(path.c_str());
  CHECK(written.find("\"flops\"") == std::string::npos);
  CHECK(written.find("\"Input Dims\":[[8,128,64],[8,64,128]]") != std::string::npos);
  REQUIRE(back.ok());
  // A conversion keeps Input Dims, not Concrete Inputs: the bmm still counts, the conv no more.
  CHECK(Analyze(*back).compute.total_flops == 16777216);
}

// Issue 30: hostile "Input Dims" in a foreign trace (sizes whose products overflow 64 bits,
// negative, nested deeper than a size list, not numbers) and "flops" args of INT64_MAX. Before
// the fix the formulas wrapped (aten::mul of [-1] counted 2^63-1 FLOPs) and the sums of counts
// overflowed int64 (undefined behaviour, reported by UBSan). Now a count that does not fit is
// unknown (the op has no FLOPs) and the sums saturate.
TEST_CASE("hostile Input Dims and flops args: no wrapped counts, sums saturate", "[abuse]") {
  const char* const ops[][3] = {
      {"aten::mm", "[[4611686018427387904,4],[4,4611686018427387904]]", ""},
      {"aten::mul", "[[-1]]", ""},
      {"aten::mm", "[[[1,2],[3]],[2,3]]", ""},
      {"aten::mm", "[[\"a\",\"b\"],[2,3]]", ""},
      {"aten::mm", "[[1e300,2],[2,3]]", ""},
      {"aten::addmm", "[[], [-4, 8], [8, -3]]", ""},
      {"aten::bmm", "[[3037000500,3037000500,2],[3037000500,2,3037000500]]", ""},
      {"aten::conv2d", "[[2,4,9,9],[6,2,3,3],[],[],[],[],[]]",
       "[\"\",\"\",\"\",\"[1, 1]\",\"[4611686018427387904, 1]\",\"[1, 1]\",\"1\"]"},
      {"aten::conv2d", "[[2,4,9,9],[6,2,3,3],[],[],[],[],[]]",
       "[\"\",\"\",\"\",\"[-1, 1]\",\"[0, 0]\",\"[1, 1]\",\"1\"]"},
      {"aten::conv2d", "[[2,4,9,9],[6,2,3,3],[],[],[],[],[]]",
       "[\"\",\"\",\"\",\"[1, 1]\",\"[0, 0]\",\"[9223372036854775807, 1]\",\"1\"]"},
      {"aten::conv_transpose2d", "[[2,4,5,4611686018427387904],[4,3,3,3]]", ""},
      {"aten::_scaled_dot_product_attention", "[[1099511627776,8,128,64],[1099511627776,8,256,64],[1099511627776,8,256,64]]", ""},
      {"aten::matmul", "[[4294967296,4294967296,4,8],[8,5]]", ""},
      {"aten::linear", "[[4294967296,4294967296],[4,4294967296]]", ""},
      {"aten::mm", "[[4,8],[8,3]]", ""},  // the one honest op: 192
  };
  std::string events;
  int ts = 10;
  for (const auto& op : ops) {
    events += std::string(events.empty() ? "" : ",") + "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" + op[0] +
              "\",\"pid\":1,\"tid\":1,\"ts\":" + std::to_string(ts) + ",\"dur\":5,\"args\":{\"Input Dims\":" + op[1] +
              (*op[2] ? std::string(",\"Concrete Inputs\":") + op[2] : std::string()) + "}}";
    ts += 10;
  }
  for (int i = 0; i < 3; ++i) {
    events += ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"my::op\",\"pid\":1,\"tid\":1,\"ts\":" + std::to_string(ts) +
              ",\"dur\":5,\"args\":{\"flops\":9223372036854775807}}";
    ts += 10;
  }
  const std::string text = "{\"schemaVersion\":1,\"traceEvents\":[" + events + "]}";
  absl::StatusOr<TraceData> lean = ReadKinetoJsonTraceText(text, AnalysisRead());
  absl::StatusOr<TraceData> full = ReadKinetoJsonTraceText(text);
  REQUIRE(lean.ok());
  REQUIRE(full.ok());
  for (const TraceData* t : {&*lean, &*full}) {
    const Summary s = Analyze(*t);
    REQUIRE(s.compute.present);
    CHECK(s.compute.op_count == 4);
    CHECK(s.compute.total_flops == INT64_MAX);
    REQUIRE(s.compute.top_ops.size() == 2);
    for (const OpCompute& row : s.compute.top_ops) {
      INFO(row.name);
      CHECK(row.flops == (row.name == "aten::mm" ? 192 : INT64_MAX));
      CHECK(row.count == (row.name == "aten::mm" ? 1u : 3u));
    }
    CHECK(!SummaryToText(s).empty());
  }
}

// GPU counter tracks (PM sampling) survive JSON and Perfetto: under the GPU's process, one
// track per metric and device, and the summary's measured values are recomputed from them.
TEST_CASE("PM-sampling counters round-trip through JSON and Perfetto") {
  TraceData data = Mixed();
  for (int32_t dev : {0, 1}) {
    const uint32_t sm = static_cast<uint32_t>(data.counter_tracks.size());
    data.counter_tracks.push_back({kPmSmActive, "%", "GPU " + std::to_string(dev), dev});
    data.counter_tracks.push_back({kPmOccupancy, "%", "GPU " + std::to_string(dev), dev});
    for (int i = 0; i < 100; ++i) {
      const int64_t t = kBase + i * 100 * kUs;
      data.counter_samples.push_back({t, dev == 0 ? 30.0 + i % 10 : 5.0, sm});
      data.counter_samples.push_back({t, 20.0, sm + 1});
    }
  }
  std::stable_sort(data.counter_samples.begin(), data.counter_samples.end(),
                   [](const CounterSample& a, const CounterSample& b) { return a.ts_ns < b.ts_ns; });
  data.kernel_counters = AttributeKernelCounters(data);
  REQUIRE(data.kernel_counters.size() == 20);  // every sgemm and NCCL kernel covers samples
  const std::string in_process = SummaryToJson(Analyze(data));
  CHECK(in_process.find("\"measured\":{\"sm_efficiency_pct\":34.5") != std::string::npos);
  for (const char* ext : {".json", ".pftrace"}) {
    INFO(ext);
    const TempDir temp("kairos_pm_rt_");
    const std::string path = temp.File("kairos_pm_rt_" + std::to_string(getpid()) + ext);
    OutputOptions req;
    req.path = path;
    REQUIRE(WriteTraceFile(data, req).ok());
    absl::StatusOr<TraceData> back =
        std::string(ext) == ".json" ? ReadKinetoJsonTrace(path) : ReadPerfettoTrace(path);
    absl::StatusOr<TraceData> lean = std::string(ext) == ".json" ? ReadKinetoJsonTrace(path, AnalysisRead())
                                                                 : ReadPerfettoTrace(path, AnalysisRead());
    std::remove(path.c_str());
    REQUIRE(back.ok());
    REQUIRE(lean.ok());
    CHECK(lean->EventCount() == back->EventCount());
    CHECK(lean->kernels.size() == 2);
    CHECK(SummaryToJson(Analyze(*lean)) == in_process);
    int gpu_tracks = 0;
    for (const CounterTrack& t : back->counter_tracks)
      if (t.device >= 0) ++gpu_tracks;
    CHECK(gpu_tracks == 4);
    CHECK(FindGpuCounterTrack(*back, 1, kPmSmActive) >= 0);
    CHECK(SummaryToJson(Analyze(*back)) == in_process);
  }
}

// Writes `text` to a temp file (named by `tag` and the pid) and reads it back as the analysis
// does.
absl::StatusOr<TraceData> ReadJsonText(const std::string& text, const char* tag) {
  const TempDir temp(tag);
  const std::string path = temp.File(tag + std::to_string(getpid()) + ".json");
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return absl::InternalError("cannot write " + path);
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  absl::StatusOr<TraceData> back = ReadKinetoJsonTrace(path, AnalysisRead());
  std::remove(path.c_str());
  return back;
}

// ---- [memory] events (docs/MEMORY.md) ----

// Mixed() plus, in each of its 10 steps, a 4 MiB allocation and its free and a 1 MiB
// allocation that is never freed, inside "dataloader", from a 2 GiB baseline on a 16 GiB GPU.
TraceData MixedWithMemory() {
  TraceData d = Mixed();
  d.devices[0].total_global_mem = uint64_t{16} << 30;
  uint32_t th = 0;
  while (d.tracks[th].type != TrackType::kThread) ++th;
  int64_t total = int64_t{2} << 30;
  auto add = [&](int64_t ts, uint64_t addr, int64_t bytes) {
    MemoryDetail m{};
    m.addr = addr;
    m.bytes = bytes;
    total += bytes;
    m.total_allocated = m.total_reserved = total;
    m.device = 0;
    m.device_type = 1;
    m.memory_kind = 3;
    m.stream = kNoStream;
    Event e{};
    e.kind = EventKind::kInstant;
    e.aux = kAuxMemory;
    e.start_ns = e.end_ns = ts;
    e.name = d.strings.Intern("[memory]");
    e.track = th;
    e.detail = static_cast<uint32_t>(d.memory.size());
    d.memory.push_back(m);
    d.events_by_track[th].push_back(e);
  };
  for (int i = 0; i < 10; ++i) {
    const int64_t t0 = kBase + i * kMs;
    add(t0 + 100 * kUs, 0x7f0000000000 + i * 0x1000000, 4 << 20);
    add(t0 + 200 * kUs, 0x7f1000000000 + i * 0x100000, 1 << 20);
    add(t0 + 300 * kUs, 0x7f0000000000 + i * 0x1000000, -(4 << 20));
  }
  d.SortTracks();
  return d;
}

TEST_CASE("[memory] events round-trip through JSON and Perfetto; the summary is equal") {
  const TraceData data = MixedWithMemory();
  const Summary s = Analyze(data);
  REQUIRE(s.memory.size() == 1);
  const MemorySummary& m = s.memory[0];
  CHECK(m.start_allocated == int64_t{2} << 30);
  CHECK(m.peak_allocated == (int64_t{2} << 30) + 9 * (1 << 20) + (4 << 20) + (1 << 20));
  CHECK(m.peak_step == 9);
  CHECK(m.peak_site == "dataloader");
  CHECK(m.not_freed_count == 10);
  CHECK(m.not_freed_bytes == 10 << 20);
  CHECK(m.allocs == 20);
  CHECK(m.frees == 10);
  REQUIRE(m.step_growth.size() == 10);
  for (const auto& [step, bytes] : m.step_growth) CHECK(bytes == 1 << 20);
  bool leak = false, headroom = false;
  for (const Finding& f : s.findings) {
    leak |= f.id == "leak_suspect";
    headroom |= f.id == "memory_headroom";
  }
  CHECK(leak);
  CHECK(headroom);  // 2.02 GiB of 16 GiB
  const std::string text = SummaryToText(s);
  CHECK(text.find("Memory, GPU 0: peak 2.01 GiB allocated (12.6% of 16 GiB) in step 9 at \"dataloader\"; "
                  "20 allocs, 10 frees; not freed: 10 (10 MiB)") != std::string::npos);
  CHECK(text.find("not freed: 10 x 10 MiB from \"dataloader\"") != std::string::npos);
  CHECK(SummaryToMarkdown(s).find("### Memory") != std::string::npos);
  const std::string in_process = SummaryToJson(s);
  for (const char* ext : {".json", ".pftrace"}) {
    INFO(ext);
    const TempDir temp("kairos_mem_rt_");
    const std::string path = temp.File("kairos_mem_rt_" + std::to_string(getpid()) + ext);
    OutputOptions req;
    req.path = path;
    REQUIRE(WriteTraceFile(data, req).ok());
    const bool json = std::string(ext) == ".json";
    absl::StatusOr<TraceData> back = json ? ReadKinetoJsonTrace(path) : ReadPerfettoTrace(path);
    absl::StatusOr<TraceData> lean =
        json ? ReadKinetoJsonTrace(path, AnalysisRead()) : ReadPerfettoTrace(path, AnalysisRead());
    REQUIRE(back.ok());
    REQUIRE(lean.ok());
    REQUIRE(back->memory.size() == data.memory.size());
    for (size_t i = 0; i < data.memory.size(); ++i) {
      CHECK(std::memcmp(&back->memory[i], &data.memory[i], sizeof(MemoryDetail)) == 0);
    }
    CHECK(SummaryToJson(Analyze(*back)) == in_process);
    CHECK(SummaryToJson(Analyze(*lean)) == in_process);
    // `kairos convert` is read then write: the converted file reads back the same rows.
    const std::string path2 = path + (json ? ".pftrace" : ".json");
    OutputOptions req2;
    req2.path = path2;
    REQUIRE(WriteTraceFile(*back, req2).ok());
    absl::StatusOr<TraceData> again = json ? ReadPerfettoTrace(path2) : ReadKinetoJsonTrace(path2);
    std::remove(path.c_str());
    std::remove(path2.c_str());
    REQUIRE(again.ok());
    REQUIRE(again->memory.size() == data.memory.size());
    for (size_t i = 0; i < data.memory.size(); ++i) {
      CHECK(std::memcmp(&again->memory[i], &data.memory[i], sizeof(MemoryDetail)) == 0);
    }
    CHECK(SummaryToJson(Analyze(*again)) == in_process);
  }
}

// CUPTI's records and a caching allocator's own events on the same GPU (issue 25): the
// allocator reserves one 64 MiB segment (CUPTI sees that cudaMalloc) and hands out 1 MiB
// blocks inside it, one per step never freed. Two views, never one mixed total.
TEST_CASE("[memory] CUPTI's and an allocator's events on one GPU are summarised apart") {
  TraceData d = MixedWithMemory();
  uint32_t th = 0;
  while (d.tracks[th].type != TrackType::kThread) ++th;
  int64_t allocated = 0;
  for (int i = 0; i < 10; ++i) {
    MemoryDetail m{};
    m.addr = 0x7e0000000000 + static_cast<uint64_t>(i) * (1 << 20);
    m.bytes = 1 << 20;
    allocated += m.bytes;
    m.total_allocated = allocated;
    m.total_reserved = 64 << 20;
    m.device = 0;
    m.device_type = 1;
    m.flags = kMemoryOwnTotals;  // what the torch bridge's events carry; no memory kind
    m.stream = kNoStream;
    Event e{};
    e.kind = EventKind::kInstant;
    e.aux = kAuxMemory;
    e.start_ns = e.end_ns = kBase + i * kMs + 250 * kUs;
    e.name = d.strings.Intern("[memory]");
    e.track = th;
    e.detail = static_cast<uint32_t>(d.memory.size());
    d.memory.push_back(m);
    d.events_by_track[th].push_back(e);
  }
  d.SortTracks();
  AddMemoryCounters(d);
  std::vector<std::string> tracks;
  for (const CounterTrack& t : d.counter_tracks)
    if (t.device == 0 && t.unit == "bytes") tracks.push_back(t.name);
  CHECK(tracks == std::vector<std::string>{kMemoryAllocatedCounter, kMemoryReservedCounter,
                                           kAllocatorAllocatedCounter, kAllocatorReservedCounter});
  const Summary s = Analyze(d);
  REQUIRE(s.memory.size() == 2);
  const MemorySummary& cupti = s.memory[0];
  const MemorySummary& alloc = s.memory[1];
  CHECK_FALSE(cupti.allocator);
  CHECK(alloc.allocator);
  // CUPTI's view is exactly what it was without the allocator's events.
  CHECK(cupti.peak_allocated == (int64_t{2} << 30) + 9 * (1 << 20) + (4 << 20) + (1 << 20));
  CHECK(cupti.allocs == 20);
  CHECK(alloc.allocs == 10);
  CHECK(alloc.start_allocated == 0);
  CHECK(alloc.peak_allocated == 10 << 20);
  CHECK(alloc.peak_reserved == 64 << 20);
  CHECK(alloc.not_freed_bytes == 10 << 20);
  // Each finding once, from the view that sees it: capacity from CUPTI's, the leak from the
  // allocator's (both views grow every step).
  int leak = 0, headroom = 0;
  for (const Finding& f : s.findings) {
    leak += f.id == "leak_suspect";
    headroom += f.id == "memory_headroom";
  }
  CHECK(leak == 1);
  CHECK(headroom == 1);
  const std::string json = SummaryToJson(s);
  CHECK(json.find("\"device\":0,\"source\":\"cupti\"") != std::string::npos);
  CHECK(json.find("\"device\":0,\"source\":\"allocator\"") != std::string::npos);
  CHECK(SummaryToText(s).find("Memory, GPU 0 (allocator): peak 10 MiB allocated") != std::string::npos);
  // Written and read back (no memory kind marks the allocator's events in the file): the same.
  const TempDir temp("kairos_mem_mixed_");
  const std::string path = temp.File("kairos_mem_mixed_" + std::to_string(getpid()) + ".json");
  OutputOptions req;
  req.path = path;
  REQUIRE(WriteTraceFile(d, req).ok());
  absl::StatusOr<TraceData> back = ReadKinetoJsonTrace(path);
  std::remove(path.c_str());
  REQUIRE(back.ok());
  CHECK(SummaryToJson(Analyze(*back)) == json);
}

// A PyTorch-written trace (profile_memory=True; the Kineto JSON PyTorch 2 exports): CPU
// allocator events and CUDA caching-allocator events with their own reserved totals.
TEST_CASE("summarize a PyTorch trace with [memory] events") {
  std::string events;
  auto mem = [&](double ts_us, int dtype, int dev, uint64_t addr, int64_t bytes, int64_t alloc, int64_t res) {
    events += ",\n  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
              "\"pid\": 7, \"tid\": 7, \"ts\": " + std::to_string(ts_us) +
              ", \"args\": {\"Total Reserved\": " + std::to_string(res) + ", \"Total Allocated\": " +
              std::to_string(alloc) + ", \"Bytes\": " + std::to_string(bytes) + ", \"Addr\": " +
              std::to_string(addr) + ", \"Device Id\": " + std::to_string(dev) +
              ", \"Device Type\": " + std::to_string(dtype) + "}}";
  };
  const int64_t G = int64_t{1} << 30;
  for (int step = 0; step < 4; ++step) {
    const double t0 = 1000.0 + step * 1000.0;
    events += ",\n  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#" + std::to_string(step) +
              "\", \"pid\": 7, \"tid\": 7, \"ts\": " + std::to_string(t0) + ", \"dur\": 900}";
    events += ",\n  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", \"pid\": 7, \"tid\": 7, "
              "\"ts\": " + std::to_string(t0 + 10) + ", \"dur\": 20}";
    mem(t0 + 15, 1, 0, 140000000000 + step * 4096, 512 << 20, 8 * G + (512 << 20), 30 * G);
    mem(t0 + 400, 1, 0, 140000000000 + step * 4096, -(512 << 20), 8 * G, 30 * G);
    mem(t0 + 500, 0, -1, 94000000 + step * 64, 4096, 4096, 4096);
    mem(t0 + 600, 0, -1, 94000000 + step * 64, -4096, 0, 0);
  }
  const std::string text =
      "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA A100-SXM4-40GB\", "
      "\"totalGlobalMem\": 42298834944, \"computeMajor\": 8, \"computeMinor\": 0, \"numSms\": 108}],\n"
      "\"traceEvents\": [\n  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"start\", \"pid\": 7, \"tid\": 7, "
      "\"ts\": 900, \"dur\": 1}" + events + "\n]}";
  absl::StatusOr<TraceData> back = ReadJsonText(text, "kairos_pt_mem_");
  REQUIRE(back.ok());
  CHECK(back->memory.size() == 16);
  const Summary s = Analyze(*back);
  REQUIRE(s.memory.size() == 2);
  const MemorySummary& gpu = s.memory[0];
  CHECK(gpu.device_type == 1);
  CHECK(gpu.device == 0);
  CHECK(gpu.peak_allocated == 8 * G + (512 << 20));
  CHECK(gpu.peak_reserved == 30 * G);
  CHECK(gpu.start_allocated == 8 * G);
  CHECK(gpu.peak_step == 0);  // the first of equal peaks
  CHECK(gpu.peak_site == "aten::empty");
  CHECK(gpu.not_freed_count == 0);
  CHECK(gpu.device_total_bytes == 42298834944ull);
  const MemorySummary& cpu = s.memory[1];
  CHECK(cpu.device_type == 0);
  CHECK(cpu.device == -1);
  CHECK(cpu.peak_allocated == 4096);
  CHECK(cpu.allocs == 4);
  std::set<std::string> ids;
  for (const Finding& x : s.findings) ids.insert(x.id);
  // 8.5 GiB of 39.4 GiB: headroom; 30 GiB reserved around 8 GiB allocated: fragmentation.
  CHECK(ids.count("memory_headroom") == 1);
  CHECK(ids.count("fragmentation") == 1);
  CHECK(ids.count("oom_risk") == 0);
  CHECK(ids.count("leak_suspect") == 0);
  CHECK(ids.count("alloc_in_step_loop") == 0);  // the caching allocator's events are not cudaMalloc
}

// Allocation sites with Python stacks (docs/PYTHON_STACKS.md "Allocation sites"): two lines of
// step leak through the same op; one calls it directly (the [memory] event's own "Python
// line"), the other through a library frame (its "Python caller line", not the library's own
// line). Read from JSON, so the reader's line args are exercised too.
TEST_CASE("summarize names the user's line of each leaking allocation site") {
  std::string ev;
  auto x = [&](const char* cat, const std::string& name, double ts, double dur, const std::string& args) {
    ev += ",\n  {\"ph\": \"X\", \"cat\": \"" + std::string(cat) + "\", \"name\": \"" + name +
          "\", \"pid\": 7, \"tid\": 7, \"ts\": " + std::to_string(ts) + ", \"dur\": " + std::to_string(dur) +
          ", \"args\": {" + args + "}}";
  };
  auto mem = [&](double ts, uint64_t addr, int64_t bytes, int64_t total, int line) {
    ev += ",\n  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
          "\"pid\": 7, \"tid\": 7, \"ts\": " + std::to_string(ts) + ", \"args\": {\"Device Type\": 0, "
          "\"Device Id\": -1, \"Addr\": " + std::to_string(addr) + ", \"Bytes\": " + std::to_string(bytes) +
          ", \"Total Allocated\": " + std::to_string(total) + ", \"Total Reserved\": 0, \"Python line\": " +
          std::to_string(line) + "}}";
  };
  int64_t total = 0;
  int id = 1;
  for (int step = 0; step < 4; ++step) {
    const double t0 = 1000.0 + step * 1000.0;
    x("user_annotation", "ProfilerStep#" + std::to_string(step), t0, 900, "");
    const int frame = id++;
    x("python_function", "/job/train.py(10): step", t0, 900,
      "\"Python id\": " + std::to_string(frame) + ", \"Python thread\": 0");
    // Line 12: kept.append(torch.empty(1024)) straight from step: the event's own line.
    x("cpu_op", "aten::empty", t0 + 10, 20, "\"Python line\": 12");
    mem(t0 + 15, 5000000 + step * 64, 4096, total += 4096, 12);
    // Line 13: a temporary, freed at once.
    x("cpu_op", "aten::empty", t0 + 40, 20, "\"Python line\": 13");
    mem(t0 + 45, 6000000, 100000, total += 100000, 13);
    mem(t0 + 50, 6000000, -100000, total -= 100000, 13);
    // Line 14: a library helper that allocates (its own line 77 is torch's, not the user's).
    x("python_function", "/usr/lib/python3/dist-packages/torch/functional.py(70): helper", t0 + 100, 50,
      "\"Python id\": " + std::to_string(id++) + ", \"Python parent id\": " + std::to_string(frame) +
          ", \"Python thread\": 0, \"Python caller line\": 14");
    x("cpu_op", "aten::empty", t0 + 110, 20, "\"Python line\": 77");
    mem(t0 + 115, 7000000 + step * 64, 1024, total += 1024, 77);
  }
  const std::string text = "{\"schemaVersion\": 1, \"traceEvents\": [\n  {\"ph\": \"X\", \"cat\": \"cpu_op\", "
                           "\"name\": \"start\", \"pid\": 7, \"tid\": 7, \"ts\": 900, \"dur\": 1}" + ev + "\n]}";
  absl::StatusOr<TraceData> back = ReadJsonText(text, "kairos_py_mem_");
  REQUIRE(back.ok());
  const Summary s = Analyze(*back);
  REQUIRE(s.memory.size() == 1);
  const MemorySummary& m = s.memory[0];
  CHECK(m.not_freed_count == 8);
  REQUIRE(m.not_freed_sites.size() == 2);
  CHECK(m.not_freed_sites[0].name == "aten::empty");
  CHECK(m.not_freed_sites[0].python == "train.py:12 in step");
  CHECK((m.not_freed_sites[0].count == 4 && m.not_freed_sites[0].bytes == 4 * 4096));
  CHECK(m.not_freed_sites[1].name == "aten::empty");
  CHECK(m.not_freed_sites[1].python == "train.py:14 in step");
  CHECK((m.not_freed_sites[1].count == 4 && m.not_freed_sites[1].bytes == 4 * 1024));
  // The peak: the last step's temporary at line 13.
  CHECK(m.peak_allocated == 3 * 5120 + 4096 + 100000);
  CHECK(m.peak_python == "train.py:13 in step");
  const std::string json = SummaryToJson(s);
  CHECK(json.find("\"python\":\"train.py:14 in step\"") != std::string::npos);
  CHECK(json.find("\"peak_python\":\"train.py:13 in step\"") != std::string::npos);
  CHECK(SummaryToText(s).find("from \"aten::empty\" at train.py:12 in step") != std::string::npos);
  bool leak = false;
  for (const Finding& x : s.findings)
    if (x.id == "leak_suspect")
      leak = x.recommendation.find("most from \"aten::empty\" at train.py:12 in step.") != std::string::npos;
  CHECK(leak);
}

TEST_CASE("hostile [memory] values are clamped and summed without overflow") {
  std::string events;
  for (int i = 0; i < 8; ++i) {
    events += std::string(i ? "," : "") +
              "{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, "
              "\"tid\": 1, \"ts\": " + std::to_string(100 + i) + ", \"args\": {\"Device Type\": 1, \"Device Id\": 0, "
              "\"Addr\": 18446744073709551615, \"Bytes\": " + (i % 2 ? "-9223372036854775808" : "9223372036854775807") +
              ", \"Total Allocated\": 9223372036854775807, \"Total Reserved\": -9223372036854775808}}";
  }
  const std::string text = "{\"traceEvents\": [" + events + "]}";
  absl::StatusOr<TraceData> back = ReadJsonText(text, "kairos_mem_hostile_");
  REQUIRE(back.ok());
  REQUIRE(back->memory.size() == 8);
  CHECK(back->memory[0].bytes == kMemoryBytesLimit);
  CHECK(back->memory[1].bytes == -kMemoryBytesLimit);
  CHECK(back->memory[0].total_reserved == -kMemoryBytesLimit);
  const Summary s = Analyze(*back);
  REQUIRE(s.memory.size() == 1);
  CHECK(s.memory[0].allocated_bytes == 4 * kMemoryBytesLimit);
  CHECK(s.memory[0].freed_bytes == 4 * kMemoryBytesLimit);
}

// Issue 30: a foreign trace whose [memory] events free addresses never allocated, reuse an
// address without its free, carry absurd sizes and negative totals, and name 100 GPUs and the
// host. Device 0's numbers are exact; the summary keeps 64 devices and counts the rest (before,
// 100,000 devices gave a 48 MB summary and an 11.7 MB text).
TEST_CASE("hostile [memory] events: unknown frees, reuse, absurd sizes, 100 devices", "[abuse]") {
  std::string events;
  auto mem = [&events](int ts, int type, int dev, uint64_t addr, const std::string& bytes, const std::string& total) {
    events += std::string(events.empty() ? "" : ",") +
              "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,"
              "\"tid\":1,\"ts\":" + std::to_string(ts) + ",\"args\":{\"Device Type\":" + std::to_string(type) +
              ",\"Device Id\":" + std::to_string(dev) + ",\"Addr\":" + std::to_string(addr) + ",\"Bytes\":" + bytes +
              ",\"Total Allocated\":" + total + ",\"Total Reserved\":" + total + "}}";
  };
  mem(100, 1, 0, 1, "-100", "900");              // a free of an address never allocated
  mem(101, 1, 0, 2, "200", "1100");
  mem(102, 1, 0, 2, "300", "1400");              // the same address again: its free was lost
  mem(103, 1, 0, 2, "-300", "1100");
  mem(104, 1, 0, 3, "4611686018427387904", "4611686018427387904");  // 4 EiB: clamped
  mem(105, 1, 0, 3, "-4611686018427387904", "-5");                  // a negative total
  for (int dev = 1; dev < 100; ++dev) mem(200 + dev, 1, dev, 4096, "64", "64");
  mem(400, 0, -1, 8, "16", "16");
  const std::string text = "{\"traceEvents\":[" + events + "]}";
  absl::StatusOr<TraceData> back = ReadKinetoJsonTraceText(text, AnalysisRead());
  REQUIRE(back.ok());
  REQUIRE(back->memory.size() == 106);
  const Summary s = Analyze(*back);
  REQUIRE(s.memory.size() == kMaxMemoryDevices);
  CHECK(s.memory_devices_left_out == 101 - kMaxMemoryDevices);  // GPUs 64..99 and the host
  CHECK(s.memory_events_left_out == 101 - kMaxMemoryDevices);
  CHECK(s.memory.back().device == 63);
  const MemorySummary& d0 = s.memory[0];
  CHECK(d0.device == 0);
  CHECK(d0.allocs == 3);
  CHECK(d0.frees == 3);
  CHECK(d0.allocated_bytes == 500 + kMemoryBytesLimit);
  CHECK(d0.freed_bytes == 400 + kMemoryBytesLimit);
  CHECK(d0.not_freed_count == 0);
  CHECK(d0.start_allocated == 1000);
  CHECK(d0.peak_allocated == kMemoryBytesLimit);
  CHECK(d0.end_allocated == -5);
  const std::string summary_text = SummaryToText(s);
  CHECK(summary_text.find("Memory: 37 more devices (37 [memory] events) left out; at most 64 are summarised") !=
        std::string::npos);
  CHECK(SummaryToJson(s).find("\"memory_devices_left_out\":37") != std::string::npos);
  CHECK(SummaryToMarkdown(s).find("37 more devices (37 [memory] events) left out") != std::string::npos);
}

}  // namespace
}  // namespace kairos
