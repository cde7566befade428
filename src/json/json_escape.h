// File: json_escape.h
// Layer: kairos_json. THE RFC 8259 string encoder: every JSON string kairos writes (trace,
// summary, daemon RPC) goes through it, so every file and reply is valid UTF-8.
// Threading: pure functions, thread-safe.
#ifndef KAIROS_SRC_JSON_JSON_ESCAPE_H_
#define KAIROS_SRC_JSON_JSON_ESCAPE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kairos {

// Appends `s` to `out` as a complete JSON string literal, quotes included.
// `"` and `\` are escaped; U+0000..U+001F become \n \t \r \b \f or \u00XX; valid UTF-8 is
// copied unchanged; every maximal invalid UTF-8 subpart becomes U+FFFD (EF BF BD) and, when
// `replaced` is not null, adds one to *replaced. Runs of bytes that need no attention are
// bulk-copied, so plain ASCII costs one scan and one append.
void AppendJsonString(std::string_view s, std::string* out, uint64_t* replaced = nullptr);

// The same encoding into a raw buffer with room for at least MaxEscapedSize(s.size())
// bytes; returns the number of bytes written. The writer's hot path uses this form.
inline constexpr size_t MaxEscapedSize(size_t n) { return 6 * n + 2; }
size_t EscapeJsonString(std::string_view s, char* out, uint64_t* replaced = nullptr);

// AppendJsonString into a fresh string.
std::string JsonQuote(std::string_view s);

// True when `s` is well-formed UTF-8 (no overlongs, surrogates or code points > U+10FFFF).
bool IsValidUtf8(std::string_view s);

}  // namespace kairos

#endif  // KAIROS_SRC_JSON_JSON_ESCAPE_H_
