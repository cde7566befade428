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

// The JSON writer's sink for EventArgs::Visit (event_args.h): writes `,"args":{` before the
// first key and `}` on Close(). Keys are arg_keys literals, so they need no escaping.
// Every method is forced inline into EventArgs' visit: the keys are then compile-time
// literals, so the key copy is a few constant-size moves instead of strlen + memcpy through
// an out-of-line call per arg (a kernel has ~15 args; a profile of the flush put 5% of
// its time in that call).
#define KAIROS_JSON_SINK_INLINE inline __attribute__((always_inline))
class JsonArgsSink {
 public:
  explicit JsonArgsSink(JsonOut& out) : out_(out) {}
  KAIROS_JSON_SINK_INLINE void Uint(const char* key, uint64_t v) { Key(key).Uint(v); }
  KAIROS_JSON_SINK_INLINE void Int(const char* key, int64_t v) { Key(key).Int(v); }
  void Double(const char* key, double v) { Key(key).Double(v); }
  void Str(const char* key, std::string_view v) { Key(key).Str(v); }
  KAIROS_JSON_SINK_INLINE void Literal(const char* key, std::string_view json) { Key(key).Raw(json); }
  KAIROS_JSON_SINK_INLINE void Dim3(const char* key, const uint32_t v[3]) {
    JsonOut& o = Key(key);
    o.Char('[');
    o.Uint(v[0]);
    o.Char(',');
    o.Uint(v[1]);
    o.Char(',');
    o.Uint(v[2]);
    o.Char(']');
  }
  void Close() {
    if (open_) out_.Char('}');
    open_ = false;
  }

 private:
  KAIROS_JSON_SINK_INLINE JsonOut& Key(const char* key) {
    if (open_) {
      out_.Raw(",\"");
    } else {
      out_.Raw(",\"args\":{\"");
      open_ = true;
    }
    out_.Raw(key);
    out_.Raw("\":");
    return out_;
  }

  JsonOut& out_;
  bool open_ = false;
};

#undef KAIROS_JSON_SINK_INLINE

}  // namespace internal
}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_JSON_OUT_H_
