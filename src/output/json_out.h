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
#include <cstring>
#include <memory>
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
  explicit JsonOut(ByteSink& sink) : sink_(sink) { Allocate(kInitialCapacity); }

  // Literal JSON text (keys and punctuation the writer owns; never client data). Inlined
  // with a constant size for literals, which is what makes the writer fast: a profile of a
  // std::string-based buffer spent ~30% in out-of-line append calls.
  void Raw(std::string_view s) {
    Reserve(s.size());
    std::memcpy(buf_.get() + len_, s.data(), s.size());
    len_ += s.size();
  }
  void Char(char c) {
    Reserve(1);
    buf_[len_++] = c;
  }
  // A JSON string literal through the one RFC 8259 encoder.
  void Str(std::string_view s) {
    Reserve(MaxEscapedSize(s.size()));
    len_ += EscapeJsonString(s, buf_.get() + len_);
  }
  void Int(int64_t v) {
    Reserve(24);
    len_ += static_cast<size_t>(std::to_chars(buf_.get() + len_, buf_.get() + len_ + 24, v).ptr -
                                (buf_.get() + len_));
  }
  void Uint(uint64_t v) {
    Reserve(24);
    len_ += static_cast<size_t>(std::to_chars(buf_.get() + len_, buf_.get() + len_ + 24, v).ptr -
                                (buf_.get() + len_));
  }
  // Shortest round-trip form; non-finite values have no JSON spelling and become null.
  void Double(double v) {
    if (!std::isfinite(v)) {
      Raw("null");
      return;
    }
    Reserve(32);
    len_ += static_cast<size_t>(std::to_chars(buf_.get() + len_, buf_.get() + len_ + 32, v).ptr -
                                (buf_.get() + len_));
  }
  void Micros(int64_t ns) {
    Reserve(32);
    len_ += FormatMicros(ns, buf_.get() + len_);
  }

  // Hands the buffer to the sink once it holds a chunk's worth.
  absl::Status MaybeFlush() {
    return len_ >= JsonTraceWriter::kChunkBytes ? Flush() : absl::OkStatus();
  }
  absl::Status Flush() {
    if (len_ == 0) return absl::OkStatus();
    absl::Status s = sink_.Write(buf_.get(), len_);
    len_ = 0;
    // One huge string (e.g. a megabyte of config text) grew the buffer; give it back.
    if (cap_ > 4 * kInitialCapacity) Allocate(kInitialCapacity);
    return s;
  }

 private:
  // A chunk plus room for the event that crosses the chunk boundary.
  static constexpr size_t kInitialCapacity = JsonTraceWriter::kChunkBytes + 16 * 1024;

  void Reserve(size_t n) {
    if (len_ + n > cap_) Grow(len_ + n);
  }
  void Grow(size_t need) {
    size_t cap = cap_ * 2;
    if (cap < need) cap = need;
    std::unique_ptr<char[]> bigger(new char[cap]);
    std::memcpy(bigger.get(), buf_.get(), len_);
    buf_ = std::move(bigger);
    cap_ = cap;
  }
  void Allocate(size_t cap) {
    buf_.reset(new char[cap]);
    cap_ = cap;
  }

  ByteSink& sink_;
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0;
  size_t len_ = 0;
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
