// File: cupti_devices.h
// Layer: kairos_activity (CUDA builds only). Device properties for the devices that appear
// in a trace (deviceProperties, occupancy), read through the CUDA runtime the application
// already loaded; kairos never loads or initializes CUDA itself.
// Threading: session thread.
#ifndef KAIROS_SRC_ACTIVITY_CUPTI_DEVICES_H_
#define KAIROS_SRC_ACTIVITY_CUPTI_DEVICES_H_

#include <cstdint>
#include <vector>

#include "model/memory_totals.h"
#include "model/trace_data.h"

namespace kairos::internal {

// Fills `out` from cudaGetDeviceProperties of the process's libcudart.so.13. Returns false
// when the process has no CUDA runtime loaded or the call fails.
bool QueryDeviceInfo(uint32_t device, DeviceInfo* out);

// Device memory in use (total - free, cuMemGetInfo) of every device whose primary context is
// already active, through the process's libcuda.so.1: the context is retained, pushed on this
// thread for the call and popped and released after, so no context is ever created and the
// application's threads are untouched. Empty when the process has no driver loaded.
std::vector<MemoryBaseline> QueryMemoryInUse();

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CUPTI_DEVICES_H_
