// File: pm_cupti.cc — see pm_cupti.h.
// The call sequence is CUDA 13's: cuptiProfilerInitialize; per GPU cuptiDeviceGetChipName,
// cuptiPmSamplingEnable, cuptiPmSamplingGetCounterAvailability, cuptiProfilerHostInitialize
// (PM sampling), cuptiProfilerHostConfigAddMetrics, cuptiProfilerHostGetConfigImage(Size),
// cuptiPmSamplingSetConfig, cuptiPmSamplingGetCounterDataSize,
// cuptiPmSamplingCounterDataImageInitialize, cuptiPmSamplingStart; then repeatedly
// cuptiPmSamplingDecodeData, cuptiPmSamplingGetCounterDataInfo,
// cuptiPmSamplingCounterDataGetSampleInfo and cuptiProfilerHostEvaluateToGpuValues per
// completed sample, re-initialising the image once it is full; finally cuptiPmSamplingStop,
// cuptiPmSamplingDisable, cuptiProfilerHostDeinitialize.
#include "counters/pm_cupti.h"

#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "util/clock.h"
#include "util/dcheck.h"

namespace kairos::internal {
namespace {

struct PmApi {
  bool loaded = false;
  std::string error;  // why not loaded
  CUptiResult (*GetResultString)(CUptiResult, const char**) = nullptr;
  CUptiResult (*GetTimestamp)(uint64_t*) = nullptr;
  CUptiResult (*ProfilerInitialize)(CUpti_Profiler_Initialize_Params*) = nullptr;
  CUptiResult (*DeviceGetChipName)(CUpti_Device_GetChipName_Params*) = nullptr;
  CUptiResult (*Enable)(CUpti_PmSampling_Enable_Params*) = nullptr;
  CUptiResult (*Disable)(CUpti_PmSampling_Disable_Params*) = nullptr;
  CUptiResult (*GetCounterAvailability)(CUpti_PmSampling_GetCounterAvailability_Params*) = nullptr;
  CUptiResult (*SetConfig)(CUpti_PmSampling_SetConfig_Params*) = nullptr;
  CUptiResult (*GetCounterDataSize)(CUpti_PmSampling_GetCounterDataSize_Params*) = nullptr;
  CUptiResult (*CounterDataImageInitialize)(
      CUpti_PmSampling_CounterDataImage_Initialize_Params*) = nullptr;
  CUptiResult (*Start)(CUpti_PmSampling_Start_Params*) = nullptr;
  CUptiResult (*Stop)(CUpti_PmSampling_Stop_Params*) = nullptr;
  CUptiResult (*DecodeData)(CUpti_PmSampling_DecodeData_Params*) = nullptr;
  CUptiResult (*GetCounterDataInfo)(CUpti_PmSampling_GetCounterDataInfo_Params*) = nullptr;
  CUptiResult (*GetSampleInfo)(CUpti_PmSampling_CounterData_GetSampleInfo_Params*) = nullptr;
  CUptiResult (*HostInitialize)(CUpti_Profiler_Host_Initialize_Params*) = nullptr;
  CUptiResult (*HostDeinitialize)(CUpti_Profiler_Host_Deinitialize_Params*) = nullptr;
  CUptiResult (*HostConfigAddMetrics)(CUpti_Profiler_Host_ConfigAddMetrics_Params*) = nullptr;
  CUptiResult (*HostGetConfigImageSize)(CUpti_Profiler_Host_GetConfigImageSize_Params*) = nullptr;
  CUptiResult (*HostGetConfigImage)(CUpti_Profiler_Host_GetConfigImage_Params*) = nullptr;
  CUptiResult (*HostEvaluateToGpuValues)(CUpti_Profiler_Host_EvaluateToGpuValues_Params*) = nullptr;
  // The driver's device count and identities (libcuda, only if the process loaded it already).
  int (*CuDeviceGetCount)(int*) = nullptr;
  int (*CuDeviceGet)(int* device, int ordinal) = nullptr;
  int (*CuDeviceGetUuid)(char* uuid16, int device) = nullptr;  // CUuuid is 16 bytes
  int (*CuDeviceGetName)(char* name, int len, int device) = nullptr;
  bool profiler_initialized = false;
};

}  // namespace

// A root's PmApi and the mutex that guards it and every CUPTI PM call, as one object (see
// pm_cupti.h): shared by the platforms and samplers made from it, so it outlives the last.
struct PmProcessApi {
  std::mutex mu;
  PmApi api;
  void (*after_first_start)() = nullptr;  // NewPmCuptiApi's; set before any sampler exists
  bool started_once = false;              // guarded by mu
};

namespace {

// Loaded once per PmProcessApi (caller holds `p.mu`, through `lock`); libcupti stays loaded.
PmApi& LoadedApiLocked(PmProcessApi& p, const std::unique_lock<std::mutex>& lock,
                       const std::string& explicit_path) {
  KAIROS_DCHECK(lock.owns_lock() && lock.mutex() == &p.mu, "holds the PM API's mutex");
  PmApi* api = &p.api;
  if (api->loaded || !api->error.empty()) return *api;
  void* h = nullptr;
  if (!explicit_path.empty()) {
    h = dlopen(explicit_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  } else {
    for (const char* name : {"libcupti.so.13", "libcupti.so"}) {
      h = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
      if (h != nullptr) break;
    }
    for (const char* name : {"libcupti.so.13", "libcupti.so"}) {
      if (h != nullptr) break;
      h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    }
  }
  if (h == nullptr) {
    const char* e = dlerror();
    api->error = absl::StrCat("cannot load libcupti: ", e != nullptr ? e : "not found");
    return *api;
  }
  std::string missing;
  auto req = [&](const char* sym, auto* fn) {
    void* p = dlsym(h, sym);
    *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(p);
    if (p == nullptr) absl::StrAppend(&missing, missing.empty() ? "" : ", ", sym);
  };
  req("cuptiGetResultString", &api->GetResultString);
  req("cuptiGetTimestamp", &api->GetTimestamp);
  req("cuptiProfilerInitialize", &api->ProfilerInitialize);
  req("cuptiDeviceGetChipName", &api->DeviceGetChipName);
  req("cuptiPmSamplingEnable", &api->Enable);
  req("cuptiPmSamplingDisable", &api->Disable);
  req("cuptiPmSamplingGetCounterAvailability", &api->GetCounterAvailability);
  req("cuptiPmSamplingSetConfig", &api->SetConfig);
  req("cuptiPmSamplingGetCounterDataSize", &api->GetCounterDataSize);
  req("cuptiPmSamplingCounterDataImageInitialize", &api->CounterDataImageInitialize);
  req("cuptiPmSamplingStart", &api->Start);
  req("cuptiPmSamplingStop", &api->Stop);
  req("cuptiPmSamplingDecodeData", &api->DecodeData);
  req("cuptiPmSamplingGetCounterDataInfo", &api->GetCounterDataInfo);
  req("cuptiPmSamplingCounterDataGetSampleInfo", &api->GetSampleInfo);
  req("cuptiProfilerHostInitialize", &api->HostInitialize);
  req("cuptiProfilerHostDeinitialize", &api->HostDeinitialize);
  req("cuptiProfilerHostConfigAddMetrics", &api->HostConfigAddMetrics);
  req("cuptiProfilerHostGetConfigImageSize", &api->HostGetConfigImageSize);
  req("cuptiProfilerHostGetConfigImage", &api->HostGetConfigImage);
  req("cuptiProfilerHostEvaluateToGpuValues", &api->HostEvaluateToGpuValues);
  if (!missing.empty()) {
    api->error = absl::StrCat("libcupti lacks the CUDA 13 PM sampling API (", missing, ")");
    return *api;
  }
  if (void* cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD); cu != nullptr) {
    api->CuDeviceGetCount = reinterpret_cast<int (*)(int*)>(dlsym(cu, "cuDeviceGetCount"));
    api->CuDeviceGet = reinterpret_cast<int (*)(int*, int)>(dlsym(cu, "cuDeviceGet"));
    api->CuDeviceGetUuid = reinterpret_cast<int (*)(char*, int)>(dlsym(cu, "cuDeviceGetUuid"));
    api->CuDeviceGetName = reinterpret_cast<int (*)(char*, int, int)>(dlsym(cu, "cuDeviceGetName"));
  }
  api->loaded = true;
  return *api;
}

// One line: the CUPTI result and what it means for the user.
std::string Explain(const PmApi& api, const char* call, CUptiResult r) {
  const char* s = nullptr;
  if (api.GetResultString == nullptr || api.GetResultString(r, &s) != CUPTI_SUCCESS || !s)
    s = "CUPTI_ERROR";
  std::string hint;
  switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      hint = "no permission to read GPU performance counters (run as admin or load the driver "
             "with NVreg_RestrictProfilingToAdminUsers=0)";
      break;
    case CUPTI_ERROR_HARDWARE_BUSY:  // cupti_result.h: PM hardware in use by another client
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:  // also what Nsight tools cause
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
    case CUPTI_ERROR_NOT_INITIALIZED:
      hint = "another profiler client holds the GPU's counters (Nsight, DCGM, a second session)";
      break;
    case CUPTI_ERROR_INVALID_OPERATION:
      // cupti_pmsampling.h: what cuptiPmSamplingEnable returns when this process already
      // enabled PM sampling on the device (the application or another in-process tool).
      if (std::string_view(call) == "cuptiPmSamplingEnable")
        hint = "PM sampling is already enabled on this GPU by another client in this process";
      break;
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_INVALID_DEVICE:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      hint = "this GPU does not support PM sampling";
      break;
    case CUPTI_ERROR_INVALID_METRIC_NAME:
      hint = "a metric in CUPTI_PM_SAMPLING_METRICS is not known for this GPU";
      break;
    default:
      break;
  }
  return absl::StrCat(call, " failed: ", s, " (", static_cast<int>(r), ")",
                      hint.empty() ? "" : ": ", hint);
}

template <typename P>
P Params(size_t size) {
  P p;
  std::memset(&p, 0, sizeof p);
  p.structSize = size;
  return p;
}

constexpr size_t kHardwareBufferBytes = size_t{32} << 20;
// Samples one counter-data image holds between decodes; the poll thread decodes every
// 100 ms, so this covers 1 ms sampling with room to spare (a full image is re-used).
constexpr uint32_t kMaxSamplesPerImage = 1024;
constexpr int kMaxDecodeRounds = 64;  // bound one Poll; the rest waits for the next one

class CuptiPmSampler : public PmSampler {
 public:
  explicit CuptiPmSampler(std::shared_ptr<PmProcessApi> p)
      : keep_(std::move(p)), mu_(keep_->mu), api_(keep_->api) {}
  ~CuptiPmSampler() override { Stop(); }

