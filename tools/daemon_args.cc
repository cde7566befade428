// File: daemon_args.cc
// Layer: tools. See daemon_args.h.
// Threading: single-threaded CLI code.
#include "daemon_args.h"

#include <cerrno>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kairos::tools {

absl::Status ArgParser::Parse(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    if (flags_.count(arg) != 0) {
      if (has_value) return absl::InvalidArgumentError(absl::StrCat(arg, " takes no value"));
      values_[arg] = "true";
    } else if (valued_.count(arg) != 0) {
      if (!has_value) {
        if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat(arg, " needs a value"));
        value = argv[++i];
      }
      values_[arg] = value;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown option '", arg, "'"));
    }
  }
  return absl::OkStatus();
}

std::string ArgParser::Get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

absl::StatusOr<int64_t> ArgParser::GetInt(const std::string& name, int64_t fallback,
                                          int64_t min, int64_t max) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  const std::string& text = it->second;
  char* end = nullptr;
  errno = 0;
  const long long v = strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < min || v > max) {
    return absl::InvalidArgumentError(absl::StrCat(name, " \"", text,
                                                   "\" is not an integer in [", min, ", ", max,
                                                   "]"));
  }
  return static_cast<int64_t>(v);
}

}  // namespace kairos::tools
