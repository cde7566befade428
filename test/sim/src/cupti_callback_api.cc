// File: test/sim/src/cupti_callback_api.cc
// Layer: CUDA/CUPTI simulator, substitute libcupti.so.13: callback API
//        (subscribe with the single-subscriber rule, enable, callback names).
// Threading: every function is safe to call from any thread, as in CUPTI.
#include <cupti.h>

#include <cstring>
#include <mutex>
#include <string>

#include "cupti_core.h"
#include "cupti_entry.h"
#include "sim_common.h"

using kairos::sim::Core;
using kairos::sim::CuptiCore;
using kairos::sim::Fail;

namespace {

#include "cbid_names.inc"

void IgnoreCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

}  // namespace

KSIM_PUBLIC CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                          void* userdata, CUpti_SubscriberParams* params) {
  KSIM_CUPTI_ENTRY("cuptiSubscribe");
  if (subscriber == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  CuptiCore& core = Core();
  std::lock_guard<std::mutex> lock(core.subscriber_mu);
  const std::string& holder =
      !core.other_subscriber.empty() ? core.other_subscriber
                                     : (core.subscriber_callback.load() != nullptr || !core.subscriber_name.empty()
                                            ? core.subscriber_name
                                            : std::string());
  bool taken = !core.other_subscriber.empty() || core.subscriber_callback.load() != nullptr;
  if (taken) {
    *subscriber = nullptr;
    if (params != nullptr && params->oldSubscriberName != nullptr && params->oldSubscriberSize > 0) {
      std::string name = "CUPTI for " + (holder.empty() ? std::string("unknown") : holder);
      std::strncpy(params->oldSubscriberName, name.c_str(), params->oldSubscriberSize - 1);
      params->oldSubscriberName[params->oldSubscriberSize - 1] = '\0';
    }
    KSIM_DIAG("cuptiSubscribe: another subscriber is registered (%s)", holder.c_str());
    return Fail(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  }
  core.subscriber_name = (params != nullptr && params->subscriberName != nullptr)
                             ? std::string(params->subscriberName).substr(0, CUPTI_SUBSCRIBER_NAME_MAX_LEN)
                             : std::string("unnamed");
  for (int d = 0; d < kairos::sim::kNumDomains; ++d) {
    for (size_t i = 0; i < kairos::sim::kMaxCbid; ++i) core.callback_enabled[d][i].store(0);
  }
  core.subscriber_userdata.store(userdata);
  // A NULL callback still owns the subscription (real CUPTI allows it).
  core.subscriber_callback.store(callback != nullptr ? callback : &IgnoreCallback);
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&core.subscriber_callback);
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                       void* userdata) {
  return cuptiSubscribe_v2(subscriber, callback, userdata, nullptr);
}

namespace {

bool ValidSubscriber(CUpti_SubscriberHandle subscriber) {
  return subscriber != nullptr &&
         subscriber == reinterpret_cast<CUpti_SubscriberHandle>(&Core().subscriber_callback) &&
         Core().subscriber_callback.load() != nullptr;
}

size_t DomainSize(CUpti_CallbackDomain domain) {
  switch (domain) {
    case CUPTI_CB_DOMAIN_DRIVER_API: return CUPTI_DRIVER_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RUNTIME_API: return CUPTI_RUNTIME_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RESOURCE: return CUPTI_CBID_RESOURCE_SIZE;
    case CUPTI_CB_DOMAIN_SYNCHRONIZE: return CUPTI_CBID_SYNCHRONIZE_SIZE;
    case CUPTI_CB_DOMAIN_NVTX: return CUPTI_CBID_NVTX_SIZE;
    case CUPTI_CB_DOMAIN_STATE: return CUPTI_CBID_STATE_SIZE;
    default: return 0;
  }
}

}  // namespace

KSIM_PUBLIC CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  KSIM_CUPTI_ENTRY("cuptiUnsubscribe");
  CuptiCore& core = Core();
  std::lock_guard<std::mutex> lock(core.subscriber_mu);
  if (!ValidSubscriber(subscriber)) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  core.subscriber_callback.store(nullptr);
  core.subscriber_userdata.store(nullptr);
  core.subscriber_name.clear();
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                            CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  KSIM_CUPTI_ENTRY("cuptiEnableCallback");
  if (!ValidSubscriber(subscriber) || cbid >= DomainSize(domain) || cbid >= kairos::sim::kMaxCbid) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  Core().callback_enabled[domain][cbid].store(enable != 0);
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                          CUpti_CallbackDomain domain) {
  KSIM_CUPTI_ENTRY("cuptiEnableDomain");
  size_t n = DomainSize(domain);
  if (!ValidSubscriber(subscriber) || n == 0) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  for (size_t i = 0; i < n && i < kairos::sim::kMaxCbid; ++i) {
    Core().callback_enabled[domain][i].store(enable != 0);
  }
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber) {
  KSIM_CUPTI_ENTRY("cuptiEnableAllDomains");
  if (!ValidSubscriber(subscriber)) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  for (int d = CUPTI_CB_DOMAIN_DRIVER_API; d < CUPTI_CB_DOMAIN_SIZE; ++d) {
    size_t n = DomainSize(static_cast<CUpti_CallbackDomain>(d));
    for (size_t i = 0; i < n && i < kairos::sim::kMaxCbid; ++i) Core().callback_enabled[d][i].store(enable != 0);
  }
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiGetCallbackState(uint32_t* enable, CUpti_SubscriberHandle subscriber,
                                              CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  KSIM_CUPTI_ENTRY("cuptiGetCallbackState");
  if (enable == nullptr || !ValidSubscriber(subscriber) || cbid >= DomainSize(domain) ||
      cbid >= kairos::sim::kMaxCbid) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  *enable = Core().callback_enabled[domain][cbid].load();
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiSupportedDomains(size_t* count, CUpti_DomainTable* table) {
  KSIM_CUPTI_ENTRY("cuptiSupportedDomains");
  static const CUpti_CallbackDomain kDomains[] = {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API,
                                                  CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CB_DOMAIN_SYNCHRONIZE,
                                                  CUPTI_CB_DOMAIN_NVTX, CUPTI_CB_DOMAIN_STATE};
  if (count == nullptr || table == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *count = sizeof(kDomains) / sizeof(kDomains[0]);
  *table = const_cast<CUpti_CallbackDomain*>(kDomains);
  return CUPTI_SUCCESS;
}

KSIM_PUBLIC CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  KSIM_CUPTI_ENTRY("cuptiGetCallbackName");
  if (name == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  const char* const* table = nullptr;
  size_t n = 0;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    table = kRuntimeCbidNames;
    n = sizeof(kRuntimeCbidNames) / sizeof(kRuntimeCbidNames[0]);
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    table = kDriverCbidNames;
    n = sizeof(kDriverCbidNames) / sizeof(kDriverCbidNames[0]);
  } else {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  if (cbid >= n || table[cbid] == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *name = table[cbid];
  return CUPTI_SUCCESS;
}
