// File: sample_trace.h
// Layer: tests for kairos_report. A synthetic training run with everything the report
// draws: 60 steps (one a slow outlier), forward/backward kernels, an NCCL all-reduce
// partly overlapping compute, input copies, a data loader that starves the GPU in rank 0's
// first 36 steps, CPU ranges on two threads, host counters every 10 ms, and deviceProperties
// naming 8 GPUs of which only GPU `rank` has work.
// Threading: test thread only.
#ifndef KAIROS_TEST_REPORT_SAMPLE_TRACE_H_
#define KAIROS_TEST_REPORT_SAMPLE_TRACE_H_

#include <string>

#include "analysis/trace_builder.h"

namespace kairos::testing {

inline TraceData SampleTrainingTrace(int rank, int world_size = 2) {
  constexpr int64_t kUs = 1000, kMs = 1000000;
  constexpr int kSteps = 60;
  const int64_t start = 1700000000000000000LL;
  // Steps are 10 ms; step 41 takes 25 ms; rank 0 loads data slowly in steps 0-35.
  int64_t total = 0;
  for (int i = 0; i < kSteps; ++i) total += (i == 41 ? 25 : 10) * kMs;
  TraceBuilder b(start, start + total + 2 * kMs);
  for (uint32_t d = 0; d < 8; ++d) b.Device(d, 132);
  const uint32_t dev = static_cast<uint32_t>(rank);
  const uint32_t main_thread = b.Thread(1), loader = b.Thread(2);
  const uint32_t compute = b.Stream(dev, 7), comm = b.Stream(dev, 13);
  uint32_t corr = 1;
  int64_t t = start + kMs;
  for (int i = 0; i < kSteps; ++i) {
    const int64_t len = (i == 41 ? 25 : 10) * kMs;
    const bool slow_input = rank == 0 && i < 36;
    b.Step(main_thread, i, t, t + len);
    const int64_t load = slow_input ? 6 * kMs : 300 * kUs;
    b.Range(loader, "DataLoader.__next__", t, t + load);
    b.Range(main_thread, "aten::to", t + load, t + load + 40 * kUs);
    b.Launch(main_thread, t + load, t + load + 20 * kUs, corr, "cudaMemcpyAsync");
    b.Memcpy(compute, t + load + 30 * kUs, t + load + 230 * kUs, corr++, 8u << 20);
    int64_t k = t + load + 240 * kUs;
    const int64_t body = len - load - 900 * kUs;
    b.Range(main_thread, "forward", t + load + 50 * kUs, t + load + 50 * kUs + body / 3);
    b.Range(main_thread, "backward", t + load + 60 * kUs + body / 3, t + load + 60 * kUs + 2 * body / 3);
    const char* names[] = {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64",
                           "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>",
                           "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64>>",
                           "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>"};
    const int kernels = 12;
    const int64_t each = body / kernels;
    for (int j = 0; j < kernels; ++j) {
      b.Launch(main_thread, t + load + 60 * kUs + j * 8 * kUs, t + load + 66 * kUs + j * 8 * kUs, corr);
      b.Kernel(compute, names[j % 4], k, k + each - 5 * kUs, corr++, j % 4 == 0 || j % 4 == 2 ? 264 : 4096, 256, 64);
      k += each;
    }
    // All-reduce of the gradients: starts in the last quarter of backward, ends after it.
    b.Launch(main_thread, k - each * 3, k - each * 3 + 10 * kUs, corr);
    b.Kernel(comm, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", k - each * 3, k + 500 * kUs, corr++, 24, 512, 96);
    b.Range(main_thread, "optimizer.step", k + 500 * kUs, k + 600 * kUs);
    t += len;
  }
  for (int64_t s = start; s <= start + total + 2 * kMs; s += 10 * kMs) {
    const double phase = static_cast<double>((s - start) / (10 * kMs) % 7);
    b.Counter("cpu.util", s, 35.0 + 5.0 * phase + (rank == 0 && s < start + 130 * kMs ? 40.0 : 0.0));
    b.Counter("cpu.iowait", s, 1.0 + 0.2 * phase);
    b.Counter("process.cpu", s, 120.0 + 10.0 * phase);
    b.Counter("mem.used", s, 3.2e10 + 1e8 * phase);
    b.Counter("process.rss", s, 6.0e9 + 5e7 * phase);
  }
  TraceData& data = b.Done();
  data.distributed.rank = rank;
  data.distributed.world_size = world_size;
  data.pid = 4242 + rank;
  data.process_name = "train.py";
  return std::move(data);
}

}  // namespace kairos::testing

#endif  // KAIROS_TEST_REPORT_SAMPLE_TRACE_H_
