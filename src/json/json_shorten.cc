// File: json_shorten.cc — see json_shorten.h.
// Layer: kairos_json. Threading: pure.
#include "json/json_shorten.h"

namespace kairos {

std::string ShortenJsonStrings(std::string_view json, size_t max_bytes) {
  std::string out;
  out.reserve(json.size());
  size_t i = 0;
  while (i < json.size()) {
    const char c = json[i];
    if (c != '"') {
      out += c;
      ++i;
      continue;
    }
    // A literal: find its end, noting the last place at or before max_bytes of content
    // where a cut is clean (not inside an escape, not before a UTF-8 continuation byte).
    const size_t begin = i + 1;
    size_t j = begin, cut = 0;
    while (j < json.size() && json[j] != '"') {
      const size_t at = j - begin;
      const bool continuation = (static_cast<unsigned char>(json[j]) & 0xC0) == 0x80;
      if (at <= max_bytes && !continuation) cut = at;
      if (json[j] == '\\') {
        j += j + 1 < json.size() && json[j + 1] == 'u' ? 6 : 2;
      } else {
        ++j;
      }
    }
    const size_t end = j < json.size() ? j : json.size();  // the closing quote (or the end)
    const size_t length = end - begin;
    out += '"';
    if (length > max_bytes) {
      out.append(json, begin, cut);
      out += "...";
    } else {
      out.append(json, begin, length);
    }
    if (end < json.size()) out += '"';
    i = end + 1;
  }
  return out;
}

}  // namespace kairos
