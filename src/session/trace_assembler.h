// File: trace_assembler.h
// Layer: kairos_session. Turns a closed window into files: takes the window's clock converter (anchors from open to close), collects
// every source into one TraceData, runs the analysis and hands both to the output layer
// (trace, extra outputs, summary). Knows nothing of the session state.
// Threading: called on the session runner thread, without the session mutex.
#ifndef KAIROS_SRC_SESSION_TRACE_ASSEMBLER_H_
#define KAIROS_SRC_SESSION_TRACE_ASSEMBLER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "util/clock.h"
#include "config/config.h"
#include "model/trace_source.h"

namespace kairos {
namespace internal {
struct NcclTallies;  // activity/nccl_collectives.h
}  // namespace internal

struct AssembleRequest {
  Config config;
  ConfigSource source = ConfigSource::kApi;
  std::vector<TraceSource*> sources;  // warmed up, in Collect order; Reset() afterwards
  std::vector<std::string> warnings;
  // The session's own kairos_stats entries (e.g. window_start_moved_iterations), added after
  // the sources' (TraceData::AddStat).
  std::vector<std::pair<std::string, uint64_t>> stats;
  uint64_t start_raw = 0, end_raw = 0;
  bool start_is_step_boundary = false;
  std::vector<std::pair<std::string, std::string>> metadata;
  WindowAnchors* anchors = nullptr;  // the session's anchor log of this window (clock.h)
  int64_t process_base_ns = 0;       // the process's trace base time (trace_identity.h), > 0
  const internal::NcclTallies* nccl = nullptr;  // the root's NCCL tallies (rank fallback)
};

struct AssembleResult {
  absl::Status status;  // NOT_FOUND when nothing was recorded and no file was written
  std::string path;
};

// Collects, analyses and writes. A window in which the process recorded no event of its own
// (no range, mark, step, GPU activity) and that the program did not ask for itself (an
// environment or daemon window, e.g. a launcher such as `timeout` or `bash` that inherited
// LD_PRELOAD) writes no trace and no summary: one info line says so.
AssembleResult AssembleAndWrite(AssembleRequest request);

}  // namespace kairos

#endif  // KAIROS_SRC_SESSION_TRACE_ASSEMBLER_H_
