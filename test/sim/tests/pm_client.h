// File: test/sim/tests/pm_client.h
// A PM-sampling client written only against the real CUDA 13 CUPTI headers
// (cupti_pmsampling.h, cupti_profiler_host.h, cupti_profiler_target.h), the way a
// profiler uses them; nothing of the simulator's internals. Header-only: tests include it.
#ifndef KAIROS_TEST_SIM_TESTS_PM_CLIENT_H_
#define KAIROS_TEST_SIM_TESTS_PM_CLIENT_H_

#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <cstring>
#include <string>
#include <vector>

namespace pmclient {

template <typename P>
P Params(size_t size) {
  P p;
  std::memset(&p, 0, sizeof p);
  p.structSize = size;
  return p;
}

struct Sample {
  uint64_t start = 0, end = 0;
  std::vector<double> values;  // one per metric, in the order given
};

// One device's sampler: Open() runs everything up to Start; Collect() decodes and
// evaluates all completed samples; Close() stops and releases.
struct Sampler {
  size_t device = 0;
  std::vector<std::string> names;
  std::vector<const char*> ptrs;
  CUpti_PmSampling_Object* obj = nullptr;
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<uint8_t> image;
  std::vector<uint8_t> avail;   // borrowed by CUPTI until Close (as the real one does)
  std::vector<uint8_t> config;  // borrowed by CUPTI until Close
  bool started = false;
  std::string failed_call;  // the call that failed, if one did
  // Choices a client may make differently (tools/gpu-check/pm_probe.cu tries both on a GPU).
  CUpti_PmSampling_HardwareBuffer_AppendMode append_mode =
      CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
  bool deinit_host_first = false;  // Close: host object before the sampling object

  CUptiResult Open(const std::vector<std::string>& metrics, uint64_t interval_ns, uint32_t max_samples = 4096) {
    CUptiResult r;
    auto init = Params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    if ((r = cuptiProfilerInitialize(&init)) != CUPTI_SUCCESS) return Failed("cuptiProfilerInitialize", r);
    auto chip = Params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = device;
    if ((r = cuptiDeviceGetChipName(&chip)) != CUPTI_SUCCESS) return Failed("cuptiDeviceGetChipName", r);
    auto en = Params<CUpti_PmSampling_Enable_Params>(CUpti_PmSampling_Enable_Params_STRUCT_SIZE);
    en.deviceIndex = device;
    if ((r = cuptiPmSamplingEnable(&en)) != CUPTI_SUCCESS) return Failed("cuptiPmSamplingEnable", r);
    obj = en.pPmSamplingObject;
    auto av = Params<CUpti_PmSampling_GetCounterAvailability_Params>(
        CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE);
    av.deviceIndex = device;
    if ((r = cuptiPmSamplingGetCounterAvailability(&av)) != CUPTI_SUCCESS) return Failed("availability size", r);
    avail.assign(av.counterAvailabilityImageSize, 0);
    av.pCounterAvailabilityImage = avail.data();
    if ((r = cuptiPmSamplingGetCounterAvailability(&av)) != CUPTI_SUCCESS) return Failed("availability", r);
    auto hi = Params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    hi.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
    hi.pChipName = chip.pChipName;
    hi.pCounterAvailabilityImage = avail.data();
    if ((r = cuptiProfilerHostInitialize(&hi)) != CUPTI_SUCCESS) return Failed("cuptiProfilerHostInitialize", r);
    host = hi.pHostObject;
    names = metrics;
    for (const std::string& m : names) ptrs.push_back(m.c_str());
    auto add = Params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = host;
    add.ppMetricNames = ptrs.data();
    add.numMetrics = ptrs.size();
    if ((r = cuptiProfilerHostConfigAddMetrics(&add)) != CUPTI_SUCCESS)
      return Failed("cuptiProfilerHostConfigAddMetrics", r);
    auto cs = Params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    cs.pHostObject = host;
    if ((r = cuptiProfilerHostGetConfigImageSize(&cs)) != CUPTI_SUCCESS) return Failed("config size", r);
    config.assign(cs.configImageSize, 0);
    auto ci = Params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    ci.pHostObject = host;
    ci.configImageSize = config.size();
    ci.pConfigImage = config.data();
    if ((r = cuptiProfilerHostGetConfigImage(&ci)) != CUPTI_SUCCESS) return Failed("config image", r);
    auto sc = Params<CUpti_PmSampling_SetConfig_Params>(CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE);
    sc.pPmSamplingObject = obj;
    sc.configSize = config.size();
    sc.pConfig = config.data();
    sc.hardwareBufferSize = size_t{32} << 20;
    sc.samplingInterval = interval_ns;
    sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
    sc.hwBufferAppendMode = append_mode;
    if ((r = cuptiPmSamplingSetConfig(&sc)) != CUPTI_SUCCESS) return Failed("cuptiPmSamplingSetConfig", r);
    auto ds = Params<CUpti_PmSampling_GetCounterDataSize_Params>(
        CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE);
    ds.pPmSamplingObject = obj;
    ds.pMetricNames = ptrs.data();
    ds.numMetrics = ptrs.size();
    ds.maxSamples = max_samples;
    if ((r = cuptiPmSamplingGetCounterDataSize(&ds)) != CUPTI_SUCCESS) return Failed("counter data size", r);
    image.assign(ds.counterDataSize, 0);
    if ((r = InitImage()) != CUPTI_SUCCESS) return Failed("cuptiPmSamplingCounterDataImageInitialize", r);
    auto st = Params<CUpti_PmSampling_Start_Params>(CUpti_PmSampling_Start_Params_STRUCT_SIZE);
    st.pPmSamplingObject = obj;
    if ((r = cuptiPmSamplingStart(&st)) != CUPTI_SUCCESS) return Failed("cuptiPmSamplingStart", r);
    started = true;
    return CUPTI_SUCCESS;
  }

