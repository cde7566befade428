// File: test/sim/src/nccl_hook.h
// Layer: CUDA/CUPTI simulator; the private interface from the substitute libnccl.so.2 into the
//        substitute libcudart.so.13 (exported names KSimNccl*, nothing outside test/sim calls them).
// Threading: any thread.
//
// A collective is a kernel on the caller's stream whose end is only known once every rank has
// enqueued its part. So libnccl places it in two steps: Begin reserves its start on the stream
// (and makes the launch API call CUPTI sees), End, once the rendezvous gave the end time, moves
// the stream's tail there and emits the kernel record.
#ifndef KAIROS_TEST_SIM_SRC_NCCL_HOOK_H_
#define KAIROS_TEST_SIM_SRC_NCCL_HOOK_H_

#include <cuda_runtime_api.h>

#include <cstdint>

struct KSimNcclKernel {
  void* context;          // kairos::sim::Context*
  void* stream;           // kairos::sim::Stream*
  const void* kernel;     // kairos::sim::KernelInfo* (interned by name)
  uint64_t queued;        // monotonic ns
  uint64_t start;         // monotonic ns: when this rank's part can begin on its stream
  uint32_t correlation;   // of the launch API call
  uint32_t grid;          // channels
  int32_t record_kind;    // the kernel record kind enabled at launch (INVALID: none)
};

// Returns cudaSuccess and fills `out`, or the launch error (bad stream, capture, stopped device).
// `device` is the communicator's device (ncclCommInitAll drives several from one thread).
extern "C" __attribute__((visibility("default"))) cudaError_t KSimNcclKernelBegin(
    int device, cudaStream_t stream, const char* kernel_name, uint32_t channels, KSimNcclKernel* out);
// Ends the kernel at `end_ns` (>= out->start): stream tail and kernel record.
extern "C" __attribute__((visibility("default"))) void KSimNcclKernelEnd(const KSimNcclKernel* k,
                                                                       uint64_t end_ns);

#endif  // KAIROS_TEST_SIM_SRC_NCCL_HOOK_H_
