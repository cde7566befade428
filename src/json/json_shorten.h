// File: json_shorten.h
// Layer: kairos_json. Bounds the string literals of a JSON text: a copy meant for people
// (the HTML report's embedded summaries) stays small whatever names a foreign trace carries.
// Threading: pure.
#ifndef KAIROS_SRC_JSON_JSON_SHORTEN_H_
#define KAIROS_SRC_JSON_JSON_SHORTEN_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace kairos {

// `json` (valid JSON, as kairos_json writes it) with every string literal (keys included)
// whose escaped content is longer than `max_bytes` cut to at most `max_bytes` and ended with
// "...". A cut never splits an escape sequence or a UTF-8 character, so the result is valid
// JSON and valid UTF-8 when the input is. Text outside strings is copied unchanged.
std::string ShortenJsonStrings(std::string_view json, size_t max_bytes);

}  // namespace kairos

#endif  // KAIROS_SRC_JSON_JSON_SHORTEN_H_
