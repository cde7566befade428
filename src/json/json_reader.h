// File: json_reader.h
// Layer: kairos_json. THE JSON reader: a pull parser over a byte source read in 64 KiB
// chunks. Callers walk the top level themselves (Peek/Expect/Consume/ParseString) and parse
// one element at a time into a JsonValue, so a trace of any size is read in memory bounded
// by its largest element (output/json_reader.h drives it over traceEvents); ParseJson reads
// one whole text (daemon RPC messages, metadata, the Perfetto writer's detail text).
// Hand-written; no JSON library (docs/PERFORMANCE.md has the simdjson comparison). Values
// that lie whole in the parser's window can be read by the faster json_span.h instead.
// Threading: a parser is used by one thread; no shared state.
#ifndef KAIROS_SRC_JSON_JSON_READER_H_
#define KAIROS_SRC_JSON_JSON_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/json_value.h"

namespace kairos {

// Where the parser's bytes come from (plain text here; files and decompressors live with
// their users, e.g. output/json_reader.cc).
class JsonByteSource {
 public:
  virtual ~JsonByteSource() = default;
  // Returns bytes read (0 = end of input) or an error.
  virtual absl::StatusOr<size_t> Read(char* buf, size_t cap) = 0;
};

class JsonTextSource : public JsonByteSource {
 public:
  explicit JsonTextSource(std::string_view text) : text_(text) {}
  absl::StatusOr<size_t> Read(char* buf, size_t cap) override;

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

struct JsonParseOptions {
  // Most containers open at once; deeper input is an error (bounds recursion).
  int max_depth = 128;
  // Strict: strings must be valid UTF-8 and no object may repeat a key. For text from
  // clients (RPC requests, metadata spliced into a trace); traces are read lax, and invalid
  // UTF-8 there is replaced when it is written again.
  bool strict = false;
};

class JsonStreamParser {
 public:
  static constexpr size_t kChunk = 64 * 1024;
  explicit JsonStreamParser(JsonByteSource& src, JsonParseOptions options = {});

  // First error (I/O or syntax, naming the byte offset); OK while none.
  const absl::Status& error() const { return error_; }
  // Bytes consumed so far.
  uint64_t offset() const { return consumed_ + pos_; }

  // Next non-whitespace byte without consuming it; -1 at end or on error.
  int Peek();
  // Consumes `c` (after whitespace) or fails.
  bool Expect(char c);
  // Consumes `c` when it is next; false (without failing) otherwise.
  bool Consume(char c);
  // One complete value / one string literal. False on error (see error()).
  bool ParseValue(JsonValue* v) { return ParseValueAt(v, 0); }
  bool ParseString(std::string* out);
  // True when only whitespace remains; otherwise records a "trailing data" error.
  bool ExpectEnd();
  bool Fail(std::string_view what);

  // The element-at-a-time fast path (output/json_reader.cc hands these bytes to
  // JsonSpanReader, json_span.h). window(): the bytes read but not consumed; at least
  // kJsonSpanPadding readable bytes follow them. Skip(n) consumes n of them. ReadMore()
  // keeps them, moved to the front, doubling the window when they fill it, and appends what
  // the source gives next; false at end of input or on an I/O error (see error()). The
  // window never holds more than the largest element plus one chunk.
  std::string_view window() const { return {buf_.get() + pos_, len_ - pos_}; }
  void Skip(size_t n) { pos_ += n; }
  bool ReadMore();

 private:
  bool ParseValueAt(JsonValue* v, int depth);
  bool ParseNumber(std::string* out);
  bool Fill();
  int Raw();
  int PeekRaw();  // next byte, whitespace included, not consumed
  bool Escape(std::string* out);         // after a backslash
  bool UnicodeEscape(std::string* out);  // after \u
  bool Literal(const char* word);
  bool Hex4(uint32_t* out);

  JsonByteSource& src_;
  JsonParseOptions options_;
  std::unique_ptr<char[]> buf_;  // cap_ bytes, then kJsonSpanPadding
  size_t cap_;
  size_t pos_ = 0, len_ = 0;
  uint64_t consumed_ = 0;
  absl::Status error_;
};

// Parses one complete JSON text. Errors name the byte offset.
absl::StatusOr<JsonValue> ParseJson(std::string_view text, const JsonParseOptions& options = {});

// True when `text` is exactly one valid JSON value (RFC 8259, surrounding whitespace
// allowed), strings are valid UTF-8, at most kMaxJsonDepth containers nest, and no object
// repeats a key: ParseJson in strict mode. Decides whether client-supplied raw JSON may be
// spliced into a trace.
inline constexpr int kMaxJsonDepth = 64;
bool IsValidJson(std::string_view text);

}  // namespace kairos

#endif  // KAIROS_SRC_JSON_JSON_READER_H_
