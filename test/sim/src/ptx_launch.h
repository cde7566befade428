// File: test/sim/src/ptx_launch.h
// Layer: CUDA/CUPTI simulator, kernel execution: what the runtime calls (registration and
//        launch hooks in cudart_launch.cc) to run kernel bodies with the PTX interpreter.
// Threading: registration from static constructors; RunKernelBody with Rt().mu held, so
//            kernels run one at a time, in the order the program issued them.
//
// Off unless KAIROS_SIM_EXEC_KERNELS=1. A kernel runs when its launch is enqueued: the
// simulator also moves copied bytes when a copy is enqueued, so every stream sees its copies
// and kernels in issue order (see docs/SIMULATOR.md, "Kernel execution").
#ifndef KAIROS_TEST_SIM_SRC_PTX_LAUNCH_H_
#define KAIROS_TEST_SIM_SRC_PTX_LAUNCH_H_

#include <cstddef>

#include "cudart_state.h"

namespace kairos::sim {

void PtxNoteFatBinary(const void* handle, const void* wrapper);
void PtxNoteFunction(const void* handle, const void* host_fun);
void PtxNoteVariable(const void* handle, const char* device_name, const void* host_var, size_t size);

// Runs kernel `k` over `shape` with the launch's argument array (mu held). Does nothing when
// execution is off, `args` is null, or the kernel cannot be interpreted (one stderr line per
// kernel says why); the kernel's records and modelled times are unaffected either way.
void RunKernelBody(Runtime& rt, const KernelInfo* k, const LaunchShape& shape, void** args);

}  // namespace kairos::sim

#endif  // KAIROS_TEST_SIM_SRC_PTX_LAUNCH_H_
