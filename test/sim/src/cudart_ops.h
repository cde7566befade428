// File: test/sim/src/cudart_ops.h
// Layer: CUDA/CUPTI simulator, substitute libcudart.so.13: copy and memset
//        enqueueing shared by direct calls and graph launches.
// Threading: call with Rt().mu held.
#ifndef KAIROS_TEST_SIM_SRC_CUDART_OPS_H_
#define KAIROS_TEST_SIM_SRC_CUDART_OPS_H_

#include "cudart_state.h"

namespace kairos::sim {

// Schedules a copy on `s`, moves the bytes and emits its record. `*end_out`
// is the time the host must wait until (0 when the call is asynchronous).
cudaError_t EnqueueCopy(Runtime& rt, Stream* s, void* dst, const void* src, size_t n, cudaMemcpyKind kind,
                        bool async, uint32_t corr, uint32_t graph_id, uint64_t node_id, uint64_t* end_out);
cudaError_t EnqueueMemset(Runtime& rt, Stream* s, void* dst, int value, size_t n, bool async, uint32_t corr,
                          uint32_t graph_id, uint64_t node_id);

}  // namespace kairos::sim

#endif  // KAIROS_TEST_SIM_SRC_CUDART_OPS_H_
