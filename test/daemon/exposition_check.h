// File: exposition_check.h
// Layer: test (daemon). A checker for Prometheus' text exposition format 0.0.4 as the agent
// must write it, used by the metrics store tests and the metrics agent fuzzer: every line is
// `# HELP name text`, `# TYPE name type` (once per family, before its samples) or a sample
// `name{label="value",...} value` with metric and label names of the allowed characters,
// label values of valid UTF-8 with only \\, \" and \n escapes, and a finite number written
// in full. The independent reference is Prometheus' own parser (`promtool check metrics`,
// run by the tests where it is installed); this one runs everywhere, fuzzers included.
// Threading: pure function.
#ifndef KAIROS_TEST_DAEMON_EXPOSITION_CHECK_H_
#define KAIROS_TEST_DAEMON_EXPOSITION_CHECK_H_

#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "json/json_escape.h"

namespace kairos::testing {

inline bool IsMetricName(std::string_view n, bool label) {
  if (n.empty()) return false;
  for (size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                    (!label && c == ':') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// "" when `text` is valid exposition text, else the first problem with its line.
inline std::string ExpositionProblem(std::string_view text) {
  std::set<std::string, std::less<>> typed, helped;
  if (!text.empty() && text.back() != '\n') return "text does not end with a line feed";
  size_t at = 0;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    const std::string_view line = text.substr(at, nl - at);
    at = nl + 1;
    const std::string where = " in line \"" + std::string(line.substr(0, 200)) + "\"";
    if (line.substr(0, 7) == "# HELP " || line.substr(0, 7) == "# TYPE ") {
      const std::string_view rest = line.substr(7);
      const std::string_view name = rest.substr(0, rest.find(' '));
      if (!IsMetricName(name, false)) return "bad family name" + where;
      auto& seen = line[2] == 'H' ? helped : typed;
      if (!seen.insert(std::string(name)).second) return "repeated HELP/TYPE" + where;
      if (line[2] == 'T') {
        const std::string_view type = rest.substr(name.size() + 1);
        if (type != "gauge" && type != "counter") return "bad type" + where;
      }
      if (!IsValidUtf8(rest)) return "HELP text not UTF-8" + where;
      continue;
    }
    if (line.empty() || line[0] == '#') return "stray line" + where;
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    const std::string_view name = line.substr(0, i);
    if (!IsMetricName(name, false)) return "bad metric name" + where;
    if (typed.count(name) == 0) return "sample before its TYPE line" + where;
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        const size_t eq = line.find('=', i);
        if (eq == std::string_view::npos) return "label without '='" + where;
        if (!IsMetricName(line.substr(i, eq - i), true)) return "bad label name" + where;
        i = eq + 1;
        if (i >= line.size() || line[i] != '"') return "label value not quoted" + where;
        ++i;
        std::string value;
        while (i < line.size() && line[i] != '"') {
          if (line[i] == '\\') {
            if (i + 1 >= line.size()) return "dangling backslash" + where;
            const char e = line[i + 1];
            if (e != '\\' && e != '"' && e != 'n') return "bad escape" + where;
            value += e == 'n' ? '\n' : e;
            i += 2;
          } else {
            value += line[i++];
          }
        }
        if (i >= line.size()) return "unterminated label value" + where;
        if (!IsValidUtf8(value)) return "label value not UTF-8" + where;
        ++i;  // closing quote
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) return "unterminated label set" + where;
      ++i;  // '}'
    }
    if (i >= line.size() || line[i] != ' ') return "no value" + where;
    const std::string number(line.substr(i + 1));
    char* end = nullptr;
    const double v = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(v) ||
        number.find_first_of("xXpP") != std::string::npos)
      return "value is not a finite number" + where;
  }
  return "";
}

}  // namespace kairos::testing

#endif  // KAIROS_TEST_DAEMON_EXPOSITION_CHECK_H_
