// File: test/sim/src/nccl_profiler_plugin.h
// Layer: CUDA/CUPTI simulator, substitute libnccl.so.2: NCCL's profiler plugin interface, as
//        NCCL 2.26+ loads and drives it (version 4): the library named by NCCL_PROFILER_PLUGIN
//        (a path, or NAME for libnccl-profiler-NAME.so; unset: libnccl-profiler.so), its
//        exported `ncclProfiler_v4`, init per communicator, startEvent/stopEvent around each
//        operation's enqueue (the kernel launch comes in between, on the same thread),
//        finalize at destroy. Declared here from NCCL's published layout, independently of
//        kairos' own declaration, so a layout mistake on either side shows in the tests.
// Threading: the plugin is loaded once per process (thread-safe); events on the caller's thread.
#ifndef KAIROS_TEST_SIM_NCCL_PROFILER_PLUGIN_H_
#define KAIROS_TEST_SIM_NCCL_PROFILER_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <vector>

#include "nccl.h"

namespace kairos::sim::nccl {

enum : uint8_t { kProfileGroup = 1 << 0, kProfileColl = 1 << 1, kProfileP2p = 1 << 2 };

struct ProfilerEventDescrV4 {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      uint64_t seqNumber;
      const char* func;
      const void* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
    } p2p;
    // Proxy, kernel-channel and network events: the simulator has no proxy thread.
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
};

using DebugLogger = void (*)(int, unsigned long, const char*, int, const char*, ...);

struct ProfilerV4 {
  const char* name;
  ncclResult_t (*init)(void** context, int* eActivationMask, const char* commName, uint64_t commHash,
                       int nNodes, int nranks, int rank, DebugLogger logfn);
  ncclResult_t (*startEvent)(void* context, void** eHandle, ProfilerEventDescrV4* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, int eState, void* eStateArgs);
  ncclResult_t (*finalize)(void* context);
};

// The loaded plugin, or null (none configured, not found, or no ncclProfiler_v4 in it; a
// configured one that fails to load is reported once on stderr, as NCCL's INFO line would).
const ProfilerV4* Profiler();

// NCCL's names for the profiler descriptors.
const char* ProfilerDatatypeName(ncclDataType_t t);

struct Op;
// After a communicator joined / before it is destroyed: the plugin's init and finalize.
void ProfilerAttach(ncclComm* comm);
void ProfilerDetach(ncclComm* comm);
// The group event around one ncclGroupEnd (or single call), when a communicator asked for it.
class ProfilerGroup {
 public:
  explicit ProfilerGroup(const std::vector<Op>& ops);
  ~ProfilerGroup();
  ProfilerGroup(const ProfilerGroup&) = delete;
  ProfilerGroup& operator=(const ProfilerGroup&) = delete;
  void* handle() const { return handle_; }

 private:
  ncclComm* comm_ = nullptr;
  void* handle_ = nullptr;
};
// Starts the Coll or P2p event of `op` (null handle when not asked for); ProfilerStop ends it.
void* ProfilerStartOp(const Op& op, void* group);
void ProfilerStop(void* handle);

}  // namespace kairos::sim::nccl

#endif  // KAIROS_TEST_SIM_NCCL_PROFILER_PLUGIN_H_
