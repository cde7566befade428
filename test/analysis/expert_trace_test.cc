// File: expert_trace_test.cc
// Layer: tests for kairos_analysis. Kernel classes from names and launch shapes, and a
// synthetic trace built to look like an expert-tuned MoE training step on an H100 node:
// warp-specialized persistent GEMMs with registers at the limit, FlashAttention-3, a cuBLAS
// nvjet kernel, DeepEP dispatch/combine on 20 SMs, an NCCL all-gather, and deviceProperties
// naming 8 GPUs of which only one is this rank's. The analysis must count the EP kernels as
// communication, report no occupancy or concurrency finding, collapse the 7 idle GPUs into
// one line and say the trace is well tuned. A control with the same shapes under plain
// names shows the same trace would fire both findings without the classes.
// Threading: single-threaded.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "analysis/kernel_class.h"
#include "analysis/summary.h"
#include "analysis/findings_util.h"
#include "analysis/trace_builder.h"

namespace kairos {
namespace {

using kairos::testing::Ids;
using kairos::testing::kMs;
using kairos::testing::kUs;
using kairos::testing::TraceBuilder;

TEST_CASE("Kernel names map to their classes") {
  struct Case {
    const char* name;
    KernelClass want;
  };
  const Case cases[] = {
      {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", KernelClass::kNccl},
      {"ncclKernel_AllReduce_RING_LL_Sum_float", KernelClass::kNccl},
      {"void deep_ep::internode::dispatch<true, 8, 4096>(int4*, float*)", KernelClass::kCommunication},
      {"void deep_ep::intranode::notify_dispatch<8>(int const*, int*)", KernelClass::kCommunication},
      {"void deep_ep::internode_ll::combine<8, 7168>(void*)", KernelClass::kCommunication},
      {"nvshmemi_proxy_kernel", KernelClass::kCommunication},
      {"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(...)", KernelClass::kCommunication},
      {"two_shot_all_reduce_kernel", KernelClass::kCommunication},
      {"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<Sm90>>(Params)", KernelClass::kGemmAttention},
      {"nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNN", KernelClass::kGemmAttention},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1", KernelClass::kGemmAttention},
      {"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128>>(Flash_fwd_params)", KernelClass::kGemmAttention},
      {"triton_tem_fused_mm_0", KernelClass::kGemmAttention},
      {"matmul_kernel_persistent", KernelClass::kGemmAttention},
      {"my_persistent_loop", KernelClass::kPersistent},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", KernelClass::kMemory},
      {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float>", KernelClass::kMemory},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", KernelClass::kElementwise},
      {"void at::native::reduce_kernel<512, 1>(...)", KernelClass::kElementwise},
      {"reduce_rows", KernelClass::kElementwise},
      {"triton_poi_fused_add_mul_0", KernelClass::kElementwise},
      {"add_one", KernelClass::kOther},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(ClassifyKernelName(c.name) == c.want);
  }
  CHECK(std::string(KernelClassId(KernelClass::kElementwise)) == "elementwise_reduction");
}

TEST_CASE("Launch shape refines a name class into persistent") {
  // 1-4 waves of the SM count exactly, or the SM count rounded down to a cluster multiple.
  CHECK(RefineKernelClass(KernelClass::kOther, 132, 132) == KernelClass::kPersistent);
  CHECK(RefineKernelClass(KernelClass::kElementwise, 528, 132) == KernelClass::kPersistent);
  CHECK(RefineKernelClass(KernelClass::kOther, 660, 132) == KernelClass::kOther);
  CHECK(RefineKernelClass(KernelClass::kOther, 112, 114) == KernelClass::kPersistent);
  CHECK(RefineKernelClass(KernelClass::kOther, 8, 132) == KernelClass::kOther);
  CHECK(RefineKernelClass(KernelClass::kOther, 132, 0) == KernelClass::kOther);
  // Names that fix the class keep it.
  CHECK(RefineKernelClass(KernelClass::kCommunication, 132, 132) == KernelClass::kCommunication);
  CHECK(RefineKernelClass(KernelClass::kGemmAttention, 264, 132) == KernelClass::kGemmAttention);
  // Every grid up to 5 waves of every SM count up to 160 against the rule as stated: k * sms
  // for k in 1..4, or sms - sms % c for a cluster size c in {2, 4, 8} that does not divide sms.
  int persistent = 0, mismatches = 0;
  for (int32_t sms = 1; sms <= 160; ++sms) {
    for (uint64_t blocks = 1; blocks <= 5u * static_cast<uint64_t>(sms) + 1; ++blocks) {
      const uint64_t n = static_cast<uint64_t>(sms);
      bool want = false;
      for (uint64_t k = 1; k <= 4; ++k) want |= blocks == k * n;
      for (uint64_t c : {2u, 4u, 8u}) want |= n % c != 0 && blocks == n - n % c;
      const bool got = RefineKernelClass(KernelClass::kOther, blocks, sms) == KernelClass::kPersistent;
      persistent += got ? 1 : 0;
      mismatches += got != want ? 1 : 0;
    }
  }
  CHECK(mismatches == 0);
  // 640 whole waves, and 233 distinct clustered grids (counted apart: where the cluster sizes
  // give the same grid, e.g. an odd sms with sms % 4 == 1, it counts once).
  CHECK(persistent == 160 * 4 + 233);
}

struct Names {
  std::string gemm, attention, nvjet, ffn, dispatch, combine, allgather;
};

const Names kExpert = {
    "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, "
    "cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedPingpong>>>",
    "void flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<128>>(Params)",
    "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNN",
    "expert_ffn_kernel",
    "void deep_ep::internode::dispatch<true, 8, 7168>(int4*, float*, int*)",
    "void deep_ep::internode::combine<8, 7168>(int4*, float const*)",
    "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"};
// The same launches under names that say nothing.
const Names kPlain = {"k_a", "k_b", "k_c", "k_d", "k_e", "k_f", "k_g"};

// Ten 1 ms periods on GPU 0 of 8. Stream 7 (compute): persistent GEMM 0-400 us (132 CTAs of
// 384 threads, 168 registers, 200 KiB shared: one CTA per SM, 18.75% theoretical
// occupancy), FA3 400-700, nvjet 700-750 (66 clustered CTAs), a kernel on two waves of
// 255-register blocks 750-800. Stream 9 (communication, 20 SMs): dispatch 750-880,
// combine 880-980, NCCL all-gather 980-990.
TraceData& ExpertStep(TraceBuilder& b, const Names& n) {
  b.HopperDevice(0);
  for (uint32_t d = 1; d < 8; ++d) b.HopperDevice(d);
  const uint32_t th = b.Thread();
  const uint32_t compute = b.Stream(0, 7), comm = b.Stream(0, 9);
  for (int p = 0; p < 10; ++p) {
    const int64_t t0 = p * kMs;
    b.Step(th, p, t0, t0 + kMs);
    b.Kernel(compute, n.gemm, t0, t0 + 400 * kUs, 0, 132, 384, 168, 200 * 1024);
    b.Kernel(compute, n.attention, t0 + 400 * kUs, t0 + 700 * kUs, 0, 132, 384, 128, 180 * 1024);
    b.Kernel(compute, n.nvjet, t0 + 700 * kUs, t0 + 750 * kUs, 0, 66, 384, 168, 200 * 1024);
    b.Kernel(compute, n.ffn, t0 + 750 * kUs, t0 + 800 * kUs, 0, 264, 64, 255);
    b.Kernel(comm, n.dispatch, t0 + 750 * kUs, t0 + 880 * kUs, 0, 20, 768, 64);
    b.Kernel(comm, n.combine, t0 + 880 * kUs, t0 + 980 * kUs, 0, 20, 768, 64);
    b.Kernel(comm, n.allgather, t0 + 980 * kUs, t0 + 990 * kUs, 0, 16, 640, 96);
  }
  return b.Done();
}

TEST_CASE("Expert MoE step: EP kernels are communication, no shape findings, idle GPUs collapsed") {
  TraceBuilder b(0, 10 * kMs);
  const Summary s = Analyze(ExpertStep(b, kExpert));
  CHECK(s.findings.empty());
  REQUIRE(s.devices.size() == 1);
  const DeviceSummary& d = s.devices[0];
  // Compute covers 0-800 us of each period; communication adds 800-990 on top.
  CHECK(d.compute_ns == 8000 * kUs);
  CHECK(d.communication_ns == 1900 * kUs);
  CHECK(d.idle_ns == 100 * kUs);
  auto cls = [&](KernelClass c) { return d.class_kernel_ns[static_cast<size_t>(c)]; };
  CHECK(cls(KernelClass::kCommunication) == 2300 * kUs);
  CHECK(cls(KernelClass::kNccl) == 100 * kUs);
  CHECK(cls(KernelClass::kGemmAttention) == 7500 * kUs);
  CHECK(cls(KernelClass::kPersistent) == 500 * kUs);
  CHECK(cls(KernelClass::kOther) == 0);
  CHECK(s.idle_devices == std::vector<uint32_t>{1, 2, 3, 4, 5, 6, 7});
  REQUIRE(s.verdicts.size() == 2);
  CHECK(s.verdicts[0] ==
        "GPU 0 busy 99% of the window: compute 80%, communication 19%, memory copies and sets 0%");
  CHECK(s.verdicts[1] == "GPUs 1-7: no GPU work in the window");
  CHECK(s.verdict ==
        "Well tuned: no finding above 2% of the window; GPU busy 99% of the window, communication "
        "19% on top of compute");
}

TEST_CASE("Control: the same launches under plain names fire both shape findings") {
  TraceBuilder b(0, 10 * kMs);
  const Summary s = Analyze(ExpertStep(b, kPlain));
  // k_a, k_b (one CTA per SM) and k_d (two waves) are persistent by shape even unnamed; the
  // 20-CTA communication kernels, the 16-CTA one and the 66-CTA one are not.
  CHECK(Ids(s) == std::set<std::string>{"insufficient_concurrency"});
  const Finding& f = s.findings[0];
  CHECK(f.device == 0);
  CHECK(f.time_ns == 2900 * kUs);  // k_c 500 + k_e 1300 + k_f 1000 + k_g 100
  CHECK(f.window_share == Approx(0.29));
  CHECK(f.confidence == "high");   // median 20 blocks <= 132 / 4
  CHECK(s.devices[0].communication_ns == 0);
  CHECK(s.verdict.find("1 finding; the largest: Kernels with too few blocks for the device (GPU 0, 29% of "
                       "the window, high confidence)") == 0);
}

TEST_CASE("Low occupancy on library GEMMs is not reported; on an unnamed kernel it is") {
  TraceBuilder b(0, 10 * kMs);
  b.HopperDevice(0);
  const uint32_t s7 = b.Stream(0, 7);
  for (int i = 0; i < 20; ++i) {
    // 1000 CTAs: not a wave multiple, so only the name can exempt it.
    const std::string name = i % 2 ? "sm90_xmma_gemm_bf16bf16_bf16f32" : "custom_op";
    b.Kernel(s7, name, i * 500 * kUs, (i + 1) * 500 * kUs, 0, 1000, 384, 168, 200 * 1024);
  }
  const Summary s = Analyze(b.Done());
  REQUIRE(Ids(s) == std::set<std::string>{"low_occupancy"});
  CHECK(s.findings[0].time_ns == 5 * kMs);  // the 10 custom_op launches only
  CHECK(s.findings[0].confidence == "medium");
}

TEST_CASE("A finding below the window-share floor is not reported") {
  // 200 tiny kernels (400 us) inside a 100 ms window: launch-bound by count, 0.4% by time.
  TraceBuilder b(0, 100 * kMs);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t s7 = b.Stream(0, 7);
  for (int i = 0; i < 200; ++i) {
    b.Launch(th, i * 3 * kUs, i * 3 * kUs + 500, i + 1);
    b.Kernel(s7, "tiny_add", i * 3 * kUs + kUs, i * 3 * kUs + 3 * kUs, i + 1);
  }
  b.Kernel(s7, "gemm", 1 * kMs, 95 * kMs, 0);
  TraceData& data = b.Done();
  CHECK(Analyze(data).findings.empty());
  AnalysisOptions o;
  o.min_window_share = 0.0;
  const Summary s = Analyze(data, o);
  REQUIRE(Ids(s) == std::set<std::string>{"launch_bound"});
  // 200 kernels of 2 us plus the gaps ending in one: 1 us before the first, 1 us each after.
  CHECK(s.findings[0].time_ns == 400 * kUs + 200 * kUs);
  CHECK(s.findings[0].window_share == Approx(0.006));
}

TEST_CASE("Timelines bin the temporal breakdown; the step series is kept on request") {
  TraceBuilder b(0, 1000);
  b.Device(0);
  const uint32_t th = b.Thread();
  const uint32_t s7 = b.Stream(0, 7), s9 = b.Stream(0, 9);
  b.Kernel(s7, "gemm", 0, 300, 0);
  b.Kernel(s9, "ncclDevKernel_AllReduce", 200, 600, 0);
  b.Memcpy(s7, 650, 700, 0, 1 << 20);
  b.Step(th, 1, 0, 400);
  b.Step(th, 2, 400, 1000);
  AnalysisOptions o;
  o.timeline_bins = 4;
  o.keep_step_series = true;
  const Summary s = Analyze(b.Done(), o);
  REQUIRE(s.timelines.size() == 1);
  const DeviceTimeline& t = s.timelines[0];
  CHECK(t.bin_ns == 250);
  CHECK(t.compute == std::vector<float>{1.0f, 0.2f, 0.0f, 0.0f});
  CHECK(t.communication == std::vector<float>{0.0f, 0.8f, 0.4f, 0.0f});
  CHECK(t.memory == std::vector<float>{0.0f, 0.0f, 0.2f, 0.0f});
  REQUIRE(s.step_series.size() == 2);
  CHECK(s.step_series[1].step == 2);
  CHECK(s.step_series[1].duration_ns == 600);
  CHECK(Analyze(b.data()).timelines.empty());
}

TEST_CASE("DeviceList collapses runs") {
  CHECK(DeviceList({}) == "");
  CHECK(DeviceList({3}) == "3");
  CHECK(DeviceList({1, 2}) == "1,2");
  CHECK(DeviceList({0, 1, 2, 5, 7, 8, 9}) == "0-2,5,7-9");
}

}  // namespace
}  // namespace kairos
