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

// Where the user's code was at an instant (PythonFrameIndex::UserSiteAt): the innermost user
// frame running and the line in it that led to what ran then: the "Python caller line" of the
// library frame it had called, or, when it called no Python frame, the "Python line" the
// event itself or its outermost operator recorded (docs/PYTHON_STACKS.md). line 0 = unknown.
struct PythonSite {
  const Event* frame = nullptr;  // nullptr: no user frame was running
  uint32_t line = 0;
  const Event* op = nullptr;  // the outermost cpu_op running then inside the innermost frame
};
// "train.py:42 in step" for a site with a line, else PythonFrameLabel ("step (train.py:40)",
// the function's first line); "" without a frame.
std::string PythonSiteLabel(const TraceData& data, const PythonSite& site);
// A site as one number (the frame's name << 32 | line; 0 = no frame), to count by site
// without a string per event, and its label.
inline uint64_t PythonSiteKey(const PythonSite& site) {
  return site.frame == nullptr ? 0 : (uint64_t{site.frame->name} << 32) | site.line;
}
std::string PythonSiteKeyLabel(const TraceData& data, uint64_t key);

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
  // The user's site at `t_ns` on `track`; `own_line` is the event's own "Python line" (an
  // allocation's), used before its operator's when the user frame is the innermost frame.
  PythonSite UserSiteAt(uint32_t track, int64_t t_ns, uint32_t own_line = 0) const;
  // The outermost cpu_op on `track` that began at or after `after_ns` and encloses `t_ns`.
  const Event* OutermostOp(uint32_t track, int64_t after_ns, int64_t t_ns) const;
  bool IsUser(const Event& frame) const;
  // The frame with Python id `id`, or nullptr.
  const Event* ById(uint32_t id) const {
    auto it = by_id_.find(id);
    return it != by_id_.end() ? it->second : nullptr;
  }

 private:
  const TraceData& data_;
  absl::flat_hash_map<uint32_t, std::vector<const Event*>> by_track_;  // start order
  absl::flat_hash_map<uint32_t, const Event*> by_id_;                  // Python id -> frame
  absl::flat_hash_map<uint32_t, std::vector<const Event*>> ops_;       // cpu_ops, start order
  std::vector<uint8_t> user_;  // per StringId: 0 unknown, 1 user, 2 not
  mutable std::vector<uint8_t> cache_;
};

// The user's code site ("train.py:42 in step", PythonSiteLabel) with the most self time
// inside `intervals` (sorted, disjoint) on any thread: a user frame's own time, a library
// frame it called (its caller line) or an op it called directly (the op's line) (host_wait.cc).
// "" when no user frame ran in them.
std::string TopUserSiteDuring(const TraceData& data, std::vector<Interval> intervals);

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
