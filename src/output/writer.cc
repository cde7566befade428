// File: writer.cc
// Layer: kairos_output. WriteTraceFile: picks the format, builds the sink chain
// (file <- [compressor] <- writer) and commits the file atomically.
// Threading: called on the session thread (kairos-session) or by the CLI; no shared state.
#include "output/writer.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "util/log.h"
#include "output/compress_sinks.h"
#include "output/file_sink.h"
#include "output/json_writer.h"
#include "output/output_format.h"
#include "output/perfetto_writer.h"
#include "output/pipelined_sink.h"

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

// The JSON formats: the writer formats on this thread while kairos-write passes the bytes
// to `sink` (compression, write(2)) on a second core, when the process has one
// (pipelined_sink.h). The pipe is closed, its thread joined, before the file is aborted.
absl::Status WriteJsonThrough(const TraceData& data, ByteSink& sink, AtomicFileSink& file,
                              bool write_thread) {
  JsonTraceWriter writer;
  PipelinedSink pipe(sink, write_thread && PipelinedSink::UsableCpus() > 1);
  absl::Status s = writer.Write(data, pipe);
  if (s.ok()) s = pipe.Finish();
  if (!s.ok()) {
    pipe.Close().IgnoreError();  // s already says what failed
    file.Abort();
  }
  return s;
}

absl::Status WriteTraceOnly(const TraceData& data, const OutputOptions& request);

FileSinkOptions SinkOptions(const std::string& confine_dir, const char* what = "trace") {
  FileSinkOptions options;
  options.confine_dir = confine_dir;
  options.what = what;
  return options;
}

}  // namespace

absl::Status WriteTextFile(const std::string& path, std::string_view text,
                           const std::string& confine_dir, const char* what) {
  absl::StatusOr<std::unique_ptr<AtomicFileSink>> file =
      AtomicFileSink::Create(path, SinkOptions(confine_dir, what));
  if (!file.ok()) return file.status();
  absl::Status s = (*file)->Write(text.data(), text.size());
  if (s.ok()) s = (*file)->Finish();
  if (!s.ok()) (*file)->Abort();
  return s;
}

absl::Status WriteSummaryFile(const std::string& path, std::string_view json,
                              const std::string& confine_dir) {
  std::string text(json);
  text.push_back('\n');
  return WriteTextFile(path, text, confine_dir, "summary");
}

absl::Status WriteTraceFile(const TraceData& data, const OutputOptions& options,
                            absl::Status* summary_status) {
  absl::Status trace = WriteTraceOnly(data, options);
  if (!trace.ok() || options.summary_json.empty()) return trace;
  absl::Status summary = WriteSummaryFile(SummaryPathFor(options.path), options.summary_json,
                                          options.confine_dir);
  if (summary_status != nullptr) {
    *summary_status = summary;
  } else if (!summary.ok()) {
    KAIROS_LOG_WARNING("summary not written: %s", std::string(summary.message()).c_str());
  }
  return trace;
}

namespace {

// The trace alone: picks the format and builds the sink chain.
absl::Status WriteTraceOnly(const TraceData& data, const OutputOptions& request) {
  const TraceFormat format = ResolveOutputFormat(request.format, request.path);

  // ---- Perfetto dispatch point (the Perfetto engineer replaces this block) ----
  if (format == TraceFormat::kPerfetto || format == TraceFormat::kPerfettoZstd) {
    absl::StatusOr<std::unique_ptr<AtomicFileSink>> file = AtomicFileSink::Create(request.path, SinkOptions(request.confine_dir));
    if (!file.ok()) return file.status();
    PerfettoTraceWriter writer;
    if (format == TraceFormat::kPerfettoZstd) {
      ZstdSink zstd(**file, request.zstd_level);
      return WriteThrough(data, writer, zstd, **file);
    }
    return WriteThrough(data, writer, **file, **file);
  }
  // ---- end of Perfetto dispatch point ----

  absl::StatusOr<std::unique_ptr<AtomicFileSink>> file = AtomicFileSink::Create(request.path, SinkOptions(request.confine_dir));
  if (!file.ok()) return file.status();
  switch (format) {
    case TraceFormat::kJsonZstd: {
      ZstdSink zstd(**file, request.zstd_level);
      return WriteJsonThrough(data, zstd, **file, request.write_thread);
    }
    case TraceFormat::kJsonGzip: {
      GzipSink gzip(**file);
      return WriteJsonThrough(data, gzip, **file, request.write_thread);
    }
    default:
      return WriteJsonThrough(data, **file, **file, request.write_thread);
  }
}

}  // namespace

}  // namespace kairos
