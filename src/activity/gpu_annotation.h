// File: gpu_annotation.h
// Layer: kairos_activity. Projects CPU user-annotation ranges onto the GPU streams their work
// ran on ("gpu_user_annotation" rows, trace-format-kineto-json.md §4): one event per
// annotation x (device, stream), from 1 ns before its first GPU op to 1 ns after its last.
// A GPU op counts for the range it was launched in and for every range enclosing that one on
// the launching thread, so nested annotations nest on the stream too.
// Threading: session thread only; pure function of the TraceData.
#ifndef KAIROS_SRC_ACTIVITY_GPU_ANNOTATION_H_
#define KAIROS_SRC_ACTIVITY_GPU_ANNOTATION_H_

#include <cstddef>

#include "model/trace_data.h"

namespace kairos::internal {

// Adds the gpu_user_annotation events to `data` (GPU events must carry the external id of
// their CPU range; CPU ranges carry their own id in external_id). Returns how many were added.
size_t ProjectGpuAnnotations(TraceData& data);

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_GPU_ANNOTATION_H_
