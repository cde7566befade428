// File: sink.h
// Layer: kairos_output. Byte sinks the writers stream into. A writer never holds the whole
// trace in memory: it formats into a small buffer and hands chunks to a ByteSink.
// Threading: a sink is used by one kairos thread at a time.
#ifndef KAIROS_SRC_OUTPUT_SINK_H_
#define KAIROS_SRC_OUTPUT_SINK_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"

namespace kairos {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Appends bytes. After the first error every later call returns that error.
  virtual absl::Status Write(const void* data, size_t size) = 0;
  // Completes the output (flushes compressors, fsyncs and renames files).
  virtual absl::Status Finish() = 0;
};

}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_SINK_H_
