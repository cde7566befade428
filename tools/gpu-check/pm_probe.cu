// File: tools/gpu-check/pm_probe.cu
// Layer: real-GPU kit diagnostics (docs/REAL_GPU.md); not part of the library.
// Threading: the main thread launches; with `thread=1` a second thread decodes, as kairos does.
//
// kairos' PM sampler (src/counters/pm_cupti.cc) crashed inside libcupti/libnvperf_host on an
// H100 in ways the simulator could not show. This program runs the CUPTI PM sampling call
// sequence standalone through test/sim/tests/pm_client.h (the simulator's own reference client,
// written against the CUPTI headers only), one variant per process:
//   order=dh|hd        teardown: Disable then HostDeinitialize, or the reverse
//   append=latest|oldest  hwBufferAppendMode
//   thread=0|1         decode on the launching thread or on a second thread
//   interval_us=N      the sampling period (default 1000)
//   metrics=telemetry  telemetry's five metrics in one config (docs/TELEMETRY.md) instead of
//                      SM active alone; each one's mean is printed
// (On an H100 telemetry's five-metric config read gpu_busy near 20% and SM active alternating
// 24%/75% per line for a steady 48% load, while SM active alone read 48% at every period.)
// The load is a 50% duty cycle (a full-wave 2 ms spin kernel, then 2 ms idle on the host), so
// the samples' mean SM-active percentage should be near 48 whatever the period.
// It prints one line per variant: "pm_probe <args>: ok <samples>, SM active mean/min/max" or
// the CUPTI call that failed; a crash is the process's exit status (run it under segv_trace.so).
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "pm_client.h"

__global__ void spin(unsigned long long ns) {
  unsigned long long a, b;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(a));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(b)); } while (b - a < ns);
}

int main(int argc, char** argv) {
  pmclient::Sampler s;
  std::vector<std::string> names = {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed"};
  bool thread = false;
  long interval_us = 1000;
  std::string args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    args += (args.empty() ? "" : " ") + a;
    if (a == "order=hd") s.deinit_host_first = true;
    if (a == "append=oldest") s.append_mode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
    if (a == "thread=1") thread = true;
    if (a.rfind("interval_us=", 0) == 0) interval_us = std::atol(a.c_str() + 12);
    if (a == "metrics=telemetry")
      names = {"gr__cycles_active.avg.pct_of_peak_sustained_elapsed",
               "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
               "sm__warps_active.avg.pct_of_peak_sustained_active",
               "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
               "dram__throughput.avg.pct_of_peak_sustained_elapsed"};
  }
  auto failed = [&](CUptiResult r) {
    const char* text = "?";
    cuptiGetResultString(r, &text);
    std::printf("pm_probe %s: %s failed: %s\n", args.c_str(), s.failed_call.c_str(), text);
    return 1;
  };
  cudaFree(nullptr);
  CUptiResult r = s.Open(names, static_cast<uint64_t>(interval_us) * 1000);
  if (r != CUPTI_SUCCESS) return failed(r);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (int k = 0; k < 300; ++k) {
    spin<<<std::max(sms, 1) * 4, 256>>>(2000000ull);
    cudaDeviceSynchronize();
    usleep(2000);
  }
  std::vector<pmclient::Sample> out;
  auto collect = [&] { r = s.Collect(&out); };
  if (thread) {
    std::thread(collect).join();
  } else {
    collect();
  }
  if (r != CUPTI_SUCCESS) return failed(r);
  if ((r = s.Close()) != CUPTI_SUCCESS) return failed(r);
  const size_t sm = names.size() == 1 ? 0 : 1;  // SM active's position
  std::vector<double> sums(names.size(), 0.0);
  double lo = 1e9, top = -1e9;
  for (const pmclient::Sample& x : out) {
    for (size_t m = 0; m < names.size(); ++m) sums[m] += x.values[m];
    lo = std::min(lo, x.values[sm]);
    top = std::max(top, x.values[sm]);
  }
  const double n = out.empty() ? 1.0 : static_cast<double>(out.size());
  std::printf("pm_probe %s: ok %zu samples, SM active mean %.1f%% min %.1f%% max %.1f%%\n",
              args.c_str(), out.size(), sums[sm] / n, lo, top);
  for (size_t m = 0; names.size() > 1 && m < names.size(); ++m)
    std::printf("  %s mean %.2f\n", names[m].c_str(), sums[m] / n);
  return 0;
}
