// File: output_format.cc
// Layer: kairos_output. File-name based format selection; see output_format.h.
// Threading: pure functions, thread-safe.
#include "output/output_format.h"

#include <string>

#include "log.h"

namespace kairos {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

OutputFormat FormatFromPath(std::string_view path, bool* known) {
  if (known) *known = true;
  // Longest suffixes first so ".pftrace.zst" is not taken for plain ".zst".
  if (EndsWith(path, ".pftrace.zst") || EndsWith(path, ".perfetto-trace.zst")) {
    return OutputFormat::kPerfettoZstd;
  }
  if (EndsWith(path, ".pftrace") || EndsWith(path, ".perfetto-trace")) {
    return OutputFormat::kPerfetto;
  }
  if (EndsWith(path, ".json.zst")) return OutputFormat::kJsonZstd;
  if (EndsWith(path, ".json.gz") || EndsWith(path, ".gz")) return OutputFormat::kJsonGzip;
  if (EndsWith(path, ".json")) return OutputFormat::kJson;
  if (known) *known = false;
  return OutputFormat::kJson;
}

OutputFormat ResolveOutputFormat(OutputFormat requested, std::string_view path) {
  if (requested != OutputFormat::kAuto) return requested;
  bool known = true;
  const OutputFormat format = FormatFromPath(path, &known);
  if (!known) {
    KAIROS_LOG_WARNING("unknown trace file extension in '%s'; writing uncompressed JSON "
                       "(use .json, .json.gz, .json.zst, .pftrace or .pftrace.zst)",
                       std::string(path).c_str());
  }
  return format;
}

const char* OutputFormatName(OutputFormat format) {
  switch (format) {
    case OutputFormat::kAuto: return "auto";
    case OutputFormat::kJson: return "json";
    case OutputFormat::kJsonGzip: return "json.gz";
    case OutputFormat::kJsonZstd: return "json.zst";
    case OutputFormat::kPerfetto: return "perfetto";
    case OutputFormat::kPerfettoZstd: return "perfetto.zst";
  }
  return "unknown";
}

}  // namespace kairos
