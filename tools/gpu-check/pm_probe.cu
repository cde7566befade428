// File: tools/gpu-check/pm_probe.cu
// Layer: real-GPU kit diagnostics (docs/REAL_GPU.md); not part of the library.
// Threading: the main thread launches; with `thread=1` a second thread decodes, as kairos does.
//
// kairos' PM sampler (src/counters/pm_cupti.cc) crashed inside libcupti/libnvperf_host on an
// H100 in ways the simulator could not show. This program runs the same CUPTI PM sampling call
// sequence standalone, one variant per process, so one device run tells which choice matters:
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
// a CUPTI error; a crash is the process's exit status (run it under segv_trace.so).
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <cuda_runtime.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

__global__ void spin(unsigned long long ns) {
  unsigned long long a, b;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(a));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(b)); } while (b - a < ns);
}

#define CALL(x)                                                              \
  do {                                                                       \
    CUptiResult r_ = (x);                                                    \
    if (r_ != CUPTI_SUCCESS) {                                               \
      const char* s_ = "?";                                                  \
      cuptiGetResultString(r_, &s_);                                         \
      std::printf("pm_probe %s: %s failed: %s\n", args.c_str(), #x, s_);     \
      return 1;                                                              \
    }                                                                        \
  } while (0)

template <typename P>
P Make(size_t n) { P p; std::memset(&p, 0, sizeof p); p.structSize = n; return p; }

int main(int argc, char** argv) {
  std::string order = "dh", append = "latest";
  bool thread = false;
  long interval_us = 1000;
  bool telemetry_metrics = false;
  std::string args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    args += (args.empty() ? "" : " ") + a;
    if (a.rfind("order=", 0) == 0) order = a.substr(6);
    if (a.rfind("append=", 0) == 0) append = a.substr(7);
    if (a == "thread=1") thread = true;
    if (a.rfind("interval_us=", 0) == 0) interval_us = std::atol(a.c_str() + 12);
    if (a == "metrics=telemetry") telemetry_metrics = true;
  }
  cudaFree(nullptr);
  auto init = Make<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  CALL(cuptiProfilerInitialize(&init));
  auto chip = Make<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  CALL(cuptiDeviceGetChipName(&chip));
  std::string chip_name = chip.pChipName;
  auto en = Make<CUpti_PmSampling_Enable_Params>(CUpti_PmSampling_Enable_Params_STRUCT_SIZE);
  CALL(cuptiPmSamplingEnable(&en));
  CUpti_PmSampling_Object* obj = en.pPmSamplingObject;
  auto av = Make<CUpti_PmSampling_GetCounterAvailability_Params>(
      CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE);
  CALL(cuptiPmSamplingGetCounterAvailability(&av));
  std::vector<uint8_t> avail(av.counterAvailabilityImageSize);
  av.pCounterAvailabilityImage = avail.data();
  CALL(cuptiPmSamplingGetCounterAvailability(&av));
  auto hi = Make<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  hi.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  hi.pChipName = chip_name.c_str();
  hi.pCounterAvailabilityImage = avail.data();
  CALL(cuptiProfilerHostInitialize(&hi));
  CUpti_Profiler_Host_Object* host = hi.pHostObject;
  std::vector<const char*> names = {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed"};
  if (telemetry_metrics)
    names = {"gr__cycles_active.avg.pct_of_peak_sustained_elapsed",
             "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
             "sm__warps_active.avg.pct_of_peak_sustained_active",
             "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
             "dram__throughput.avg.pct_of_peak_sustained_elapsed"};
  std::vector<double> sums(names.size(), 0.0);
  auto add = Make<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = host;
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  CALL(cuptiProfilerHostConfigAddMetrics(&add));
  auto cs = Make<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  cs.pHostObject = host;
  CALL(cuptiProfilerHostGetConfigImageSize(&cs));
  std::vector<uint8_t> config(cs.configImageSize);
  auto ci = Make<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  ci.pHostObject = host;
  ci.configImageSize = config.size();
  ci.pConfigImage = config.data();
  CALL(cuptiProfilerHostGetConfigImage(&ci));
  auto sc = Make<CUpti_PmSampling_SetConfig_Params>(CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE);
  sc.pPmSamplingObject = obj;
  sc.configSize = config.size();
  sc.pConfig = config.data();
  sc.hardwareBufferSize = size_t{32} << 20;
  sc.samplingInterval = static_cast<uint64_t>(interval_us) * 1000;
  sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  sc.hwBufferAppendMode = append == "oldest" ? CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST
                                             : CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
  CALL(cuptiPmSamplingSetConfig(&sc));
  auto ds = Make<CUpti_PmSampling_GetCounterDataSize_Params>(CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE);
  ds.pPmSamplingObject = obj;
  ds.pMetricNames = names.data();
  ds.numMetrics = names.size();
  ds.maxSamples = 1024;
  CALL(cuptiPmSamplingGetCounterDataSize(&ds));
  std::vector<uint8_t> image(ds.counterDataSize);
  auto ii = Make<CUpti_PmSampling_CounterDataImage_Initialize_Params>(
      CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  ii.pPmSamplingObject = obj;
  ii.counterDataSize = image.size();
  ii.pCounterData = image.data();
  CALL(cuptiPmSamplingCounterDataImageInitialize(&ii));
  auto st = Make<CUpti_PmSampling_Start_Params>(CUpti_PmSampling_Start_Params_STRUCT_SIZE);
  st.pPmSamplingObject = obj;
  CALL(cuptiPmSamplingStart(&st));
  size_t samples = 0, consumed = 0;
  double sum = 0, lo = 1e9, top = -1e9;
  auto decode = [&]() -> int {
    auto dd = Make<CUpti_PmSampling_DecodeData_Params>(CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE);
    dd.pPmSamplingObject = obj;
    dd.pCounterDataImage = image.data();
    dd.counterDataImageSize = image.size();
    CALL(cuptiPmSamplingDecodeData(&dd));
    auto info = Make<CUpti_PmSampling_GetCounterDataInfo_Params>(CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE);
    info.pCounterDataImage = image.data();
    info.counterDataImageSize = image.size();
    CALL(cuptiPmSamplingGetCounterDataInfo(&info));
    for (size_t i = consumed; i < info.numCompletedSamples; ++i) {
      std::vector<double> vals(names.size(), 0.0);
      auto ev = Make<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
          CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
      ev.pHostObject = host;
      ev.pCounterDataImage = image.data();
      ev.counterDataImageSize = image.size();
      ev.rangeIndex = i;
      ev.ppMetricNames = names.data();
      ev.numMetrics = names.size();
      ev.pMetricValues = vals.data();
      CALL(cuptiProfilerHostEvaluateToGpuValues(&ev));
      ++samples;
      const double v = vals[names.size() == 1 ? 0 : 1];  // SM active
      for (size_t m = 0; m < names.size(); ++m) sums[m] += vals[m];
      sum += v;
      lo = std::min(lo, v);
      top = std::max(top, v);
    }
    consumed = info.numCompletedSamples;
    return 0;
  };
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (int round = 0; round < 5; ++round) {
    for (int k = 0; k < 60; ++k) {
      spin<<<std::max(sms, 1) * 4, 256>>>(2000000ull);
      cudaDeviceSynchronize();
      usleep(2000);
    }
    int rc = 0;
    if (thread) {
      std::thread t([&] { rc = decode(); });
      t.join();
    } else {
      rc = decode();
    }
    if (rc != 0) return 1;
  }
  auto sp = Make<CUpti_PmSampling_Stop_Params>(CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
  sp.pPmSamplingObject = obj;
  CALL(cuptiPmSamplingStop(&sp));
  auto di = Make<CUpti_PmSampling_Disable_Params>(CUpti_PmSampling_Disable_Params_STRUCT_SIZE);
  di.pPmSamplingObject = obj;
  auto hd = Make<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  hd.pHostObject = host;
  if (order == "hd") {
    CALL(cuptiProfilerHostDeinitialize(&hd));
    CALL(cuptiPmSamplingDisable(&di));
  } else {
    CALL(cuptiPmSamplingDisable(&di));
    CALL(cuptiProfilerHostDeinitialize(&hd));
  }
  std::printf("pm_probe %s: ok %zu samples, SM active mean %.1f%% min %.1f%% max %.1f%%\n",
              args.c_str(), samples, samples ? sum / samples : 0.0, lo, top);
  for (size_t m = 0; names.size() > 1 && m < names.size(); ++m)
    std::printf("  %s mean %.2f\n", names[m], samples ? sums[m] / samples : 0.0);
  return 0;
}
