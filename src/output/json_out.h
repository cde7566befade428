// File: json_out.h
// Layer: kairos_output (internal to the JSON writer). A chunked output buffer: text
// accumulates in kairos_json's JsonBuffer and goes to the ByteSink whenever it passes
// JsonTraceWriter::kChunkBytes, so memory stays bounded for any trace size.
// Threading: one thread.
#ifndef KAIROS_SRC_OUTPUT_JSON_OUT_H_
#define KAIROS_SRC_OUTPUT_JSON_OUT_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "json/json_writer.h"
#include "output/json_writer.h"
#include "output/sink.h"

namespace kairos {
namespace internal {

// The trace writer's buffer: THE JSON writer's JsonBuffer, handed to the ByteSink in chunks.
class JsonOut : public JsonBuffer {
 public:
  explicit JsonOut(ByteSink& sink) : JsonBuffer(kInitialCapacity), sink_(sink) {}

  void Micros(int64_t ns) { Advance(FormatMicros(ns, Reserve(32))); }

  // Hands the buffer to the sink once it holds a chunk's worth.
  absl::Status MaybeFlush() {
    return size() >= JsonTraceWriter::kChunkBytes ? Flush() : absl::OkStatus();
  }
  absl::Status Flush() {
    if (size() == 0) return absl::OkStatus();
    absl::Status s = sink_.Write(data(), size());
    Clear();
    return s;
  }

 private:
  // A chunk plus room for the event that crosses the chunk boundary.
  static constexpr size_t kInitialCapacity = JsonTraceWriter::kChunkBytes + 16 * 1024;

  ByteSink& sink_;
};

// Writes the args object of one event: `,"args":{` before the first key, `}` on Close().
// Keys are literals owned by the writer, so they need no escaping.
class ArgsOut {
 public:
  explicit ArgsOut(JsonOut& out) : out_(out) {}
  JsonOut& Key(std::string_view key) {
    out_.Raw(open_ ? ",\"" : ",\"args\":{\"");
    out_.Raw(key);
    out_.Raw("\":");
    open_ = true;
    return out_;
  }
  void Close() {
    if (open_) out_.Char('}');
    open_ = false;
  }

 private:
  JsonOut& out_;
  bool open_ = false;
};

}  // namespace internal
}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_JSON_OUT_H_
