// File: test/sim/src/cupti_pmsampling.cc
// Layer: CUDA/CUPTI simulator, substitute libcupti.so.13: CUDA 13 PM sampling
//        (cupti_pmsampling.h) and the profiler host API (cupti_profiler_host.h) it needs.
// Threading: one mutex guards all PM-sampling state; KSimPmNote returns at once (one
//            atomic load) while no device is enabled.
//
// The counters come from the simulator's own timeline: libcudart reports every kernel,
// copy and memset it schedules through KSimPmNote (sim_counters.cc). A sample covers
// [start + k*interval, start + (k+1)*interval) and completes once the monotonic clock
// passes its end; its values are the overlap-weighted fractions of the activities in it.
// Images (config and counter data) are this file's own formats, opaque to clients.
// Fault knob: KAIROS_SIM_PM_FAULT=privileges|other_client|unsupported (docs/SIMULATOR.md).
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cupti_entry.h"
#include "sim_common.h"
#include "sim_counters.h"

namespace kairos::sim {
namespace {

// The metrics the simulator can derive, by their CUDA 13 names.
enum Metric { kSmActive, kWarpsActive, kTensorActive, kDram, kGrActive, kNumMetrics };
struct MetricName {
  const char* name;
  Metric metric;
};
constexpr MetricName kMetricNames[] = {
    {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", kSmActive},
    {"sm__warps_active.avg.pct_of_peak_sustained_active", kWarpsActive},
    {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", kTensorActive},
    {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed", kTensorActive},
    {"dram__throughput.avg.pct_of_peak_sustained_elapsed", kDram},
    {"gr__cycles_active.avg.pct_of_peak_sustained_elapsed", kGrActive},
};

int FindMetric(const char* name) {
  if (name == nullptr) return -1;
  for (const MetricName& m : kMetricNames)
    if (std::strcmp(m.name, name) == 0) return m.metric;
  return -1;
}

constexpr uint64_t kConfigMagic = 0x6b73696d70636667ull;  // "ksimpcfg"
constexpr uint64_t kImageMagic = 0x6b73696d70646174ull;   // "ksimpdat"
constexpr size_t kRawSampleBytes = 256;        // hardware-buffer bytes one sample takes
constexpr size_t kMaxHistory = size_t{1} << 16;  // activities kept per device

struct ImageHeader {
  uint64_t magic;
  uint64_t max_samples;
  uint64_t completed;
  uint64_t device;
};
struct ImageSample {
  uint64_t start;  // CUPTI timebase
  uint64_t end;
  double value[kNumMetrics];  // percent
};

struct HostObject {
  std::string chip;
  std::vector<int> metrics;
  // Borrowed, as the real libcupti borrows it: the client's availability image, read again at
  // every evaluation (so a client that freed it fails here, under ASan as a use-after-free).
  const uint8_t* availability = nullptr;
};

struct PmObject {
  size_t device = 0;
  bool configured = false;
  bool started = false;
  uint64_t interval_ns = 0;
  size_t hw_capacity = 0;  // samples the hardware buffer holds
  uint64_t start_mono = 0;
  uint64_t stop_mono = 0;  // 0 while running
  uint64_t decoded = 0;    // samples since start handed to an image (or lost)
  // Borrowed from cuptiPmSamplingSetConfig, never copied: the real libcupti decodes the
  // hardware buffer through the client's config image, and crashed on an H100 when a client
  // had freed it after SetConfig (docs/REAL_GPU.md). Read again at every decode.
  const uint8_t* config = nullptr;
};

struct PmState {
  std::mutex mu;
  bool profiler_initialized = false;
  std::set<PmObject*> objects;
  std::set<HostObject*> hosts;
  std::vector<std::deque<KSimPmActivity>> history;  // by device
  std::atomic<int> enabled{0};
  uint64_t dropped_activities = 0;
};

// The real libnvperf_host frees its host objects in its static destructors at exit; a
// cuptiProfilerHostDeinitialize after those ran double-frees and glibc aborts the process
// (seen on an H100: a window closing as the job exited). libcupti loads libnvperf_host at the
// first host initialize, so its destructors run before any exit handler registered earlier.
// This object stands for them: constructed at the first cuptiProfilerHostInitialize (so it is
// destroyed at the same point of exit()), and a host deinitialize after it aborts the same
// way, with a message saying why.
std::atomic<bool> g_exit_teardown_done{false};
struct ExitTeardown {
  ~ExitTeardown() { g_exit_teardown_done.store(true); }
};
void NoteHostLibraryLoaded() {
  static ExitTeardown teardown;
  (void)teardown;
}

PmState& State() {
  static PmState* s = new PmState();  // leaked: outlives clients that stop late
  return *s;
}

// KAIROS_SIM_PM_FAULT: the error cuptiPmSamplingEnable returns, or success.
CUptiResult ForcedEnableResult() {
  const std::string f = EnvOr("KAIROS_SIM_PM_FAULT", "");
  if (f == "privileges") return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  // Another profiler (Nsight Compute, DCGM) holds the PM hardware: cupti_result.h's "in use
  // by other client" code.
  if (f == "other_client") return CUPTI_ERROR_HARDWARE_BUSY;
  if (f == "unsupported") return CUPTI_ERROR_NOT_SUPPORTED;
  return CUPTI_SUCCESS;
}

// The values of one sample window on `device` (mu held).
void Evaluate(const PmState& st, size_t device, uint64_t a, uint64_t b, double* out) {
  double sm = 0, warps_weighted = 0, tensor = 0, dram = 0, busy = 0;
  if (device < st.history.size()) {
    for (const KSimPmActivity& act : st.history[device]) {
      const uint64_t lo = std::max(a, act.start_mono_ns), hi = std::min(b, act.end_mono_ns);
      if (hi <= lo) continue;
      const double w = static_cast<double>(hi - lo) / static_cast<double>(b - a);
      sm += w * act.sm_active;
      warps_weighted += w * act.sm_active * act.warps_active;
      tensor += w * act.tensor_active;
      dram += w * act.dram;
      busy += w;
    }
  }
  out[kSmActive] = 100.0 * std::min(1.0, sm);
  // pct_of_peak_sustained_active: averaged over the cycles the SMs were active.
  out[kWarpsActive] = sm > 0 ? 100.0 * std::min(1.0, warps_weighted / sm) : 0.0;
  out[kTensorActive] = 100.0 * std::min(1.0, tensor);
  out[kDram] = 100.0 * std::min(1.0, dram);
  out[kGrActive] = 100.0 * std::min(1.0, busy);
}

// Drops history no running object can still sample (mu held).
void Prune(PmState& st) {
  for (size_t d = 0; d < st.history.size(); ++d) {
    uint64_t keep_from = UINT64_MAX;
    for (const PmObject* o : st.objects)
      if (o->device == d && o->started) keep_from = std::min(keep_from, o->start_mono + o->decoded * o->interval_ns);
    auto& h = st.history[d];
    while (!h.empty() && (h.front().end_mono_ns < keep_from || keep_from == UINT64_MAX)) h.pop_front();
  }
}

template <typename P>
bool BadStruct(const P* p) {
  return p == nullptr || p->structSize == 0;
}

}  // namespace
}  // namespace kairos::sim

using kairos::sim::Core;
using kairos::sim::Fail;
using namespace kairos::sim;  // NOLINT: file-local helpers above

KSIM_API void KSimPmNote(const KSimPmActivity* activity) {
  PmState& st = State();
  if (st.enabled.load(std::memory_order_relaxed) == 0 || activity == nullptr || activity->device < 0) return;
  std::lock_guard<std::mutex> lock(st.mu);
  const size_t d = static_cast<size_t>(activity->device);
  bool wanted = false;
  for (const PmObject* o : st.objects) wanted |= o->device == d;
  if (!wanted) return;
  if (st.history.size() <= d) st.history.resize(d + 1);
  auto& h = st.history[d];
  if (h.size() >= kMaxHistory) {
    h.pop_front();
    ++st.dropped_activities;
  }
  h.push_back(*activity);
}

KSIM_PUBLIC CUptiResult cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiProfilerInitialize");
  if (BadStruct(p)) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(State().mu);
  State().profiler_initialized = true;
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiProfilerDeInitialize");
  if (BadStruct(p)) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(State().mu);
  State().profiler_initialized = false;
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiDeviceGetChipName");
  if (BadStruct(p)) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  p->pChipName = "GH100";  // the sim's default device (H100)
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiPmSamplingEnable(CUpti_PmSampling_Enable_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiPmSamplingEnable");
  if (BadStruct(p)) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  PmState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  if (!st.profiler_initialized) return Fail(CUPTI_ERROR_NOT_INITIALIZED);
  if (CUptiResult r = ForcedEnableResult(); r != CUPTI_SUCCESS) return Fail(r);
  // One PM-sampling session per device; cupti_pmsampling.h documents a second Enable as
  // CUPTI_ERROR_INVALID_OPERATION ("already enabled on the device").
  for (const PmObject* o : st.objects)
    if (o->device == p->deviceIndex) return Fail(CUPTI_ERROR_INVALID_OPERATION);
  auto* o = new PmObject();
  o->device = p->deviceIndex;
  st.objects.insert(o);
  st.enabled.fetch_add(1);
  p->pPmSamplingObject = reinterpret_cast<CUpti_PmSampling_Object*>(o);
  return CUPTI_SUCCESS;
}

namespace {
PmObject* FindObject(CUpti_PmSampling_Object* h) {
  auto* o = reinterpret_cast<PmObject*>(h);
  return State().objects.count(o) != 0 ? o : nullptr;
}
}  // namespace

KSIM_PUBLIC CUptiResult cuptiPmSamplingDisable(CUpti_PmSampling_Disable_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiPmSamplingDisable");
  if (BadStruct(p)) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  PmState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  PmObject* o = FindObject(p->pPmSamplingObject);
  if (o == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  st.objects.erase(o);
  st.enabled.fetch_sub(1);
  delete o;
  Prune(st);
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiPmSamplingGetCounterAvailability(CUpti_PmSampling_GetCounterAvailability_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiPmSamplingGetCounterAvailability");
  if (BadStruct(p)) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  constexpr size_t kSize = 64;
  if (p->pCounterAvailabilityImage == nullptr) {
    p->counterAvailabilityImageSize = kSize;
    return CUPTI_SUCCESS;
  }
  if (p->counterAvailabilityImageSize < kSize) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::memset(p->pCounterAvailabilityImage, 0xff, kSize);  // every counter available
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiProfilerHostInitialize");
  if (BadStruct(p) || p->pChipName == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (p->profilerType != CUPTI_PROFILER_TYPE_PM_SAMPLING && p->profilerType != CUPTI_PROFILER_TYPE_RANGE_PROFILER)
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  NoteHostLibraryLoaded();
  auto* h = new HostObject();
  h->chip = p->pChipName;
  h->availability = p->pCounterAvailabilityImage;
  std::lock_guard<std::mutex> lock(State().mu);
  State().hosts.insert(h);
  p->pHostObject = reinterpret_cast<CUpti_Profiler_Host_Object*>(h);
  return CUPTI_SUCCESS;
}

namespace {
HostObject* FindHost(CUpti_Profiler_Host_Object* h) {
  auto* o = reinterpret_cast<HostObject*>(h);
  return State().hosts.count(o) != 0 ? o : nullptr;
}
}  // namespace

KSIM_PUBLIC CUptiResult cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiProfilerHostDeinitialize");
  if (g_exit_teardown_done.load()) {
    std::fprintf(stderr, "[kairos-sim] cuptiProfilerHostDeinitialize after libcupti's exit "
                         "teardown: the real libnvperf_host double-frees here (abort)\n");
    std::abort();
  }
  if (BadStruct(p)) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(State().mu);
  HostObject* h = FindHost(p->pHostObject);
  if (h == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  State().hosts.erase(h);
  delete h;
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiProfilerHostConfigAddMetrics");
  if (BadStruct(p) || (p->numMetrics > 0 && p->ppMetricNames == nullptr)) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(State().mu);
  HostObject* h = FindHost(p->pHostObject);
  if (h == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::vector<int> add;
  for (size_t i = 0; i < p->numMetrics; ++i) {
    const int m = FindMetric(p->ppMetricNames[i]);
    if (m < 0) {
      KSIM_DIAG("cuptiProfilerHostConfigAddMetrics: unknown metric %s", p->ppMetricNames[i]);
      return Fail(CUPTI_ERROR_INVALID_METRIC_NAME);
    }
    add.push_back(m);
  }
  for (int m : add)
    if (std::find(h->metrics.begin(), h->metrics.end(), m) == h->metrics.end()) h->metrics.push_back(m);
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiProfilerHostGetConfigImageSize");
  if (BadStruct(p)) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(State().mu);
  HostObject* h = FindHost(p->pHostObject);
  if (h == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  p->configImageSize = 2 * sizeof(uint64_t) + h->metrics.size() * sizeof(uint64_t);
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiProfilerHostGetConfigImage");
  if (BadStruct(p) || p->pConfigImage == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(State().mu);
  HostObject* h = FindHost(p->pHostObject);
  if (h == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::vector<uint64_t> words{kConfigMagic, h->metrics.size()};
  for (int m : h->metrics) words.push_back(static_cast<uint64_t>(m));
  if (p->configImageSize < words.size() * sizeof(uint64_t)) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::memcpy(p->pConfigImage, words.data(), words.size() * sizeof(uint64_t));
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiProfilerHostGetNumOfPasses");
  if (BadStruct(p) || p->pConfigImage == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  p->numOfPasses = 1;  // every simulated metric fits one pass
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiPmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiPmSamplingSetConfig");
  if (BadStruct(p) || p->pConfig == nullptr || p->configSize < 2 * sizeof(uint64_t) || p->samplingInterval == 0)
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  uint64_t magic = 0;
  std::memcpy(&magic, p->pConfig, sizeof magic);
  if (magic != kConfigMagic) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (p->triggerMode != CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL &&
      p->triggerMode != CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_SYSCLK_INTERVAL)
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(State().mu);
  PmObject* o = FindObject(p->pPmSamplingObject);
  if (o == nullptr || o->started) return Fail(o == nullptr ? CUPTI_ERROR_INVALID_PARAMETER : CUPTI_ERROR_INVALID_OPERATION);
  o->interval_ns = p->samplingInterval;
  o->config = p->pConfig;
  if (p->triggerMode == CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_SYSCLK_INTERVAL)
    o->interval_ns = std::max<uint64_t>(1, p->samplingInterval / 2);  // a ~2 GHz clock, in cycles
  o->hw_capacity = std::max<size_t>(1, p->hardwareBufferSize / kRawSampleBytes);
  o->configured = true;
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiPmSamplingStart(CUpti_PmSampling_Start_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiPmSamplingStart");
  // KAIROS_SIM_PM_START_DELAY_MS: the process's first start is slow, as the real one's first
  // PM session is (libnvperf_host loads and the PM hardware is programmed); samples begin
  // when the call returns.
  static std::atomic<bool> first_start{true};
  if (first_start.exchange(false)) {
    const int ms = kairos::sim::EnvInt("KAIROS_SIM_PM_START_DELAY_MS", 0);
    if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }
  if (BadStruct(p)) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(State().mu);
  PmObject* o = FindObject(p->pPmSamplingObject);
  if (o == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (!o->configured || o->started) return Fail(CUPTI_ERROR_INVALID_OPERATION);
  o->started = true;
  o->start_mono = MonoNowNs();
  o->stop_mono = 0;
  o->decoded = 0;
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiPmSamplingStop(CUpti_PmSampling_Stop_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiPmSamplingStop");
  if (BadStruct(p)) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(State().mu);
  PmObject* o = FindObject(p->pPmSamplingObject);
  if (o == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (!o->started || o->stop_mono != 0) return Fail(CUPTI_ERROR_INVALID_OPERATION);
  o->stop_mono = MonoNowNs();  // samples completed before now stay decodable
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiPmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiPmSamplingGetCounterDataSize");
  if (BadStruct(p) || p->maxSamples == 0 || (p->numMetrics > 0 && p->pMetricNames == nullptr))
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  for (size_t i = 0; i < p->numMetrics; ++i)
    if (FindMetric(p->pMetricNames[i]) < 0) return Fail(CUPTI_ERROR_INVALID_METRIC_NAME);
  std::lock_guard<std::mutex> lock(State().mu);
  if (FindObject(p->pPmSamplingObject) == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  p->counterDataSize = sizeof(ImageHeader) + size_t{p->maxSamples} * sizeof(ImageSample);
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiPmSamplingCounterDataImageInitialize(
    CUpti_PmSampling_CounterDataImage_Initialize_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiPmSamplingCounterDataImageInitialize");
  if (BadStruct(p) || p->pCounterData == nullptr || p->counterDataSize < sizeof(ImageHeader) + sizeof(ImageSample))
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(State().mu);
  PmObject* o = FindObject(p->pPmSamplingObject);
  if (o == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  ImageHeader h{kImageMagic, (p->counterDataSize - sizeof(ImageHeader)) / sizeof(ImageSample), 0, o->device};
  std::memset(p->pCounterData, 0, p->counterDataSize);
  std::memcpy(p->pCounterData, &h, sizeof h);
  return CUPTI_SUCCESS;
}

namespace {
bool ReadHeader(const uint8_t* image, size_t size, ImageHeader* h) {
  if (image == nullptr || size < sizeof(ImageHeader)) return false;
  std::memcpy(h, image, sizeof *h);
  return h->magic == kImageMagic && h->completed <= h->max_samples &&
         size >= sizeof(ImageHeader) + h->max_samples * sizeof(ImageSample);
}
}  // namespace

KSIM_PUBLIC CUptiResult cuptiPmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiPmSamplingDecodeData");
  if (BadStruct(p)) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  PmState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  PmObject* o = FindObject(p->pPmSamplingObject);
  ImageHeader h;
  if (o == nullptr || !ReadHeader(p->pCounterDataImage, p->counterDataImageSize, &h))
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (!o->started) return Fail(CUPTI_ERROR_INVALID_OPERATION);
  uint64_t config_magic = 0;
  if (o->config != nullptr) std::memcpy(&config_magic, o->config, sizeof config_magic);
  if (config_magic != kConfigMagic) {
    std::fprintf(stderr, "[kairos-sim] cuptiPmSamplingDecodeData: the config image given to "
                         "cuptiPmSamplingSetConfig was freed or overwritten (the real CUPTI "
                         "crashes here)\n");
    return Fail(CUPTI_ERROR_UNKNOWN);
  }
  p->overflow = 0;
  const uint64_t until = o->stop_mono != 0 ? o->stop_mono : MonoNowNs();
  const uint64_t completed = (until - o->start_mono) / o->interval_ns;
  // The hardware buffer holds hw_capacity samples; older undecoded ones are overwritten.
  if (completed - o->decoded > o->hw_capacity) {
    p->overflow = 1;
    o->decoded = completed - o->hw_capacity;
  }
  while (o->decoded < completed && h.completed < h.max_samples) {
    ImageSample s;
    const uint64_t a = o->start_mono + o->decoded * o->interval_ns;
    const uint64_t b = a + o->interval_ns;
    s.start = KSimToCuptiTime(a);
    s.end = KSimToCuptiTime(b);
    Evaluate(st, o->device, a, b, s.value);
    std::memcpy(p->pCounterDataImage + sizeof(ImageHeader) + h.completed * sizeof(ImageSample), &s, sizeof s);
    ++h.completed;
    ++o->decoded;
  }
  std::memcpy(p->pCounterDataImage, &h, sizeof h);
  p->decodeStopReason = o->decoded < completed ? CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL
                                               : CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
  Prune(st);
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiPmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiPmSamplingGetCounterDataInfo");
  ImageHeader h;
  if (BadStruct(p) || !ReadHeader(p->pCounterDataImage, p->counterDataImageSize, &h))
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  p->numTotalSamples = h.max_samples;
  p->numPopulatedSamples = h.completed;
  p->numCompletedSamples = h.completed;
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiPmSamplingCounterDataGetSampleInfo(CUpti_PmSampling_CounterData_GetSampleInfo_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiPmSamplingCounterDataGetSampleInfo");
  ImageHeader h;
  if (BadStruct(p) || !ReadHeader(p->pCounterDataImage, p->counterDataImageSize, &h) || p->sampleIndex >= h.completed)
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  ImageSample s;
  std::memcpy(&s, p->pCounterDataImage + sizeof(ImageHeader) + p->sampleIndex * sizeof(ImageSample), sizeof s);
  p->startTimestamp = s.start;
  p->endTimestamp = s.end;
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
  KSIM_CUPTI_ENTRY("cuptiProfilerHostEvaluateToGpuValues");
  ImageHeader h;
  if (BadStruct(p) || p->pMetricValues == nullptr || (p->numMetrics > 0 && p->ppMetricNames == nullptr) ||
      !ReadHeader(p->pCounterDataImage, p->counterDataImageSize, &h) || p->rangeIndex >= h.completed)
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(State().mu);
  HostObject* host = FindHost(p->pHostObject);
  if (host == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (host->availability != nullptr && host->availability[0] != 0xff) {
    std::fprintf(stderr, "[kairos-sim] cuptiProfilerHostEvaluateToGpuValues: the counter "
                         "availability image given to cuptiProfilerHostInitialize was freed or "
                         "overwritten\n");
    return Fail(CUPTI_ERROR_UNKNOWN);
  }
  ImageSample s;
  std::memcpy(&s, p->pCounterDataImage + sizeof(ImageHeader) + p->rangeIndex * sizeof(ImageSample), sizeof s);
  for (size_t i = 0; i < p->numMetrics; ++i) {
    const int m = FindMetric(p->ppMetricNames[i]);
    // Only metrics in the configuration were collected.
    if (m < 0 || std::find(host->metrics.begin(), host->metrics.end(), m) == host->metrics.end())
      return Fail(CUPTI_ERROR_INVALID_METRIC_NAME);
    p->pMetricValues[i] = s.value[m];
  }
  return CUPTI_SUCCESS;
}
