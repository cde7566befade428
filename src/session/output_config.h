// File: output_config.h
// Layer: kairos_session. The one place Config becomes the output layer's OutputOptions (the
// output layer does not know Config; docs/ARCHITECTURE.md).
// Threading: pure function.
#ifndef KAIROS_SRC_SESSION_OUTPUT_CONFIG_H_
#define KAIROS_SRC_SESSION_OUTPUT_CONFIG_H_

#include <string>

#include "config/config.h"
#include "output/output_options.h"

namespace kairos {

TraceFormat TraceFormatFromConfig(OutputFormat format);
// Path as resolved by the caller; format and zstd level from `config`; no summary.
OutputOptions OutputOptionsFromConfig(const Config& config, std::string path);

}  // namespace kairos

#endif  // KAIROS_SRC_SESSION_OUTPUT_CONFIG_H_
