// File: emit_summary.cc — see emit_summary.h.
#include "analysis/emit_summary.h"

namespace kairos {

std::string EmitSummary(const TraceData& data, const EmitOptions& options) {
  return EmitSummary(Analyze(data, options.analysis), options);
}

std::string EmitSummary(const Summary& summary, const EmitOptions& options) {
  if (options.print_text && options.text_out != nullptr) {
    const std::string text = SummaryToText(summary);
    std::fwrite(text.data(), 1, text.size(), options.text_out);
    std::fflush(options.text_out);
  }
  return SummaryToJson(summary);
}

}  // namespace kairos
