// File: daemon_trace_path.cc
// Layer: tools. See daemon_trace_path.h.
// Threading: stateless.
#include "daemon_trace_path.h"

namespace kairos::tools {

std::string PredictOnDemandTracePath(const std::string& log_file, int64_t pid) {
  const std::string id = std::to_string(pid);
  std::string out = log_file;
  bool templated = false;
  for (size_t at = out.find("{pid}"); at != std::string::npos; at = out.find("{pid}", at)) {
    out.replace(at, 5, id);
    at += id.size();
    templated = true;
  }
  if (templated) return out;
  const size_t slash = out.rfind('/');
  const size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  for (const char* suffix : {".pt.trace.json", ".json"}) {
    const size_t at = out.find(suffix, name_start);
    if (at != std::string::npos) return out.insert(at, "_" + id);
  }
  return out;
}

}  // namespace kairos::tools
