// File: cupti_records.h
// Layer: test helper. Builds CUDA 13.0 CUPTI activity buffers from the real structs of
// cupti_activity.h, record after record as CUPTI lays them out, and a fake
// cuptiGetCallbackName with the header's names.
// Threading: single-threaded test code.
#ifndef KAIROS_TEST_ACTIVITY_CUPTI_RECORDS_H_
#define KAIROS_TEST_ACTIVITY_CUPTI_RECORDS_H_

#include <cupti.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace kairos::testing {

class RecordBuffer {
 public:
  template <typename T>
  T& Add(const T& record) {
    const size_t off = size_;
    size_ += sizeof(T);
    storage_.resize((size_ + 7) / 8);
    std::memcpy(data() + off, &record, sizeof(T));
    return *reinterpret_cast<T*>(data() + off);
  }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(storage_.data()); }
  size_t size() const { return size_; }

 private:
  std::vector<uint64_t> storage_;  // 8-byte aligned like CUPTI buffers
  size_t size_ = 0;
};

template <typename T>
T Zero() {
  T v;
  std::memset(&v, 0, sizeof(T));
  return v;
}

inline CUpti_ActivityKernel10 Kernel(uint32_t corr, uint64_t start, uint64_t end,
                                     const char* name, uint32_t device = 0,
                                     uint32_t stream = 7, int32_t grid_x = 4096) {
  auto k = Zero<CUpti_ActivityKernel10>();
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.completed = end;
  k.deviceId = device;
  k.contextId = 1;
  k.streamId = stream;
  k.gridX = grid_x;
  k.gridY = 1;
  k.gridZ = 1;
  k.blockX = 128;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 31;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 2048;
  k.correlationId = corr;
  k.name = name;
  k.channelID = 3;
  k.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
  return k;
}

inline CUpti_ActivityAPI Api(CUpti_ActivityKind kind, uint32_t cbid, uint32_t corr,
                             uint64_t start, uint64_t end, uint32_t tid = 1234) {
  auto a = Zero<CUpti_ActivityAPI>();
  a.kind = kind;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.processId = 99;
  a.threadId = tid;
  a.correlationId = corr;
  return a;
}

inline CUpti_ActivityAPI Runtime(uint32_t cbid, uint32_t corr, uint64_t start, uint64_t end,
                                 uint32_t tid = 1234) {
  return Api(CUPTI_ACTIVITY_KIND_RUNTIME, cbid, corr, start, end, tid);
}

inline CUpti_ActivityMemcpy6 Memcpy(uint32_t corr, uint64_t start, uint64_t end,
                                    uint64_t bytes, uint32_t stream = 7) {
  auto m = Zero<CUpti_ActivityMemcpy6>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = bytes;
  m.start = start;
  m.end = end;
  m.deviceId = 0;
  m.contextId = 1;
  m.streamId = stream;
  m.runtimeCorrelationId = corr;
  m.correlationId = corr + 100000;  // the driver call's id differs from the runtime's
  return m;
}

inline CUpti_ActivityMemset4 Memset(uint32_t corr, uint64_t start, uint64_t end,
                                    uint64_t bytes) {
  auto m = Zero<CUpti_ActivityMemset4>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.bytes = bytes;
  m.start = start;
  m.end = end;
  m.contextId = 1;
  m.streamId = 7;
  m.correlationId = corr;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  return m;
}

inline CUpti_ActivityExternalCorrelation External(uint32_t corr, uint64_t id) {
  auto e = Zero<CUpti_ActivityExternalCorrelation>();
  e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
  e.externalId = id;
  e.correlationId = corr;
  return e;
}

// cuptiGetCallbackName for the cbids the tests use (names as in the CUDA 13 headers).
inline CUptiResult FakeCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                    const char** name) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
      case 20: *name = "cudaMalloc_v3020"; return CUPTI_SUCCESS;
      case 41: *name = "cudaMemcpyAsync_v3020"; return CUPTI_SUCCESS;
      case 51: *name = "cudaMemsetAsync_v3020"; return CUPTI_SUCCESS;
      case 131: *name = "cudaStreamSynchronize_v3020"; return CUPTI_SUCCESS;
      case 211: *name = "cudaLaunchKernel_v7000"; return CUPTI_SUCCESS;
      case 311: *name = "cudaGraphLaunch_v10000"; return CUPTI_SUCCESS;
      case 505: *name = "__cudaLaunchKernel_v13000"; return CUPTI_SUCCESS;
    }
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    switch (cbid) {
      case 307: *name = "cuLaunchKernel"; return CUPTI_SUCCESS;
    }
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

}  // namespace kairos::testing

#endif  // KAIROS_TEST_ACTIVITY_CUPTI_RECORDS_H_
