// File: nccl_profiler_abi.h
// Layer: kairos_model (types only). NCCL's profiler plugin interface, version 4 (NCCL 2.26
// and later look for the exported struct `ncclProfiler_v4` in the library named by
// NCCL_PROFILER_PLUGIN). Declared from the published layout, field for field: kairos exports
// the struct (bindings/c/nccl_profiler.cc), reads the Coll and P2p descriptors
// (src/activity/nccl_collectives.cc), and the simulator's libnccl calls it.
// Plain C as well: the preload shim (bindings/c/shim.c) exports the struct and is built as C.
// Threading: declarations only.
#ifndef KAIROS_SRC_NCCL_PROFILER_ABI_H_
#define KAIROS_SRC_NCCL_PROFILER_ABI_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

// ncclResult_t values the plugin returns (ncclSuccess; init may fail to disable the plugin).
typedef int kairos_nccl_result_t;
enum { kKairosNcclSuccess = 0, kKairosNcclInternalError = 3 };

// Event types (the activation mask init returns is a set of these).
enum {
  kKairosNcclProfileGroup = 1 << 0,
  kKairosNcclProfileColl = 1 << 1,
  kKairosNcclProfileP2p = 1 << 2,
  kKairosNcclProfileProxyOp = 1 << 3,
  kKairosNcclProfileProxyStep = 1 << 4,
  kKairosNcclProfileProxyCtrl = 1 << 5,
  kKairosNcclProfileKernelCh = 1 << 6,
  kKairosNcclProfileNetPlugin = 1 << 7,
};

typedef void (*kairos_nccl_debug_logger_t)(int level, unsigned long flags, const char* file,
                                           int line, const char* fmt, ...);

typedef struct {
  uint8_t type;     // one kKairosNcclProfile* bit
  void* parentObj;  // the parent event's handle (a collective's group)
  int rank;         // the originating rank
  union {
    struct {
      uint64_t seqNumber;
      const char* func;  // "AllReduce", "AllGather", ...
      const void* sendBuff;
      void* recvBuff;
      size_t count;  // NCCL's count argument
      int root;
      const char* datatype;  // "ncclFloat32", ...
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    struct {
      const char* func;  // "Send" or "Recv"
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;
    } kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
} kairos_nccl_event_descr_v4_t;

typedef union {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer;
  } kernelCh;
} kairos_nccl_event_state_args_v4_t;

typedef struct {
  const char* name;
  kairos_nccl_result_t (*init)(void** context, int* eActivationMask, const char* commName,
                               uint64_t commHash, int nNodes, int nranks, int rank,
                               kairos_nccl_debug_logger_t logfn);
  kairos_nccl_result_t (*startEvent)(void* context, void** eHandle,
                                     kairos_nccl_event_descr_v4_t* eDescr);
  kairos_nccl_result_t (*stopEvent)(void* eHandle);
  kairos_nccl_result_t (*recordEventState)(void* eHandle, int eState,
                                           kairos_nccl_event_state_args_v4_t* eStateArgs);
  kairos_nccl_result_t (*finalize)(void* context);
} kairos_nccl_profiler_v4_t;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // KAIROS_SRC_NCCL_PROFILER_ABI_H_