  CUptiResult InitImage() {
    auto p = Params<CUpti_PmSampling_CounterDataImage_Initialize_Params>(
        CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    p.pPmSamplingObject = obj;
    p.counterDataSize = image.size();
    p.pCounterData = image.data();
    return cuptiPmSamplingCounterDataImageInitialize(&p);
  }

  // Stops sampling (when `stop`) and decodes every completed sample into `out`.
  CUptiResult Collect(std::vector<Sample>* out, bool stop = true) {
    CUptiResult r;
    if (stop && started) {
      auto p = Params<CUpti_PmSampling_Stop_Params>(CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
      p.pPmSamplingObject = obj;
      if ((r = cuptiPmSamplingStop(&p)) != CUPTI_SUCCESS) return Failed("cuptiPmSamplingStop", r);
      started = false;
    }
    for (;;) {
      auto dd = Params<CUpti_PmSampling_DecodeData_Params>(CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE);
      dd.pPmSamplingObject = obj;
      dd.pCounterDataImage = image.data();
      dd.counterDataImageSize = image.size();
      if ((r = cuptiPmSamplingDecodeData(&dd)) != CUPTI_SUCCESS) return Failed("cuptiPmSamplingDecodeData", r);
      auto info = Params<CUpti_PmSampling_GetCounterDataInfo_Params>(
          CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE);
      info.pCounterDataImage = image.data();
      info.counterDataImageSize = image.size();
      if ((r = cuptiPmSamplingGetCounterDataInfo(&info)) != CUPTI_SUCCESS) return Failed("data info", r);
      for (size_t i = 0; i < info.numCompletedSamples; ++i) {
        auto si = Params<CUpti_PmSampling_CounterData_GetSampleInfo_Params>(
            CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE);
        si.pPmSamplingObject = obj;
        si.pCounterDataImage = image.data();
        si.counterDataImageSize = image.size();
        si.sampleIndex = i;
        if ((r = cuptiPmSamplingCounterDataGetSampleInfo(&si)) != CUPTI_SUCCESS) return Failed("sample info", r);
        Sample s;
        s.start = si.startTimestamp;
        s.end = si.endTimestamp;
        s.values.assign(names.size(), -1.0);
        auto ev = Params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
            CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
        ev.pHostObject = host;
        ev.pCounterDataImage = image.data();
        ev.counterDataImageSize = image.size();
        ev.rangeIndex = i;
        ev.ppMetricNames = ptrs.data();
        ev.numMetrics = ptrs.size();
        ev.pMetricValues = s.values.data();
        if ((r = cuptiProfilerHostEvaluateToGpuValues(&ev)) != CUPTI_SUCCESS) return Failed("evaluate", r);
        out->push_back(std::move(s));
      }
      if (dd.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) break;
      if ((r = InitImage()) != CUPTI_SUCCESS) return Failed("re-initialise image", r);
    }
    return CUPTI_SUCCESS;
  }

  // Stops and releases; the first failure, if any (every release is still tried).
  CUptiResult Close() {
    CUptiResult first = CUPTI_SUCCESS;
    auto note = [&](const char* call, CUptiResult r) {
      if (r != CUPTI_SUCCESS && first == CUPTI_SUCCESS) first = Failed(call, r);
    };
    auto deinit_host = [&] {
      if (host == nullptr) return;
      auto d = Params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
      d.pHostObject = host;
      note("cuptiProfilerHostDeinitialize", cuptiProfilerHostDeinitialize(&d));
      host = nullptr;
    };
    if (deinit_host_first) deinit_host();
    if (obj != nullptr) {
      if (started) {
        auto p = Params<CUpti_PmSampling_Stop_Params>(CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
        p.pPmSamplingObject = obj;
        note("cuptiPmSamplingStop", cuptiPmSamplingStop(&p));
      }
      auto d = Params<CUpti_PmSampling_Disable_Params>(CUpti_PmSampling_Disable_Params_STRUCT_SIZE);
      d.pPmSamplingObject = obj;
      note("cuptiPmSamplingDisable", cuptiPmSamplingDisable(&d));
    }
    deinit_host();
    obj = nullptr;
    started = false;
    return first;
  }
  ~Sampler() { Close(); }

 private:
  CUptiResult Failed(const char* call, CUptiResult r) {
    failed_call = call;
    return r;
  }
};

}  // namespace pmclient

#endif  // KAIROS_TEST_SIM_TESTS_PM_CLIENT_H_
