// File: output_format.cc
// Layer: kairos_output. File-name based format selection; see output_format.h.
// Threading: pure functions, thread-safe.
#include "output/output_format.h"

#include <string>

#include "util/log.h"

namespace kairos {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

TraceFormat FormatFromPath(std::string_view path, bool* known) {
  if (known) *known = true;
  // Longest suffixes first so ".pftrace.zst" is not taken for plain ".zst".
  if (EndsWith(path, ".pftrace.zst") || EndsWith(path, ".perfetto-trace.zst")) {
    return TraceFormat::kPerfettoZstd;
  }
  if (EndsWith(path, ".pftrace") || EndsWith(path, ".perfetto-trace")) {
    return TraceFormat::kPerfetto;
  }
  if (EndsWith(path, ".json.zst")) return TraceFormat::kJsonZstd;
  if (EndsWith(path, ".json.gz") || EndsWith(path, ".gz")) return TraceFormat::kJsonGzip;
  if (EndsWith(path, ".json")) return TraceFormat::kJson;
  if (known) *known = false;
  return TraceFormat::kJson;
}

TraceFormat ResolveOutputFormat(TraceFormat requested, std::string_view path) {
  if (requested != TraceFormat::kAuto) return requested;
  bool known = true;
  const TraceFormat format = FormatFromPath(path, &known);
  if (!known) {
    KAIROS_LOG_WARNING("unknown trace file extension in '%s'; writing uncompressed JSON "
                       "(use .json, .json.gz, .json.zst, .pftrace or .pftrace.zst)",
                       std::string(path).c_str());
  }
  return format;
}

const char* OutputFormatName(TraceFormat format) {
  switch (format) {
    case TraceFormat::kAuto: return "auto";
    case TraceFormat::kJson: return "json";
    case TraceFormat::kJsonGzip: return "json.gz";
    case TraceFormat::kJsonZstd: return "json.zst";
    case TraceFormat::kPerfetto: return "perfetto";
    case TraceFormat::kPerfettoZstd: return "perfetto.zst";
  }
  return "unknown";
}

bool ParseOutputFormatName(std::string_view name, TraceFormat* format) {
  for (TraceFormat f : {TraceFormat::kJson, TraceFormat::kJsonGzip, TraceFormat::kJsonZstd,
                        TraceFormat::kPerfetto, TraceFormat::kPerfettoZstd}) {
    if (name == OutputFormatName(f)) {
      *format = f;
      return true;
    }
  }
  return false;
}

namespace {
// The trace's name without its format extension, plus `suffix`.
std::string CompanionPath(const std::string& trace_path, std::string_view suffix) {
  for (std::string_view ext :
       {".json.gz", ".json.zst", ".pftrace.zst", ".json", ".pftrace", ".pb"}) {
    if (EndsWith(trace_path, ext) && trace_path.size() > ext.size()) {
      return trace_path.substr(0, trace_path.size() - ext.size()) + std::string(suffix);
    }
  }
  return trace_path + std::string(suffix);
}
}  // namespace

std::string SummaryPathFor(const std::string& trace_path) {
  return CompanionPath(trace_path, ".summary.json");
}

std::string ReportPathFor(const std::string& trace_path) {
  return CompanionPath(trace_path, ".report.html");
}

}  // namespace kairos
