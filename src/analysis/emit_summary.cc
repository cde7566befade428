// File: emit_summary.cc — see emit_summary.h.
#include "analysis/emit_summary.h"

#include <cerrno>
#include <cstring>

namespace kairos {
namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

}  // namespace

std::string SummaryPathFor(const std::string& trace_path) {
  for (const char* ext : {".json.gz", ".json.zst", ".pftrace.zst", ".json", ".pftrace", ".pb"}) {
    if (EndsWith(trace_path, ext) && trace_path.size() > std::strlen(ext)) {
      return trace_path.substr(0, trace_path.size() - std::strlen(ext)) + ".summary.json";
    }
  }
  return trace_path + ".summary.json";
}

absl::Status EmitSummary(const TraceData& data, const std::string& trace_path,
                         const EmitOptions& options, std::string* json_out) {
  const Summary summary = Analyze(data, options.analysis);
  *json_out = SummaryToJson(summary);
  if (options.print_text && options.text_out != nullptr) {
    const std::string text = SummaryToText(summary);
    std::fwrite(text.data(), 1, text.size(), options.text_out);
    std::fflush(options.text_out);
  }
  if (!options.write_file || trace_path.empty()) return absl::OkStatus();
  const std::string path = SummaryPathFor(trace_path);
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    return absl::UnavailableError("summary: cannot create " + tmp + ": " + std::strerror(errno));
  }
  const bool ok = std::fwrite(json_out->data(), 1, json_out->size(), f) == json_out->size() &&
                  std::fputc('\n', f) != EOF;
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) {
    std::remove(tmp.c_str());
    return absl::UnavailableError("summary: cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::UnavailableError("summary: cannot rename to " + path + ": " + std::strerror(errno));
  }
  return absl::OkStatus();
}

}  // namespace kairos
