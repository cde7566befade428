// File: json_span.h
// Layer: kairos_json. The fast path of THE JSON reader: parses values that lie in memory (the
// stream parser's window, JsonStreamParser::window()) with a bounds check per token instead
// of a refill check per byte, and strings scanned 16 bytes per step. Same grammar and the same
// JsonValue as JsonStreamParser in lax mode (no UTF-8 check, repeated keys kept). It never
// names an error: a value that runs past the bytes it has reports kNeedMore (the caller reads
// more and starts that value again), anything malformed reports kInvalid (the caller re-reads
// that value with JsonStreamParser, which names the error and its byte offset). The trace
// reader (output/json_reader.cc) drives it one traceEvents element at a time.
// Threading: a reader is used by one thread; no shared state.
#ifndef KAIROS_SRC_JSON_JSON_SPAN_H_
#define KAIROS_SRC_JSON_JSON_SPAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "json/json_value.h"

namespace kairos {

// Readable bytes that must follow the end of a span: the string scan loads 16 bytes at a
// time and may look past the end (what it sees there is never used).
inline constexpr size_t kJsonSpanPadding = 64;

enum class JsonSpanStatus : uint8_t { kOk = 0, kNeedMore, kInvalid };

class JsonSpanReader {
 public:
  // [begin, end) are the bytes; kJsonSpanPadding readable bytes must follow `end`.
  // `max_depth` as in JsonParseOptions (containers open at once, counted from depth 0).
  JsonSpanReader(const char* begin, const char* end, int max_depth = 128)
      : p_(begin), end_(end), max_depth_(max_depth) {}

  const char* pos() const { return p_; }
  const char* end() const { return end_; }
  // Consumes n bytes a caller has checked itself (n <= end() - pos()).
  void Consume(size_t n) { p_ += n; }
  // Skips JSON whitespace; false when the bytes ran out first.
  bool SkipSpace() {
    // Every whitespace byte is <= 0x20, and almost every byte here is a token: one compare.
    while (p_ < end_ && static_cast<unsigned char>(*p_) <= 0x20 &&
           (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t'))
      ++p_;
    return p_ < end_;
  }
  // The byte at pos(); only after SkipSpace() returned true.
  char cur() const { return *p_; }
  void Advance() { ++p_; }

  // One value into *v, reusing its slots as JsonStreamParser::ParseValue does. `depth` is
  // the number of containers already open around it.
  JsonSpanStatus Value(JsonValue* v, int depth);
  // One value, checked exactly as Value checks it, without building it.
  JsonSpanStatus Skip(int depth);
  // A string literal at pos() (the opening quote): decoded into *out.
  JsonSpanStatus String(std::string* out);
  // The same, but *view points into the span when the literal has no escape (the common
  // case: no copy); otherwise the text is decoded into *scratch and *view points there.
  JsonSpanStatus StringView(std::string_view* view, std::string* scratch);
  // A number at pos(): *text is its source text (grammar checked).
  JsonSpanStatus Number(std::string_view* text);

 private:
  JsonSpanStatus Element(JsonValue* v, int depth);  // Value() inside a container
  JsonSpanStatus Object(JsonValue* v, int depth);   // Value() of '{' after it
  JsonSpanStatus Array(JsonValue* v, int depth);    // Value() of '[' after it
  JsonSpanStatus Key(std::string* out);             // String() for object keys
  JsonSpanStatus Escape(std::string* out);          // after the backslash
  JsonSpanStatus UnicodeEscape(std::string* out);   // after \u
  JsonSpanStatus Hex4(uint32_t* out);
  JsonSpanStatus SkipString();
  JsonSpanStatus Literal(std::string_view word);

  const char* p_;
  const char* end_;
  int max_depth_;
};

namespace internal {
// Shared by the stream and span readers so both accept exactly the same text.
// RFC 8259 number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool IsJsonNumber(std::string_view t);
// Bytes a number token runs over before its grammar is checked.
inline bool IsNumberByte(char d) {
  return (d >= '0' && d <= '9') || d == '-' || d == '+' || d == '.' || d == 'e' || d == 'E';
}
void AppendUtf8(uint32_t cp, std::string* out);
// The surrogate rules both readers follow for \u escapes: a high half (D800-DBFF) followed by
// a \u low half (DC00-DFFF) is one code point; a half alone becomes U+FFFD and whatever
// follows it is read on its own (nothing after it is swallowed).
inline constexpr uint32_t kUnicodeReplacement = 0xFFFD;
inline bool IsHighSurrogate(uint32_t cp) { return cp >= 0xD800 && cp < 0xDC00; }
inline bool IsLowSurrogate(uint32_t cp) { return cp >= 0xDC00 && cp < 0xE000; }
// `hi` (a high half) met the \u escape `lo`: returns the pair's code point, or, when `lo` is
// no low half, appends U+FFFD for `hi` and returns `lo` (U+FFFD if it is a half itself).
uint32_t CombineSurrogates(uint32_t hi, uint32_t lo, std::string* out);
// First byte in [p, end) that is '"', '\\' or below 0x20, or `end`; up to 15 bytes past
// `end` may be read.
const char* PlainStringEnd(const char* p, const char* end);
}  // namespace internal

}  // namespace kairos

#endif  // KAIROS_SRC_JSON_JSON_SPAN_H_
