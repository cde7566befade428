// File: test/sim/src/sim_private.h
// Layer: CUDA/CUPTI simulator; the private interface from the substitute
//        libcudart.so.13 into the substitute libcupti.so.13.
// Threading: every function may be called from any thread concurrently.
//
// Real CUPTI learns about runtime calls and GPU work through private driver
// hooks. The simulator's libcudart links libcupti.so.13 (the substitute) and
// reports each API call and each finished piece of GPU work through these
// functions; libcupti turns them into callbacks and activity records. The
// names are exported (version node libcupti.so.13) but are not part of any
// public API: nothing outside test/sim may call them.
#ifndef KAIROS_TEST_SIM_SRC_SIM_PRIVATE_H_
#define KAIROS_TEST_SIM_SRC_SIM_PRIVATE_H_

#include <cupti.h>

#include <cstddef>
#include <cstdint>

#define KSIM_API extern "C" __attribute__((visibility("default")))

// The opaque CUDA handles the simulator hands out point at objects that start
// with these headers, so libcupti can answer cuptiGetContextId & co.
constexpr uint32_t kKSimContextMagic = 0x4b534358;  // "KSCX"
constexpr uint32_t kKSimStreamMagic = 0x4b535354;   // "KSST"
constexpr uint32_t kKSimGraphMagic = 0x4b534752;    // "KSGR"
struct KSimContextHeader {
  uint32_t magic;
  uint32_t context_id;
  uint32_t device_id;
  uint32_t null_stream_id;
};
struct KSimStreamHeader {
  uint32_t magic;
  uint32_t stream_id;
  uint32_t context_id;
  uint32_t reserved;
};
struct KSimGraphHeader {  // cudaGraph_t and cudaGraphExec_t
  uint32_t magic;
  uint32_t graph_id;
};

// One runtime (or nested driver) API call in flight.
struct KSimApiCall {
  CUpti_CallbackDomain domain;  // CUPTI_CB_DOMAIN_RUNTIME_API or _DRIVER_API
  CUpti_CallbackId cbid;
  const char* function_name;  // unversioned, e.g. "cudaLaunchKernel"
  const void* params;         // the *_params struct of the meta headers, or NULL
  const char* symbol_name;    // kernel name for launches, else NULL
  CUcontext context;
  uint32_t context_uid;
  // Filled by KSimApiEnter:
  uint32_t correlation_id;
  uint64_t start_mono_ns;
  uint64_t start_cupti;  // CUPTI timebase (client callback) at entry
  uint64_t correlation_data;
  // Set by the runtime before KSimApiExit:
  int return_value;
};

// Assigns the correlation id (nested calls pass `parent_correlation` != 0 to
// share it, as the driver call under a runtime call does), stamps the start
// time and fires the ENTER callback.
KSIM_API void KSimApiEnter(KSimApiCall* call, uint32_t parent_correlation);
// Stamps the end time, fires the EXIT callback and writes the external
// correlation and API records when their kinds are enabled.
KSIM_API void KSimApiExit(KSimApiCall* call);

// True when `kind` is enabled, so the runtime can skip building records.
KSIM_API int KSimKindEnabled(CUpti_ActivityKind kind);
// Whether kernel queued/submitted stamps were requested.
KSIM_API int KSimLatencyTimestamps(void);
// Converts a simulator (CLOCK_MONOTONIC) time to the CUPTI timebase (CLOCK_REALTIME, or
// the client's timestamp callback, through a refreshed linear fit).
KSIM_API uint64_t KSimToCuptiTime(uint64_t mono_ns);
// The CUPTI timestamp now (the client's callback called now): for CPU-side records.
KSIM_API uint64_t KSimCuptiNow(void);

// Queues a GPU-side record (kernel, memcpy, memset, graph trace) whose timestamp
// fields hold CLOCK_MONOTONIC ns. It becomes "complete" and deliverable once the
// monotonic clock passes `complete_mono_ns`; its timestamps are then converted
// into the CUPTI timebase (CUPTI's post-processing). A forced flush delivers it
// earlier with its timestamps zeroed (CUPTI_TIMESTAMP_UNKNOWN), as real CUPTI
// does for incomplete records.
KSIM_API void KSimEmitGpuRecord(const void* record, size_t size, uint64_t complete_mono_ns);
// Writes a CPU-side record (memory, device, context, synchronization) now.
KSIM_API void KSimEmitRecord(const void* record, size_t size);

// Resource and synchronize domain callbacks.
KSIM_API void KSimResourceCallback(CUpti_CallbackId cbid, CUcontext context, void* resource_handle,
                                   void* resource_descriptor);
KSIM_API void KSimSynchronizeCallback(CUpti_CallbackId cbid, CUcontext context, CUstream stream);

// The runtime tells libcupti which contexts exist so DEVICE/CONTEXT records can
// be written when those kinds are enabled after the contexts were created.
typedef void (*KSimContextReplayFunc)(void);
KSIM_API void KSimSetContextReplay(KSimContextReplayFunc replay);

// Thread id the way CUPTI reports it (pthread_self low bits or gettid()).
KSIM_API uint32_t KSimThreadId(void);

#endif  // KAIROS_TEST_SIM_SRC_SIM_PRIVATE_H_
