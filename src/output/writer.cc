// File: writer.cc
// Layer: kairos_output. WriteTraceFile: picks the format, builds the sink chain
// (file <- [compressor] <- writer) and commits the file atomically.
// Threading: called on a kairos writer thread; no shared state.
#include "output/writer.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "output/compress_sinks.h"
#include "output/file_sink.h"
#include "output/json_writer.h"
#include "output/output_format.h"
#include "output/perfetto_writer.h"

namespace kairos {
namespace {

// Runs `writer` into `sink` and finishes it; on any error the file sink is aborted so no
// temp file stays behind and nothing appears under the final name.
absl::Status WriteThrough(const TraceData& data, TraceWriter& writer, ByteSink& sink,
                          AtomicFileSink& file) {
  absl::Status s = writer.Write(data, sink);
  if (s.ok()) s = sink.Finish();
  if (!s.ok()) file.Abort();
  return s;
}

FileSinkOptions SinkOptions(const OutputRequest& request) {
  FileSinkOptions options;
  options.confine_dir = request.confine_dir;
  return options;
}

}  // namespace

absl::Status WriteTraceFile(const TraceData& data, const OutputRequest& request) {
  const OutputFormat format = ResolveOutputFormat(request.format, request.path);

  // ---- Perfetto dispatch point (the Perfetto engineer replaces this block) ----
  if (format == OutputFormat::kPerfetto || format == OutputFormat::kPerfettoZstd) {
    absl::StatusOr<std::unique_ptr<AtomicFileSink>> file = AtomicFileSink::Create(request.path, SinkOptions(request));
    if (!file.ok()) return file.status();
    PerfettoTraceWriter writer;
    if (format == OutputFormat::kPerfettoZstd) {
      ZstdSink zstd(**file, request.zstd_level);
      return WriteThrough(data, writer, zstd, **file);
    }
    return WriteThrough(data, writer, **file, **file);
  }
  // ---- end of Perfetto dispatch point ----

  absl::StatusOr<std::unique_ptr<AtomicFileSink>> file = AtomicFileSink::Create(request.path, SinkOptions(request));
  if (!file.ok()) return file.status();
  JsonTraceWriter writer;
  switch (format) {
    case OutputFormat::kJsonZstd: {
      ZstdSink zstd(**file, request.zstd_level);
      return WriteThrough(data, writer, zstd, **file);
    }
    case OutputFormat::kJsonGzip: {
      GzipSink gzip(**file);
      return WriteThrough(data, writer, gzip, **file);
    }
    default:
      return WriteThrough(data, writer, **file, **file);
  }
}

}  // namespace kairos
