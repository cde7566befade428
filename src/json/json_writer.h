// File: json_writer.h
// Layer: kairos_json. THE JSON writer, in two layers:
//  - JsonBuffer: a growable byte buffer with inlined appends of literal text, escaped
//    strings (through json_escape.h) and numbers. The trace writer formats millions of
//    events with it and hands chunks to its sink (output/json_out.h).
//  - JsonWriter: a JsonBuffer that places commas itself (BeginObject/Key/value/EndObject),
//    for documents built by structure: the analysis summary, daemon RPC replies, the
//    Perfetto writer's detail args.
// Threading: one thread per object.
#ifndef KAIROS_SRC_JSON_JSON_WRITER_H_
#define KAIROS_SRC_JSON_JSON_WRITER_H_

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "json/json_decimal.h"
#include "json/json_escape.h"

namespace kairos {

class JsonBuffer {
 public:
  explicit JsonBuffer(size_t initial_capacity = 256) : initial_capacity_(initial_capacity) {
    Allocate(initial_capacity);
  }

  // Literal JSON text (keys and punctuation the caller owns; never client data). Inlined with
  // a constant size for literals, which is what makes the trace writer fast: a profile of a
  // std::string-based buffer spent ~30% in out-of-line append calls.
  void Raw(std::string_view s) {
    std::memcpy(Reserve(s.size()), s.data(), s.size());
    len_ += s.size();
  }
  void Char(char c) {
    *Reserve(1) = c;
    ++len_;
  }
  // A JSON string literal through the one RFC 8259 encoder; invalid UTF-8 is replaced and
  // counted in replaced().
  void Str(std::string_view s) {
    char* p = Reserve(MaxEscapedSize(s.size()));
    len_ += EscapeJsonString(s, p, &replaced_);
  }
  // Integers through the one decimal writer (json_decimal.h).
  void Int(int64_t v) {
    char* p = Reserve(24);
    len_ += static_cast<size_t>(PutInt(v, p) - p);
  }
  void Uint(uint64_t v) {
    char* p = Reserve(24);
    len_ += static_cast<size_t>(PutUint(v, p) - p);
  }
  // Shortest round-trip form; non-finite values have no JSON spelling and become null.
  void Double(double v) {
    if (!std::isfinite(v)) {
      Raw("null");
      return;
    }
    char* p = Reserve(32);
    len_ += static_cast<size_t>(std::to_chars(p, p + 32, v).ptr - p);
  }

  // Room for `n` more bytes at the end; write there, then Advance by what was written.
  char* Reserve(size_t n) {
    if (len_ + n > cap_) Grow(len_ + n);
    return buf_.get() + len_;
  }
  void Advance(size_t n) { len_ += n; }

  const char* data() const { return buf_.get(); }
  size_t size() const { return len_; }
  std::string_view view() const { return std::string_view(buf_.get(), len_); }
  std::string str() const { return std::string(buf_.get(), len_); }
  // Empties the buffer; gives memory back when one huge string grew it past 4x its start.
  void Clear();
  // Invalid UTF-8 subparts replaced by U+FFFD in Str() since construction.
  uint64_t replaced() const { return replaced_; }
  // Swaps the storage with (*buf, capacity *cap) and empties the buffer: a sink takes the
  // bytes written so far without a copy and hands back another buffer
  // (output/pipelined_sink.h). Write nothing while the storage given in is empty (null).
  void SwapStorage(std::unique_ptr<char[]>* buf, size_t* cap) {
    buf_.swap(*buf);
    const size_t c = cap_;
    cap_ = *cap;
    *cap = c;
    len_ = 0;
  }

 private:
  void Grow(size_t need);
  void Allocate(size_t cap) {
    buf_.reset(new char[cap]);
    cap_ = cap;
  }

  size_t initial_capacity_;
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0;
  size_t len_ = 0;
  uint64_t replaced_ = 0;
};

class JsonWriter : public JsonBuffer {
 public:
  JsonWriter& BeginObject() { return Open('{'); }
  JsonWriter& EndObject() { return Close('}'); }
  JsonWriter& BeginArray() { return Open('['); }
  JsonWriter& EndArray() { return Close(']'); }
  // A member key (escaped); the next value call writes its value.
  JsonWriter& Key(std::string_view key) {
    Sep();
    Str(key);
    Char(':');
    fresh_ = true;
    return *this;
  }
  JsonWriter& String(std::string_view v) { Sep(); Str(v); return *this; }
  JsonWriter& Int(int64_t v) { Sep(); JsonBuffer::Int(v); return *this; }
  JsonWriter& Uint(uint64_t v) { Sep(); JsonBuffer::Uint(v); return *this; }
  JsonWriter& Double(double v) { Sep(); JsonBuffer::Double(v); return *this; }
  JsonWriter& Bool(bool v) { Sep(); Raw(v ? "true" : "false"); return *this; }
  JsonWriter& Null() { Sep(); Raw("null"); return *this; }
  // A value that is already JSON text (the caller vouches for it).
  JsonWriter& RawValue(std::string_view json) { Sep(); Raw(json); return *this; }

 private:
  JsonWriter& Open(char c) {
    Sep();
    Char(c);
    fresh_ = true;
    return *this;
  }
  JsonWriter& Close(char c) {
    Char(c);
    fresh_ = false;
    return *this;
  }
  // A comma before every value or key except the first in a container and after a key.
  void Sep() {
    if (!fresh_) Char(',');
    fresh_ = false;
  }
  bool fresh_ = true;
};

}  // namespace kairos

#endif  // KAIROS_SRC_JSON_JSON_WRITER_H_
