// File: trace_file_source.h
// Layer: kairos_output. Opening a trace file as a stream of JSON bytes, decompressed when
// it is gzip or zstd (trace_file_source.cc); the Kineto JSON reader (json_reader.cc) reads it.
// Threading: a source is used by one thread at a time.
#ifndef KAIROS_SRC_OUTPUT_TRACE_FILE_SOURCE_H_
#define KAIROS_SRC_OUTPUT_TRACE_FILE_SOURCE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "json/json_reader.h"

namespace kairos::internal {

// Opens `path` and picks the decompressor from its first bytes (gzip 1f 8b, zstd 28 b5 2f fd).
// Never blocks on a FIFO, never reads a device or directory (util/input_file.h).
absl::StatusOr<std::unique_ptr<JsonByteSource>> OpenTraceSource(const std::string& path);

}  // namespace kairos::internal

#endif  // KAIROS_SRC_OUTPUT_TRACE_FILE_SOURCE_H_
