// File: python_frames.h
// Layer: kairos_analysis (internal). What the analysis reads of the python_function events
// (PROFILE_WITH_STACK, docs/PYTHON_STACKS.md): which frames are the user's code, the innermost
// user frame running on a thread at an instant, and the summary's top Python functions.
// Threading: calling thread only.
#ifndef KAIROS_SRC_ANALYSIS_PYTHON_FRAMES_H_
#define KAIROS_SRC_ANALYSIS_PYTHON_FRAMES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/analysis_context.h"

namespace kairos::internal {

// A frame of the user's code: not the interpreter's library, an installed package (torch,
// site- or dist-packages) or a frozen module. Names are "file(line): function".
bool IsUserPythonFrame(std::string_view name);
// "/a/b/train.py(42): step" -> "step (train.py:42)"; other names unchanged.
std::string PythonFrameLabel(std::string_view name);

// The Python frames of a trace, per thread track, to find the innermost user frame that was
// running at an instant. Empty (and every lookup null) for a trace without Python stacks.
class PythonFrameIndex {
 public:
  explicit PythonFrameIndex(const TraceData& data);
  bool empty() const { return by_track_.empty(); }
  // The innermost user frame on `track` whose interval contains `t_ns`, or nullptr.
  const Event* InnermostUserFrame(uint32_t track, int64_t t_ns) const { return Innermost(track, t_ns, true); }
  // The innermost frame (any) on `track` whose interval contains `t_ns`, or nullptr.
  const Event* Innermost(uint32_t track, int64_t t_ns, bool user_only = false) const;
  // The frame with Python id `id`, or nullptr.
  const Event* ById(uint32_t id) const {
    auto it = by_id_.find(id);
    return it != by_id_.end() ? it->second : nullptr;
  }

 private:
  const TraceData& data_;
  absl::flat_hash_map<uint32_t, std::vector<const Event*>> by_track_;  // start order
  absl::flat_hash_map<uint32_t, const Event*> by_id_;                  // Python id -> frame
  std::vector<uint8_t> user_;  // per StringId: 0 unknown, 1 user, 2 not
  mutable std::vector<uint8_t> cache_;
};

// Top Python functions by inclusive time (a function's time counted once when it recurses)
// with their self time (not inside another Python frame), calls, and the GPU time of the
// kernels, copies and memsets launched under them (a launch call inside the function, found
// through its correlation id), clipped to the window.
void ComputePythonFunctions(const AnalysisContext& ctx, Summary* summary);

// The Python call tree merged over threads and calls (Summary::python_flame), for the report:
// at most options.python_flame_nodes nodes, each at least python_flame_min_share of the root.
void ComputePythonFlame(const AnalysisContext& ctx, Summary* summary);

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ANALYSIS_PYTHON_FRAMES_H_
