// File: writer.h
// Layer: kairos_output. Turns a finished TraceData into files. Knows nothing of CUPTI.
// Threading: called on a kairos writer thread, never on the application's threads.
#ifndef KAIROS_SRC_OUTPUT_WRITER_H_
#define KAIROS_SRC_OUTPUT_WRITER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "config/config.h"
#include "sink.h"
#include "trace_data.h"

namespace kairos {

// One trace format. Implementations: JSON (json_writer.h), Perfetto protobuf.
class TraceWriter {
 public:
  virtual ~TraceWriter() = default;
  // Streams `data` into `sink` (does not call sink.Finish()).
  virtual absl::Status Write(const TraceData& data, ByteSink& sink) = 0;
};

struct OutputRequest {
  std::string path;                      // final file name
  OutputFormat format = OutputFormat::kAuto;
  int zstd_level = 1;
  // Non-empty for daemon-requested traces: the file must stay inside this directory, no
  // symlink in the path is followed and nothing is replaced (FileSinkOptions::confine_dir).
  std::string confine_dir;
};

// Writes one file atomically: to "<path>.tmp.<pid>" then rename(2). On failure the temp file
// is removed and nothing appears under `path`.
absl::Status WriteTraceFile(const TraceData& data, const OutputRequest& request);

}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_WRITER_H_
