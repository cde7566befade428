// File: test/sim/src/cupti_core.h
// Layer: CUDA/CUPTI simulator, substitute libcupti.so.13: shared state.
// Threading: the state is a leaked process-wide singleton; every member is
//            atomic or guarded by its own mutex.
//
// Holds what CUPTI keeps per process: enabled kinds, per-cbid API filters,
// the single callback subscriber, the timebase, the activity store and the
// fault knobs read from the environment (docs/SIMULATOR.md lists them).
#ifndef KAIROS_TEST_SIM_SRC_CUPTI_CORE_H_
#define KAIROS_TEST_SIM_SRC_CUPTI_CORE_H_

#include <cupti.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cupti_store.h"
#include "cupti_timebase.h"

namespace kairos::sim {

constexpr size_t kMaxCbid = 1024;
constexpr int kNumDomains = CUPTI_CB_DOMAIN_SIZE;

struct CuptiCore {
  CuptiCore();

  // Fault knob KAIROS_SIM_CUPTI_FAIL="name=code,...": the forced result for a
  // CUPTI entry point, or CUPTI_SUCCESS.
  CUptiResult ForcedResult(const char* function) const;

  std::atomic<uint8_t> kinds[CUPTI_ACTIVITY_KIND_COUNT];
  std::atomic<uint8_t> runtime_filter[kMaxCbid];
  std::atomic<uint8_t> driver_filter[kMaxCbid];
  std::atomic<bool> latency_timestamps{false};
  std::atomic<bool> event_device_timestamps{false};
  std::atomic<int> thread_id_type{CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT};

  // Timebase: the client's timestamp callback (sampled for CPU-side records, fitted for
  // GPU records) or CLOCK_REALTIME ns.
  Timebase timebase;

  // Callback API: at most one subscriber.
  std::mutex subscriber_mu;
  std::atomic<CUpti_CallbackFunc> subscriber_callback{nullptr};
  std::atomic<void*> subscriber_userdata{nullptr};
  std::atomic<uint8_t> callback_enabled[kNumDomains][kMaxCbid];
  std::string subscriber_name;
  std::string other_subscriber;  // KAIROS_SIM_CUPTI_OTHER_SUBSCRIBER

  std::atomic<uint32_t> next_correlation{1};
  std::atomic<CUptiResult> last_error{CUPTI_SUCCESS};
  std::atomic<void (*)()> context_replay{nullptr};

  // Activity attributes (stored and returned; the simulator has no device
  // buffers so only the values matter).
  std::mutex attr_mu;
  std::map<int, size_t> size_attrs;
  std::map<int, uint8_t> byte_attrs;

  ActivityStore store;

 private:
  std::map<std::string, int> forced_;
  int forced_all_ = 0;
};

CuptiCore& Core();

// The calling thread's external-correlation stack for `kind`.
std::vector<uint64_t>* ExternalStack(int kind);

}  // namespace kairos::sim

#endif  // KAIROS_TEST_SIM_SRC_CUPTI_CORE_H_
