// File: writer.h
// Layer: kairos_output. Turns a finished TraceData into files. Knows nothing of CUPTI.
// Threading: called on the session thread (kairos-session) or by the CLI, never on the
// application's threads.
#ifndef KAIROS_SRC_OUTPUT_WRITER_H_
#define KAIROS_SRC_OUTPUT_WRITER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "output/output_options.h"
#include "output/sink.h"
#include "model/trace_data.h"

namespace kairos {

// One trace format. Implementations: JSON (json_writer.h), Perfetto protobuf.
class TraceWriter {
 public:
  virtual ~TraceWriter() = default;
  // Streams `data` into `sink` (does not call sink.Finish()).
  virtual absl::Status Write(const TraceData& data, ByteSink& sink) = 0;
};

// Writes one trace file atomically through AtomicFileSink (temp file next to it, then
// rename(2)). On failure the temp file is removed, nothing appears under `path`, and no
// summary is written. When options.summary_json is set and the trace was written, the
// summary goes to SummaryPathFor(path) through the same sink (so the same permissions and
// the same refusal of symlinks); its outcome goes to *summary_status when given, else a
// failure is logged. The returned status is the trace's.
absl::Status WriteTraceFile(const TraceData& data, const OutputOptions& options,
                            absl::Status* summary_status = nullptr);

// The summary file alone: `json` plus a newline to `path` via WriteTextFile.
absl::Status WriteSummaryFile(const std::string& path, std::string_view json,
                              const std::string& confine_dir = std::string());
// Any other file kairos writes (the HTML report): `text` to `path` through AtomicFileSink,
// with the trace's rules (random O_EXCL temp name, no symlink followed, no non-regular target
// replaced; confined to `confine_dir` when it is not empty, as a daemon request's trace is).
// `what` names the file in error messages ("refusing to write report '...'").
absl::Status WriteTextFile(const std::string& path, std::string_view text,
                           const std::string& confine_dir = std::string(), const char* what = "file");

}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_WRITER_H_
