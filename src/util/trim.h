// File: trim.h
// Layer: kairos_util. THE whitespace trim of the tree (config lines, config lists, /proc
// files): one definition so every parser agrees on what a blank is.
// Threading: pure.
#ifndef KAIROS_SRC_TRIM_H_
#define KAIROS_SRC_TRIM_H_

#include <string_view>

namespace kairos {

// `s` without leading and trailing space, tab, CR and LF. libkineto trims only space, tab
// and LF; CR is added so CRLF files parse. Other control bytes are kept (the config parser
// rejects them by name rather than silently dropping them).
inline std::string_view TrimBlanks(std::string_view s) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace kairos

#endif  // KAIROS_SRC_TRIM_H_