  absl::Status Start(uint32_t device, const std::vector<std::string>& metrics,
                     int64_t interval_ns) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!api_.loaded) return absl::UnavailableError(api_.error);
    auto fail = [&](const char* call, CUptiResult r) {
      const std::string msg = Explain(api_, call, r);
      ReleaseLocked();
      return absl::UnavailableError(msg);
    };
    CUptiResult r;
    if (!api_.profiler_initialized) {
      auto p = Params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
      if ((r = api_.ProfilerInitialize(&p)) != CUPTI_SUCCESS) return fail("cuptiProfilerInitialize", r);
      api_.profiler_initialized = true;  // kept for the process: CUPTI holds it globally
    }
    auto chip = Params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = device;
    if ((r = api_.DeviceGetChipName(&chip)) != CUPTI_SUCCESS) return fail("cuptiDeviceGetChipName", r);
    auto en = Params<CUpti_PmSampling_Enable_Params>(CUpti_PmSampling_Enable_Params_STRUCT_SIZE);
    en.deviceIndex = device;
    if ((r = api_.Enable(&en)) != CUPTI_SUCCESS) return fail("cuptiPmSamplingEnable", r);
    obj_ = en.pPmSamplingObject;
    auto av = Params<CUpti_PmSampling_GetCounterAvailability_Params>(
        CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE);
    av.deviceIndex = device;
    if ((r = api_.GetCounterAvailability(&av)) != CUPTI_SUCCESS)
      return fail("cuptiPmSamplingGetCounterAvailability", r);
    // The availability image, the chip name and the config image stay alive until the sampler
    // is released: CUPTI keeps pointers to them (the real libcupti read the freed config image
    // in cuptiPmSamplingDecodeData and crashed the process on an H100; docs/REAL_GPU.md).
    avail_.assign(av.counterAvailabilityImageSize, 0);
    av.pCounterAvailabilityImage = avail_.data();
    if ((r = api_.GetCounterAvailability(&av)) != CUPTI_SUCCESS)
      return fail("cuptiPmSamplingGetCounterAvailability", r);
    auto hi = Params<CUpti_Profiler_Host_Initialize_Params>(
        CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    hi.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
    chip_name_ = chip.pChipName != nullptr ? chip.pChipName : "";
    hi.pChipName = chip_name_.c_str();
    hi.pCounterAvailabilityImage = avail_.data();
    if ((r = api_.HostInitialize(&hi)) != CUPTI_SUCCESS) return fail("cuptiProfilerHostInitialize", r);
    host_ = hi.pHostObject;
    names_ = metrics;
    name_ptrs_.clear();
    for (const std::string& m : names_) name_ptrs_.push_back(m.c_str());
    auto add = Params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = host_;
    add.ppMetricNames = name_ptrs_.data();
    add.numMetrics = name_ptrs_.size();
    if ((r = api_.HostConfigAddMetrics(&add)) != CUPTI_SUCCESS)
      return fail("cuptiProfilerHostConfigAddMetrics", r);
    auto cs = Params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    cs.pHostObject = host_;
    if ((r = api_.HostGetConfigImageSize(&cs)) != CUPTI_SUCCESS)
      return fail("cuptiProfilerHostGetConfigImageSize", r);
    config_.assign(cs.configImageSize, 0);
    auto ci = Params<CUpti_Profiler_Host_GetConfigImage_Params>(
        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    ci.pHostObject = host_;
    ci.configImageSize = config_.size();
    ci.pConfigImage = config_.data();
    if ((r = api_.HostGetConfigImage(&ci)) != CUPTI_SUCCESS)
      return fail("cuptiProfilerHostGetConfigImage", r);
    auto sc = Params<CUpti_PmSampling_SetConfig_Params>(CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE);
    sc.pPmSamplingObject = obj_;
    sc.configSize = config_.size();
    sc.pConfig = config_.data();
    sc.hardwareBufferSize = kHardwareBufferBytes;
    sc.samplingInterval = static_cast<uint64_t>(interval_ns);
    sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
    // Keep the newest: a stalled poll thread loses the oldest samples, not the window's end.
    sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
    if ((r = api_.SetConfig(&sc)) != CUPTI_SUCCESS) return fail("cuptiPmSamplingSetConfig", r);
    auto ds = Params<CUpti_PmSampling_GetCounterDataSize_Params>(
        CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE);
    ds.pPmSamplingObject = obj_;
    ds.pMetricNames = name_ptrs_.data();
    ds.numMetrics = name_ptrs_.size();
    ds.maxSamples = kMaxSamplesPerImage;
    if ((r = api_.GetCounterDataSize(&ds)) != CUPTI_SUCCESS)
      return fail("cuptiPmSamplingGetCounterDataSize", r);
    image_.assign(ds.counterDataSize, 0);
    if ((r = InitImage()) != CUPTI_SUCCESS)
      return fail("cuptiPmSamplingCounterDataImageInitialize", r);
    auto st = Params<CUpti_PmSampling_Start_Params>(CUpti_PmSampling_Start_Params_STRUCT_SIZE);
    st.pPmSamplingObject = obj_;
    if ((r = api_.Start(&st)) != CUPTI_SUCCESS) return fail("cuptiPmSamplingStart", r);
    started_ = true;
    MeasureOffset();
    if (!keep_->started_once) {
      keep_->started_once = true;
      if (keep_->after_first_start != nullptr) keep_->after_first_start();
    }
    return absl::OkStatus();
  }

  absl::Status Poll(std::vector<PmSample>* out, bool* overflowed) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (obj_ == nullptr) return absl::OkStatus();
    MeasureOffset();
    for (int round = 0; round < kMaxDecodeRounds; ++round) {
      auto dd = Params<CUpti_PmSampling_DecodeData_Params>(
          CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE);
      dd.pPmSamplingObject = obj_;
      dd.pCounterDataImage = image_.data();
      dd.counterDataImageSize = image_.size();
      CUptiResult r = api_.DecodeData(&dd);
      if (r != CUPTI_SUCCESS) return absl::UnavailableError(Explain(api_, "cuptiPmSamplingDecodeData", r));
      if (dd.overflow) *overflowed = true;
      auto info = Params<CUpti_PmSampling_GetCounterDataInfo_Params>(
          CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE);
      info.pCounterDataImage = image_.data();
      info.counterDataImageSize = image_.size();
      if ((r = api_.GetCounterDataInfo(&info)) != CUPTI_SUCCESS)
        return absl::UnavailableError(Explain(api_, "cuptiPmSamplingGetCounterDataInfo", r));
      for (size_t i = consumed_; i < info.numCompletedSamples; ++i) {
        auto si = Params<CUpti_PmSampling_CounterData_GetSampleInfo_Params>(
            CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE);
        si.pPmSamplingObject = obj_;
        si.pCounterDataImage = image_.data();
        si.counterDataImageSize = image_.size();
        si.sampleIndex = i;
        if ((r = api_.GetSampleInfo(&si)) != CUPTI_SUCCESS)
          return absl::UnavailableError(Explain(api_, "cuptiPmSamplingCounterDataGetSampleInfo", r));
        PmSample s;
        s.start_ns = static_cast<int64_t>(si.startTimestamp) + offset_ns_;
        s.end_ns = static_cast<int64_t>(si.endTimestamp) + offset_ns_;
        s.values.assign(names_.size(), 0.0);
        auto ev = Params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
            CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
        ev.pHostObject = host_;
        ev.pCounterDataImage = image_.data();
        ev.counterDataImageSize = image_.size();
        ev.rangeIndex = i;
        ev.ppMetricNames = name_ptrs_.data();
        ev.numMetrics = name_ptrs_.size();
        ev.pMetricValues = s.values.data();
        if ((r = api_.HostEvaluateToGpuValues(&ev)) != CUPTI_SUCCESS)
          return absl::UnavailableError(Explain(api_, "cuptiProfilerHostEvaluateToGpuValues", r));
        out->push_back(std::move(s));
      }
      consumed_ = info.numCompletedSamples;
      if (dd.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) break;
      // Full: every completed sample was read; start the image over and decode the rest.
      if ((r = InitImage()) != CUPTI_SUCCESS)
        return absl::UnavailableError(Explain(api_, "cuptiPmSamplingCounterDataImageInitialize", r));
      consumed_ = 0;
    }
    return absl::OkStatus();
  }

