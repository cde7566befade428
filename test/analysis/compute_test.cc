// File: compute_test.cc
// Layer: tests for kairos_analysis and src/model/flops.h. Every FLOP formula of docs/FLOPS.md on
// hand-computed shapes; the compute summary (FLOPs attributed to kernels, TFLOP/s, MFU per
// window, kernel class, top op and step) on a synthetic trace whose every number is worked
// out in the comments; null MFU for a device not in the peak table; KAIROS_PEAK_TFLOPS.
// Threading: single-threaded.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "analysis/summary.h"
#include "analysis/trace_builder.h"
#include "model/flops.h"
#include "model/gpu_counters.h"

namespace kairos {
namespace {

using flops::Dims;
using kairos::testing::TraceBuilder;

Dims D(const std::vector<int64_t>& v) { return Dims{v.data(), v.size()}; }

TEST_CASE("FLOP formulas: PyTorch's rules and kairos' own, hand-computed") {
  const std::vector<int64_t> a{4, 8}, b{8, 3}, ba{5, 4, 8}, bb{5, 8, 3};
  CHECK(flops::Gemm(D(a), D(b)) == 2 * 4 * 8 * 3);               // 192
  CHECK(flops::Gemm(D({4, 0}), D({0, 3})) == 0);                 // K = 0
  CHECK(flops::BatchedGemm(D(ba), D(bb)) == 2 * 5 * 4 * 8 * 3);  // 960
  CHECK(flops::Elementwise(D(a)) == 32);
  // conv2d [2,4,9,9] * [6,2,3,3], stride 2, padding 1, groups 2: out 5x5,
  // 2 * 2 * 25 * 9 * 4 * 6 / 2 = 10800 (the value torch 1.13's profiler gives).
  const std::vector<int64_t> s2{2, 2}, p1{1, 1}, d1{1, 1};
  CHECK(flops::Conv(D({2, 4, 9, 9}), D({6, 2, 3, 3}), D(s2), D(p1), D(d1), 2) == 10800);
  // conv1d [3,4,10] * [5,4,3], stride 2: out 4, 2*3*4*3*4*5 = 1440; one-entry lists broadcast.
  CHECK(flops::Conv(D({3, 4, 10}), D({5, 4, 3}), D({2}), D({0}), D({1}), 1) == 1440);
  // conv3d [1,2,5,6,7] * [4,2,3,3,3] padding 1: out 5x6x7, 2*210*27*2*4 = 90720.
  CHECK(flops::Conv(D({1, 2, 5, 6, 7}), D({4, 2, 3, 3, 3}), D({1}), D({1}), D({1}), 1) == 90720);
  CHECK(flops::Conv(D({4, 9, 9}), D({6, 2, 3, 3}), D(s2), D(p1), D(d1), 1) == -1);  // 3-D input
  CHECK(flops::Conv(D({2, 4, 9, 9}), D({6, 4, 3, 3}), D({0, 1}), D(p1), D(d1), 1) == -1);
  // conv_transpose2d [2,4,5,5] * [4,3,3,3]: 2 * 200 * 27 = 10800.
  CHECK(flops::ConvTranspose(D({2, 4, 5, 5}), D({4, 3, 3, 3})) == 10800);
  // convolution_backward of conv [2,3,6,6] -> [2,4,6,6] with weight [4,3,3,3]: forward
  // 2 * 288 * 27 = 15552; grad_input + grad_weight = 31104; weight only 15552; none 0.
  const std::vector<int64_t> go{2, 4, 6, 6}, in{2, 3, 6, 6}, w{4, 3, 3, 3};
  CHECK(flops::ConvBackward(D(go), D(in), D(w), false, true, true) == 31104);
  CHECK(flops::ConvBackward(D(go), D(in), D(w), false, false, true) == 15552);
  CHECK(flops::ConvBackward(D(go), D(in), D(w), false, false, false) == 0);
  // Transposed: the forward's input [2,4,5,5] with weight [4,3,3,3] slides: 10800 per grad.
  CHECK(flops::ConvBackward(D({2, 3, 11, 11}), D({2, 4, 5, 5}), D({4, 3, 3, 3}), true, true,
                            true) == 21600);
  // Attention: q [2,8,128,64], k [2,8,256,64], v [2,8,256,32]: B = 16, L = 128, S = 256:
  // 2*16*128*256*(64+32) = 100663296; backward twice that.
  const std::vector<int64_t> q{2, 8, 128, 64}, k{2, 8, 256, 64}, v{2, 8, 256, 32};
  CHECK(flops::Attention(D(q), D(k), D(v), false) == 100663296);
  CHECK(flops::Attention(D(q), D(k), D(v), true) == 201326592);
  // matmul: [5,4,8] x [8,3] = 960; broadcast [2,1,4,8] x [3,8,5]: batch 2*3, 2*6*4*8*5 = 1920;
  // dot [7] x [7] = 14; matrix-vector [4,8] x [8] = 64.
  CHECK(flops::Matmul(D(ba), D(b)) == 960);
  CHECK(flops::Matmul(D({2, 1, 4, 8}), D({3, 8, 5})) == 1920);
  CHECK(flops::Matmul(D({7}), D({7})) == 14);
  CHECK(flops::Matmul(D(a), D({8})) == 64);
  // linear [64,256] with weight [512,256]: 2*64*256*512.
  CHECK(flops::Linear(D({64, 256}), D({512, 256})) == 16777216);
}

// Issue 30: sizes no tensor has (a read trace can say anything): every formula gives -1 (no
// count) where the old unsigned arithmetic wrapped to a number, and stays exact at the edge.
TEST_CASE("FLOP formulas: negative sizes and 64-bit overflow give no count", "[abuse]") {
  const int64_t big = int64_t{1} << 62;
  CHECK(flops::Elementwise(D({-1})) == -1);
  CHECK(flops::Elementwise(D({big, 4})) == -1);
  CHECK(flops::Elementwise(D({big, 1})) == big);  // the largest count that fits, exact
  CHECK(flops::Gemm(D({big, 4}), D({4, big})) == -1);
  CHECK(flops::Gemm(D({-4, 8}), D({8, -3})) == -1);
  CHECK(flops::BatchedGemm(D({3037000500, 3037000500, 2}), D({3037000500, 2, 3037000500})) == -1);
  CHECK(flops::Conv(D({2, 4, 9, 9}), D({6, 2, 3, 3}), D({1}), D({big}), D({1}), 1) == -1);
  CHECK(flops::Conv(D({2, 4, 9, 9}), D({6, 2, 3, 3}), D({-1}), D({0}), D({1}), 1) == -1);
  CHECK(flops::Conv(D({2, 4, 9, 9}), D({6, 2, 3, 3}), D({1}), D({0}), D({INT64_MAX}), 1) == -1);
  CHECK(flops::Conv(D({2, 4, 2, 2}), D({6, 2, 3, 3}), D({1}), D({0}), D({1}), 1) == -1);  // empty output
  CHECK(flops::ConvTranspose(D({2, 4, 5, big}), D({4, 3, 3, 3})) == -1);
  CHECK(flops::ConvBackward(D({2, 4, big, 6}), D({2, 3, 6, 6}), D({4, 3, 3, 3}), false, true, true) == -1);
  const int64_t t = int64_t{1} << 40;
  CHECK(flops::Attention(D({t, 8, 128, 64}), D({t, 8, 256, 64}), D({t, 8, 256, 64}), false) == -1);
  CHECK(flops::Attention(D({2, 8, 128, -64}), D({2, 8, 256, 64}), D({2, 8, 256, 32}), false) == -1);
  CHECK(flops::Matmul(D({4294967296, 4294967296, 4, 8}), D({8, 5})) == -1);
  CHECK(flops::Matmul(D({-2, 4, 8}), D({8, 5})) == -1);
  CHECK(flops::Linear(D({4294967296, 4294967296}), D({4, 4294967296})) == -1);
  // The text parser refuses what is not a list of integer lists, and sizes past int64.
  flops::Shapes s;
  CHECK_FALSE(flops::ParseInputDims("[[9223372036854775808]]", &s));
  CHECK_FALSE(flops::ParseInputDims("[[[1]]]", &s));
  CHECK_FALSE(flops::ParseInputDims("[[1.5]]", &s));
  CHECK_FALSE(flops::ParseInputDims(std::string(100000, '['), &s));
  REQUIRE(flops::ParseInputDims("[[-4611686018427387904, 2], [2, 3]]", &s));
  CHECK(flops::FromShapes(flops::ShapeRule::kGemm, s) == -1);
}

TEST_CASE("FLOPs from Input Dims text, by operator name") {
  flops::Shapes s;
  REQUIRE(flops::ParseInputDims("[[5, 4, 3], [5, 4, 8], [5, 8, 3], [], []]", &s));
  CHECK(s.size() == 5);
  CHECK(flops::FromShapes(flops::ShapeRuleOf("aten::baddbmm"), s) == 960);
  REQUIRE(flops::ParseInputDims("[[4,8],[8,3]]", &s));
  CHECK(flops::FromShapes(flops::ShapeRuleOf("aten::mm"), s) == 192);
  CHECK(flops::FromShapes(flops::ShapeRuleOf("aten::matmul"), s) == 192);
  CHECK(flops::ShapeRuleOf("aten::mm_") == flops::ShapeRule::kNone);
  // conv2d needs stride etc.: only with "Concrete Inputs" (PyTorch 2.x traces).
  CHECK(flops::ShapeRuleOf("aten::conv2d") == flops::ShapeRule::kConv);
  REQUIRE(flops::ParseInputDims("[[2, 4, 9, 9], [6, 2, 3, 3], [], [], [], [], []]", &s));
  CHECK(flops::FromShapes(flops::ShapeRule::kConv, s) == -1);
  CHECK(flops::FromConcrete(flops::ShapeRule::kConv, s, {"", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "2"}) ==
        10800);
  CHECK(flops::FromConcrete(flops::ShapeRule::kConv, s, {"", "", "", "[2, 2]", "same", "[1, 1]", "2"}) ==
        -1);
  CHECK(flops::FromConcrete(flops::ShapeRule::kConv, s, {"", "", ""}) == -1);
  REQUIRE(flops::ParseInputDims(
      "[[2, 4, 6, 6], [2, 3, 6, 6], [4, 3, 3, 3], [], [], [], [], [], [], [], []]", &s));
  CHECK(flops::FromConcrete(flops::ShapeRule::kConvBackward, s,
                            {"", "", "", "[4]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1",
                             "[True, True, True]"}) == 31104);
  CHECK(flops::FromConcrete(flops::ShapeRule::kConvBackward, s,
                            {"", "", "", "[4]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1",
                             "[False, True, True]"}) == 15552);
  std::vector<int64_t> v;
  CHECK(flops::ParseConcrete("[1, -2, 3]", &v));
  CHECK(v == std::vector<int64_t>{1, -2, 3});
  CHECK(flops::ParseConcrete("7", &v));
  CHECK(v == std::vector<int64_t>{7});
  CHECK_FALSE(flops::ParseConcrete("[1, 2", &v));
  CHECK_FALSE(flops::ParseConcrete("1.5", &v));
  CHECK_FALSE(flops::ParseConcrete("", &v));
  CHECK(flops::ShapeRuleOf("aten::_scaled_dot_product_flash_attention_backward") ==
        flops::ShapeRule::kAttentionBackward);
  REQUIRE(flops::ParseInputDims("[[], [4, 8]]", &s));
  CHECK(flops::FromShapes(flops::ShapeRuleOf("aten::mul"), s) == -1);  // scalar first: none
  REQUIRE(flops::ParseInputDims("[]", &s));
  CHECK(s.empty());
  CHECK_FALSE(flops::ParseInputDims("[[1, 2]", &s));
  CHECK_FALSE(flops::ParseInputDims("[[1.5]]", &s));
  CHECK_FALSE(flops::ParseInputDims("[[[1]]]", &s));
  CHECK_FALSE(flops::ParseInputDims("\"[[1]]\"", &s));
}

constexpr int64_t kUs = 1000;

// Window 1 ms, two steps of 0.5 ms, on an H100 SXM (cc 9.0):
// A aten::mm, bf16, "flops" 989,400,000 (1 us at the 989.4 TFLOP/s bf16 peak), one GEMM
//   kernel of 4 us: 247.35 TFLOP/s, MFU 0.25.
// B aten::linear, fp32, no "flops": Input Dims [[64,256],[512,256],[512]] -> 16,777,216; its
//   child aten::addmm (flops 16,777,216 too) is its decomposition and not counted again; the
//   addmm's kernels: an sgemm of 3 us (3/4 of the FLOPs) and a split-K reduce of 1 us (1/4).
//   At the fp32 peak (67) that is 250.406 ns: MFU 250.406 / 4000 = 0.0626.
// C aten::mul, fp32, Input Dims [[1000]] -> 1000 FLOPs, no kernel (CPU), in step 2.
TraceData EfficiencyTrace(const std::string& device_name) {
  TraceBuilder b(0, 1000 * kUs);
  DeviceInfo& dev = b.HopperDevice(0);
  dev.name = device_name;
  const uint32_t th = b.Thread(), st = b.Stream(0, 7);
  b.Step(th, 1, 0, 500 * kUs);
  b.Step(th, 2, 500 * kUs, 1000 * kUs);
  TraceData& d = b.data();
  auto op = [&](const std::string& name, int64_t s, int64_t e, uint32_t ext, int64_t flops,
                const char* dims, const char* types) {
    CpuArgs a{};
    a.cpu_op = 1;
    a.sequence_nr = -1;
    a.flops = flops;
    a.input_dims = dims != nullptr ? d.strings.Intern(dims) : 0;
    a.input_types = d.strings.Intern(types);
    d.cpu_args.push_back(a);
    Event& ev =
        b.Add(th, EventKind::kCpuOp, name, s, e, 0, static_cast<uint32_t>(d.cpu_args.size() - 1));
    ev.external_id = ext;
  };
  auto kernel = [&](const std::string& name, int64_t s, int64_t e, uint32_t corr, uint32_t ext) {
    b.Launch(th, s - 5 * kUs, s - 4 * kUs, corr);
    b.Kernel(st, name, s, e, corr);
    d.events_by_track[st].back().external_id = ext;
  };
  op("aten::mm", 1 * kUs, 2 * kUs, 11, 989400000, nullptr,
     "[\"c10::BFloat16\", \"c10::BFloat16\"]");
  kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", 10 * kUs, 14 * kUs, 1, 11);
  op("aten::linear", 3 * kUs, 6 * kUs, 12, -1, "[[64, 256], [512, 256], [512]]",
     "[\"float\", \"float\", \"float\"]");
  op("aten::addmm", 3 * kUs + 100, 6 * kUs - 100, 13, 16777216, nullptr,
     "[\"float\", \"float\", \"float\", \"Scalar\", \"Scalar\"]");
  kernel("ampere_sgemm_128x64_nn", 20 * kUs, 23 * kUs, 2, 13);
  kernel("splitKreduce_kernel", 23 * kUs, 24 * kUs, 3, 13);
  op("aten::mul", 600 * kUs, 601 * kUs, 14, -1, "[[1000], []]", "[\"float\", \"Scalar\"]");
  return std::move(b.Done());
}

TEST_CASE("compute summary: FLOPs to kernels, TFLOP/s and MFU, exact") {
  const Summary s = Analyze(EfficiencyTrace("NVIDIA H100 80GB HBM3"));
  const ComputeSummary& c = s.compute;
  REQUIRE(c.present);
  CHECK(c.op_count == 3);
  CHECK(c.total_flops == 989400000 + 16777216 + 1000);
  CHECK(c.gpu_flops == 989400000 + 16777216);
  CHECK(c.kernel_ns == 8 * kUs);
  CHECK(c.window_tflops == Approx(1006178216.0 / 1e6 / 1e3));
  CHECK(c.kernel_tflops == Approx(1006177216.0 / 8000 / 1e3));
  CHECK(c.mfu == Approx((1000.0 + 16777216.0 / 67e3) / 1e6));
  CHECK(c.peak_source == "table");
  const size_t gemm = static_cast<size_t>(KernelClass::kGemmAttention);
  const size_t elem = static_cast<size_t>(KernelClass::kElementwise);
  CHECK(c.class_flops[gemm] == Approx(989400000.0 + 16777216.0 * 3 / 4));
  CHECK(c.class_ns[gemm] == 7 * kUs);
  CHECK(c.class_flops[elem] == Approx(16777216.0 / 4));
  CHECK(c.class_ns[elem] == 1 * kUs);
  REQUIRE(c.top_ops.size() == 3);
  CHECK(SummaryToMarkdown(s).find("**Compute:** MFU 0.125%, 126 TFLOP/s in the operators' kernels, "
                                  "1.01 TFLOP/s over the window.") != std::string::npos);
  CHECK(SummaryToText(s).find("Compute: 1006178216 FLOPs in 3 ops, 1.01 TFLOP/s over the window, "
                              "126 TFLOP/s in their kernels, MFU 0.125%") != std::string::npos);
  CHECK(c.top_ops[0].name == "aten::mm");
  CHECK(c.top_ops[0].precision == "bf16");
  CHECK(c.top_ops[0].tflops == Approx(247.35));
  CHECK(c.top_ops[0].mfu == Approx(0.25));
  CHECK(c.top_ops[1].name == "aten::linear");
  CHECK(c.top_ops[1].precision == "fp32");
  CHECK(c.top_ops[1].flops == 16777216);
  CHECK(c.top_ops[1].kernel_ns == 4 * kUs);
  CHECK(c.top_ops[1].mfu == Approx(16777216.0 / 67e3 / 4000));
  CHECK(c.top_ops[2].name == "aten::mul");
  CHECK(c.top_ops[2].flops == 1000);
  CHECK(c.top_ops[2].tflops == -1);  // no kernel
  CHECK(c.top_ops[2].mfu == -1);
  const std::string json = SummaryToJson(s);
  REQUIRE(c.steps.size() == 2);
  CHECK(c.steps[0].step == 1);
  CHECK(c.steps[0].flops == 989400000 + 16777216);
  CHECK(c.steps[0].tflops == Approx(1006177216.0 / 500000 / 1e3));
  CHECK(c.steps[0].mfu == Approx((1000.0 + 16777216.0 / 67e3) / 500000));
  CHECK(c.steps[1].flops == 1000);
  CHECK(c.steps[1].mfu == -1);  // CPU work only
  // Per class: the GEMMs' time at peak (bf16 1 us, 3/4 of the linear's at fp32) over 7 us.
  CHECK(c.class_peak_ns[gemm] / c.class_ns[gemm] ==
        Approx((1000.0 + 0.75 * 16777216.0 / 67e3) / 7000));
  CHECK(
      json.find("\"elementwise_reduction\":{\"flops\":4194304,\"kernel_ns\":1000,\"tflops\":4.1943,"
                "\"mfu\":0.0626016}") != std::string::npos);
  CHECK(json.find(
            "\"compute\":{\"flops\":1006178216,\"ops\":3,\"gpu_flops\":1006177216,"
            "\"kernel_ns\":8000,\"window_tflops\":1.00618,\"kernel_tflops\":125.772,"
            "\"mfu\":0.00125041,\"device\":\"NVIDIA H100 80GB HBM3\",\"peak_source\":\"table\"") !=
        std::string::npos);
}

TEST_CASE("compute summary: unknown device gives null MFU; a given peak overrides") {
  const Summary s = Analyze(EfficiencyTrace("Test GPU"));
  CHECK(s.compute.present);
  CHECK(s.compute.mfu == -1);
  CHECK(s.compute.top_ops[0].mfu == -1);
  CHECK(s.compute.kernel_tflops == Approx(1006177216.0 / 8000 / 1e3));  // still known
  CHECK(SummaryToJson(s).find("\"mfu\":null,\"device\":\"Test GPU\"") != std::string::npos);
  // An H100 name on a cc 8.0 device is not the table's H100.
  TraceData odd = EfficiencyTrace("NVIDIA H100 80GB HBM3");
  odd.devices[0].compute_major = 8;
  CHECK(Analyze(odd).compute.mfu == -1);
  AnalysisOptions with_peak;
  with_peak.peak_tflops = 100;  // KAIROS_PEAK_TFLOPS=100 (src/config/env.cc decodes it)
  const Summary o = Analyze(EfficiencyTrace("Test GPU"), with_peak);
  CHECK(o.compute.peak_source == "KAIROS_PEAK_TFLOPS");
  CHECK(o.compute.mfu == Approx((989400000.0 + 16777216.0) / 100e3 / 1e6));
  CHECK(o.compute.top_ops[0].mfu == Approx(989400000.0 / 100e3 / 4000));
}

// tensor_cores_idle by kernel names: fp32 GEMMs (sgemm) on a tensor-core GPU fire; the same
// on a Pascal (cc 6.0) GPU, or as bf16 tensor-core GEMMs, do not.
Summary GemmTrace(const std::string& gemm, int cc_major, double tensor_pct = -1) {
  TraceBuilder b(0, 101 * 1000 * kUs);
  DeviceInfo& dev = b.Device(0);
  dev.compute_major = cc_major;
  const uint32_t th = b.Thread(), st = b.Stream(0, 7);
  for (uint32_t i = 0; i < 40; ++i) {  // 40 x (2 ms GEMM + 0.5 ms elementwise): 80% GEMM time
    const int64_t t = i * 2500 * kUs;
    b.Launch(th, t, t + 10 * kUs, 2 * i + 1);
    b.Kernel(st, gemm, t + 20 * kUs, t + 2020 * kUs, 2 * i + 1);
    b.Launch(th, t + 30 * kUs, t + 40 * kUs, 2 * i + 2);
    b.Kernel(st, "vectorized_elementwise_kernel", t + 2020 * kUs, t + 2520 * kUs, 2 * i + 2);
  }
  TraceData& d = b.Done();
  if (tensor_pct >= 0) {  // PM sampling: one tensor-pipe sample per ms, all at tensor_pct
    d.counter_tracks.push_back({kPmTensorActive, "%", "GPU 0", 0});
    for (int i = 0; i < 101; ++i) d.counter_samples.push_back({i * 1000 * kUs, tensor_pct, 0});
  }
  return Analyze(d);
}

const Finding* FindingOf(const Summary& s, const std::string& id) {
  for (const Finding& f : s.findings)
    if (f.id == id) return &f;
  return nullptr;
}

TEST_CASE("tensor_cores_idle: fp32 GEMM names on a tensor-core GPU, never reduced precision") {
  const Summary fp32 = GemmTrace("ampere_sgemm_128x64_nn", 8);
  const Finding* f = FindingOf(fp32, "tensor_cores_idle");
  REQUIRE(f != nullptr);
  CHECK(f->time_ns == 40 * 2000 * kUs);
  CHECK(f->confidence == "medium");  // names only, no PM sampling
  CHECK(f->evidence[1].first == "fp32_gemm_share_of_kernel_time");
  CHECK(f->evidence[1].second == Approx(0.8));
  CHECK(f->recommendation.find("allow_tf32") != std::string::npos);
  CHECK(FindingOf(GemmTrace("ampere_sgemm_128x64_nn", 6), "tensor_cores_idle") == nullptr);
  CHECK(FindingOf(GemmTrace("ampere_bf16_s16816gemm_bf16_128x64_nn", 8), "tensor_cores_idle") ==
        nullptr);
  CHECK(FindingOf(GemmTrace("sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n", 8), "tensor_cores_idle") ==
        nullptr);
  CHECK(FindingOf(GemmTrace("big_matmul", 8), "tensor_cores_idle") ==
        nullptr);  // precision unknown
  // PM sampling: tensor pipes at 0.2% under GEMMs whose names do not say their precision
  // fires (medium); with the fp32 names as well, both signals agree (high); at 40% it does not.
  const Summary pm = GemmTrace("big_matmul", 8, 0.2);
  const Finding* p = FindingOf(pm, "tensor_cores_idle");
  REQUIRE(p != nullptr);
  CHECK(p->confidence == "medium");
  CHECK(p->time_ns == 40 * 2000 * kUs);
  CHECK(p->evidence.back().first == "measured_tensor_active_pct");
  CHECK(p->evidence.back().second == Approx(0.2));
  // The summaries outlive the findings read from them.
  const Summary both_summary = GemmTrace("ampere_sgemm_128x64_nn", 8, 0.2);
  const Finding* both = FindingOf(both_summary, "tensor_cores_idle");
  REQUIRE(both != nullptr);
  CHECK(both->confidence == "high");
  CHECK(FindingOf(GemmTrace("big_matmul", 8, 40.0), "tensor_cores_idle") == nullptr);
  CHECK(FindingOf(GemmTrace("ampere_bf16_s16816gemm_bf16_128x64_nn", 8, 0.2),
                  "tensor_cores_idle") == nullptr);
  // Volta: no TF32, so the advice is fp16 autocast.
  const Summary volta = GemmTrace("volta_sgemm_128x64_nn", 7);
  const Finding* v = FindingOf(volta, "tensor_cores_idle");
  REQUIRE(v != nullptr);
  CHECK(v->recommendation.find("no TF32") != std::string::npos);
}

TEST_CASE("peak table: datasheet rows by name and compute capability, null otherwise") {
  DeviceInfo d;
  d.name = "NVIDIA A100-SXM4-80GB";
  d.compute_major = 8;
  CHECK(PeakTflops(d, Precision::kBf16) == 312);
  CHECK(PeakTflops(d, Precision::kTf32) == 156);
  CHECK(PeakTflops(d, Precision::kFp8) == -1);  // no fp8 on Ampere
  d.name = "NVIDIA H100 PCIe";
  d.compute_major = 9;
  CHECK(PeakTflops(d, Precision::kFp16) == 756);
  d.name = "NVIDIA L4";
  d.compute_major = 8;
  d.compute_minor = 9;
  CHECK(PeakTflops(d, Precision::kFp8) == 242);
  d.name = "NVIDIA L40S";
  CHECK(PeakTflops(d, Precision::kFp32) == Approx(91.6));
  d.name = "Tesla V100-SXM2-16GB";
  d.compute_major = 7;
  d.compute_minor = 0;
  CHECK(PeakTflops(d, Precision::kFp16) == 125);
  CHECK(PeakTflops(d, Precision::kBf16) == -1);
  d.name = "NVIDIA GeForce RTX 4090";
  CHECK(PeakTflops(d, Precision::kFp16) == -1);
  CHECK(PeakTflops(d, Precision::kUnknown) == -1);
}

}  // namespace
}  // namespace kairos
