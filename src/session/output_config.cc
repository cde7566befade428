// File: output_config.cc — see output_config.h.
#include "session/output_config.h"

#include <utility>

namespace kairos {

TraceFormat TraceFormatFromConfig(OutputFormat format) {
  switch (format) {
    case OutputFormat::kAuto: return TraceFormat::kAuto;
    case OutputFormat::kJson: return TraceFormat::kJson;
    case OutputFormat::kJsonGzip: return TraceFormat::kJsonGzip;
    case OutputFormat::kJsonZstd: return TraceFormat::kJsonZstd;
    case OutputFormat::kPerfetto: return TraceFormat::kPerfetto;
    case OutputFormat::kPerfettoZstd: return TraceFormat::kPerfettoZstd;
  }
  return TraceFormat::kAuto;
}

OutputOptions OutputOptionsFromConfig(const Config& config, std::string path) {
  OutputOptions options;
  options.path = std::move(path);
  options.format = TraceFormatFromConfig(config.output_format);
  options.zstd_level = static_cast<int>(config.zstd_level);
  return options;
}

}  // namespace kairos
