// File: json_writer.h
// Layer: kairos_output. Kineto-compatible Chrome-trace JSON (docs/OUTPUT.md): the top-level
// keys HTA and Perfetto expect, metadata before traceEvents, one event per line in global
// time order, paired ac2g flows, every string through one RFC 8259 encoder.
// Threading: Write() may run on any kairos thread; a writer holds no state between calls.
#ifndef KAIROS_SRC_OUTPUT_JSON_WRITER_H_
#define KAIROS_SRC_OUTPUT_JSON_WRITER_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "output/writer.h"

namespace kairos {

class JsonTraceWriter : public TraceWriter {
 public:
  // Bytes formatted before they are handed to the sink; the writer's extra memory is this
  // buffer plus the longest single string, plus per-track and per-flow-id bookkeeping.
  static constexpr size_t kChunkBytes = 64 * 1024;

  // Streams `data` into `sink` as one JSON object. Does not call sink.Finish(). Returns the
  // sink's first error; nothing is written after it.
  absl::Status Write(const TraceData& data, ByteSink& sink) override;

  // Invalid UTF-8 subparts the last Write() replaced with U+FFFD (also logged once per write).
  uint64_t replaced_utf8() const { return replaced_utf8_; }

 private:
  uint64_t replaced_utf8_ = 0;
};

namespace internal {
// Appends `ns` (>= 0) as microseconds with exactly three fraction digits: 1234567 ->
// "1234.567". Negative values are written as "0.000". Returns the number of chars written
// (at most 24). Exposed for tests.
size_t FormatMicros(int64_t ns, char* out);
}  // namespace internal

}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_JSON_WRITER_H_
