// File: json_out.h
// Layer: kairos_output (internal to the JSON writer). A chunked output buffer with fast
// number formatting: text accumulates in one buffer and goes to the ByteSink whenever it
// passes JsonTraceWriter::kChunkBytes, so memory stays bounded for any trace size.
// Threading: one thread.
#ifndef KAIROS_SRC_OUTPUT_JSON_OUT_H_
#define KAIROS_SRC_OUTPUT_JSON_OUT_H_

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "output/json_escape.h"
#include "output/json_writer.h"
#include "output/sink.h"

namespace kairos {
namespace internal {

class JsonOut {
 public:
  explicit JsonOut(ByteSink& sink) : sink_(sink) { buf_.reserve(JsonTraceWriter::kChunkBytes + 4096); }

  // Literal JSON text (keys and punctuation the writer owns; never client data).
  void Raw(std::string_view s) { buf_.append(s.data(), s.size()); }
  void Char(char c) { buf_.push_back(c); }
  // A JSON string literal through the one RFC 8259 encoder.
  void Str(std::string_view s) { AppendJsonString(s, &buf_); }
  void Int(int64_t v) {
    char tmp[24];
    const auto r = std::to_chars(tmp, tmp + sizeof(tmp), v);
    buf_.append(tmp, static_cast<size_t>(r.ptr - tmp));
  }
  void Uint(uint64_t v) {
    char tmp[24];
    const auto r = std::to_chars(tmp, tmp + sizeof(tmp), v);
    buf_.append(tmp, static_cast<size_t>(r.ptr - tmp));
  }
  // Shortest round-trip form; non-finite values have no JSON spelling and become null.
  void Double(double v) {
    if (!std::isfinite(v)) {
      Raw("null");
      return;
    }
    char tmp[32];
    const auto r = std::to_chars(tmp, tmp + sizeof(tmp), v);
    buf_.append(tmp, static_cast<size_t>(r.ptr - tmp));
  }
  void Micros(int64_t ns) {
    char tmp[32];
    buf_.append(tmp, FormatMicros(ns, tmp));
  }

  // Hands the buffer to the sink once it holds a chunk's worth.
  absl::Status MaybeFlush() {
    return buf_.size() >= JsonTraceWriter::kChunkBytes ? Flush() : absl::OkStatus();
  }
  absl::Status Flush() {
    if (buf_.empty()) return absl::OkStatus();
    absl::Status s = sink_.Write(buf_.data(), buf_.size());
    buf_.clear();
    if (buf_.capacity() > 4 * JsonTraceWriter::kChunkBytes) {
      // One huge string (e.g. a megabyte of config text) grew the buffer; give it back.
      std::string().swap(buf_);
      buf_.reserve(JsonTraceWriter::kChunkBytes + 4096);
    }
    return s;
  }

 private:
  ByteSink& sink_;
  std::string buf_;
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
