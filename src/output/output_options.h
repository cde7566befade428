// File: output_options.h
// Layer: kairos_output. What the output layer needs to write one trace (and its summary),
// as a plain struct the caller fills: the session from its Config, `kairos convert` from its
// arguments. Output knows nothing of config (the layer table in docs/ARCHITECTURE.md).
// Threading: plain values.
#ifndef KAIROS_SRC_OUTPUT_OUTPUT_OPTIONS_H_
#define KAIROS_SRC_OUTPUT_OUTPUT_OPTIONS_H_

#include <cstdint>
#include <string>

namespace kairos {

enum class TraceFormat : uint8_t {
  kAuto = 0,  // from the file name (.json, .json.gz, .json.zst, .pftrace, .pftrace.zst, ...)
  kJson,
  kJsonGzip,
  kJsonZstd,
  kPerfetto,
  kPerfettoZstd,
};

struct OutputOptions {
  std::string path;  // final file name
  TraceFormat format = TraceFormat::kAuto;
  int zstd_level = 1;
  // The analysis summary; when not empty it is written to SummaryPathFor(path) after, and
  // only after, the trace itself was written (same sink, same permissions).
  std::string summary_json;
  // Non-empty for daemon-requested traces: the trace and its summary must stay inside this
  // directory, no symlink in the path is followed and nothing is replaced
  // (FileSinkOptions::confine_dir).
  std::string confine_dir;
  // JSON formats: pass the bytes to write(2)/the compressor on a second thread (kairos-write,
  // pipelined_sink.h) when the process may use more than one CPU. It ends the write sooner
  // when a core is free, for more CPU time in all (5-10% on the flush benchmark, more when
  // the two cores share badly). Off: the same bytes in the same 256 KiB writes on the caller's
  // thread. On for `kairos convert` (a user waits for it); off in a job's sessions (the job's
  // CPU matters more than when the trace lands). The flush benchmark measures both.
  bool write_thread = false;
};

// "run.json" -> "run.summary.json", "run.pftrace.zst" -> "run.summary.json"; other names get
// ".summary.json" appended.
std::string SummaryPathFor(const std::string& trace_path);
// The same rule for the HTML report: "run.json" -> "run.report.html".
std::string ReportPathFor(const std::string& trace_path);

}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_OUTPUT_OPTIONS_H_
