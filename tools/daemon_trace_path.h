// File: daemon_trace_path.h
// Layer: tools (`kairos trace`). Predicts the file a triggered process writes, so the CLI can
// print it: the Kineto `_<pid>` insertion applied to the file name only (docs/CONFIG.md), or
// `{pid}` expanded when the name is a template.
// Threading: stateless.
#ifndef KAIROS_TOOLS_DAEMON_TRACE_PATH_H_
#define KAIROS_TOOLS_DAEMON_TRACE_PATH_H_

#include <cstdint>
#include <string>

namespace kairos::tools {

// "/tmp/t.pt.trace.json", 42 -> "/tmp/t_42.pt.trace.json"; "/tmp/a.json" -> "/tmp/a_42.json";
// "/tmp/x" -> "/tmp/x"; "/tmp/r{pid}.json" -> "/tmp/r42.json".
std::string PredictOnDemandTracePath(const std::string& log_file, int64_t pid);

}  // namespace kairos::tools

#endif  // KAIROS_TOOLS_DAEMON_TRACE_PATH_H_