  void Stop() override {
    std::lock_guard<std::mutex> lock(mu_);
    ReleaseLocked();
  }

 private:
  CUptiResult InitImage() {
    auto p = Params<CUpti_PmSampling_CounterDataImage_Initialize_Params>(
        CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    p.pPmSamplingObject = obj_;
    p.counterDataSize = image_.size();
    p.pCounterData = image_.data();
    return api_.CounterDataImageInitialize(&p);
  }

  // PM sample timestamps are on CUPTI's timebase (cuptiGetTimestamp); the offset to Unix ns
  // is taken between two clock reads and refreshed at every poll, so drift stays that small.
  void MeasureOffset() {
    uint64_t ts = 0;
    const int64_t a = UnixNowNs();
    if (api_.GetTimestamp(&ts) != CUPTI_SUCCESS || ts == 0) return;
    const int64_t b = UnixNowNs();
    offset_ns_ = a + (b - a) / 2 - static_cast<int64_t>(ts);
  }

  void ReleaseLocked() {
    if (obj_ != nullptr) {
      if (started_) {
        auto p = Params<CUpti_PmSampling_Stop_Params>(CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
        p.pPmSamplingObject = obj_;
        api_.Stop(&p);
      }
      auto d = Params<CUpti_PmSampling_Disable_Params>(CUpti_PmSampling_Disable_Params_STRUCT_SIZE);
      d.pPmSamplingObject = obj_;
      api_.Disable(&d);
    }
    if (host_ != nullptr) {
      auto d = Params<CUpti_Profiler_Host_Deinitialize_Params>(
          CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
      d.pHostObject = host_;
      api_.HostDeinitialize(&d);
    }
    obj_ = nullptr;
    host_ = nullptr;
    started_ = false;
    image_.clear();
    image_.shrink_to_fit();
    // After Disable and HostDeinitialize: the last CUPTI calls that may read them.
    config_.clear();
    config_.shrink_to_fit();
    avail_.clear();
    avail_.shrink_to_fit();
    chip_name_.clear();
    consumed_ = 0;
  }

  std::shared_ptr<PmProcessApi> keep_;  // first: outlives the two references below
  std::mutex& mu_;                      // the root's PmApi's: every CUPTI PM call holds it
  PmApi& api_;
  CUpti_PmSampling_Object* obj_ = nullptr;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  bool started_ = false;
  std::vector<std::string> names_;
  std::vector<const char*> name_ptrs_;
  std::vector<uint8_t> image_;
  std::vector<uint8_t> avail_;   // counter availability image (cuptiProfilerHostInitialize)
  std::vector<uint8_t> config_;  // config image (cuptiPmSamplingSetConfig)
  std::string chip_name_;
  size_t consumed_ = 0;   // completed samples of the image already handed out
  int64_t offset_ns_ = 0; // Unix ns minus CUPTI ns
};

class CuptiPmPlatform : public PmPlatform {
 public:
  CuptiPmPlatform(std::string path, std::shared_ptr<PmProcessApi> api)
      : path_(std::move(path)), api_(std::move(api)) {}
  int DeviceCount() override {
    PmProcessApi& p = *api_;
    std::unique_lock<std::mutex> lock(p.mu);
    PmApi& api = LoadedApiLocked(p, lock, path_);
    int n = 0;
    if (api.CuDeviceGetCount == nullptr || api.CuDeviceGetCount(&n) != 0) return 0;
    return n;
  }
  GpuIdentity Identity(int ordinal) override {
    PmProcessApi& p = *api_;
    std::unique_lock<std::mutex> lock(p.mu);
    PmApi& api = LoadedApiLocked(p, lock, path_);
    GpuIdentity id;
    int dev = 0;
    if (api.CuDeviceGet == nullptr || api.CuDeviceGet(&dev, ordinal) != 0) return id;
    char uuid[16];
    if (api.CuDeviceGetUuid != nullptr && api.CuDeviceGetUuid(uuid, dev) == 0) {
      char text[48];
      const auto* b = reinterpret_cast<const unsigned char*>(uuid);
      snprintf(text, sizeof(text),
               "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
               b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
      id.uuid = text;
    }
    char name[256] = {};
    if (api.CuDeviceGetName != nullptr && api.CuDeviceGetName(name, sizeof(name) - 1, dev) == 0)
      id.name = name;
    return id;
  }
  std::unique_ptr<PmSampler> Open() override {
    PmProcessApi& p = *api_;
    std::unique_lock<std::mutex> lock(p.mu);
    LoadedApiLocked(p, lock, path_);
    return std::make_unique<CuptiPmSampler>(api_);
  }

 private:
  std::string path_;
  std::shared_ptr<PmProcessApi> api_;  // never null
};

}  // namespace

std::shared_ptr<PmProcessApi> NewPmCuptiApi(void (*after_first_start)()) {
  auto p = std::make_shared<PmProcessApi>();
  p->after_first_start = after_first_start;
  return p;
}

std::unique_ptr<PmPlatform> CreateCuptiPmPlatform(const std::string& cupti_library,
                                                  std::shared_ptr<PmProcessApi> api) {
  if (api == nullptr) api = NewPmCuptiApi();
  return std::make_unique<CuptiPmPlatform>(cupti_library, std::move(api));
}

}  // namespace kairos::internal
