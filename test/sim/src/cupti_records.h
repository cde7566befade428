// File: test/sim/src/cupti_records.h
// Layer: CUDA/CUPTI simulator, substitute libcupti.so.13: record geometry.
// Threading: pure functions.
//
// The stride of every activity kind in CUDA 13.0 U1 (the "current" struct of
// cupti_activity.h) and which fields of a GPU record are timestamps.
#ifndef KAIROS_TEST_SIM_SRC_CUPTI_RECORDS_H_
#define KAIROS_TEST_SIM_SRC_CUPTI_RECORDS_H_

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kairos::sim {

// 0 for kinds that have no record in CUDA 13 (legacy) or are unknown.
inline size_t RecordSize(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
    case CUPTI_ACTIVITY_KIND_NAME: return sizeof(CUpti_ActivityName);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: return sizeof(CUpti_ActivityMarkerData2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_CDP_KERNEL: return sizeof(CUpti_ActivityCdpKernel);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: return sizeof(CUpti_ActivityCudaEvent2);
    case CUPTI_ACTIVITY_KIND_STREAM: return sizeof(CUpti_ActivityStream);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_MEMORY: return sizeof(CUpti_ActivityMemory);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return sizeof(CUpti_ActivityMemoryPool3);
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: return sizeof(CUpti_ActivityGraphTrace2);
    case CUPTI_ACTIVITY_KIND_DEVICE_GRAPH_TRACE: return sizeof(CUpti_ActivityDeviceGraphTrace);
    case CUPTI_ACTIVITY_KIND_JIT: return sizeof(CUpti_ActivityJit2);
    default: return 0;
  }
}

// Clears the timing fields of a GPU record that is handed out before its
// simulated end (forced flush): CUPTI_TIMESTAMP_UNKNOWN is 0.
inline void ClearGpuTimestamps(uint8_t* record) {
  uint32_t kind;
  std::memcpy(&kind, record, sizeof(kind));
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(record);
      k->start = k->end = k->completed = 0;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto* m = reinterpret_cast<CUpti_ActivityMemcpy6*>(record);
      m->start = m->end = 0;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      auto* m = reinterpret_cast<CUpti_ActivityMemcpyPtoP4*>(record);
      m->start = m->end = 0;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto* m = reinterpret_cast<CUpti_ActivityMemset4*>(record);
      m->start = m->end = 0;
      break;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
      auto* g = reinterpret_cast<CUpti_ActivityGraphTrace2*>(record);
      g->start = g->end = 0;
      break;
    }
    default:
      break;
  }
}

// Maps the timing fields of a completed GPU record (written in CLOCK_MONOTONIC ns by the
// runtime) into the CUPTI timebase with `to_cupti`; zero fields stay zero (not set).
template <typename F>
void ConvertGpuTimestamps(uint8_t* record, F&& to_cupti) {
  // Packed fields cannot bind to references: read and write them by value.
#define KSIM_CONV(field)                          \
  do {                                            \
    uint64_t t_ = (field);                        \
    if (t_ != 0) (field) = to_cupti(t_);          \
  } while (0)
  uint32_t kind;
  std::memcpy(&kind, record, sizeof(kind));
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(record);
      KSIM_CONV(k->start);
      KSIM_CONV(k->end);
      KSIM_CONV(k->completed);
      KSIM_CONV(k->queued);
      KSIM_CONV(k->submitted);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto* m = reinterpret_cast<CUpti_ActivityMemcpy6*>(record);
      KSIM_CONV(m->start);
      KSIM_CONV(m->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      auto* m = reinterpret_cast<CUpti_ActivityMemcpyPtoP4*>(record);
      KSIM_CONV(m->start);
      KSIM_CONV(m->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto* m = reinterpret_cast<CUpti_ActivityMemset4*>(record);
      KSIM_CONV(m->start);
      KSIM_CONV(m->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
      auto* g = reinterpret_cast<CUpti_ActivityGraphTrace2*>(record);
      KSIM_CONV(g->start);
      KSIM_CONV(g->end);
      break;
    }
    default:
      break;
  }
#undef KSIM_CONV
}

}  // namespace kairos::sim

#endif  // KAIROS_TEST_SIM_SRC_CUPTI_RECORDS_H_
