// File: json_escape.h
// Layer: kairos_output. The one RFC 8259 string encoder every key and string value of the
// JSON writer goes through, and a validator for raw JSON text supplied by clients.
// Threading: pure functions, thread-safe.
#ifndef KAIROS_SRC_OUTPUT_JSON_ESCAPE_H_
#define KAIROS_SRC_OUTPUT_JSON_ESCAPE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kairos {

// Appends `s` to `out` as a complete JSON string literal, quotes included.
// `"` and `\` are escaped; U+0000..U+001F become \n \t \r \b \f or \u00XX; valid UTF-8 is
// copied unchanged; every maximal invalid UTF-8 subpart becomes U+FFFD (EF BF BD). Runs of
// bytes that need no attention are bulk-copied, so plain ASCII costs one scan and one append.
void AppendJsonString(std::string_view s, std::string* out);

// The same encoding into a raw buffer with room for at least MaxEscapedSize(s.size())
// bytes; returns the number of bytes written. The writer's hot path uses this form.
inline constexpr size_t MaxEscapedSize(size_t n) { return 6 * n + 2; }
size_t EscapeJsonString(std::string_view s, char* out);

// Returns true when `text` is exactly one valid JSON value (RFC 8259, surrounding whitespace
// allowed), strings are valid UTF-8, nesting depth <= kMaxJsonDepth, and no object repeats a
// key. Used to decide whether client-supplied raw JSON may be spliced into a trace.
inline constexpr int kMaxJsonDepth = 64;
bool IsValidJson(std::string_view text);

}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_JSON_ESCAPE_H_
