// File: output_format.h
// Layer: kairos_output. Chooses the trace format of an output file from its name.
// Threading: pure functions, thread-safe.
#ifndef KAIROS_SRC_OUTPUT_OUTPUT_FORMAT_H_
#define KAIROS_SRC_OUTPUT_OUTPUT_FORMAT_H_

#include <string_view>

#include "output/output_options.h"

namespace kairos {

// Format for `path` by extension: .json -> kJson, .json.gz / .gz -> kJsonGzip,
// .json.zst -> kJsonZstd, .pftrace / .perfetto-trace -> kPerfetto, .pftrace.zst /
// .perfetto-trace.zst -> kPerfettoZstd. Anything else: kJson, and *known is set false so
// the caller can warn. `known` may be null.
TraceFormat FormatFromPath(std::string_view path, bool* known);

// `requested` unless it is kAuto, then FormatFromPath (logging a warning for an unknown
// extension).
TraceFormat ResolveOutputFormat(TraceFormat requested, std::string_view path);

// "json", "json.gz", "json.zst", "perfetto", "perfetto.zst", "auto".
const char* OutputFormatName(TraceFormat format);
// The inverse of OutputFormatName for the five concrete formats ("auto" is not one); false
// for any other name.
bool ParseOutputFormatName(std::string_view name, TraceFormat* format);

}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_OUTPUT_FORMAT_H_
